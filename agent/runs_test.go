package agent_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/inbox"
)

// slotRuns is a RunStore whose runs close as told.
type slotRuns struct {
	origin  string
	lapsed  []inbox.ThreadKey
	closing bool
}

func (s *slotRuns) OpenRun(_ context.Context, r agent.Run) (agent.Run, bool, error) {
	return r, true, nil
}
func (s *slotRuns) HeartbeatRun(context.Context, inbox.ThreadKey, string, time.Time, time.Time) (agent.Run, error) {
	return agent.Run{}, nil
}
func (s *slotRuns) CloseRun(_ context.Context, k inbox.ThreadKey, id, status, _ string, _ time.Time) (agent.Run, bool, bool, error) {
	return agent.Run{ID: id, Thread: k, Status: status, Origin: s.origin}, s.closing, true, nil
}
func (s *slotRuns) ExpireRuns(context.Context, time.Time) ([]inbox.ThreadKey, []inbox.ThreadKey, error) {
	return s.lapsed, nil, nil
}
func (s *slotRuns) LiveRun(context.Context, inbox.ThreadKey, time.Time) (*agent.Run, error) {
	return nil, nil
}

type nopPublisher struct{}

func (nopPublisher) Publish(inbox.ThreadKey) {}

// The wake slot hook hears of closed wake runs of agents with max_concurrent_wakes, and
// of lapsed runs of them, once per agent: not of other runs, nor of uncapped agents.
func TestWakeSlotHook(t *testing.T) {
	st := &slotRuns{origin: agent.OriginWake, closing: true}
	var told []string
	runs := agent.NewRuns(st, nopPublisher{}, []agent.Config{{ID: "capped", MaxConcurrentWakes: 2}, {ID: "free"}})
	runs.OnWakeSlotFreed(func(id string) { told = append(told, id) })
	capped, free := inbox.ThreadKey{Agent: "capped", Resource: "r", Thread: "t"}, inbox.ThreadKey{Agent: "free", Resource: "r", Thread: "t"}
	ctx := context.Background()

	_, _, err := runs.Finish(ctx, capped, "run-1", agent.RunFinished)
	require.NoError(t, err)
	_, _, err = runs.Finish(ctx, free, "run-2", agent.RunFinished)
	require.NoError(t, err)
	require.Equal(t, []string{"capped"}, told)
	st.closing = false
	_, _, err = runs.Finish(ctx, capped, "run-1", agent.RunFinished)
	require.NoError(t, err)
	st.closing, st.origin = true, agent.OriginAgent
	_, _, err = runs.Finish(ctx, capped, "run-3", agent.RunAborted)
	require.NoError(t, err)
	require.Equal(t, []string{"capped"}, told, "a run already closed, a run the agent opened: no slot freed")

	st.lapsed = []inbox.ThreadKey{capped, {Agent: "capped", Resource: "r", Thread: "u"}, free}
	_, err = runs.Expire(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{"capped", "capped"}, told, "lapsed runs: once per capped agent")
}

package agent_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/delivery/deliverytest"
	"github.com/signalgate/signalgate/inbox"
)

func persist(t *testing.T, e *deliverytest.Env, k inbox.ThreadKey, contents string) signalAnswer {
	t.Helper()
	return send(t, e, k, fmt.Sprintf(`{"signal": {"type": "reactive", "contents": %q}, "ifIdle": {"behavior": "persist"}}`, contents))
}

func TestStreamResumeByLastEventID(t *testing.T) {
	e := deliverytest.New(t, deliverytest.Config{})
	k := coderThread
	var ids []string
	for i := range 3 {
		ids = append(ids, persist(t, e, k, fmt.Sprint("s", i)).ID)
	}
	sub := e.Subscribe(k, "", "")
	got := sub.Take(3)
	for i, ev := range got {
		require.Equal(t, fmt.Sprint(i+1), ev.ID, "SSE id is the per-thread seq")
		require.Equal(t, "signal", ev.Event)
		require.Equal(t, ids[i], ev.Str("id"), "JSON id is the signal id")
		require.Equal(t, float64(i+1), ev.Data["seq"])
	}
	sub.Close()

	// Missed while disconnected.
	for i := 3; i < 5; i++ {
		ids = append(ids, persist(t, e, k, fmt.Sprint("s", i)).ID)
	}
	resumed := e.Subscribe(k, got[2].ID, "")
	got = resumed.Take(2)
	require.Equal(t, []string{"4", "5"}, []string{got[0].ID, got[1].ID})
	require.Equal(t, []string{ids[3], ids[4]}, []string{got[0].Str("id"), got[1].Str("id")})

	// Live frames follow the replay on the same stream.
	ids = append(ids, persist(t, e, k, "s5").ID)
	ev := resumed.Next(wait)
	require.Equal(t, "6", ev.ID)
	require.Equal(t, ids[5], ev.Str("id"))

	// after= does the same for clients that cannot set headers; latest skips history.
	q := e.Subscribe(k, "", "after=5")
	require.Equal(t, "6", q.Next(wait).ID)
	tail := e.Subscribe(k, "", "after=latest")
	persist(t, e, k, "s6")
	require.Equal(t, "7", tail.Next(wait).ID)
}

func TestStreamFanOut(t *testing.T) {
	e := deliverytest.New(t, deliverytest.Config{})
	k := coderThread
	otherKey := inbox.ThreadKey{Agent: "coder", Resource: "acme/api", Thread: "other"}
	subs := []*deliverytest.Stream{e.Subscribe(k, "", ""), e.Subscribe(k, "", ""), e.Subscribe(k, "", "")}
	other := e.Subscribe(otherKey, "", "")
	var ids []string
	for i := range 5 {
		ids = append(ids, persist(t, e, k, fmt.Sprint("m", i)).ID)
	}
	theirs := persist(t, e, otherKey, "theirs").ID
	for _, s := range subs {
		got := s.Take(5)
		for i, ev := range got {
			require.Equal(t, ids[i], ev.Str("id"), "every subscriber gets every frame, in order")
		}
	}
	ev := other.Next(wait)
	require.Equal(t, theirs, ev.Str("id"), "a thread's subscribers see only that thread")
	require.Equal(t, "1", ev.ID)
}

func TestStreamKeepAlive(t *testing.T) {
	e := deliverytest.New(t, deliverytest.Config{API: []agent.APIOption{agent.WithKeepAlive(5 * time.Millisecond)}})
	sub := e.Subscribe(coderThread, "", "")
	for {
		ev, ok := sub.NextAny(wait)
		require.True(t, ok, "stream open")
		if ev.Comment != "" {
			require.Equal(t, "keep-alive", ev.Comment)
			return
		}
	}
}

func TestStreamEndsOnShutdown(t *testing.T) {
	e := deliverytest.New(t, deliverytest.Config{})
	a := e.Subscribe(coderThread, "", "")
	b := e.Subscribe(coderThread, "", "")
	close(e.Shutdown)
	require.True(t, a.Ended(wait), "server shutdown ends streams")
	require.True(t, b.Ended(wait))
}

func TestStreamEndsWhenBrokerStops(t *testing.T) {
	e := deliverytest.New(t, deliverytest.Config{})
	sub := e.Subscribe(coderThread, "", "")
	persist(t, e, coderThread, "x")
	require.Equal(t, "1", sub.Next(wait).ID)
	require.NoError(t, e.Broker.Stop(context.Background()))
	require.True(t, sub.Ended(wait))
	require.Zero(t, e.Broker.Subscribers(coderThread))
}

func TestStreamRunFrames(t *testing.T) {
	e := deliverytest.New(t, deliverytest.Config{})
	k := coderThread
	sub := e.Subscribe(k, "", "")
	var run agent.Run
	require.Equal(t, http.StatusCreated, e.Do(http.MethodPost, e.ThreadURL(k, "/runs"), e.Token(k), nil, &run))
	require.Equal(t, agent.OriginAgent, run.Origin)
	require.Equal(t, e.Clock.Now().Add(agent.DefaultRunLease), run.LeaseUntil)
	var again agent.Run
	require.Equal(t, http.StatusOK, e.Do(http.MethodPost, e.ThreadURL(k, "/runs"), e.Token(k), nil, &again), "the live run is adopted")
	require.Equal(t, run.ID, again.ID)

	e.Clock.Advance(time.Minute)
	var hb agent.Run
	require.Equal(t, http.StatusOK, e.Do(http.MethodPost, e.ThreadURL(k, "/runs/"+run.ID+"/heartbeat"), e.Token(k), nil, &hb))
	require.Equal(t, e.Clock.Now().Add(agent.DefaultRunLease), hb.LeaseUntil)
	var out apiError
	require.Equal(t, http.StatusNotFound, e.Do(http.MethodPost, e.ThreadURL(k, "/runs/nope/heartbeat"), e.Token(k), nil, &out))
	require.Equal(t, http.StatusBadRequest, e.Do(http.MethodPost, e.ThreadURL(k, "/runs/"+run.ID+"/finish"), e.Token(k), `{"status":"done"}`, &out))
	var fin agent.Run
	require.Equal(t, http.StatusOK, e.Do(http.MethodPost, e.ThreadURL(k, "/runs/"+run.ID+"/finish"), e.Token(k), `{"status":"aborted"}`, &fin))
	require.Equal(t, agent.RunAborted, fin.Status)
	require.Equal(t, http.StatusOK, e.Do(http.MethodPost, e.ThreadURL(k, "/runs/"+run.ID+"/finish"), e.Token(k), nil, &fin), "finishing twice is a no-op")
	require.Equal(t, agent.RunAborted, fin.Status)
	require.Equal(t, http.StatusConflict, e.Do(http.MethodPost, e.ThreadURL(k, "/runs/"+run.ID+"/heartbeat"), e.Token(k), nil, &out))
	require.Equal(t, "run_closed", out.Error.Code)

	open, closed := sub.Next(wait), sub.Next(wait)
	require.Equal(t, []string{"run", "run"}, []string{open.Event, closed.Event})
	require.Equal(t, run.ID, open.Str("runId"))
	require.Equal(t, "open", open.Str("status"))
	require.Equal(t, "aborted", closed.Str("status"))
	require.Len(t, e.Log(k), 2)
}

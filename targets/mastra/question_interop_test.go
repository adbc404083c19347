package mastra_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/approval"
	"github.com/signalgate/signalgate/delivery"
	"github.com/signalgate/signalgate/deliverytest"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/service"
	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/targets/mastra"
)

// postedSlack stands in for Slack: every message is posted at postedTS of its channel.
type postedSlack struct{ updates chan approval.Approval }

const postedTS = "1700000000.000001"

func (postedSlack) PostApproval(_ context.Context, _, channel, _ string, _ approval.Approval) (string, string, error) {
	return channel, postedTS, nil
}
func (p postedSlack) UpdateApproval(_ context.Context, _ string, a approval.Approval) error {
	p.updates <- a
	return nil
}
func (postedSlack) InGroup(context.Context, string, string, string) (bool, error) { return false, nil }

type noEmit struct{}

func (noEmit) Emit(context.Context, inbox.ThreadKey, agent.Signal) error { return nil }

// A real Mastra run suspended on Mastra's ask_user, or on a tool of its own that called
// suspend, is asked in Slack as a question; the first threaded reply of an approver
// resumes it with the reply's text as resumeData: ask_user hands it to the model, the
// tool gets it as its resumeData. A stranger's reply and a later one resume nothing.
func TestRealMastraQuestionAnsweredFromSlack(t *testing.T) {
	base := mastraServer(t, 200*time.Millisecond)
	cfg := agent.Config{ID: "support", Token: deliverytest.SupportToken,
		Target: agent.TargetConfig{Kind: mastra.Kind, Presence: mastra.PresenceSource, Timeout: 20 * time.Second, Settings: mastra.Config{URL: base, AgentID: "interopAgent"}}}
	relay := approval.NewRelay()
	var f *mastra.Follower
	env := deliverytest.New(t, deliverytest.Config{Recovery: kept, RealClock: true, Agents: []agent.Config{cfg},
		EnvRoutes: func(e *deliverytest.Env) map[string]delivery.Route {
			f = mastra.NewFollower(cfg, e.Runs, e.Notify, service.Base{}, mastra.WithBackoff(50*time.Millisecond, time.Second),
				mastra.WithApprovals(relay))
			f.TestSignals.Chunk.Init()
			tg, err := mastra.New(cfg, mastra.WithFollower(f))
			require.NoError(t, err)
			return map[string]delivery.Route{"support": {Kind: mastra.Kind, Target: tg, Concurrency: 4}}
		}})
	approvals := store.NewApprovals(env.Store)
	slack := postedSlack{updates: make(chan approval.Approval, 4)}
	svc := approval.New(approval.Config{SlackConnector: "acme", Channel: "C0APPROVE", Approvers: []string{"U0JANE", "U0BOB"}},
		approval.Deps{Store: approvals, Places: approvals, Slack: slack, Resumer: mastra.NewToolApprovals([]agent.Config{cfg}, nil),
			Emitter: noEmit{}, Relay: relay})
	ctx := context.Background()
	require.NoError(t, f.Start(ctx))
	t.Cleanup(func() { _ = f.Stop(context.Background()) })
	require.NoError(t, env.Dispatcher.Start(ctx))

	waitChunk := func(k inbox.ThreadKey, typ string) { t.Helper(); waitFor(t, f, k, typ) }
	waitRunClosed := func(k inbox.ThreadKey, runID string) {
		t.Helper()
		wake, unsubscribe := env.Broker.Subscribe(k)
		defer unsubscribe()
		timeout := time.After(30 * time.Second)
		for {
			for _, fr := range env.Log(k) {
				if fr.Event == agent.EventRun && fr.RunID == runID && fr.RunStatus != agent.RunOpen {
					return
				}
			}
			select {
			case <-wake:
			case <-timeout:
				t.Fatalf("run %s on %s never closed", runID, k)
			}
		}
	}
	reply := func(user, ts, text string) string {
		t.Helper()
		notice, err := svc.Answer(ctx, approval.Reply{Connector: "acme", Channel: "C0APPROVE", ThreadTS: postedTS, TS: ts,
			UserID: user, Text: text})
		require.NoError(t, err)
		return notice
	}

	for _, tc := range []struct{ trigger, tool, question string }{
		{"ask-user", "ask_user", "Which environment?"},
		{"ask-env", "pick_env", "Deploy to which environment?"},
	} {
		k := inbox.ThreadKey{Agent: "support", Resource: "acme/api", Thread: "question-" + tc.trigger}
		env.Ingest(inbox.Notification{Thread: k, Source: "github", Kind: "deploy", Priority: inbox.PriorityUrgent, Summary: "deploy " + tc.trigger})
		waitChunk(k, "tool-call-suspended") // handled: the question is recorded and posted
		live, err := env.Runs.Live(ctx, k)
		require.NoError(t, err)
		require.NotNil(t, live)
		page, _, err := approvals.ListApprovals(ctx, approval.Filter{Agent: "support", Thread: k.Thread})
		require.NoError(t, err)
		require.Len(t, page, 1)
		q := page[0]
		require.Equal(t, approval.KindQuestion, q.Kind)
		require.Equal(t, tc.tool, q.Tool)
		require.Equal(t, tc.question, q.Description, "the suspend payload's question")
		require.Equal(t, postedTS, q.MessageTS)

		require.Contains(t, reply("U0EVE", "1800000000.000100", "prod"), "not one of the approvers")
		require.Empty(t, reply("U0JANE", "1800000000.000200", "staging "+tc.trigger))
		require.Equal(t, approval.StatusAnswered, (<-slack.updates).Status)
		waitRunClosed(k, live.ID)
		require.Empty(t, reply("U0BOB", "1800000000.000300", "prod"), "answered already")
		got, err := approvals.GetApproval(ctx, q.ID)
		require.NoError(t, err)
		require.Equal(t, "staging "+tc.trigger, got.Answer)
		// The question for the next case is posted at the same ts: this one is settled.
		require.NoError(t, approvals.SetApprovalMessage(ctx, q.ID, "acme", "C0APPROVE", "1600000000.000001", "", "", time.Now()))
	}

	var seen []string
	for _, p := range prompts(t, base) {
		for _, m := range p.Messages {
			if m.Role == "tool" {
				seen = append(seen, m.Text)
			}
		}
	}
	require.Contains(t, strings.Join(seen, "\n"), `User answered: staging ask-user`, "ask_user handed the reply to the model")
	resp, err := http.Get(base + "/test/tools")
	require.NoError(t, err)
	defer resp.Body.Close()
	var tools struct {
		Picked []string `json:"picked"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&tools))
	require.Equal(t, []string{"staging ask-env"}, tools.Picked, "the tool was resumed once, with the reply's text")
	require.Contains(t, strings.Join(seen, "\n"), `staging ask-env`, "and the model saw its result")
}

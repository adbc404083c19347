package mastra_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/delivery"
	"github.com/signalgate/signalgate/deliverytest"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/service"
	"github.com/signalgate/signalgate/targets/mastra"
)

// TestRealMastraModelPerRequest: the harness's modelAgent has no static model; it picks
// one per request from requestContext.model and cannot start a run without it ("No
// model selected"). Every wake the gateway starts carries ifIdle.streamOptions resolved
// when it is sent: the notification's own, the first matching policy rule's, then the
// target's; a low-only summary goes with ifIdle persist and none, and still arrives.
func TestRealMastraModelPerRequest(t *testing.T) {
	base := mastraServer(t, 1500*time.Millisecond) // long enough a turn to act while it runs
	rc := func(model string) map[string]any {
		return map[string]any{"requestContext": map[string]any{"model": model}}
	}
	// support has target.stream_options; coder (the same Mastra agent) has none.
	support := agent.Config{ID: "support", Token: deliverytest.SupportToken, Target: agent.TargetConfig{Kind: mastra.Kind, Presence: mastra.PresenceSource, Timeout: 20 * time.Second, Settings: mastra.Config{URL: base, AgentID: "modelAgent", StreamOptions: rc("mock-target")}}}
	coder := agent.Config{ID: "coder", Token: deliverytest.CoderToken, Target: agent.TargetConfig{Kind: mastra.Kind, Presence: mastra.PresenceSource, Timeout: 20 * time.Second, Settings: mastra.Config{URL: base, AgentID: "modelAgent"}}}
	var follower *mastra.Follower
	env := deliverytest.New(t, deliverytest.Config{Recovery: kept,
		Agents: []agent.Config{support, coder},
		Policy: inbox.PolicyConfig{Rules: []inbox.Rule{
			{Match: inbox.RuleMatch{Source: inbox.StringList{"ci"}}, StreamOptions: rc("mock-rule"), ActionSpec: inbox.ActionSpec{Action: inbox.ActionDeliver}},
			{Match: inbox.RuleMatch{Kind: inbox.StringList{"digest"}}, ActionSpec: inbox.ActionSpec{Action: inbox.ActionSummarize}},
			{Match: inbox.RuleMatch{Kind: inbox.StringList{"deploy"}}, ActionSpec: inbox.ActionSpec{Action: inbox.ActionQueue}},
		}},
		EnvRoutes: func(e *deliverytest.Env) map[string]delivery.Route {
			follower = mastra.NewFollower(support, e.Runs, e.Notify, service.Base{}, mastra.WithBackoff(50*time.Millisecond, time.Second))
			follower.TestSignals.Chunk.Init()
			routes := map[string]delivery.Route{}
			for _, c := range []agent.Config{support, coder} {
				tg, err := mastra.New(c, mastra.WithFollower(follower))
				require.NoError(t, err)
				routes[c.ID] = delivery.RouteOf(c, tg)
			}
			return routes
		},
	})
	require.NoError(t, follower.Start(context.Background()))
	t.Cleanup(func() { _ = follower.Stop(context.Background()) })

	// lastSignal is the newest signal frame of k.
	lastSignal := func(t *testing.T, k inbox.ThreadKey) agent.Frame {
		t.Helper()
		log := env.Log(k)
		for i := len(log) - 1; i >= 0; i-- {
			if log[i].Event == agent.EventSignal {
				return log[i]
			}
		}
		t.Fatalf("no signal on %s", k)
		return agent.Frame{}
	}
	// chunk waits for the next chunk of type typ on k.
	chunk := func(t *testing.T, k inbox.ThreadKey, typ string) { t.Helper(); waitFor(t, follower, k, typ) }
	// modelOf waits for the Mastra run on k to finish and returns the model of the turn
	// whose newest input was xml.
	modelOf := func(t *testing.T, k inbox.ThreadKey, xml string) string {
		t.Helper()
		chunk(t, k, "finish")
		for _, p := range prompts(t, base) {
			if texts := p.userTexts(); len(texts) > 0 && texts[len(texts)-1] == xml {
				return p.Model
			}
		}
		t.Fatalf("the model never saw %s", xml)
		return ""
	}
	woken := func(t *testing.T, k inbox.ThreadKey) agent.Frame {
		t.Helper()
		env.Pass()
		f := lastSignal(t, k)
		require.Equal(t, agent.BehaviorWake, f.Behavior, "%s: %s", k, f.XML)
		return f
	}

	t.Run("nothing gives stream options: Mastra cannot start the run", func(t *testing.T) {
		k := inbox.ThreadKey{Agent: "coder", Resource: "acme/api", Thread: "no-model"}
		id := env.Ingest(inbox.Notification{Thread: k, Source: "github", Kind: "comment", Priority: inbox.PriorityUrgent, Summary: "hello"})
		env.Pass()
		r := env.Record(id)
		require.Equal(t, inbox.StatusPending, r.Status, "not delivered")
		require.Contains(t, r.LastError, "No model selected")
	})

	t.Run("the notification's own ifIdle.streamOptions", func(t *testing.T) {
		k := inbox.ThreadKey{Agent: "support", Resource: "acme/api", Thread: "own"}
		var out map[string]any
		require.Equal(t, http.StatusCreated, env.Do(http.MethodPost, env.ThreadURL(k, "/notifications"), deliverytest.SupportToken,
			map[string]any{"source": "ci", "kind": "check", "summary": "lint red", "ifIdle": map[string]any{"streamOptions": rc("mock-request")}}, &out), out)
		f := woken(t, k)
		require.Equal(t, "mock-request", modelOf(t, k, f.XML), "over the rule matching ci and the target's")
	})

	t.Run("the first matching policy rule's", func(t *testing.T) {
		k := inbox.ThreadKey{Agent: "support", Resource: "acme/api", Thread: "rule"}
		env.Ingest(inbox.Notification{Thread: k, Source: "ci", Kind: "check", Summary: "tests red"})
		f := woken(t, k)
		require.Equal(t, "mock-rule", modelOf(t, k, f.XML))
	})

	t.Run("the target's, for a message and a summary", func(t *testing.T) {
		k := inbox.ThreadKey{Agent: "support", Resource: "slack:T1", Thread: "dm:U1"}
		env.Ingest(inbox.Notification{Thread: k, Source: "slack", Kind: "message", DeliverAs: inbox.DeliverAsMessage, Summary: "can you look?",
			Attributes: inbox.Attributes{{Key: "name", Value: "Jane"}, {Key: "from", Value: "slack"}}})
		f := woken(t, k)
		require.Equal(t, "mock-target", modelOf(t, k, f.XML))

		k = inbox.ThreadKey{Agent: "support", Resource: "acme/api", Thread: "digest"}
		env.Ingest(inbox.Notification{Thread: k, Source: "jira", Kind: "digest", Priority: inbox.PriorityHigh, Summary: "3 tickets"})
		f = woken(t, k)
		require.Equal(t, agent.TagNotificationSummary, f.Signal.TagName)
		require.Equal(t, "mock-target", modelOf(t, k, f.XML))
	})

	t.Run("a low-only summary: ifIdle persist, no model needed", func(t *testing.T) {
		k := inbox.ThreadKey{Agent: "coder", Resource: "acme/api", Thread: "low"}
		id := env.Ingest(inbox.Notification{Thread: k, Source: "github", Kind: "push", Priority: inbox.PriorityLow, Summary: "3 commits"})
		env.Clock.Advance(time.Minute) // past the batching window
		env.Pass()
		f := lastSignal(t, k)
		require.Equal(t, agent.TagNotificationSummary, f.Signal.TagName)
		require.Equal(t, agent.BehaviorPersist, f.Behavior)
		require.Empty(t, env.Record(id).LastError, "accepted without a model: nothing woke")
	})

	t.Run("queue: next-turn input after the active Mastra run, with its stream options", func(t *testing.T) {
		k := inbox.ThreadKey{Agent: "support", Resource: "acme/api", Thread: "queue"}
		env.Ingest(inbox.Notification{Thread: k, Source: "github", Kind: "comment", Priority: inbox.PriorityUrgent, Summary: "first"})
		first := woken(t, k)
		chunk(t, k, "start")
		id := env.Ingest(inbox.Notification{Thread: k, Source: "github", Kind: "deploy", Priority: inbox.PriorityUrgent, Summary: "deployed"})
		env.Pass()
		require.Equal(t, first.ID, lastSignal(t, k).ID, "nothing goes into the running turn")
		require.Equal(t, inbox.StatusPending, env.Record(id).Status)
		chunk(t, k, "finish") // the follower closed the run: the record is due
		f := woken(t, k)
		require.Equal(t, []string{id}, f.RecordIDs)
		require.NotEqual(t, first.RunID, f.RunID, "a run of its own")
		require.Equal(t, "mock-target", modelOf(t, k, f.XML))
	})
}

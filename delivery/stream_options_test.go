package delivery_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/delivery"
	"github.com/signalgate/signalgate/deliverytest"
	"github.com/signalgate/signalgate/inbox"
)

// captured records what a target was handed, by signal tag.
type captured struct {
	mu  sync.Mutex
	got []agent.Handoff
}

func (c *captured) Deliver(_ context.Context, d agent.Handoff) (agent.Result, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.got = append(c.got, d)
	return agent.Result{}, nil
}

func (c *captured) last(t *testing.T) agent.Handoff {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	require.NotEmpty(t, c.got)
	return c.got[len(c.got)-1]
}

func model(name string) map[string]any {
	return map[string]any{"requestContext": map[string]any{"model": name}}
}

// Every wake the gateway starts for a notification, a message or a summary carries
// ifIdle.streamOptions resolved when it is sent, first match wins: the notification's
// own, the first matching policy rule's, the agent target's. A low-only summary never
// wakes and carries none, as Mastra sends it.
func TestStreamOptionsReachEveryWake(t *testing.T) {
	target := &captured{}
	coder := agent.Config{ID: "coder", Token: deliverytest.CoderToken,
		Target: agent.TargetConfig{Kind: "mastra"}}
	cfg := deliverytest.Config{
		Agents: []agent.Config{coder},
		Policy: inbox.PolicyConfig{Rules: []inbox.Rule{
			{Match: inbox.RuleMatch{Kind: inbox.StringList{"review"}}, ActionSpec: inbox.ActionSpec{Action: inbox.ActionDeliver}},
			{Match: inbox.RuleMatch{Source: inbox.StringList{"ci"}}, When: `presence == "idle"`, StreamOptions: model("from-ci-rule"),
				ActionSpec: inbox.ActionSpec{Action: inbox.ActionDeliver}},
			{Match: inbox.RuleMatch{Source: inbox.StringList{"ci", "github"}}, StreamOptions: model("from-second-rule"),
				ActionSpec: inbox.ActionSpec{Action: inbox.ActionDeliver}},
		}},
		Routes: func(delivery.Target) map[string]delivery.Route {
			r := delivery.RouteOf(coder, target)
			r.StreamOptions = model("from-target") // the kind's default (a mastra target's stream_options)
			return map[string]delivery.Route{"coder": r}
		},
	}
	forBackends(t, cfg, func(t *testing.T, e *deliverytest.Env) {
		target.mu.Lock()
		target.got = nil
		target.mu.Unlock()
		wake := func(thread string, body map[string]any) agent.Handoff {
			t.Helper()
			k := key(thread)
			create(t, e, k, body)
			e.Pass()
			d := target.last(t)
			require.Equal(t, agent.BehaviorWake, d.Behavior, thread)
			return d
		}
		// The notification's own ifIdle.streamOptions win over the rule matching it.
		d := wake("own", map[string]any{"source": "ci", "kind": "check", "summary": "red", "ifIdle": map[string]any{"streamOptions": model("from-request")}})
		require.Equal(t, model("from-request"), d.StreamOptions)
		// The first matching rule with stream options (its `when` seeing the presence).
		d = wake("rule", map[string]any{"source": "ci", "kind": "check", "summary": "red"})
		require.Equal(t, model("from-ci-rule"), d.StreamOptions)
		d = wake("second-rule", map[string]any{"source": "github", "kind": "comment", "summary": "hi"})
		require.Equal(t, model("from-second-rule"), d.StreamOptions)
		// Nothing else: the target's.
		d = wake("target", map[string]any{"source": "jira", "kind": "review", "summary": "look"})
		require.Equal(t, model("from-target"), d.StreamOptions)
		// A message.
		d = wake("message", map[string]any{"source": "slack", "kind": "dm", "summary": "can you look?", "deliverAs": "message"})
		require.Equal(t, inbox.DeliverAsMessage, d.DeliverAs)
		require.Equal(t, model("from-target"), d.StreamOptions)
		// A signal sent through the API without stream options.
		k := key("signal")
		require.Equal(t, http.StatusOK, e.Do(http.MethodPost, e.ThreadURL(k, "/signals"), e.Token(k),
			map[string]any{"signal": map[string]any{"type": "reactive", "tagName": "build", "contents": "done"}}, nil))
		require.Equal(t, model("from-target"), target.last(t).StreamOptions)

		// Summaries: one with a medium record carries them; a low-only one wakes nothing.
		k = key("summary")
		run := e.OpenRun(k)
		create(t, e, k, map[string]any{"source": "jira", "kind": "ticket", "summary": "m", "priority": "medium",
			"ifIdle": map[string]any{"streamOptions": model("from-summary-record")}})
		e.Pass()
		d = target.last(t)
		require.Equal(t, agent.TagNotificationSummary, d.Signal.TagName)
		require.Equal(t, agent.BehaviorDeliver, d.Behavior, "into the run; a mastra target still wakes if it ended")
		require.Equal(t, model("from-summary-record"), d.StreamOptions)
		e.FinishRun(k, run.ID)

		k = key("low")
		create(t, e, k, map[string]any{"source": "jira", "kind": "ticket", "summary": "l", "priority": "low",
			"ifIdle": map[string]any{"streamOptions": model("never")}})
		e.Clock.Advance(time.Minute)
		e.Pass()
		d = target.last(t)
		require.Equal(t, agent.TagNotificationSummary, d.Signal.TagName)
		require.True(t, d.NoWake || d.Behavior == agent.BehaviorPersist, "a low-only summary never wakes")
		require.Nil(t, d.StreamOptions)
	})
}

func TestNotificationStreamOptionsMustBeAnObject(t *testing.T) {
	e := deliverytest.New(t, deliverytest.Config{})
	k := key("bad")
	var out map[string]any
	for _, body := range []map[string]any{
		{"source": "ci", "kind": "check", "summary": "x", "ifIdle": map[string]any{"streamOptions": "fast"}},
		{"source": "ci", "kind": "check", "summary": "x", "ifIdle": map[string]any{"behavior": "persist"}},
	} {
		require.Equal(t, http.StatusBadRequest, e.Do(http.MethodPost, e.ThreadURL(k, "/notifications"), e.Token(k), body, &out), out)
	}
}

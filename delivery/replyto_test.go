package delivery_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/delivery"
	"github.com/signalgate/signalgate/deliverytest"
	"github.com/signalgate/signalgate/inbox"
)

// A delivery tells its target where an answer goes (the Mastra auto-reply answers
// there) only from a record whose provenance is the place's own connector kind: a
// replyTo stamped by the agent's token names nothing.
func TestDeliveryReplyToNeedsTheConnectorsProvenance(t *testing.T) {
	target := &captured{}
	coder := agent.Config{ID: "coder", Token: deliverytest.CoderToken,
		Target: agent.TargetConfig{Kind: "mastra"}}
	cfg := deliverytest.Config{
		Agents:   []agent.Config{coder},
		Dispatch: []delivery.Option{delivery.WithReplyProvenance(agent.ReplyProvenance{"slack": {"slack-v0"}})},
		Routes: func(delivery.Target) map[string]delivery.Route {
			return map[string]delivery.Route{"coder": delivery.RouteOf(coder, target)}
		},
	}
	forBackends(t, cfg, func(t *testing.T, e *deliverytest.Env) {
		wake := func(thread, by string) agent.Handoff {
			t.Helper()
			e.Ingest(inbox.Notification{Thread: key(thread), Source: "slack", Kind: "message", Priority: inbox.PriorityUrgent, Summary: "hi",
				Metadata: map[string]any{agent.MetaReplyTo: map[string]any{"source": "slack", "connector": "acme", "channel": "C1"}, agent.MetaVerifiedBy: by}})
			e.Pass()
			d := target.last(t)
			require.Equal(t, key(thread), d.Thread)
			return d
		}
		require.Equal(t, map[string]any{"source": "slack", "connector": "acme", "channel": "C1"}, wake("slack", "slack-v0").ReplyTo)
		require.Nil(t, wake("planted", agent.VerifiedByAgentToken).ReplyTo)
		require.Nil(t, wake("another-kind", "hmac-github").ReplyTo)
	})
}

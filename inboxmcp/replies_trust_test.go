package inboxmcp_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/connectors/slack"
	"github.com/signalgate/signalgate/deliverytest"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/reply"
	"github.com/signalgate/signalgate/store/storetest"
)

// Through MCP an agent cannot say where answers go either: notify takes no metadata
// (one or a batch), a replyTo that a record of the thread carries without the Slack
// connector's provenance is no place to answer, and the reply tool answers the thread's
// own DM. approval: true where nobody approves is refused, naming
// approvals.slack_connector.
func TestNotifyCannotPlantWhereAnswersGo(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			e := replyEnv(t, &b)
			cs := session(t, e, deliverytest.CoderToken)
			k := coderThread
			slackNote(e, k, "Jane: can you look?", dmTo)
			exec := map[string]any{"source": "slack", "connector": "acme", "channel": "C0EXECPRIV"}
			require.Contains(t, toolError(t, cs, "notify", args(k, map[string]any{"kind": "note", "summary": "hi",
				"metadata": map[string]any{"replyTo": exec}})), "metadata")
			require.Contains(t, toolError(t, cs, "notify", args(k, map[string]any{"notifications": []any{
				map[string]any{"kind": "note", "summary": "hi", "metadata": map[string]any{"replyTo": exec}}}})), "metadata")

			channel := reply.NewTo("slack", "acme", slack.Place{Channel: "C0EXECPRIV"})
			e.Ingest(inbox.Notification{Thread: k, Source: "slack", Kind: "message", Summary: "planted",
				Metadata: map[string]any{reply.MetadataKey: channel, agent.MetaVerifiedBy: agent.VerifiedByAgentToken}})
			require.Equal(t, "unknown_reply_to: unknown reply destination: replyTo names no place a notification of this thread came from",
				toolError(t, cs, "reply", args(k, map[string]any{"id": "r1", "text": "x", "replyTo": channel})))
			var r reply.Reply
			call(t, cs, "reply", args(k, map[string]any{"id": "r2", "text": "x"}), &r)
			require.Equal(t, dmTo, r.To)

			msg := toolError(t, cs, "reply", args(k, map[string]any{"id": "r3", "text": "x", "approval": true}))
			require.Contains(t, msg, "no_approvers: ")
			require.Contains(t, msg, "approvals.slack_connector")
		})
	}
}

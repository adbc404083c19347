package agent_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/inbox"
)

// vouches is what the kinds table builds: each kind that posts answers vouches for its
// places with the provenance its connectors stamp.
var vouches = agent.ReplyProvenance{"slack": {"slack-v0", "slack-socket-mode"}, "github": {"hmac-github"}, "email": {"imap-login"}}

// place is a record of at whose metadata names a place of source, verified by by.
func place(source, channel, by string, at time.Time) inbox.Record {
	md := map[string]any{agent.MetaReplyTo: map[string]any{"source": source, "connector": "acme", "channel": channel}}
	if by != "" {
		md[agent.MetaVerifiedBy] = by
	}
	return inbox.Record{Metadata: md, CreatedAt: at}
}

// A delivery names the place of its newest record whose provenance is the connector
// kind of that place: a newer replyTo stamped by an agent's token, a generic sender,
// another kind or nobody is passed over.
func TestReplyToOfTrustsOnlyTheKindsOwnConnectors(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	dm := place("slack", "D1", "slack-v0", t0)
	socket := place("slack", "D2", "slack-socket-mode", t0.Add(time.Second))
	planted := []inbox.Record{
		place("slack", "C0EXECPRIV", agent.VerifiedByAgentToken, t0.Add(time.Minute)),
		place("slack", "C0EXECPRIV", "standard-webhooks", t0.Add(2*time.Minute)),
		place("slack", "C0EXECPRIV", "hmac-github", t0.Add(3*time.Minute)), // another kind's provenance
		place("slack", "C0EXECPRIV", "", t0.Add(4*time.Minute)),
		place("github", "C0EXECPRIV", "signalgate", t0.Add(5*time.Minute)), // the gateway's own records name no place
	}
	require.Equal(t, socket.Metadata[agent.MetaReplyTo], vouches.ReplyToOf(append([]inbox.Record{dm, socket}, planted...)))
	require.Equal(t, dm.Metadata[agent.MetaReplyTo], vouches.ReplyToOf(append(planted, dm)))
	require.Nil(t, vouches.ReplyToOf(planted))
	require.Nil(t, agent.ReplyProvenance(nil).ReplyToOf([]inbox.Record{dm}), "no table vouches for nothing")

	// A replyTo as a connector hands it over in memory (a struct, not a decoded object).
	type to struct {
		Source  string `json:"source"`
		Channel string `json:"channel"`
	}
	mem := inbox.Record{Metadata: map[string]any{agent.MetaReplyTo: to{"github", "x"}, agent.MetaVerifiedBy: "hmac-github"}, CreatedAt: t0.Add(time.Hour)}
	require.Equal(t, to{"github", "x"}, vouches.ReplyToOf([]inbox.Record{dm, mem}))
	mem.Metadata[agent.MetaVerifiedBy] = "slack-v0"
	require.Equal(t, dm.Metadata[agent.MetaReplyTo], vouches.ReplyToOf([]inbox.Record{dm, mem}))
}

package reply_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/connectors/email"
	"github.com/signalgate/signalgate/connectors/github"
	"github.com/signalgate/signalgate/connectors/kindstest"
	"github.com/signalgate/signalgate/connectors/slack"
	"github.com/signalgate/signalgate/reply"
)

// A reply's conversation as a watch names it: the Slack thread (or the DM), the GitHub
// issue whatever review thread, the email thread's root; each in the canonical form the
// kind's watch resource parser gives, so a reply's watch and an agent's watch of the
// same thing are one.
func TestWatchResource(t *testing.T) {
	places, resources := kindstest.Places(), kindstest.Resources()
	for _, c := range []struct {
		to   reply.To
		want string
	}{
		{reply.NewTo("slack", "acme", slack.Place{Team: "T1", Channel: "C1", ThreadTS: "1.0001"}), "C1/1.0001"},
		{reply.NewTo("slack", "acme", slack.Place{Team: "T1", Channel: "D1"}), "D1"},
		{reply.NewTo("github", "gh", github.Place{Repo: "Acme/API", Number: 7, ReviewCommentID: 99}), "acme/api#7"},
		{reply.NewTo("email", "support", email.Place{Mailbox: "INBOX", MessageID: "<root@x>"}), "root@x"},
		{reply.NewTo("email", "support", email.Place{Mailbox: "INBOX", MessageID: "re2@y", References: []string{"<root@x>", "re1@y"}}), "root@x"},
	} {
		got, ok := places.WatchResource(c.to)
		require.True(t, ok, "%+v", c.to)
		require.Equal(t, c.want, got)
		canonical, err := resources.Resource(c.to.Source, got)
		require.NoError(t, err)
		require.Equal(t, canonical.Canonical, got, "already canonical")
	}
	for _, to := range []reply.To{{Source: "slack", Connector: "acme"}, reply.NewTo("github", "gh", github.Place{Repo: "acme/api"}),
		reply.NewTo("email", "support", email.Place{References: []string{"<>"}}), {Source: "generic", Connector: "x"}} {
		_, ok := places.WatchResource(to)
		require.False(t, ok, "%+v", to)
	}
}

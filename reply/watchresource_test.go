package reply_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/reply"
	"github.com/signalgate/signalgate/watch"
)

// A reply's conversation as a watch names it: the Slack thread (or the DM), the GitHub
// issue whatever review thread, the email thread's root; each in watch.Resource's
// canonical form, so a reply's watch and an agent's watch of the same thing are one.
func TestWatchResource(t *testing.T) {
	for _, c := range []struct {
		to   reply.To
		want string
	}{
		{reply.To{Source: reply.SourceSlack, Connector: "acme", Team: "T1", Channel: "C1", ThreadTS: "1.0001"}, "C1/1.0001"},
		{reply.To{Source: reply.SourceSlack, Connector: "acme", Team: "T1", Channel: "D1"}, "D1"},
		{reply.To{Source: reply.SourceGitHub, Connector: "gh", Repo: "Acme/API", Number: 7, ReviewCommentID: 99}, "acme/api#7"},
		{reply.To{Source: reply.SourceEmail, Connector: "support", Mailbox: "INBOX", MessageID: "<root@x>"}, "root@x"},
		{reply.To{Source: reply.SourceEmail, Connector: "support", Mailbox: "INBOX", MessageID: "re2@y", References: []string{"<root@x>", "re1@y"}}, "root@x"},
	} {
		got, ok := c.to.WatchResource()
		require.True(t, ok, "%+v", c.to)
		require.Equal(t, c.want, got)
		canonical, _, err := watch.Resource(c.to.Source, got)
		require.NoError(t, err)
		require.Equal(t, canonical, got, "already canonical")
	}
	for _, to := range []reply.To{{Source: reply.SourceSlack, Connector: "acme"}, {Source: reply.SourceGitHub, Connector: "gh", Repo: "acme/api"},
		{Source: reply.SourceEmail, Connector: "support", References: []string{"<>"}}, {Source: "generic", Connector: "x"}} {
		_, ok := to.WatchResource()
		require.False(t, ok, "%+v", to)
	}
}

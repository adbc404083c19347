package reply_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/reply"
)

// A conversation's key: the Slack thread, the GitHub issue whatever review thread, the
// email thread's root; fixed length whatever the place's size.
func TestWatchKey(t *testing.T) {
	key := func(to reply.To) string {
		t.Helper()
		k, ok := to.WatchKey()
		require.True(t, ok, "%+v", to)
		require.Len(t, k, 64)
		return k
	}
	slack := reply.To{Source: reply.SourceSlack, Connector: "acme", Team: "T1", Channel: "C1", ThreadTS: "1.0001"}
	other := slack
	other.ThreadTS = "2.0002"
	require.NotEqual(t, key(slack), key(other))
	elsewhere := slack
	elsewhere.Connector = "beta"
	require.NotEqual(t, key(slack), key(elsewhere), "another connector")

	pr := reply.To{Source: reply.SourceGitHub, Connector: "gh", Repo: "acme/api", Number: 7}
	review := pr
	review.ReviewCommentID = 99
	require.Equal(t, key(pr), key(review), "a review thread is part of its PR")

	mail := reply.To{Source: reply.SourceEmail, Connector: "support", Mailbox: "INBOX", MessageID: "root@x"}
	answer := reply.To{Source: reply.SourceEmail, Connector: "support", Mailbox: "INBOX", MessageID: "re2@y", References: []string{"<root@x>", "re1@y"}}
	require.Equal(t, key(mail), key(answer), "a reply to the mail is of its thread")

	for _, to := range []reply.To{{Source: reply.SourceSlack, Connector: "acme"}, {Source: reply.SourceGitHub, Connector: "gh", Repo: "acme/api"},
		{Source: reply.SourceEmail, Connector: "support"}, {Source: "generic", Connector: "x"}} {
		_, ok := to.WatchKey()
		require.False(t, ok, "%+v", to)
	}
	_, ok := reply.To{Source: reply.SourceSlack, Connector: "acme", Channel: "C1", ThreadTS: string(make([]byte, 1<<16))}.WatchKey()
	require.True(t, ok)
}

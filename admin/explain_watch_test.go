package admin_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/admin"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/reply"
	"github.com/signalgate/signalgate/watch"
)

// Explain shows the thread a conversation watch (a reply sent with watch: true) adds to
// an event no route matches: a result of route "watch" and its notification.
func TestExplainShowsConversationWatches(t *testing.T) {
	en := newEnv(t, envOpts{})
	k := inbox.ThreadKey{Agent: "coder", Resource: "mail", Thread: "customer-1"}
	ok, err := en.st.WatchConversation(context.Background(), k,
		reply.To{Source: reply.SourceEmail, Connector: "support", Mailbox: "INBOX", MessageID: "root@acme.example"}, "r1", en.clock.Now())
	require.NoError(t, err)
	require.True(t, ok)
	msg := "From: Ann <ann@customer.example>\r\nTo: support@acme.example\r\nSubject: Re: my order\r\n" +
		"Message-ID: <second@customer.example>\r\nIn-Reply-To: <answer@acme.example>\r\n" +
		"References: <root@acme.example> <answer@acme.example>\r\n\r\nStill broken.\r\n"
	var x admin.Explanation
	en.call(http.MethodPost, "/admin/v1/explain", map[string]any{"source": "email", "connector": "support", "body": msg}, &x)
	require.Equal(t, inbox.EventRouted, x.Status, x.Reason)
	require.Contains(t, x.Routes, admin.RouteResult{Route: watch.Route, Item: 0, Matched: true, Thread: &k})
	require.Len(t, x.Notifications, 1)
}

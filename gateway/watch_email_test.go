package gateway

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/store/storetest"
	"github.com/signalgate/signalgate/watch"
)

// An email conversation watched through the agent API, end to end on a real Dovecot: no
// route matches email, yet the customer's reply to the watched Message-ID reaches the
// thread (route watch); mail of another conversation does not, nor mail of the same
// conversation that reached the server before the watch was created.
func TestWatchedMailThreadOnDovecot(t *testing.T) {
	addr, user, password := os.Getenv("SIGNALGATE_TEST_IMAP_ADDR"), os.Getenv("SIGNALGATE_TEST_IMAP_USER"), os.Getenv("SIGNALGATE_TEST_IMAP_PASSWORD")
	if addr == "" || user == "" || password == "" {
		t.Skip("needs SIGNALGATE_TEST_IMAP_ADDR, _USER and _PASSWORD (run .ci/dovecot.sh)")
	}
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			c, err := imapclient.DialInsecure(addr, nil)
			require.NoError(t, err)
			t.Cleanup(func() { _ = c.Close() })
			require.NoError(t, c.Login(user, password).Wait())
			// A mailbox of its own, so runs and parallel packages do not see each other's mail.
			rnd := make([]byte, 4)
			_, _ = rand.Read(rnd)
			box := "sg-watch-" + hex.EncodeToString(rnd)
			require.NoError(t, c.Create(box, nil).Wait())
			t.Cleanup(func() { _ = c.Delete(box).Wait() })

			cfg, err := ParseConfig("c.yaml", fmt.Appendf(nil, `
server: { listen: "127.0.0.1:0" }
storage: { driver: %s, dsn: %q }
agents: [ { id: coder, token: %s, watch_connectors: [email/support] } ]
connectors:
  email: [ { name: support, addr: %q, tls: false, username: %q, password: %q, mailboxes: [%q], poll_interval: 1s } ]
routes:
  - name: billing
    match: { source: generic }
    thread: { agent: coder, resource: billing, thread: invoices }
`, b.Config.Driver, b.Config.DSN, replyToken, addr, user, password, box), noEnv)
			require.NoError(t, err)
			m := New(cfg, storetest.Logger(t))
			require.NoError(t, m.Open(context.Background()))
			explain := store.NewExplain(m.Store)
			t.Cleanup(func() { require.NoError(t, m.Close()) })
			base := "http://" + m.Addr().String()

			var w watch.Watch
			require.Equal(t, http.StatusCreated, agentCall(t, http.MethodPost, base+"/v1/agents/coder/threads/support/ann/watches",
				map[string]string{"source": "email", "resource": "<order-1042@acme.example>"}, &w))
			require.Equal(t, "order-1042@acme.example", w.Resource)
			require.Equal(t, "support", w.Connector, "the only email connector the agent may watch")

			// INTERNALDATE has whole seconds: "after the watch" is the next whole second
			// on, or the baseline would rightly keep a reply of the watch's own second out.
			after := w.CreatedAt.Truncate(time.Second).Add(2 * time.Second)
			put := func(raw string, internal time.Time) {
				t.Helper()
				cmd := c.Append(box, int64(len(raw)), &imap.AppendOptions{Time: internal})
				_, err := cmd.Write([]byte(raw))
				require.NoError(t, err)
				require.NoError(t, cmd.Close())
				_, err = cmd.Wait()
				require.NoError(t, err)
			}
			// Appended in this order, so the poller (UID order, one commit each) has
			// stored the first two by the time the reply reaches the thread.
			put(customerMail("other-77@customer.example", "order-2000@acme.example", "Re: Order 2000", after), after)
			// Sent in the conversation an hour before the watch; its Date header claims
			// later, but the server's INTERNALDATE is when it arrived.
			put(customerMail("early-1@customer.example", "order-1042@acme.example", "Re: Order 1042", after), w.CreatedAt.Add(-time.Hour))
			put(customerMail("reply-1@customer.example", "order-1042@acme.example", "Re: Order 1042", after), after)

			frame := firstSignalAs(t, m, replyToken, "/v1/agents/coder/threads/support/ann/stream")
			require.Equal(t, "notification", frame["type"])
			ctx := context.Background()
			rs, _, err := store.NewAdmin(m.Store).ListRecords(ctx, inbox.RecordFilter{Agent: "coder", Limit: 10})
			require.NoError(t, err)
			var heard []string
			for _, r := range rs {
				heard = append(heard, r.SourceID)
			}
			require.Equal(t, []string{"reply-1@customer.example"}, heard, "only the reply after the watch")
			require.Equal(t, inbox.ThreadKey{Agent: "coder", Resource: "support", Thread: "ann"}, rs[0].Thread)
			require.Equal(t, watch.Route, rs[0].Route)
			require.Equal(t, "email", rs[0].Source)

			status := func(messageID string) (string, inbox.EventStatus) {
				t.Helper()
				id, ok, err := explain.EventByDelivery(ctx, "email", "support", messageID)
				require.NoError(t, err)
				require.True(t, ok, "%s was stored", messageID)
				ev, err := explain.GetEvent(ctx, id)
				require.NoError(t, err)
				return id, ev.Status
			}
			id, st := status("reply-1@customer.example")
			require.Equal(t, inbox.EventRouted, st)
			require.Equal(t, id, rs[0].EventID)
			_, st = status("other-77@customer.example")
			require.Equal(t, inbox.EventUnrouted, st, "another conversation")
			_, st = status("early-1@customer.example")
			require.Equal(t, inbox.EventUnrouted, st, "before the watch: the silent baseline")
		})
	}
}

// customerMail is a customer's RFC 5322 reply to root.
func customerMail(id, root, subject string, date time.Time) string {
	return fmt.Sprintf("From: Ann Customer <ann@customer.example>\r\nTo: support@acme.example\r\nSubject: %s\r\n"+
		"Date: %s\r\nMessage-ID: <%s>\r\nIn-Reply-To: <%s>\r\nReferences: <%s>\r\nMIME-Version: 1.0\r\n"+
		"Content-Type: text/plain; charset=utf-8\r\n\r\nThe parcel still has not arrived.\r\n",
		subject, date.Format(time.RFC1123Z), id, root, root)
}

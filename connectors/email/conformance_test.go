package email

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/connectors/connectorstest"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/server"
	"github.com/signalgate/signalgate/store/storetest"
)

// TestConformance runs the parts of the connector suite that apply to mail, over
// IMAP into each store backend.
func TestConformance(t *testing.T) {
	deep := []byte(deepMultipart(16000, "Message-ID: <poison@example.com>\r\n"))
	parts := []byte(manyParts(maxParts))
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			connectorstest.ExerciseMail(t, connectorstest.MailConnector{
				Deliver: func(t *testing.T, limit int64, msgs ...[]byte) connectorstest.MailRun {
					return deliverAll(t, b.Name, limit, msgs)
				},
				Message:         conformanceMail,
				MinLimit:        1024,
				TruncatedHeader: HeaderTruncated,
				Unreadable: []connectorstest.Unreadable{
					{Name: "unparseable header", Body: []byte("this line is not a header field\r\nMessage-ID: <junk@example.com>\r\n\r\n\x00\x01 garbage\r\n"),
						Reason: "unparseable message",
						// The server serves no header it cannot parse: the id falls back to the mailbox and UID.
						Check: func(t *testing.T, ev inbox.Event) {
							assert.True(t, strings.HasSuffix(ev.DeliveryID, ":1@INBOX"), ev.DeliveryID)
						}},
					{Name: "nested too deep", Body: deep, Reason: "multipart nested deeper than 32 levels",
						Check: func(t *testing.T, ev inbox.Event) {
							assert.Equal(t, "poison@example.com", ev.DeliveryID)
							assert.Equal(t, deep, ev.Body, "stored as received, for replay")
						}},
					{Name: "too many parts", Body: parts, Reason: "more than 1000 MIME parts",
						Check: func(t *testing.T, ev inbox.Event) { assert.Equal(t, parts, ev.Body, "stored as received, for replay") }},
				},
			})
		})
	}
}

func conformanceMail(_ *testing.T, messageID string) []byte {
	return []byte(crlf(fmt.Sprintf("From: Customer <customer@example.com>\nTo: support@acme.test\nSubject: Question\n"+
		"Message-ID: <%s>\nContent-Type: text/plain\n\nHello, this is a question.\n", messageID)))
}

// deliverAll runs a fresh poller and store over a mailbox holding msgs until all
// are stored; the cursor then stands past the last one.
func deliverAll(t *testing.T, backend string, limit int64, msgs [][]byte) connectorstest.MailRun {
	t.Helper()
	srv := newMemIMAP(t)
	for _, m := range msgs {
		srv.deliver("INBOX", string(m))
	}
	var e *env
	for _, b := range storetest.Backends(t) {
		if b.Name == backend {
			e = newEnvOn(t, storetest.Open(t, b))
		}
	}
	require.NotNil(t, e, backend)
	cfg := testConfig(srv.addr)
	cfg.MaxMessageBytes = server.ByteSize(limit)
	o := newObserver()
	e.startPoller(cfg, o)
	o.waitFor(t, "every message", storedAtLeast(len(msgs)))
	cur, _ := e.cursor("support", "INBOX")
	assert.True(t, strings.HasSuffix(cur, fmt.Sprintf(":%d", len(msgs))), cur)

	run := connectorstest.MailRun{Events: e.events(), Records: e.records("support", "customer@example.com")}
	for _, c := range e.rec.all() {
		run.Stored = append(run.Stored, connectorstest.Stored{Event: c.Event, Outcome: c.Outcome})
	}
	return run
}

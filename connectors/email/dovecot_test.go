package email

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
	"github.com/signalgate/signalgate/secret"
	"github.com/signalgate/signalgate/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Variables .ci/dovecot.sh prints; the Dovecot test is skipped without them.
const (
	envIMAPAddr     = "SIGNALGATE_TEST_IMAP_ADDR"
	envIMAPUser     = "SIGNALGATE_TEST_IMAP_USER"
	envIMAPPassword = "SIGNALGATE_TEST_IMAP_PASSWORD"
)

// TestDovecot runs the poller against a real Dovecot: append, poll, stop, append,
// restart, rebuild the mailbox, and check that nothing is missed or doubled.
func TestDovecot(t *testing.T) {
	addr, user, password := os.Getenv(envIMAPAddr), os.Getenv(envIMAPUser), os.Getenv(envIMAPPassword)
	if addr == "" || user == "" || password == "" {
		t.Skipf("%s, %s and %s not set (run .ci/dovecot.sh)", envIMAPAddr, envIMAPUser, envIMAPPassword)
	}
	c, err := imapclient.DialInsecure(addr, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	require.NoError(t, c.Login(user, password).Wait())

	// A mailbox of its own, so runs and parallel packages do not see each other's mail.
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	box := "sg-test-" + hex.EncodeToString(b)
	require.NoError(t, c.Create(box, nil).Wait())
	t.Cleanup(func() { _ = c.Delete(box).Wait() })
	put := func(raw string) { appendIMAP(t, c, box, raw) }

	// A malformed header line is skipped and noted; the message is still read.
	broken := "not a header line\r\nFrom: sloppy@example.com\r\nMessage-ID: <broken-dovecot@example.com>\r\n\r\nbody\r\n"
	noID := crlf("From: nobody@example.com\nSubject: no id\n\nA message without Message-ID.\n")
	put(testMail(1))
	put(testMail(2))
	put(broken)
	put(noID)

	e := newEnv(t)
	cfg := testConfig(addr)
	cfg.Username, cfg.Password, cfg.Mailboxes = user, secret.Secret(password), []string{box}

	// First run: the backlog, then mail that arrives while IDLE is running.
	o1 := newObserver()
	p1 := e.startPoller(cfg, o1)
	o1.waitFor(t, "the backlog", storedAtLeast(4))
	o1.waitFor(t, "IDLE", func(o *observer) bool { return o.idles >= 1 })
	assert.True(t, p1.Status().Mailboxes[0].IdleActive)
	put(testMail(3))
	o1.waitFor(t, "mail delivered during IDLE", storedAtLeast(5))
	stopPoller(t, p1)
	validity := p1.Status().Mailboxes[0].UIDValidity
	require.NotZero(t, validity)

	// Mail that arrives while the gateway is down.
	put(testMail(4))
	put(testMail(5))

	// Second run, a new poller on the same database, marking what it stores as seen.
	cfg.AfterIngest = AfterIngestSeen
	o2 := newObserver()
	p2 := e.startPoller(cfg, o2)
	o2.waitFor(t, "the mail from the downtime", storedAtLeast(2))
	o2.waitFor(t, "IDLE", func(o *observer) bool { return o.idles >= 1 })
	assert.Equal(t, 7, e.events())
	cur, ok := e.cursor("support", box)
	require.True(t, ok)
	assert.Equal(t, formatCursor(validity, 7), cur)

	calls := e.rec.all()
	require.Len(t, calls, 7)
	seen := map[string]int{}
	for _, call := range calls {
		assert.False(t, call.Outcome.Duplicate, call.Event.DeliveryID)
		seen[call.Event.DeliveryID]++
	}
	assert.Len(t, seen, 7, "every message exactly once: %v", seen)
	assert.Equal(t, "broken-dovecot@example.com", calls[2].Event.DeliveryID)
	assert.Equal(t, "routed", string(calls[2].Outcome.Status))
	assert.Equal(t, `skipped malformed header line 1: "not a header line"`, calls[2].Event.Headers[HeaderParseNotes])
	assert.Equal(t, 1, e.records("support", "sloppy@example.com"))
	assert.True(t, strings.HasPrefix(calls[3].Event.DeliveryID, "sha256:"), calls[3].Event.DeliveryID)
	assert.Equal(t, 1, e.records("support", "c1@example.com"))

	fl := flags(t, c, box)
	require.Len(t, fl, 7)
	for uid := uint32(1); uid <= 5; uid++ {
		assert.NotContains(t, fl[uid], imap.FlagSeen, "uid %d was fetched with BODY.PEEK", uid)
	}
	for uid := uint32(6); uid <= 7; uid++ {
		assert.Contains(t, fl[uid], imap.FlagSeen, "uid %d: after_ingest seen", uid)
	}
	stopPoller(t, p2)

	// The mailbox is rebuilt: a new UIDVALIDITY, the same mail plus one message.
	require.NoError(t, c.Unselect().Wait())
	require.NoError(t, c.Delete(box).Wait())
	require.NoError(t, c.Create(box, nil).Wait())
	for i := 1; i <= 5; i++ {
		put(testMail(i))
	}
	put(broken)
	put(noID)
	put(testMail(6))

	done := box + "-done"
	require.NoError(t, c.Create(done, nil).Wait())
	t.Cleanup(func() { _ = c.Delete(done).Wait() })
	cfg.AfterIngest = "move:" + done
	o3 := newObserver()
	p3 := e.startPoller(cfg, o3)
	o3.waitFor(t, "the rescan", storedAtLeast(8))
	o3.waitFor(t, "IDLE", func(o *observer) bool { return o.idles >= 1 })
	assert.Equal(t, 8, e.events(), "only the new message is a new event")
	mb := p3.Status().Mailboxes[0]
	assert.NotEqual(t, validity, mb.UIDValidity)
	assert.Equal(t, uint32(8), mb.LastUID)
	dups := 0
	for _, call := range e.rec.all()[7:] {
		if call.Outcome.Duplicate {
			dups++
		}
	}
	assert.Equal(t, 7, dups)
	assert.Equal(t, 1, e.records("support", "c1@example.com"))
	ctx := context.Background()
	v, _, err := store.NewConnectorState(e.st).ConnectorState(ctx, "email/support", box)
	require.NoError(t, err)
	assert.Equal(t, fmt.Sprintf("%d:8", mb.UIDValidity), v)
	// Duplicates are moved too: the action follows every committed message.
	assert.Empty(t, flags(t, c, box))
	assert.Len(t, flags(t, c, done), 8)
}

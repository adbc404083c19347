package email

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/service"
	"github.com/signalgate/signalgate/store"
)

func storedAtLeast(n int) func(*observer) bool {
	return func(o *observer) bool { return o.stored >= n }
}

func TestNewMailIngestedOnce(t *testing.T) {
	srv := newMemIMAP(t)
	srv.deliver("INBOX", testMail(1))
	srv.deliver("INBOX", testMail(2))
	e := newEnv(t)
	o := newObserver()
	p := e.startPoller(testConfig(srv.addr), o)

	o.waitFor(t, "two messages stored", storedAtLeast(2))
	assert.Equal(t, 2, e.events())
	assert.Equal(t, 1, e.records("support", "c1@example.com"))
	cur, ok := e.cursor("support", "INBOX")
	require.True(t, ok)
	assert.True(t, strings.HasSuffix(cur, ":2"), cur)

	// A forced poll finds nothing new and stores nothing again.
	cycles, _, _ := o.snapshot()
	p.PollNow()
	o.waitFor(t, "another cycle", func(o *observer) bool { return o.cycles > cycles })
	_, stored, _ := o.snapshot()
	assert.Equal(t, 2, stored)
	assert.Equal(t, 2, e.events())

	calls := e.rec.all()
	require.Len(t, calls, 2)
	ev := calls[0].Event
	assert.Equal(t, "q1@example.com", ev.DeliveryID)
	assert.Equal(t, "email", ev.Source)
	assert.Equal(t, "support", ev.Connector)
	assert.Equal(t, inbox.EventRouted, calls[0].Outcome.Status)
	assert.Contains(t, string(ev.Body), "Hello, this is question 1.")
	assert.Equal(t, "INBOX", ev.Headers["X-Imap-Mailbox"])
	assert.Equal(t, `Customer 1 <c1@example.com> wrote "Question 1": Hello, this is question 1.`, calls[0].Items[0].Summary)

	// Fetching used BODY.PEEK[]: with after_ingest none nothing is marked seen.
	for uid, fl := range flags(t, srv.client(), "INBOX") {
		assert.NotContains(t, fl, imap.FlagSeen, "uid %d", uid)
	}

	st := p.Status()
	require.Len(t, st.Mailboxes, 1)
	mb := st.Mailboxes[0]
	assert.True(t, st.Running)
	assert.Equal(t, "INBOX", mb.Mailbox)
	assert.True(t, mb.Connected)
	assert.Equal(t, uint32(2), mb.LastUID)
	assert.NotZero(t, mb.UIDValidity)
	assert.Equal(t, testNow, mb.LastPoll)
	assert.Empty(t, mb.LastError)
}

func TestIdleNotificationTriggersFetch(t *testing.T) {
	srv := newMemIMAP(t)
	e := newEnv(t)
	o := newObserver()
	p := e.startPoller(testConfig(srv.addr), o) // poll_interval 1h: only IDLE can bring the mail in

	o.waitFor(t, "IDLE", func(o *observer) bool { return o.idles >= 1 })
	assert.True(t, p.Status().Mailboxes[0].IdleActive)
	assert.Equal(t, StateIdle, p.Status().Mailboxes[0].State)

	srv.appendIMAP("INBOX", testMail(1))
	o.waitFor(t, "the appended message", storedAtLeast(1))
	srv.appendIMAP("INBOX", testMail(2))
	o.waitFor(t, "the second appended message", storedAtLeast(2))
	assert.Equal(t, 2, e.events())
	o.waitFor(t, "IDLE again", func(o *observer) bool { return o.idles >= 3 })
}

func TestPollingWithoutIdle(t *testing.T) {
	srv := newMemIMAP(t)
	e := newEnv(t)
	o := newObserver()
	cfg := testConfig(srv.addr)
	off := false
	cfg.Idle = &off
	p := e.startPoller(cfg, o)
	o.waitFor(t, "first poll", func(o *observer) bool { return o.cycles >= 1 })

	srv.deliver("INBOX", testMail(1))
	p.PollNow()
	o.waitFor(t, "the message", storedAtLeast(1))
	_, _, idles := o.snapshot()
	assert.Zero(t, idles)
	assert.Equal(t, 1, e.events())
}

func TestRestartNothingTwiceNothingMissed(t *testing.T) {
	srv := newMemIMAP(t)
	srv.deliver("INBOX", testMail(1))
	srv.deliver("INBOX", testMail(2))
	e := newEnv(t)
	cfg := testConfig(srv.addr)

	o1 := newObserver()
	p1 := e.startPoller(cfg, o1)
	o1.waitFor(t, "first run", storedAtLeast(2))
	stopPoller(t, p1)
	assert.Equal(t, StateStopped, p1.Status().Mailboxes[0].State)

	// Mail that arrives while the gateway is down.
	srv.deliver("INBOX", testMail(3))
	srv.deliver("INBOX", testMail(4))

	o2 := newObserver()
	e.startPoller(cfg, o2)
	o2.waitFor(t, "second run", storedAtLeast(2))
	assert.Equal(t, 4, e.events())
	var ids []string
	for _, c := range e.rec.all() {
		assert.False(t, c.Outcome.Duplicate, c.Event.DeliveryID)
		ids = append(ids, c.Event.DeliveryID)
	}
	assert.Equal(t, []string{"q1@example.com", "q2@example.com", "q3@example.com", "q4@example.com"}, ids)
}

func TestUIDValidityChangeRescansWithoutDuplicates(t *testing.T) {
	srv := newMemIMAP(t)
	srv.deliver("INBOX", testMail(1))
	srv.deliver("INBOX", testMail(2))
	e := newEnv(t)
	cfg := testConfig(srv.addr)

	o1 := newObserver()
	p1 := e.startPoller(cfg, o1)
	o1.waitFor(t, "first run", storedAtLeast(2))
	old := p1.Status().Mailboxes[0].UIDValidity
	stopPoller(t, p1)

	// The mailbox is rebuilt (a server migration): new UIDVALIDITY, same mail plus one.
	require.NoError(t, srv.user.Delete("INBOX"))
	require.NoError(t, srv.user.Create("INBOX", nil))
	srv.deliver("INBOX", testMail(2))
	srv.deliver("INBOX", testMail(1))
	srv.deliver("INBOX", testMail(3))

	o2 := newObserver()
	p2 := e.startPoller(cfg, o2)
	o2.waitFor(t, "rescan", storedAtLeast(3))
	assert.Equal(t, 3, e.events())
	assert.Equal(t, 1, e.records("support", "c1@example.com"))
	calls := e.rec.all()[2:]
	require.Len(t, calls, 3)
	assert.True(t, calls[0].Outcome.Duplicate)
	assert.True(t, calls[1].Outcome.Duplicate)
	assert.False(t, calls[2].Outcome.Duplicate)
	assert.Equal(t, "q3@example.com", calls[2].Event.DeliveryID)

	mb := p2.Status().Mailboxes[0]
	assert.NotEqual(t, old, mb.UIDValidity)
	cur, _ := e.cursor("support", "INBOX")
	assert.Equal(t, formatCursor(mb.UIDValidity, 3), cur)
}

func TestReconnectAfterServerGoesAway(t *testing.T) {
	srv := newMemIMAP(t)
	srv.deliver("INBOX", testMail(1))
	e := newEnv(t)
	o := newObserver()
	p := e.startPoller(testConfig(srv.addr), o)
	o.waitFor(t, "first message and IDLE", func(o *observer) bool { return o.stored >= 1 && o.idles >= 1 })

	srv.stop()
	// Several failed reconnects (refused) prove the backoff loop keeps trying.
	o.waitFor(t, "failed reconnects", func(o *observer) bool { return len(o.disconnects) >= 3 })
	st := p.Status().Mailboxes[0]
	assert.False(t, st.Connected)
	assert.NotEmpty(t, st.LastError)
	assert.NotContains(t, st.LastError, testPassword)

	srv.deliver("INBOX", testMail(2)) // arrives during the outage
	srv.restart()
	o.waitFor(t, "the message from the outage", storedAtLeast(2))
	assert.Equal(t, 2, e.events())
	assert.GreaterOrEqual(t, p.Status().Mailboxes[0].Reconnects, int64(3))
	for _, err := range o.disconnects {
		assert.NotContains(t, err.Error(), testPassword)
	}
}

func TestAfterIngestSeenOnlyAfterCommit(t *testing.T) {
	srv := newMemIMAP(t)
	srv.deliver("INBOX", testMail(1))
	e := newEnv(t)
	e.rec.fail.Store(true)
	o := newObserver()
	cfg := testConfig(srv.addr)
	cfg.AfterIngest = "seen"
	e.startPoller(cfg, o)

	o.waitFor(t, "failed cycles", func(o *observer) bool { return len(o.pollErrs) >= 2 })
	c := srv.client()
	assert.NotContains(t, flags(t, c, "INBOX")[1], imap.FlagSeen)
	_, ok := e.cursor("support", "INBOX")
	assert.False(t, ok, "no cursor without a commit")
	assert.Equal(t, 0, e.events())

	e.rec.fail.Store(false)
	o.waitFor(t, "the message", storedAtLeast(1))
	o.waitFor(t, "IDLE after the cycle", func(o *observer) bool { return o.idles >= 1 })
	assert.Contains(t, flags(t, c, "INBOX")[1], imap.FlagSeen)
	cur, ok := e.cursor("support", "INBOX")
	require.True(t, ok)
	assert.True(t, strings.HasSuffix(cur, ":1"), cur)
}

func TestAfterIngestMove(t *testing.T) {
	srv := newMemIMAP(t)
	srv.deliver("INBOX", testMail(1))
	srv.deliver("INBOX", testMail(2))
	e := newEnv(t)
	o := newObserver()
	cfg := testConfig(srv.addr)
	cfg.AfterIngest = "move:Archive"
	e.startPoller(cfg, o)
	o.waitFor(t, "both messages", storedAtLeast(2))
	o.waitFor(t, "IDLE after the cycle", func(o *observer) bool { return o.idles >= 1 })

	c := srv.client()
	assert.Empty(t, flags(t, c, "INBOX"))
	assert.Len(t, flags(t, c, "Archive"), 2)
	assert.Equal(t, 2, e.events())
}

func TestAutoReplyStoredNotRouted(t *testing.T) {
	srv := newMemIMAP(t)
	srv.deliver("INBOX", strings.Replace(testMail(1), "Subject:", "Auto-Submitted: auto-replied\r\nSubject:", 1))
	e := newEnv(t)
	o := newObserver()
	e.startPoller(testConfig(srv.addr), o)
	o.waitFor(t, "the message", storedAtLeast(1))
	calls := e.rec.all()
	require.Len(t, calls, 1)
	assert.Equal(t, inbox.EventIgnored, calls[0].Outcome.Status)
	assert.Equal(t, 0, e.records("support", "c1@example.com"))
}

func TestSeveralMailboxes(t *testing.T) {
	srv := newMemIMAP(t)
	require.NoError(t, srv.user.Create("Escalations", nil))
	srv.deliver("INBOX", testMail(1))
	srv.deliver("Escalations", testMail(2))
	// The same message in two mailboxes is one delivery.
	srv.deliver("Escalations", testMail(1))
	e := newEnv(t)
	o := newObserver()
	cfg := testConfig(srv.addr)
	cfg.Mailboxes = []string{"INBOX", "Escalations"}
	p := e.startPoller(cfg, o)
	o.waitFor(t, "all three", storedAtLeast(3))
	assert.Equal(t, 2, e.events())
	st := p.Status()
	require.Len(t, st.Mailboxes, 2)
	assert.Equal(t, uint32(1), st.Mailboxes[0].LastUID)
	assert.Equal(t, uint32(2), st.Mailboxes[1].LastUID)
	cur, ok := e.cursor("support", "Escalations")
	require.True(t, ok)
	assert.True(t, strings.HasSuffix(cur, ":2"), cur)
}

// denyLock is a lock another replica holds.
type denyLock struct{ called chan string }

func (l *denyLock) TryLock(_ context.Context, key string) (func(), bool, error) {
	select {
	case l.called <- key:
	default:
	}
	return nil, false, nil
}

func TestLockHeldElsewhereStandsBy(t *testing.T) {
	srv := newMemIMAP(t)
	srv.deliver("INBOX", testMail(1))
	e := newEnv(t)
	o := newObserver()
	lock := &denyLock{called: make(chan string, 1)}
	p := e.startPoller(testConfig(srv.addr), o, WithLock(lock))
	select {
	case key := <-lock.called:
		assert.Equal(t, "email/support/INBOX", key)
	case <-time.After(waitLimit):
		t.Fatal("lock never asked")
	}
	stopPoller(t, p)
	cycles, stored, idles := o.snapshot()
	assert.Zero(t, cycles+stored+idles, "a standby replica does not touch the mailbox")
	assert.Equal(t, 0, e.events())
}

func TestTLSAndStartTLS(t *testing.T) {
	serverTLS, clientTLS := selfSigned(t)
	for _, tc := range []struct {
		name     string
		implicit bool
	}{{"implicit TLS", true}, {"STARTTLS", false}} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newMemIMAPWith(t, serverTLS, tc.implicit)
			srv.deliver("INBOX", testMail(1))
			e := newEnv(t)
			o := newObserver()
			cfg := testConfig(srv.addr)
			on := true
			if tc.implicit {
				cfg.TLS = &on
			} else {
				cfg.StartTLS = true
			}
			e.startPoller(cfg, o, WithTLSConfig(clientTLS))
			o.waitFor(t, "the message", storedAtLeast(1))
			assert.Equal(t, 1, e.events())
		})
	}
}

func TestUntrustedCertificateFails(t *testing.T) {
	serverTLS, _ := selfSigned(t)
	srv := newMemIMAPWith(t, serverTLS, true)
	e := newEnv(t)
	o := newObserver()
	cfg := testConfig(srv.addr)
	on := true
	cfg.TLS = &on
	e.startPoller(cfg, o)
	o.waitFor(t, "a refused handshake", func(o *observer) bool { return len(o.disconnects) >= 1 })
	o.mu.Lock()
	err := o.disconnects[0]
	o.mu.Unlock()
	assert.ErrorContains(t, err, "certificate")
}

func TestStopIsIdempotentAndStartTwiceFails(t *testing.T) {
	srv := newMemIMAP(t)
	e := newEnv(t)
	o := newObserver()
	p := e.startPoller(testConfig(srv.addr), o)
	require.Error(t, p.Start(context.Background()))
	stopPoller(t, p)
	stopPoller(t, p)
	assert.False(t, p.Status().Running)
}

func TestNewPollerRejectsBadConfig(t *testing.T) {
	_, err := NewPoller(Config{Name: "x"}, &recorder{}, storeless{}, service.Base{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "addr: required")
	assert.True(t, slices.ContainsFunc(strings.Split(err.Error(), "\n"), func(s string) bool { return strings.HasPrefix(s, "password:") }))
}

type storeless struct{}

func (storeless) ConnectorState(context.Context, string, string) (string, bool, error) {
	return "", false, nil
}

func (storeless) SetConnectorState(context.Context, string, string, string) error { return nil }

func TestInitialSyncNewSkipsBacklogButNotLaterMail(t *testing.T) {
	srv := newMemIMAP(t)
	srv.deliver("INBOX", testMail(1))
	srv.deliver("INBOX", testMail(2))
	e := newEnv(t)
	cfg := testConfig(srv.addr)
	cfg.InitialSync = InitialSyncNew

	o1 := newObserver()
	p1 := e.startPoller(cfg, o1)
	o1.waitFor(t, "first poll", func(o *observer) bool { return o.cycles >= 1 })
	stopPoller(t, p1)
	assert.Equal(t, 0, e.events(), "the existing backlog is skipped")

	// Mail arriving after the first connection, even before any event was stored,
	// is read after a restart: the initial cursor was saved at once.
	srv.deliver("INBOX", testMail(3))
	o2 := newObserver()
	e.startPoller(cfg, o2)
	o2.waitFor(t, "second run", storedAtLeast(1))
	var ids []string
	for _, c := range e.rec.all() {
		ids = append(ids, c.Event.DeliveryID)
	}
	assert.Equal(t, []string{"q3@example.com"}, ids)
}

func TestStartContextEndingStopsRunning(t *testing.T) {
	srv := newMemIMAP(t)
	e := newEnv(t)
	o := newObserver()
	p, err := NewPoller(testConfig(srv.addr), e.rec, store.NewConnectorState(e.st), service.Base{Now: func() time.Time { return testNow }},
		WithHooks(o.hooks()), WithBackoff(tinyBackoff))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	require.NoError(t, p.Start(ctx))
	require.True(t, p.Status().Running)
	cancel()
	select {
	case <-p.Stopped():
	case <-time.After(waitLimit): // hang guard only
		t.Fatal("workers did not end with their context")
	}
	assert.False(t, p.Status().Running, "a poller whose context ended is not running")
	require.NoError(t, p.Start(context.Background()), "and can start again")
	stopPoller(t, p)
}

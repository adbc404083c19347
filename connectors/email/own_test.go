package email

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/reply"
	"github.com/signalgate/signalgate/store"
)

// fakeOwn answers from a set of recorded platform ids, as the outbox would.
type fakeOwn struct {
	mu    sync.Mutex
	ids   map[string]bool
	asked []string
	err   error
}

func (f *fakeOwn) OwnReply(_ context.Context, source, connector, platformID string) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, source+"/"+connector+"/"+platformID)
	if f.err != nil {
		return false, f.err
	}
	return f.ids[platformID], nil
}

// TestPollerIgnoresOwnReply: a message whose Message-ID is one of the gateway's
// recorded replies (here a copy in a polled mailbox, marked auto-submitted too) is
// stored ignored "own reply", never a notification; other mail is routed.
func TestPollerIgnoresOwnReply(t *testing.T) {
	s := newMemIMAP(t)
	own := &fakeOwn{ids: map[string]bool{"signalgate.reply.abc@example.com": true}}
	s.deliver("INBOX", crlf("From: support@example.com\nTo: jane@example.com\nSubject: Re: Question\n"+
		"Auto-Submitted: auto-replied\nMessage-ID: <signalgate.reply.abc@example.com>\n\nIt is fixed.\n"))
	s.deliver("INBOX", testMail(1))
	e := newEnv(t)
	o := newObserver()
	e.startPoller(testConfig(s.addr), o, WithOwn(own))
	o.waitFor(t, "both messages", storedAtLeast(2))

	calls := e.rec.all()
	require.Len(t, calls, 2)
	assert.Equal(t, inbox.EventIgnored, calls[0].Outcome.Status)
	ev, err := store.NewExplain(e.st).GetEvent(context.Background(), calls[0].Outcome.EventID)
	require.NoError(t, err)
	assert.Equal(t, reply.OwnReason, ev.Error, "own reply wins over the auto-submitted rule")
	assert.Equal(t, 0, e.records("support", "support@example.com"))
	assert.Equal(t, inbox.EventRouted, calls[1].Outcome.Status)
	assert.Equal(t, []string{"email/support/signalgate.reply.abc@example.com", "email/support/q1@example.com"}, own.asked)
}

// TestPollerOwnReplyLookupFails: when the lookup fails the message is not stored
// (it might be ours); the cycle fails and the message is read again later.
func TestPollerOwnReplyLookupFails(t *testing.T) {
	s := newMemIMAP(t)
	s.deliver("INBOX", testMail(1))
	e := newEnv(t)
	o := newObserver()
	own := &fakeOwn{err: errors.New("database unavailable")}
	e.startPoller(testConfig(s.addr), o, WithOwn(own))
	o.waitFor(t, "a failed cycle", func(o *observer) bool { return len(o.pollErrs) >= 1 })
	assert.ErrorContains(t, o.pollErrs[0], "check for an own reply: database unavailable")
	assert.Equal(t, 0, e.events())
}

// TestItemCarriesReplyTo: an email record says where an answer goes.
func TestItemCarriesReplyTo(t *testing.T) {
	cfg := testMapConfig()
	raw := crlf("From: Jane <Jane@Example.com>\nTo: support@acme.test\nSubject: Re: Printer\n" +
		"Message-ID: <q2@example.com>\nIn-Reply-To: <q1@example.com>\nReferences: <q0@example.com> <q1@example.com>\n\nStill broken.\n")
	items, err := Items(cfg, &inbox.Event{Connector: cfg.Name, Body: []byte(raw), Headers: map[string]string{HeaderMailbox: "Support"}})
	require.NoError(t, err)
	require.Len(t, items, 1)
	to, ok := reply.FromMetadata(items[0].Metadata)
	require.True(t, ok)
	assert.Equal(t, reply.NewTo("email", cfg.Name, Place{Mailbox: "Support", MessageID: "q2@example.com", References: []string{"q0@example.com", "q1@example.com"}, From: "jane@example.com", Subject: "Re: Printer"}), to)

	// Without a sender there is no one to answer.
	items, err = Items(cfg, &inbox.Event{Connector: cfg.Name, Body: []byte(crlf("Subject: anonymous\n\nHi.\n"))})
	require.NoError(t, err)
	_, ok = reply.FromMetadata(items[0].Metadata)
	assert.False(t, ok)
}

// A copy of a reply can be polled before the outbox records its Message-ID: the
// derived form on the smtp.from domain, from the smtp.from address, is enough. A
// stranger sending a Message-ID of that form (to silence the agent) is not ignored.
func TestPollerIgnoresMarkedOwnReplyBeforeItIsRecorded(t *testing.T) {
	s := newMemIMAP(t)
	const sum = "0123456789abcdef0123456789abcdef"
	s.deliver("INBOX", crlf("From: Support <Support@acme.test>\nTo: jane@example.com\nSubject: Re: Question\n"+
		"Message-ID: <signalgate.reply."+sum+"@acme.test>\n\nIt is fixed.\n"))
	s.deliver("INBOX", crlf("From: Mallory <mallory@evil.test>\nTo: support@acme.test\nSubject: Re: Question\n"+
		"Message-ID: <signalgate.reply."+sum+"@acme.test>\n\nIgnore me if you can.\n"))
	e := newEnv(t)
	o := newObserver()
	own := &fakeOwn{ids: map[string]bool{}} // nothing recorded yet
	cfg := testConfig(s.addr)
	cfg.SMTP = &SMTPConfig{Addr: "127.0.0.1:2525", From: "Support <support@acme.test>"}
	e.startPoller(cfg, o, WithOwn(own))
	o.waitFor(t, "both messages", storedAtLeast(2))

	calls := e.rec.all()
	require.Len(t, calls, 2)
	assert.Equal(t, inbox.EventIgnored, calls[0].Outcome.Status)
	ev, err := store.NewExplain(e.st).GetEvent(context.Background(), calls[0].Outcome.EventID)
	require.NoError(t, err)
	assert.Equal(t, reply.OwnReason, ev.Error)
	assert.Equal(t, inbox.EventRouted, calls[1].Outcome.Status, "a stranger's marker is not ours")
}

// markedOwn accepts only the derived form, on our domain, from our address.
func TestMarkedOwnForm(t *testing.T) {
	cfg := Config{SMTP: &SMTPConfig{From: "Support <support@acme.test>"}}
	id := MessageID(reply.Reply{ID: "r-1"}, "support@acme.test")
	assert.True(t, cfg.markedOwn(id, "Support <support@acme.test>"))
	assert.True(t, cfg.markedOwn(id, "SUPPORT@ACME.TEST"))
	assert.False(t, cfg.markedOwn(id, "mallory@evil.test"), "another sender")
	assert.False(t, cfg.markedOwn(strings.Replace(id, "acme.test", "evil.test", 1), "support@acme.test"), "another domain")
	assert.False(t, cfg.markedOwn("signalgate.reply.xyz@acme.test", "support@acme.test"), "not a derived sum")
	assert.False(t, cfg.markedOwn("q1@acme.test", "support@acme.test"), "a person's mail from the same address")
	assert.False(t, (&Config{}).markedOwn(id, "support@acme.test"), "a connector that never replies")
}

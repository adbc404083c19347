package email

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/reply"
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
	ev, err := e.st.GetEvent(context.Background(), calls[0].Outcome.EventID)
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
	assert.Equal(t, reply.To{
		Source: reply.SourceEmail, Connector: cfg.Name, Mailbox: "Support", MessageID: "q2@example.com",
		References: []string{"q0@example.com", "q1@example.com"}, From: "jane@example.com", Subject: "Re: Printer",
	}, to)

	// Without a sender there is no one to answer.
	items, err = Items(cfg, &inbox.Event{Connector: cfg.Name, Body: []byte(crlf("Subject: anonymous\n\nHi.\n"))})
	require.NoError(t, err)
	_, ok = reply.FromMetadata(items[0].Metadata)
	assert.False(t, ok)
}

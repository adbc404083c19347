package email

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/inbox"
)

// TestItemsReparseStoredEvent: the event a worker stores parses back, without IMAP,
// into the item the worker made.
func TestItemsReparseStoredEvent(t *testing.T) {
	cfg := testMapConfig()
	p := &Poller{cfg: cfg, now: func() time.Time { return testNow }, log: slog.New(slog.DiscardHandler)}
	w := newWorker(p, "Support")
	for name, raw := range map[string]string{"with id": crlf(plainMail), "without id": crlf("From: a@example.com\nSubject: Hi\n\nHello.\n")} {
		t.Run(name, func(t *testing.T) {
			ev, want := w.event([]byte(raw), false, 9, 42, time.Time{})
			got, err := Items(cfg, ev)
			require.NoError(t, err)
			assert.Equal(t, want, got)

			parser := NewParser([]Config{cfg})
			got, err = parser.Items(context.Background(), ev)
			require.NoError(t, err)
			assert.Equal(t, want, got)
		})
	}
}

func TestItemsSampleWithoutIMAPHeaders(t *testing.T) {
	cfg := testMapConfig()
	items, err := Items(cfg, &inbox.Event{Connector: "support", Body: []byte(crlf(plainMail))})
	require.NoError(t, err)
	require.Len(t, items, 1)
	assert.Equal(t, "INBOX", items[0].Fields.Mailbox, "the first configured mailbox")
	assert.Equal(t, "plain-1@example.com", items[0].DedupeKey)
	assert.Contains(t, items[0].SourceID, "plain-1@example.com", "the Message-ID")

	_, err = Items(cfg, &inbox.Event{Connector: "support", Body: []byte("  ")})
	assert.EqualError(t, err, "unparseable message: empty message")
	_, err = NewParser([]Config{cfg}).Items(context.Background(), &inbox.Event{Connector: "other"})
	assert.EqualError(t, err, `no email connector named "other"`)
}

package email

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/connectors"
)

// A message is watched by its own Message-ID, In-Reply-To and References (the root and
// the latest, bounded), and happened at the server's INTERNALDATE, which the stored
// event keeps for replay; without it, at its Date header.
func TestItemsConversationAndTime(t *testing.T) {
	cfg := testMapConfig()
	p := &Poller{cfg: cfg, now: func() time.Time { return testNow }, log: slog.New(slog.DiscardHandler)}
	w := newWorker(p, "Support")
	var refs []string
	for i := range 40 {
		refs = append(refs, fmt.Sprintf("<r%d@acme.example>", i))
	}
	raw := crlf("From: Ann <ann@customer.example>\nTo: support@acme.example\nSubject: Re: order\n" +
		"Date: Sun, 01 Mar 2026 09:00:00 +0000\nMessage-ID: <mine@customer.example>\n" +
		"In-Reply-To: <r39@acme.example>\nReferences: " + strings.Join(refs, " ") + "\n\nStill broken.\n")
	internal := time.Date(2026, 3, 1, 9, 5, 0, 0, time.UTC)
	ev, items := w.event([]byte(raw), false, 9, 42, internal)
	require.Len(t, items, 1)
	it := items[0]
	assert.Equal(t, internal, it.OccurredAt)
	require.Len(t, it.WatchResources, connectors.MaxWatchResources)
	assert.Equal(t, []string{"mine@customer.example", "r39@acme.example", "r0@acme.example", "r38@acme.example"}, it.WatchResources[:4])

	replayed, err := Items(cfg, ev)
	require.NoError(t, err)
	assert.Equal(t, internal, replayed[0].OccurredAt)

	_, items = w.event([]byte(raw), false, 9, 43, time.Time{})
	assert.Equal(t, time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC), items[0].OccurredAt)
}

package email

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/store/storetest"
)

// TestOverlongMessageIDDoesNotBlockMailbox plays a sender whose Message-ID is 6 KB of
// incompressible text. On PostgreSQL it used to fail the B-tree insert of the delivery id
// and dedupe keys, the worker retried that message forever and the mailbox ingested
// nothing more. The message is stored (its keys hashed) and the next one follows.
func TestOverlongMessageIDDoesNotBlockMailbox(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			raw := make([]byte, 3000)
			_, _ = rand.Read(raw)
			longID := hex.EncodeToString(raw) + "@example.com"
			srv := newMemIMAP(t)
			srv.deliver("INBOX", crlf(fmt.Sprintf("From: Mallory <m@example.com>\nTo: support@acme.test\nSubject: Hi\n"+
				"Message-ID: <%s>\nReferences: <%s>\nContent-Type: text/plain\n\nHello.\n", longID, longID)))
			srv.deliver("INBOX", testMail(2))
			e := newEnvOn(t, storetest.Open(t, b))
			o := newObserver()
			e.startPoller(testConfig(srv.addr), o)
			o.waitFor(t, "both messages", storedAtLeast(2))

			calls := e.rec.all()
			require.Len(t, calls, 2)
			assert.Equal(t, inbox.EventRouted, calls[0].Outcome.Status)
			assert.LessOrEqual(t, len(calls[0].Event.DeliveryID), 256)
			assert.True(t, strings.HasPrefix(calls[0].Event.DeliveryID, "sha256:"), calls[0].Event.DeliveryID)
			assert.Equal(t, inbox.EventRouted, calls[1].Outcome.Status)
			assert.Equal(t, 1, e.records("support", "m@example.com"))
			assert.Equal(t, 1, e.records("support", "c2@example.com"))
			cur, _ := e.cursor("support", "INBOX")
			assert.True(t, strings.HasSuffix(cur, ":2"), cur)
			_, _, _ = o.snapshot()
			o.mu.Lock()
			assert.Empty(t, o.pollErrs)
			o.mu.Unlock()
		})
	}
}

package connectorstest

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/inbox"
)

// Stored is one message a mail connector stored, and the inbox's answer.
type Stored struct {
	Event   inbox.Event
	Outcome connectors.Outcome
}

// MailRun is what one run of a mail connector over a mailbox left.
type MailRun struct {
	Stored  []Stored // in mailbox order
	Events  int      // events in the store afterwards
	Records int      // inbox records of Message's sender afterwards
}

// MailConnector adapts a connector that fetches mail to ExerciseMail. Mail has no
// signature, connector path or body limit of the server: the cases that apply are
// unreadable messages, redelivery by Message-ID and the message size limit.
type MailConnector struct {
	// Deliver puts msgs in a fresh mailbox in this order, runs a fresh connector over
	// it with this size limit (0: the default) and a fresh store until every message
	// is stored, and reports what was.
	Deliver func(t *testing.T, limit int64, msgs ...[]byte) MailRun
	// Message is a routable message with this Message-ID (without the brackets),
	// always from the same sender.
	Message func(t *testing.T, messageID string) []byte
	// Unreadable lists messages the connector cannot read.
	Unreadable []Unreadable
	// MinLimit is the smallest size limit the connector accepts.
	MinLimit int64
	// TruncatedHeader is set to "true" on an event stored cut at the limit.
	TruncatedHeader string
}

// ExerciseMail runs the conformance cases that apply to a mail connector.
func ExerciseMail(t *testing.T, c MailConnector) {
	t.Run("verified but unreadable", func(t *testing.T) {
		for _, u := range c.Unreadable {
			t.Run(u.Name, func(t *testing.T) {
				run := c.Deliver(t, 0, u.Body, c.Message(t, "after@example.com"))
				require.Len(t, run.Stored, 2)
				got := run.Stored[0]
				assert.Equal(t, inbox.EventInvalid, got.Outcome.Status)
				assert.NotEmpty(t, got.Outcome.EventID)
				assert.Zero(t, got.Outcome.Records)
				assert.Equal(t, inbox.EventInvalid, got.Event.Status)
				assert.NotEmpty(t, got.Event.Error)
				if u.Reason != "" {
					assert.Contains(t, got.Event.Error, u.Reason)
				}
				if u.Check != nil {
					u.Check(t, got.Event)
				}
				// The mailbox goes on past it.
				assert.Equal(t, inbox.EventRouted, run.Stored[1].Outcome.Status)
				assert.Equal(t, "after@example.com", run.Stored[1].Event.DeliveryID)
				assert.Equal(t, 2, run.Events)
			})
		}
	})
	t.Run("redelivery", func(t *testing.T) {
		msg := c.Message(t, "once@example.com")
		run := c.Deliver(t, 0, msg, msg)
		require.Len(t, run.Stored, 2)
		first, again := run.Stored[0].Outcome, run.Stored[1].Outcome
		require.False(t, first.Duplicate)
		assert.Equal(t, inbox.EventRouted, first.Status)
		assert.True(t, again.Duplicate)
		assert.Equal(t, first.EventID, again.EventID)
		assert.Equal(t, "once@example.com", run.Stored[1].Event.DeliveryID)
		assert.Equal(t, 1, run.Events, "nothing new")
		assert.Equal(t, 1, run.Records, "nothing new")
	})
	t.Run("over the size limit", func(t *testing.T) {
		msg := c.Message(t, "big@example.com")
		pad := bytes.Repeat([]byte("All work and no play makes a long message.\r\n"), int(4*c.MinLimit)/44+1)
		big := append(bytes.Clone(msg), pad...)
		require.Greater(t, int64(len(big)), 4*c.MinLimit)
		run := c.Deliver(t, c.MinLimit, big)
		require.Len(t, run.Stored, 1)
		got := run.Stored[0]
		assert.Equal(t, "true", got.Event.Headers[c.TruncatedHeader], "marked truncated")
		assert.LessOrEqual(t, int64(len(got.Event.Body)), c.MinLimit, "stored cut at the limit")
		assert.Equal(t, big[:len(got.Event.Body)], got.Event.Body)
		assert.Equal(t, "big@example.com", got.Event.DeliveryID)
		assert.Equal(t, inbox.EventRouted, got.Outcome.Status, fmt.Sprintf("error: %q", got.Event.Error))
	})
}

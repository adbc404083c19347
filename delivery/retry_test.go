package delivery

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/attempt"
)

// A target's failure is read wherever it sits in the error's chain; its Retry-After is
// capped so a bogus hint cannot park a record for days, and an error of another type is
// a permanent failure without a status.
func TestDeliveryFailureAndRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	base := &agent.DeliveryError{Err: errors.New("HTTP 503"), Status: 503, Retry: true, RetryAfter: 30 * time.Second}
	err := fmt.Errorf("post signal: %w", base)
	f := agent.DeliveryFailure(err)
	require.Equal(t, *base, f)
	at, ok := attempt.After(f.RetryAfter, now)
	require.True(t, ok)
	require.Equal(t, now.Add(30*time.Second), at)
	require.Equal(t, "post signal: HTTP 503", err.Error())

	f.RetryAfter = 48 * time.Hour
	at, ok = attempt.After(f.RetryAfter, now)
	require.True(t, ok)
	require.Equal(t, now.Add(attempt.MaxRetryAfter), at)
	f.RetryAfter = -time.Second
	_, ok = attempt.After(f.RetryAfter, now)
	require.False(t, ok, "no hint: the backoff applies")

	plain := errors.New("plain")
	require.Equal(t, agent.DeliveryError{Err: plain}, agent.DeliveryFailure(plain))
	require.Equal(t, "delivery failed (HTTP 502)", (&agent.DeliveryError{Status: 502}).Error())
}

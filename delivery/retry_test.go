package delivery

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
)

func TestNextAttemptAt(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		attempts int
		rnd      float64
		want     time.Duration
	}{
		{1, 0, 500 * time.Millisecond},
		{1, 0.5, 750 * time.Millisecond},
		{1, 0.999999, 999999500 * time.Nanosecond},
		{2, 0, time.Second},
		{3, 0.5, 3 * time.Second},
		{8, 0, 64 * time.Second},
		{10, 0, 256 * time.Second},
		{11, 0, 5 * time.Minute},     // 1024 s is over the cap: the cap, halved by jitter
		{11, 0.5, 450 * time.Second}, // cap 10 min: [5 min, 10 min)
		{64, 0, 5 * time.Minute},     // no overflow
		{0, 0, 500 * time.Millisecond},
		{-3, 0, 500 * time.Millisecond},
		{1, 7, 500 * time.Millisecond}, // a broken jitter source cannot push past the range
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d/%v", tt.attempts, tt.rnd), func(t *testing.T) {
			got := NextAttemptAt(now, tt.attempts, func() float64 { return tt.rnd })
			require.Equal(t, tt.want, got.Sub(now))
		})
	}
}

// A target's failure is read wherever it sits in the error's chain; its Retry-After is
// capped so a bogus hint cannot park a record for days, and an error of another type is
// a permanent failure without a status.
func TestDeliveryFailureAndRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	base := &agent.DeliveryError{Err: errors.New("HTTP 503"), Status: 503, Retry: true, RetryAfter: 30 * time.Second}
	err := fmt.Errorf("post signal: %w", base)
	f := agent.DeliveryFailure(err)
	require.Equal(t, *base, f)
	at, ok := retryAfter(f, now)
	require.True(t, ok)
	require.Equal(t, now.Add(30*time.Second), at)
	require.Equal(t, "post signal: HTTP 503", err.Error())

	f.RetryAfter = 48 * time.Hour
	at, ok = retryAfter(f, now)
	require.True(t, ok)
	require.Equal(t, now.Add(MaxRetryAfter), at)
	f.RetryAfter = -time.Second
	_, ok = retryAfter(f, now)
	require.False(t, ok, "no hint: the backoff applies")

	plain := errors.New("plain")
	require.Equal(t, agent.DeliveryError{Err: plain}, agent.DeliveryFailure(plain))
	require.Equal(t, "delivery failed (HTTP 502)", (&agent.DeliveryError{Status: 502}).Error())
}

func TestRedact(t *testing.T) {
	tests := []struct{ in, want string }{
		{`Post "https://bot:s3cret@hooks.example.com/x": EOF`, `Post "https://xxxxx@hooks.example.com/x": EOF`},
		{`GET https://api.example.com/v1?token=abc123&page=2 failed`, `GET https://api.example.com/v1?token=xxxxx&page=2 failed`},
		{`https://x.test/cb?a=1&api_key=K-99&sig=zz`, `https://x.test/cb?a=1&api_key=xxxxx&sig=xxxxx`},
		{`upstream said: Authorization: Bearer eyJhbGciOi.payload.sig`, `upstream said: Authorization: Bearer xxxxx`},
		{`bad secret whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw`, `bad secret whsec_xxxxx`},
		{`token coder-token-0123456789 rejected`, `token xxxxx rejected`},
		{`nothing secret here`, `nothing secret here`},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, Redact(tt.in, []string{"coder-token-0123456789"}))
	}
	long := Redact(strings.Repeat("é", 1000), nil)
	require.LessOrEqual(t, len(long), maxErrorLen+len("…"))
	require.True(t, strings.HasSuffix(long, "…"))
	require.True(t, strings.HasPrefix(long, "éé"))
}

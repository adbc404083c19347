package attempt

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestNextAt(t *testing.T) {
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
			got := NextAt(now, tt.attempts, func() float64 { return tt.rnd })
			require.Equal(t, tt.want, got.Sub(now))
		})
	}
}

// A server's wait is believed up to MaxRetryAfter; no wait means the backoff applies.
func TestAfter(t *testing.T) {
	now := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	at, ok := After(30*time.Second, now)
	require.True(t, ok)
	require.Equal(t, now.Add(30*time.Second), at)
	at, ok = After(48*time.Hour, now)
	require.True(t, ok)
	require.Equal(t, now.Add(MaxRetryAfter), at)
	_, ok = After(-time.Second, now)
	require.False(t, ok, "no hint: the backoff applies")
	_, ok = After(0, now)
	require.False(t, ok)
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	require.Equal(t, 120*time.Second, ParseRetryAfter(" 120 ", now))
	require.Equal(t, 90*time.Second, ParseRetryAfter(now.Add(90*time.Second).Format(http.TimeFormat), now))
	require.Zero(t, ParseRetryAfter(now.Add(-time.Hour).Format(http.TimeFormat), now), "a date in the past: no wait")
	require.Zero(t, ParseRetryAfter("", now))
	require.Zero(t, ParseRetryAfter("-5", now))
	require.Zero(t, ParseRetryAfter("soon", now))
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

package gateway

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestTargetHealthConfig(t *testing.T) {
	agents := func(target string) []byte {
		return []byte("agents:\n  - id: hooks\n    token: hooks-token-0123456789\n    target: " + target + "\n")
	}
	cfg, err := ParseConfig("c.yaml", agents(`{ kind: webhook, url: "https://agent.example/hook", secret: whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw, max_age: 2h, failure_threshold: 3, probe_interval: 10s }`), noEnv)
	require.NoError(t, err)
	tc := cfg.Agents[0].WithDefaults().Target
	require.Equal(t, 2*time.Hour, tc.MaxAge)
	require.Equal(t, 3, tc.FailureThreshold)
	require.Equal(t, 10*time.Second, tc.ProbeInterval)
	require.Zero(t, tc.MaxAttempts, "no attempt cap unless set")

	cfg, err = ParseConfig("c.yaml", agents(`{ kind: stream }`), noEnv)
	require.NoError(t, err)
	tc = cfg.Agents[0].WithDefaults().Target
	require.Equal(t, 24*time.Hour, tc.MaxAge)
	require.Equal(t, 5, tc.FailureThreshold)
	require.Equal(t, 30*time.Second, tc.ProbeInterval)

	_, err = ParseConfig("c.yaml", agents(`{ kind: stream, max_age: -1h, failure_threshold: -2, probe_interval: 10ms }`), noEnv)
	require.ErrorContains(t, err, "agents[0].target.max_age: must not be negative")
	require.ErrorContains(t, err, "agents[0].target.failure_threshold: must not be negative")
	require.ErrorContains(t, err, "agents[0].target.probe_interval: must be at least 1s")
}

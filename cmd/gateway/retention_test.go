package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestRetentionConfig(t *testing.T) {
	cfg, err := ParseConfig("c.yaml", []byte(`retention: { events: 0s, records: 48h }`), noEnv)
	require.NoError(t, err)
	require.Equal(t, time.Duration(0), *cfg.Retention.Events, "0s keeps events forever")
	require.Equal(t, 48*time.Hour, *cfg.Retention.Records)
	require.Equal(t, time.Hour, cfg.Retention.Interval)

	cfg, err = ParseConfig("c.yaml", nil, noEnv)
	require.NoError(t, err)
	require.Equal(t, 720*time.Hour, *cfg.Retention.Events)
	require.Equal(t, 720*time.Hour, *cfg.Retention.Records)

	_, err = ParseConfig("c.yaml", []byte(`retention: { events: -1h, interval: 10ms, keep: forever }`), noEnv)
	require.EqualError(t, err, "c.yaml: invalid configuration:\n  retention.keep: unknown key (line 1)\n"+
		"  retention.events: must not be negative (0s keeps events forever)\n  retention.interval: must be at least 1s")
	_, err = ParseConfig("c.yaml", []byte(`retention: { events: -1h, interval: 10ms }`), noEnv)
	require.EqualError(t, err, "c.yaml: invalid configuration:\n"+
		"  retention.events: must not be negative (0s keeps events forever)\n  retention.interval: must be at least 1s")
}

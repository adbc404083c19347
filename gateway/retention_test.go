package gateway

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
	require.Equal(t, 168*time.Hour, *cfg.Retention.Silences)
	require.Equal(t, 168*time.Hour, *cfg.Retention.Watches)
	require.Equal(t, 720*time.Hour, *cfg.Retention.Replies)

	cfg, err = ParseConfig("c.yaml", []byte(`retention: { silences: 24h, watches: 0s, replies: 2160h }`), noEnv)
	require.NoError(t, err)
	require.Equal(t, 24*time.Hour, *cfg.Retention.Silences)
	require.Equal(t, time.Duration(0), *cfg.Retention.Watches, "0s keeps ended watches forever")
	require.Equal(t, 2160*time.Hour, *cfg.Retention.Replies)
	_, err = ParseConfig("c.yaml", []byte(`retention: { replies: -1h }`), noEnv)
	require.EqualError(t, err, "c.yaml: invalid configuration:\n  retention.replies: must not be negative (0s keeps replies forever)")

	_, err = ParseConfig("c.yaml", []byte(`retention: { events: -1h, interval: 10ms, keep: forever }`), noEnv)
	require.EqualError(t, err, "c.yaml: invalid configuration:\n  retention.keep: unknown key (line 1)\n"+
		"  retention.events: must not be negative (0s keeps events forever)\n  retention.interval: must be at least 1s")
	_, err = ParseConfig("c.yaml", []byte(`retention: { events: -1h, interval: 10ms }`), noEnv)
	require.EqualError(t, err, "c.yaml: invalid configuration:\n"+
		"  retention.events: must not be negative (0s keeps events forever)\n  retention.interval: must be at least 1s")
}

package cli

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/gateway/gatewaytest"
)

// TestCheckConnectShowsRefusals: `check --connect` asks the running gateway why each
// HTTP connector refused deliveries (with the config's own admin token), newest first;
// a gateway that does not answer is a line saying so, and neither fails the check.
func TestCheckConnectShowsRefusals(t *testing.T) {
	dir := t.TempDir()
	m, path := startMainAt(t, dir, cliConfig)
	code, _ := gatewaytest.PostGeneric(t, m.Addr().String(), "msg_forged", []byte(`{"kind":"x","summary":"s"}`), false, nil)
	require.Equal(t, http.StatusUnauthorized, code)
	stale := http.Header{"Webhook-Timestamp": {strconv.FormatInt(time.Now().Add(-time.Hour).Unix(), 10)}}
	code, _ = gatewaytest.PostGeneric(t, m.Addr().String(), "msg_stale", []byte(`{"kind":"x","summary":"s"}`), true, stale)
	require.Equal(t, http.StatusUnauthorized, code)

	base := "http://" + m.Addr().String()
	exit, out, errOut := runCLI(t, nil, "check", "--config", path, "--connect", "--url", base)
	require.Equal(t, exitOK, exit, out+errOut)
	_, refusals, found := strings.Cut(out, "refusals (the gateway at "+base+"; kept in its memory since it started):\n")
	require.True(t, found, out)
	lines := strings.Split(strings.TrimRight(refusals, "\n"), "\n")
	require.Len(t, lines, 3, refusals)
	assert.Regexp(t, `^  generic/billing: 2 since \S+; the last 2, newest first:$`, lines[0])
	assert.Regexp(t, `^    \S+  127\.0\.0\.1  HTTP 401  timestamp outside the tolerance window$`, lines[1])
	assert.Regexp(t, `^    \S+  127\.0\.0\.1  HTTP 401  no matching v1 signature$`, lines[2])

	exit, out, _ = runCLI(t, map[string]string{"SIGNALGATE_ADMIN_TOKEN": "not-a-token"}, "check", "--config", path, "--connect", "--url", base)
	assert.Equal(t, exitOK, exit)
	assert.Contains(t, out, "refusals: not read: the gateway at "+base+" refused the admin token (HTTP 401): set SIGNALGATE_ADMIN_TOKEN to a token with scope read\n")

	closed := closedURL(t)
	exit, out, _ = runCLI(t, map[string]string{"SIGNALGATE_URL": closed}, "check", "--config", path, "--connect")
	assert.Equal(t, exitOK, exit, "a gateway that is not running fails no check")
	assert.Contains(t, out, "refusals: not read: no gateway answers at "+closed+" (start it with `gateway serve`, or pass --url)\n")
	assert.NotContains(t, out, cliAdminToken)
}

func TestLocalURL(t *testing.T) {
	for listen, want := range map[string]string{
		"127.0.0.1:8080": "http://127.0.0.1:8080",
		":8080":          "http://127.0.0.1:8080",
		"0.0.0.0:9000":   "http://127.0.0.1:9000",
		"[::]:8080":      "http://[::1]:8080",
		"127.0.0.1:0":    "",
		"nonsense":       "",
	} {
		assert.Equal(t, want, localURL(listen), listen)
	}
}

// `check --connect` prints a connector's last backfill pass: when, its lag, what it
// found, a rate limit and a failure.
func TestWriteBackfill(t *testing.T) {
	var b strings.Builder
	until := time.Date(2026, 3, 1, 12, 20, 0, 0, time.UTC)
	writeBackfill(&b, "github/main", connectors.BackfillPass{At: time.Date(2026, 3, 1, 12, 17, 0, 0, time.UTC),
		LagSeconds: 937.5, Ingested: 40, Duplicate: 1, Requests: 41, Busy: 1, RateLimitedUntil: &until, Error: "list: 502"})
	assert.Equal(t, "backfill github/main: last pass 2026-03-01T12:17:00Z, lag 15m38s: 40 ingested, 1 duplicate, 0 ignored, 41 requests, "+
		"1 read by another replica, rate limited until 2026-03-01T12:20:00Z; failed: list: 502\n", b.String())
}

package gateway

import (
	"bufio"
	"bytes"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/stdwebhooks"
)

// TestAckedEventsAreOnDisk runs the gateway (SQLite) under strace and sends 100 events
// one after another, each waiting for its 2xx. A power cut loses whatever the kernel
// had not yet fsync'd, so at the moment of each 2xx nothing written to the WAL may be
// unsynced: every WAL write before it must be followed by a WAL fsync that also ended
// before it. With synchronous=NORMAL (no fsync at commit) this fails at the first
// event. The events match no route, so the dispatcher writes nothing meanwhile and each
// write is the ingest's own.
func TestAckedEventsAreOnDisk(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the gateway under strace")
	}
	if _, err := exec.LookPath("strace"); err != nil {
		t.Skip("strace not installed (.ci/run installs it)")
	}
	if err := exec.Command("strace", "-o", os.DevNull, "true").Run(); err != nil {
		t.Skipf("strace cannot trace here: %v", err)
	}
	dir := t.TempDir()
	db := filepath.Join(dir, "gw.db")
	const secret = "whsec_ZHVyYWJpbGl0eS10ZXN0LXNlY3JldA=="
	cfg := filepath.Join(dir, "config.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(fmt.Sprintf(`server: { listen: "127.0.0.1:%d" }
storage: { driver: sqlite, dsn: %q }
log: { level: warn, format: json }
connectors:
  generic: [ { name: disk, secret: %q } ]
`, freePort(t), db, secret)), 0o600))
	trace := filepath.Join(dir, "trace")
	// -ff: one file per thread, so no call is split across lines; -ttt -T: start and
	// duration of each call; -y: the path behind each descriptor.
	p := startGatewayUnder(t, cfg, "strace", "-ff", "-qq", "-ttt", "-T", "-y", "-s", "0",
		"-e", "trace=write,pwrite64,writev,pwritev,pwritev2,fsync,fdatasync", "-o", trace)

	key, err := stdwebhooks.ParseSecret(secret)
	require.NoError(t, err)
	const n = 100
	acks := make([]float64, 0, n+1)
	acks = append(acks, epoch(time.Now()))
	for i := range n {
		body := []byte(fmt.Sprintf(`{"kind":"disk-test","summary":"event %d"}`, i))
		id, now := fmt.Sprintf("disk-%d", i), time.Now()
		req, err := http.NewRequest(http.MethodPost, p.url+"/webhooks/generic/disk", bytes.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(stdwebhooks.HeaderID, id)
		req.Header.Set(stdwebhooks.HeaderTimestamp, strconv.FormatInt(now.Unix(), 10))
		req.Header.Set(stdwebhooks.HeaderSignature, stdwebhooks.Sign(key, id, now, body))
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusAccepted, resp.StatusCode, "event %d", i)
		acks = append(acks, epoch(time.Now()))
	}
	p.kill()

	calls := readTrace(t, dir, db+"-wal")
	for i := 1; i <= n; i++ {
		from, ack := acks[i-1], acks[i]
		wrote := false
		for _, w := range calls {
			if w.sync || w.end > ack {
				continue
			}
			if w.start >= from {
				wrote = true
			}
			synced := false
			for _, f := range calls {
				if f.sync && f.start >= w.end && f.end <= ack {
					synced = true
					break
				}
			}
			require.True(t, synced, "event %d was answered while a WAL write (at %.6f) was not yet fsync'd", i-1, w.end)
		}
		require.True(t, wrote, "event %d: no WAL write seen between its request and its answer", i-1)
	}
}

func epoch(t time.Time) float64 { return float64(t.UnixMicro()) / 1e6 }

type sysCall struct {
	sync       bool
	start, end float64
}

// 1731000000.123456 pwrite64(7</tmp/x/gw.db-wal>, ""..., 4152, 0) = 4152 <0.000021>
var traceLine = regexp.MustCompile(`^(\d+\.\d+) (\w+)\(\d+<([^>]*)>.*<(\d+\.\d+)>$`)

// readTrace returns the writes and syncs of path, from every thread's trace file.
func readTrace(t *testing.T, dir, path string) []sysCall {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "trace.*"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	var out []sysCall
	for _, name := range files {
		f, err := os.Open(name)
		require.NoError(t, err)
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			m := traceLine.FindStringSubmatch(strings.TrimSpace(sc.Text()))
			if m == nil || m[3] != path {
				continue
			}
			start, _ := strconv.ParseFloat(m[1], 64)
			dur, _ := strconv.ParseFloat(m[4], 64)
			out = append(out, sysCall{sync: m[2] == "fsync" || m[2] == "fdatasync", start: start, end: start + dur})
		}
		f.Close()
		require.NoError(t, sc.Err())
	}
	return out
}

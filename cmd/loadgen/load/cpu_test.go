package load

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// fakeProc writes /proc/<pid>/stat files: ppid, utime, stime, cutime, cstime.
func fakeProc(t *testing.T, procs map[int][5]int, comm map[int]string) string {
	t.Helper()
	dir := t.TempDir()
	for pid, p := range procs {
		name := comm[pid]
		if name == "" {
			name = "proc"
		}
		require.NoError(t, os.MkdirAll(filepath.Join(dir, fmt.Sprint(pid)), 0o755))
		stat := fmt.Sprintf("%d (%s) S %d 1 1 0 -1 4194560 100 0 0 0 %d %d %d %d 20 0 1 0 5 0 0\n", pid, name, p[0], p[1], p[2], p[3], p[4])
		require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprint(pid), "stat"), []byte(stat), 0o644))
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "uptime"), []byte("1 1\n"), 0o644))
	return dir
}

// TestCPUMeterSumsReplicasAndTheDatabaseTree reads every gateway's own ticks (not its
// children's), and the postmaster's own plus its reaped and live children's, skipping
// unrelated processes; a command name with spaces and parentheses does not shift the
// fields.
func TestCPUMeterSumsReplicasAndTheDatabaseTree(t *testing.T) {
	proc := fakeProc(t, map[int][5]int{
		10: {1, 100, 50, 7, 7},    // gateway 1: 150 ticks
		11: {1, 30, 20, 0, 0},     // gateway 2: 50
		20: {1, 5, 5, 40, 10},     // postmaster: 10 own + 50 reaped children
		21: {20, 8, 2, 0, 0},      // backend: 10
		22: {20, 1, 1, 0, 0},      // walwriter: 2
		30: {1, 1000, 1000, 0, 0}, // someone else
	}, map[int]string{11: "gate way) (x", 21: "postgres: postgres load 127.0.0.1(5) idle"})
	m := newCPUMeter([]int{10, 11}, 20, 100)
	m.proc = proc
	r := m.read()
	require.True(t, r.ok)
	require.Equal(t, 2*time.Second, r.gateway)
	require.Equal(t, 720*time.Millisecond, r.db)
	require.InDelta(t, 200.0, perEvent(0, r.gateway, 10_000), 1e-9)
	require.Zero(t, perEvent(0, r.gateway, 0))
}

func TestCPUMeterMissingProcessIsNotAMeasurement(t *testing.T) {
	m := newCPUMeter([]int{10, 99}, 0, 0)
	m.proc = fakeProc(t, map[int][5]int{10: {1, 1, 1, 0, 0}}, nil)
	require.False(t, m.read().ok, "a gateway that is gone")
	m = newCPUMeter(nil, 0, 0)
	require.False(t, m.read().ok, "no gateway pid: no CPU figures")
	require.Equal(t, DefaultClockTicks, m.hz)
}

func TestReadProcStatOfThisProcess(t *testing.T) {
	got, err := readProcStat("/proc", os.Getpid())
	require.NoError(t, err)
	require.Equal(t, os.Getppid(), got.ppid)
	_, err = readProcStat(fakeProc(t, nil, nil), 1234)
	require.Error(t, err)
}

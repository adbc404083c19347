package load

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// DefaultClockTicks is the unit of /proc/<pid>/stat's CPU times (USER_HZ), 100 on every
// Linux architecture this runs on; `getconf CLK_TCK` says so where in doubt.
const DefaultClockTicks = 100

// procTimes are a process's CPU times from /proc/<pid>/stat, in clock ticks: its own
// (all threads) and those of its children it has waited for.
type procTimes struct {
	ppid        int
	self, child uint64
}

// readProcStat parses /proc/<pid>/stat. The command name (field 2) may hold spaces and
// parentheses, so the fields are counted after its last ')'.
func readProcStat(proc string, pid int) (procTimes, error) {
	raw, err := os.ReadFile(fmt.Sprintf("%s/%d/stat", proc, pid))
	if err != nil {
		return procTimes{}, err
	}
	s := string(raw)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return procTimes{}, fmt.Errorf("pid %d: malformed stat", pid)
	}
	// After ") ": state(3) ppid(4) ... utime(14) stime(15) cutime(16) cstime(17).
	f := strings.Fields(s[i+1:])
	if len(f) < 15 {
		return procTimes{}, fmt.Errorf("pid %d: short stat", pid)
	}
	num := func(k int) uint64 {
		v, perr := strconv.ParseInt(f[k], 10, 64)
		if perr != nil || v < 0 {
			err = errors.Join(err, fmt.Errorf("pid %d: stat field %d: %q", pid, k+3, f[k]))
			return 0
		}
		return uint64(v)
	}
	t := procTimes{ppid: int(num(1)), self: num(11) + num(12), child: num(13) + num(14)}
	return t, err
}

// cpuMeter reads the CPU time used so far by the gateways (every replica) and, when
// known, the database server: the postmaster with its exited children (cutime/cstime,
// filled in when it reaps them) plus its live children, so backends that come and go
// during a run are all counted once.
type cpuMeter struct {
	proc     string // /proc; tests point it elsewhere
	gateways []int
	db       int // the postmaster's pid; 0 for none
	hz       int
}

func newCPUMeter(gateways []int, db, hz int) *cpuMeter {
	if hz <= 0 {
		hz = DefaultClockTicks
	}
	return &cpuMeter{proc: "/proc", gateways: gateways, db: db, hz: hz}
}

// cpuReading is one reading of the meter; ok is false when a process could not be read.
type cpuReading struct {
	gateway, db time.Duration
	ok          bool
}

func (m *cpuMeter) read() cpuReading {
	r := cpuReading{ok: len(m.gateways) > 0}
	var ticks uint64
	for _, pid := range m.gateways {
		t, err := readProcStat(m.proc, pid)
		if err != nil {
			r.ok = false
		}
		ticks += t.self
	}
	r.gateway = m.duration(ticks)
	if m.db > 0 {
		t, err := m.tree(m.db)
		if err != nil {
			r.ok = false
		}
		r.db = m.duration(t)
	}
	return r
}

// tree is the postmaster's ticks and its children's (reaped and live).
func (m *cpuMeter) tree(root int) (uint64, error) {
	t, err := readProcStat(m.proc, root)
	if err != nil {
		return 0, fmt.Errorf("database server pid %d: %w", root, err)
	}
	total := t.self + t.child
	ents, err := os.ReadDir(m.proc)
	if err != nil {
		return 0, fmt.Errorf("list %s: %w", m.proc, err)
	}
	for _, e := range ents {
		pid, perr := strconv.Atoi(e.Name())
		if perr != nil || pid == root {
			continue
		}
		c, cerr := readProcStat(m.proc, pid)
		if cerr != nil || c.ppid != root {
			continue // gone meanwhile, or another process
		}
		total += c.self
	}
	return total, nil
}

func (m *cpuMeter) duration(ticks uint64) time.Duration {
	return time.Duration(ticks) * time.Second / time.Duration(m.hz)
}

// perEvent is the CPU between two readings per event, in microseconds (0 when it was
// not measured).
func perEvent(from, to time.Duration, events int) float64 {
	if events <= 0 {
		return 0
	}
	return float64((to - from).Microseconds()) / float64(events)
}

package load

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// rssSampler follows the gateway's resident memory: /proc/<pid>/status when the pid
// is known, else the process_resident_memory_bytes gauge of its /metrics.
type rssSampler struct {
	pid     int
	metrics string
	client  *http.Client

	mu         sync.Mutex
	last, peak int64
}

func newRSSSampler(pid int, base string) *rssSampler {
	return &rssSampler{pid: pid, metrics: strings.TrimRight(base, "/") + "/metrics", client: &http.Client{Timeout: 2 * time.Second}}
}

func (r *rssSampler) run(ctx context.Context) {
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	for {
		r.sample()
		select {
		case <-ctx.Done():
			r.sample()
			return
		case <-t.C:
		}
	}
}

func (r *rssSampler) sample() {
	var v int64
	var err error
	if r.pid > 0 {
		v, err = ProcRSS(r.pid)
	} else {
		v, err = r.scrape()
	}
	if err != nil || v <= 0 {
		return
	}
	r.mu.Lock()
	r.last, r.peak = v, max(r.peak, v)
	r.mu.Unlock()
}

func (r *rssSampler) result() (last, peak int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.last, r.peak
}

// ProcRSS reads VmRSS of a process in bytes.
func ProcRSS(pid int) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb * 1024, err
		}
	}
	return 0, fmt.Errorf("no VmRSS for pid %d", pid)
}

func (r *rssSampler) scrape() (int64, error) {
	resp, err := r.client.Get(r.metrics)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "process_resident_memory_bytes "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			return int64(f), err
		}
	}
	return 0, fmt.Errorf("no process_resident_memory_bytes at %s", r.metrics)
}

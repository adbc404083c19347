package gateway

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/cmd/loadgen/load"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/store"
)

// procWait only bounds a broken test: processes normally start in well under a second.
const procWait = 60 * time.Second

// gatewayProc is the gateway running as a real process (the command, built by
// gatewayBinary), so it can be SIGKILLed like a crashing deployment.
type gatewayProc struct {
	t      *testing.T
	cfg    string
	cmd    *exec.Cmd
	url    string
	stderr *lockedBuffer
	exited chan struct{}
	child  int // the gateway's pid when cmd is a wrapper
}

// startGateway starts `gateway serve --config cfg` and returns once it listens.
func startGateway(t *testing.T, cfg string) *gatewayProc {
	t.Helper()
	p, err := launchGateway(t, cfg)
	require.NoError(t, err)
	return p
}

// launchGateway is startGateway for goroutines other than the test's: it returns the
// failure instead of ending the test.
func launchGateway(t *testing.T, cfg string) (*gatewayProc, error) {
	return launchGatewayUnder(t, cfg)
}

// startGatewayUnder starts the gateway as the child of a wrapper (strace) and returns
// once it listens; kill ends the gateway itself, and with it the wrapper.
func startGatewayUnder(t *testing.T, cfg string, wrapper ...string) *gatewayProc {
	t.Helper()
	p, err := launchGatewayUnder(t, cfg, wrapper...)
	require.NoError(t, err)
	return p
}

func launchGatewayUnder(t *testing.T, cfg string, wrapper ...string) (*gatewayProc, error) {
	bin, err := buildGateway()
	if err != nil {
		return nil, err
	}
	args := append(wrapper, bin, "serve", "--config", cfg)
	cmd := exec.Command(args[0], args[1:]...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	p := &gatewayProc{t: t, cfg: cfg, cmd: cmd, stderr: &lockedBuffer{}, exited: make(chan struct{})}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() { _ = cmd.Wait(); close(p.exited) }()
	t.Cleanup(p.kill)

	lines := make(chan string, 1)
	go func() {
		r := bufio.NewReader(stdout)
		line, _ := r.ReadString('\n')
		lines <- line
		_, _ = io.Copy(io.Discard, r)
	}()
	select {
	case line := <-lines:
		_, u, ok := strings.Cut(strings.TrimSpace(line), "listening on ")
		if !ok {
			p.kill()
			return nil, fmt.Errorf("gateway did not start: %q\n%s", line, p.stderr.String())
		}
		p.url = u
		if len(wrapper) > 0 {
			// The gateway is the wrapper's only child; killing the wrapper would leave it
			// running (strace detaches).
			children, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", cmd.Process.Pid, cmd.Process.Pid))
			if err != nil {
				p.kill()
				return nil, fmt.Errorf("find the gateway under %s: %w", wrapper[0], err)
			}
			pid, err := strconv.Atoi(strings.TrimSpace(string(children)))
			if err != nil {
				p.kill()
				return nil, fmt.Errorf("find the gateway under %s: children %q", wrapper[0], children)
			}
			p.child = pid
		}
	case <-time.After(procWait):
		p.kill()
		return nil, fmt.Errorf("gateway did not start within %s:\n%s", procWait, p.stderr.String())
	}
	return p, nil
}

// kill sends SIGKILL, as a crash or an OOM kill would, and reaps the process.
func (p *gatewayProc) kill() {
	select {
	case <-p.exited:
		return
	default:
	}
	if p.child != 0 {
		// The wrapper ends with its child, after writing out what it saw.
		_ = syscall.Kill(p.child, syscall.SIGKILL)
		select {
		case <-p.exited:
			return
		case <-time.After(procWait):
		}
	}
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.exited
}

// freePort reserves a loopback port for a gateway that must come back on the same address.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// writeScenarioConfig writes a gateway config for the loadgen scenario.
func writeScenarioConfig(t *testing.T, dir string, port int, st store.Config, sc load.Scenario, lease time.Duration) string {
	t.Helper()
	path := filepath.Join(dir, fmt.Sprintf("config-%d.yaml", port))
	cfg := fmt.Sprintf(`server: { listen: "127.0.0.1:%d", shutdown_grace: 2s }
storage: { driver: %s, dsn: %q, max_open_conns: 8 }
log: { level: warn, format: json }
dispatch: { lease: %s, poll_interval: 500ms }
%s`, port, st.Driver, st.DSN, lease, sc.GatewayConfig())
	require.NoError(t, os.WriteFile(path, []byte(cfg), 0o600))
	return path
}

// openDB opens the gateway's database for the test's own checks.
func openDB(t *testing.T, st store.Config) *sqlx.DB {
	t.Helper()
	var db *sqlx.DB
	var err error
	if st.Driver == store.DriverPostgres {
		db, err = sqlx.Open("pgx", st.DSN)
	} else {
		db, err = sqlx.Open("sqlite", "file:"+st.DSN+"?_pragma=busy_timeout(10000)")
	}
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	return db
}

// logCheck is what the database says after a run.
type logCheck struct {
	events      map[string]bool                     // stored delivery ids
	markers     map[string]map[string]bool          // marker → signal ids carrying it
	signals     map[inbox.ThreadKey]map[string]bool // thread → signal ids
	contents    map[string]string                   // signal id → contents
	notTerminal int                                 // records neither delivered nor otherwise final
	stuck       int                                 // pending, due, and past every lease
	leased      int                                 // threads still leased after the lease lapsed
}

var markerRE = regexp.MustCompile(`lg[0-9a-z]+x[0-9]+z`)

func checkLog(t *testing.T, db *sqlx.DB, lease time.Duration) logCheck {
	t.Helper()
	ctx := context.Background()
	c := logCheck{events: map[string]bool{}, markers: map[string]map[string]bool{}, signals: map[inbox.ThreadKey]map[string]bool{}, contents: map[string]string{}}
	var ids []string
	require.NoError(t, db.SelectContext(ctx, &ids, `SELECT delivery_id FROM events WHERE delivery_id IS NOT NULL`))
	for _, id := range ids {
		c.events[id] = true
	}
	rows, err := db.QueryxContext(ctx, `SELECT agent, resource_id, thread_id, id, contents FROM signals WHERE event = 'signal'`)
	require.NoError(t, err)
	for rows.Next() {
		var k inbox.ThreadKey
		var id, contents string
		require.NoError(t, rows.Scan(&k.Agent, &k.Resource, &k.Thread, &id, &contents))
		if c.signals[k] == nil {
			c.signals[k] = map[string]bool{}
		}
		c.signals[k][id] = true
		c.contents[id] = contents
		for _, m := range markerRE.FindAllString(contents, -1) {
			if c.markers[m] == nil {
				c.markers[m] = map[string]bool{}
			}
			c.markers[m][id] = true
		}
	}
	require.NoError(t, rows.Err())
	rows.Close()
	past := time.Now().Add(-2 * lease).UnixMicro()
	require.NoError(t, db.GetContext(ctx, &c.notTerminal, `SELECT count(*) FROM records WHERE status = 'pending'`))
	require.NoError(t, db.GetContext(ctx, &c.stuck, db.Rebind(`SELECT count(*) FROM records WHERE status = 'pending' AND due_at IS NOT NULL AND due_at < ?`), past))
	require.NoError(t, db.GetContext(ctx, &c.leased, db.Rebind(`SELECT count(*) FROM threads WHERE lease_until IS NOT NULL AND lease_until < ?
		AND EXISTS (SELECT 1 FROM records r WHERE r.agent = threads.agent AND r.resource_id = threads.resource_id
		AND r.thread_id = threads.thread_id AND r.status = 'pending' AND r.due_at IS NOT NULL)`), past))
	return c
}

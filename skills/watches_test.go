package skills_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agentapi"
	"github.com/signalgate/signalgate/connectors/kindstest"
	"github.com/signalgate/signalgate/deliverytest"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/service"
	"github.com/signalgate/signalgate/watch"
	"github.com/signalgate/signalgate/watch/watchtest"
)

// lazyWatches is the watch service built once the Env's store exists; curl, another
// process, gives the race detector no order between setting it and the server reading it.
type lazyWatches struct{ svc atomic.Pointer[watch.Service] }

func (l *lazyWatches) Create(ctx context.Context, k inbox.ThreadKey, req watch.Request) (watch.Watch, bool, error) {
	return l.svc.Load().Create(ctx, k, req)
}
func (l *lazyWatches) List(ctx context.Context, f watch.Filter) (watch.Page, error) {
	return l.svc.Load().List(ctx, f)
}
func (l *lazyWatches) Get(ctx context.Context, k inbox.ThreadKey, id string) (watch.Watch, error) {
	return l.svc.Load().Get(ctx, k, id)
}
func (l *lazyWatches) Delete(ctx context.Context, k inbox.ThreadKey, id string) (watch.Watch, error) {
	return l.svc.Load().Delete(ctx, k, id)
}

// TestWatchSkillScripts: watch.sh, watches.sh and unwatch.sh drive the agent API's
// watches (options, JSON quoting, paging) and report refusals on stderr with a non-zero
// exit.
func TestWatchSkillScripts(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl not found")
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("sh not found")
	}
	lazy := &lazyWatches{}
	e := deliverytest.New(t, deliverytest.Config{API: []agentapi.Option{agentapi.WithWatches(lazy)}})
	lazy.svc.Store(watch.NewService(watchtest.NewMemory(), watch.Config{}, kindstest.Resources(), watchtest.Scope{Allowed: map[string][]string{"*/slack": {"acme"}}}, e.Inbox, service.Base{Now: e.Now}))
	k := inbox.ThreadKey{Agent: "support", Resource: "slack:T1", Thread: "dm:U1"}
	scripts := filepath.Join("signalgate-inbox", "scripts")
	run := func(name string, args ...string) (string, string, error) {
		cmd := exec.Command(sh, append([]string{filepath.Join(scripts, name)}, args...)...)
		cmd.Env = append(os.Environ(), "SIGNALGATE_URL="+e.Server.URL, "SIGNALGATE_TOKEN="+e.Token(k),
			"SIGNALGATE_AGENT="+k.Agent, "SIGNALGATE_RESOURCE="+k.Resource, "SIGNALGATE_THREAD="+k.Thread)
		var out, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &stderr
		err := cmd.Run()
		return out.String(), stderr.String(), err
	}
	created := func(args ...string) watch.Watch {
		t.Helper()
		out, stderr, err := run("watch.sh", args...)
		require.NoError(t, err, stderr)
		var w watch.Watch
		require.NoError(t, json.Unmarshal([]byte(out), &w), out)
		return w
	}

	w := created("--kinds", "message,reaction_*", "--ttl", "2d", "--priority", "high", "slack", "c1/1712345678.000100")
	require.Equal(t, "C1/1712345678.000100", w.Resource)
	require.Equal(t, "acme", w.Connector)
	require.Equal(t, []string{"message", "reaction_*"}, w.Kinds)
	require.Equal(t, inbox.PriorityHigh, w.Priority)
	require.Equal(t, w.CreatedAt.Add(48*time.Hour), w.ExpiresAt)
	again := created("--connector", "acme", "slack", "C1/1712345678.000100")
	require.Equal(t, w.ID, again.ID, "the same thing again is the same watch")
	forever := created("--until", "forever", "slack", "C2")
	require.True(t, forever.Forever)

	var page agentapi.WatchPage
	out, stderr, err := run("watches.sh", "--limit", "1")
	require.NoError(t, err, stderr)
	require.NoError(t, json.Unmarshal([]byte(out), &page), out)
	require.Len(t, page.Watches, 1)
	require.Equal(t, forever.ID, page.Watches[0].ID, "newest first")
	out, stderr, err = run("watches.sh", "--limit", "1", "--cursor", page.NextCursor)
	require.NoError(t, err, stderr)
	page = agentapi.WatchPage{}
	require.NoError(t, json.Unmarshal([]byte(out), &page), out)
	require.Equal(t, w.ID, page.Watches[0].ID)

	out, stderr, err = run("unwatch.sh", forever.ID)
	require.NoError(t, err, stderr)
	require.Contains(t, out, `"endReason":"deleted"`)
	out, stderr, err = run("watches.sh", "--status", "ended")
	require.NoError(t, err, stderr)
	require.Contains(t, out, forever.ID)
	require.NotContains(t, out, w.ID)

	// Refusals: stderr names the status and the field, the exit is non-zero.
	_, stderr, err = run("watch.sh", "github", "acme/api#1")
	require.Error(t, err)
	require.Contains(t, stderr, "HTTP 403")
	require.Contains(t, stderr, "may watch no github connector")
	_, stderr, err = run("watch.sh", "--ttl", `1h"}`, "slack", "C3")
	require.Error(t, err)
	require.Contains(t, stderr, "HTTP 400", "a quote in a value stays inside its JSON string")
	require.Contains(t, stderr, "ttl: want a duration")
	_, stderr, err = run("unwatch.sh", "w-none")
	require.Error(t, err)
	require.Contains(t, stderr, "HTTP 404")
	_, stderr, err = run("watch.sh", "slack")
	require.Error(t, err)
	require.Contains(t, stderr, "usage: watch.sh")
	_, stderr, err = run("watches.sh", "--bogus")
	require.Error(t, err)
	require.Contains(t, stderr, "unknown argument --bogus")
}

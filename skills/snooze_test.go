package skills_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/deliverytest"
	"github.com/signalgate/signalgate/inbox"
)

// TestSnoozeSkillScript: snooze.sh hides pending notifications until the time given,
// list.sh --status snoozed shows them, and a refusal (a time in the past) reaches stderr
// with a non-zero exit.
func TestSnoozeSkillScript(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl not found")
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("sh not found")
	}
	e := deliverytest.New(t, deliverytest.Config{})
	k := inbox.ThreadKey{Agent: "coder", Resource: "acme/api", Thread: "pr#7"}
	e.OpenRun(k) // active: a low notification waits in the inbox
	ingest := func(summary string) string {
		return e.Ingest(inbox.Notification{Thread: k, Source: "github", Kind: "review", Priority: inbox.PriorityLow, Summary: summary})
	}
	first, second := ingest("Jane commented"), ingest("Joe commented")
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

	until := e.Now().Add(3 * time.Hour).UTC().Format(time.RFC3339)
	out, stderr, err := run("snooze.sh", until, first, second)
	require.NoError(t, err, stderr)
	require.Contains(t, out, `"status":"snoozed"`)
	for _, id := range []string{first, second} {
		r := e.Record(id)
		require.Equal(t, inbox.StatusSnoozed, r.Status)
		require.Equal(t, until, r.SnoozedUntil.UTC().Format(time.RFC3339))
	}
	out, stderr, err = run("list.sh", "--status", "snoozed")
	require.NoError(t, err, stderr)
	require.Contains(t, out, first)
	require.Contains(t, out, second)

	third := ingest("Ann commented")
	_, stderr, err = run("snooze.sh", e.Now().Add(-time.Minute).UTC().Format(time.RFC3339), third)
	require.Error(t, err)
	require.Contains(t, stderr, "HTTP 400")
	require.Contains(t, stderr, "until")
	require.Equal(t, inbox.StatusPending, e.Record(third).Status)
	_, stderr, err = run("snooze.sh", until)
	require.Error(t, err)
	require.Contains(t, stderr, "usage: snooze.sh")
}

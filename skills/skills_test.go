package skills_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/delivery/deliverytest"
	"github.com/signalgate/signalgate/inbox"
)

type listed struct {
	Notifications []struct {
		ID      string       `json:"id"`
		Summary string       `json:"summary"`
		Status  inbox.Status `json:"status"`
		XML     string       `json:"xml"`
	} `json:"notifications"`
	NextCursor string `json:"nextCursor"`
}

// TestInboxSkillScripts runs the signalgate-inbox scripts against a running gateway
// (the real agent API over loopback HTTP).
func TestInboxSkillScripts(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl not found")
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("sh not found")
	}
	e := deliverytest.New(t, deliverytest.Config{})
	k := inbox.ThreadKey{Agent: "coder", Resource: "acme/api", Thread: "pr#42: fix"}
	e.OpenRun(k) // active: medium notifications wait in the inbox behind a summary
	ingest := func(kind, summary string) string {
		return e.Ingest(inbox.Notification{Thread: k, Source: "github", Kind: kind, Priority: inbox.PriorityMedium, Summary: summary,
			Payload: json.RawMessage(`{"url":"https://github.com/acme/api/pull/42"}`)})
	}
	ci := ingest("ci-failure", "CI failed on acme/api#42")
	review := ingest("review", "Jane requested changes")
	deploy := ingest("deploy", "Deploy to staging failed")
	e.Pass()

	scripts := filepath.Join("signalgate-inbox", "scripts")
	env := append(os.Environ(), "SIGNALGATE_URL="+e.Server.URL, "SIGNALGATE_TOKEN="+e.Token(k),
		"SIGNALGATE_AGENT="+k.Agent, "SIGNALGATE_RESOURCE="+k.Resource, "SIGNALGATE_THREAD="+k.Thread)
	runScript := func(name string, args ...string) (listed, string) {
		t.Helper()
		cmd := exec.Command(sh, append([]string{filepath.Join(scripts, name)}, args...)...)
		cmd.Env = env
		var out, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &stderr
		require.NoError(t, cmd.Run(), "%s: %s", name, stderr.String())
		var l listed
		if name != "dismiss.sh" {
			require.NoError(t, json.Unmarshal(out.Bytes(), &l), "%s", out.String())
		}
		return l, out.String()
	}
	status := func(id string) inbox.Status { return e.Record(id).Status }

	l, _ := runScript("list.sh", "--limit", "2")
	require.Len(t, l.Notifications, 2)
	require.Equal(t, deploy, l.Notifications[0].ID, "newest first")
	require.NotEmpty(t, l.NextCursor)
	require.Equal(t, inbox.StatusPending, status(deploy), "listing changes nothing")
	l, _ = runScript("list.sh", "--peek", "--cursor", l.NextCursor)
	require.Len(t, l.Notifications, 1)
	require.Equal(t, ci, l.Notifications[0].ID)

	l, _ = runScript("search.sh", "requested changes")
	require.Len(t, l.Notifications, 1)
	require.Equal(t, review, l.Notifications[0].ID)
	require.Equal(t, inbox.StatusPending, status(review), "searching changes nothing")

	l, _ = runScript("read.sh")
	require.Len(t, l.Notifications, 3, "the unread ones")
	require.Equal(t, ci, l.Notifications[0].ID, "oldest first")
	require.Contains(t, l.Notifications[0].XML, ">CI failed on acme/api#42</notification>")
	require.Equal(t, inbox.StatusSeen, status(ci))
	l, _ = runScript("read.sh", review)
	require.Len(t, l.Notifications, 1)
	require.Equal(t, "Jane requested changes", l.Notifications[0].Summary)

	_, out := runScript("dismiss.sh", ci, deploy)
	require.Contains(t, out, `"status":"dismissed"`)
	require.Equal(t, inbox.StatusDismissed, status(ci))
	require.Equal(t, inbox.StatusDismissed, status(deploy))
	l, _ = runScript("list.sh")
	require.Len(t, l.Notifications, 0, "default listing: pending and delivered only")
	l, _ = runScript("list.sh", "--status", "all")
	require.Len(t, l.Notifications, 3)

	// Errors go to stderr with a non-zero exit.
	cmd := exec.Command(sh, filepath.Join(scripts, "dismiss.sh"), "no-such-id")
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.Error(t, cmd.Run())
	require.Contains(t, stderr.String(), "HTTP 404")
	cmd = exec.Command(sh, filepath.Join(scripts, "list.sh"))
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	stderr.Reset()
	cmd.Stderr = &stderr
	require.Error(t, cmd.Run())
	require.Contains(t, stderr.String(), "SIGNALGATE_URL is not set")
}

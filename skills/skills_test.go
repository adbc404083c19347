package skills_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/agentapi"
	"github.com/signalgate/signalgate/connectors/kindstest"
	"github.com/signalgate/signalgate/connectors/slack"
	"github.com/signalgate/signalgate/deliverytest"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/reply"
	"github.com/signalgate/signalgate/service"
	"github.com/signalgate/signalgate/store"
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

// TestReplySkillScript: reply.sh queues a reply through the agent API with the text
// exactly as given (quotes, backslashes, line breaks), is safe to run again, shows the
// reply's status, and reports refusals on stderr with a non-zero exit.
func TestReplySkillScript(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl not found")
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("sh not found")
	}
	lazy := &lazyReplies{}
	e := deliverytest.New(t, deliverytest.Config{API: []agentapi.Option{agentapi.WithReplies(lazy)}})
	replies := store.NewReplies(e.Store)
	lazy.svc.Store(reply.New(replies, map[string]reply.Sender{"slack": anySender{}}, service.Base{Now: e.Now},
		reply.WithProvenance(agent.ReplyProvenance{"slack": {"slack-v0"}}), reply.WithPlaces(kindstest.Places())))
	k := inbox.ThreadKey{Agent: "support", Resource: "slack:T1", Thread: "dm:U1"}
	dm := reply.NewTo("slack", "acme", slack.Place{Team: "T1", Channel: "D1"})
	e.Ingest(inbox.Notification{Thread: k, Source: "slack", Kind: "message", Priority: inbox.PriorityLow, Summary: "Jane: is it fixed?",
		Metadata: map[string]any{reply.MetadataKey: dm, agent.MetaVerifiedBy: "slack-v0"}})

	script := filepath.Join("signalgate-inbox", "scripts", "reply.sh")
	run := func(stdin string, args ...string) (string, string, error) {
		cmd := exec.Command(sh, append([]string{script}, args...)...)
		cmd.Env = append(os.Environ(), "SIGNALGATE_URL="+e.Server.URL, "SIGNALGATE_TOKEN="+e.Token(k),
			"SIGNALGATE_AGENT="+k.Agent, "SIGNALGATE_RESOURCE="+k.Resource, "SIGNALGATE_THREAD="+k.Thread)
		cmd.Stdin = strings.NewReader(stdin)
		var out, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &stderr
		err := cmd.Run()
		return out.String(), stderr.String(), err
	}
	var got reply.Reply
	text := "Fixed in **#43**.\n\tSee \"notes\" \\ path C:\\tmp"
	out, stderr, err := run("", "answer-1", text)
	require.NoError(t, err, stderr)
	require.NoError(t, json.Unmarshal([]byte(out), &got), out)
	require.Equal(t, reply.StatusQueued, got.Status)
	require.Equal(t, dm, got.To, "where the thread's notification came from")
	stored, err := replies.GetReply(t.Context(), "answer-1")
	require.NoError(t, err)
	require.Equal(t, text, stored.Text, "the text arrives exactly as given")

	_, stderr, err = run("", "answer-1", text)
	require.NoError(t, err, "the same id and text again is a safe retry: %s", stderr)
	out, stderr, err = run("", "--status", "answer-1")
	require.NoError(t, err, stderr)
	require.Contains(t, out, `"status":"queued"`)

	_, stderr, err = run("line one\nline two\n", "--watch", "answer-2", "-")
	require.NoError(t, err, stderr)
	stored, err = replies.GetReply(t.Context(), "answer-2")
	require.NoError(t, err)
	require.Equal(t, "line one\nline two", stored.Text, "the text read from stdin")
	require.True(t, stored.Watch)

	_, stderr, err = run("", "answer-1", "other text")
	require.Error(t, err)
	require.Contains(t, stderr, "HTTP 409")
	_, stderr, err = run("", "--reply-to", `{"source":"slack","connector":"acme","channel":"C-ELSEWHERE"}`, "answer-3", "x")
	require.Error(t, err)
	require.Contains(t, stderr, "HTTP 400")
	require.Contains(t, stderr, "unknown_reply_to")
	_, stderr, err = run("", "only-an-id")
	require.Error(t, err)
	require.Contains(t, stderr, "usage: reply.sh")
}

// lazyReplies is the outbox, built after the harness whose API it serves: set once the
// store exists, read by the API's handlers on the server's goroutines.
type lazyReplies struct{ svc atomic.Pointer[reply.Service] }

func (l *lazyReplies) Queue(ctx context.Context, k inbox.ThreadKey, req reply.Request) (reply.Reply, error) {
	return l.svc.Load().Queue(ctx, k, req)
}

func (l *lazyReplies) Get(ctx context.Context, k inbox.ThreadKey, id string) (reply.Reply, error) {
	return l.svc.Load().Get(ctx, k, id)
}

// anySender accepts every reply (the test only queues).
type anySender struct{}

func (anySender) Check(reply.To, string) error { return nil }
func (anySender) Find(context.Context, reply.Reply) (reply.Sent, bool, error) {
	return reply.Sent{}, false, nil
}
func (anySender) Send(context.Context, reply.Reply) (reply.Sent, bool, error) {
	return reply.Sent{}, false, nil
}

package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/store/storetest"
	"github.com/signalgate/signalgate/watch"
)

const watchGitHubSecret = "watch-github-secret-0123456789"

// sendGitHub delivers an event signed with watchGitHubSecret to connector acme.
func sendGitHub(t *testing.T, base string, body []byte, event, delivery string) (int, string) {
	t.Helper()
	return sendGitHubSigned(t, base, watchGitHubSecret, body, event, delivery)
}

// sendGitHubSigned delivers a GitHub event signed with secret to connector acme and
// answers the status and body.
func sendGitHubSigned(t *testing.T, base, secret string, body []byte, event, delivery string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+"/webhooks/github/acme", bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("X-Hub-Signature-256", "sha256="+hmacHex([]byte(secret), body))
	req.Header.Set("X-GitHub-Event", event)
	req.Header.Set("X-GitHub-Delivery", delivery)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(out)
}

// octokitAction is the octokit example of event with action (its first one).
func octokitAction(t *testing.T, event, action string) map[string]any {
	t.Helper()
	for _, raw := range octokitExamples(t, event) {
		var m map[string]any
		require.NoError(t, json.Unmarshal(raw, &m))
		if m["action"] == action {
			return m
		}
	}
	t.Fatalf("no octokit example of %s %s", event, action)
	return nil
}

func jsonOf(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

// A pull request watched through the agent API, end to end on real octokit payloads: the
// repository must have been heard from first; the watch hears a comment on it although
// no route matches GitHub, not an old event redelivered after it was created, not a
// stranger's comment; closing the pull request ends it with one watch-ended
// notification, after which nothing more comes.
func TestWatchedPullRequestThroughTheGateway(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			cfg, err := ParseConfig("c.yaml", fmt.Appendf(nil, `
server: { listen: "127.0.0.1:0" }
storage: { driver: %s, dsn: %q }
agents: [ { id: coder, token: %s, watch_connectors: [github/acme] } ]
connectors:
  github: [ { name: acme, secret: %s } ]
routes:
  - name: billing
    match: { source: generic }
    thread: { agent: coder, resource: billing, thread: invoices }
`, b.Config.Driver, b.Config.DSN, replyToken, watchGitHubSecret), noEnv)
			require.NoError(t, err)
			m := New(cfg, storetest.Logger(t))
			require.NoError(t, m.Open(context.Background()))
			t.Cleanup(func() { require.NoError(t, m.Close()) })
			base := "http://" + m.Addr().String()
			k := inbox.ThreadKey{Agent: "coder", Resource: "hello-world", Thread: "pr-2"}
			watches := base + "/v1/agents/coder/threads/hello-world/pr-2/watches"
			ask := json.RawMessage(`{"source":"github","resource":"Codertocat/Hello-World#2"}`)

			var refusal struct {
				Error struct{ Code, Message string } `json:"error"`
			}
			require.Equal(t, http.StatusBadRequest, agentCall(t, http.MethodPost, watches, ask, &refusal))
			require.Equal(t, "unknown_resource", refusal.Error.Code)
			require.Contains(t, refusal.Error.Message, "receives no events for repository codertocat/hello-world")

			opened := octokitAction(t, "pull_request", "opened")
			code, out := sendGitHub(t, base, jsonOf(t, opened), "pull_request", "d-opened")
			require.Equal(t, http.StatusAccepted, code, out)

			var w watch.Watch
			require.Equal(t, http.StatusCreated, agentCall(t, http.MethodPost, watches, ask, &w))
			require.Equal(t, "codertocat/hello-world#2", w.Resource)
			require.Equal(t, "acme", w.Connector, "the only connector the agent may watch")
			var again watch.Watch
			require.Equal(t, http.StatusOK, agentCall(t, http.MethodPost, watches, ask, &again))
			require.Equal(t, w.ID, again.ID)

			code, out = sendGitHub(t, base, jsonOf(t, opened), "pull_request", "d-opened-redelivered")
			require.Equal(t, http.StatusOK, code, out)
			require.Contains(t, out, `"duplicate":true`, "a redelivery is the same event")
			labeled := octokitAction(t, "pull_request", "labeled")
			code, out = sendGitHub(t, base, jsonOf(t, labeled), "pull_request", "d-labeled-late")
			require.Equal(t, http.StatusAccepted, code, "what happened before the watch is not heard: %s", out)

			comment := func(id int, association string) map[string]any {
				c := octokitAction(t, "issue_comment", "created")
				issue := c["issue"].(map[string]any)
				issue["number"] = 2
				issue["pull_request"] = map[string]any{"url": "https://api.github.com/repos/Codertocat/Hello-World/pulls/2"}
				cm := c["comment"].(map[string]any)
				now := time.Now().UTC().Add(time.Second).Format(time.RFC3339)
				cm["created_at"], cm["updated_at"], cm["author_association"], cm["id"] = now, now, association, id
				return c
			}
			code, out = sendGitHub(t, base, jsonOf(t, comment(1, "MEMBER")), "issue_comment", "d-comment")
			require.Equal(t, http.StatusOK, code, out)
			code, out = sendGitHub(t, base, jsonOf(t, comment(2, "NONE")), "issue_comment", "d-stranger")
			require.Equal(t, http.StatusAccepted, code, out)
			var stranger struct {
				EventID string `json:"eventId"`
			}
			require.NoError(t, json.Unmarshal([]byte(out), &stranger))
			ev, err := store.NewExplain(m.Store).GetEvent(context.Background(), stranger.EventID)
			require.NoError(t, err)
			require.Equal(t, inbox.EventIgnored, ev.Status)
			require.Contains(t, ev.Error, "author not authorized")

			closed := octokitAction(t, "pull_request", "closed")
			pr := closed["pull_request"].(map[string]any)
			now := time.Now().UTC().Add(time.Second).Format(time.RFC3339)
			pr["updated_at"], pr["closed_at"] = now, now
			code, out = sendGitHub(t, base, jsonOf(t, closed), "pull_request", "d-closed")
			require.Equal(t, http.StatusOK, code, out)

			var ended watch.Watch
			require.Equal(t, http.StatusOK, agentCall(t, http.MethodGet, watches+"/"+w.ID, nil, &ended))
			require.NotNil(t, ended.EndedAt)
			require.Equal(t, watch.EndClosed, ended.EndReason)
			code, out = sendGitHub(t, base, jsonOf(t, comment(3, "MEMBER")), "issue_comment", "d-after")
			require.Equal(t, http.StatusAccepted, code, "an ended watch hears nothing: %s", out)

			rs, _, err := store.NewAdmin(m.Store).ListRecords(context.Background(), inbox.RecordFilter{Agent: k.Agent, Resource: k.Resource, Thread: k.Thread, Limit: 10})
			require.NoError(t, err)
			var kinds []string
			for _, r := range rs {
				require.Equal(t, watch.Route, r.Route)
				kinds = append(kinds, r.Kind)
			}
			require.Len(t, kinds, 3, "the comment, the close and its end: %v", kinds)
			require.Contains(t, kinds, watch.Kind)
		})
	}
}

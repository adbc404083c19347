package delivery_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/connectors/github"
	"github.com/signalgate/signalgate/deliverytest"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/server"
	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/store/storetest"
)

const ghSecret = "gh-webhook-secret-0123456789"

// octokitExample is the first of octokit's examples of event for which ok holds.
func octokitExample(t *testing.T, event string, ok func(map[string]any) bool) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "connectors", "github", "testdata", "octokit", "api.github.com", "index.json"))
	if os.IsNotExist(err) {
		t.Skip("octokit examples missing: run scripts/fetch-github-examples.sh (make test does)")
	}
	require.NoError(t, err)
	var index []struct {
		Name     string           `json:"name"`
		Examples []map[string]any `json:"examples"`
	}
	require.NoError(t, json.Unmarshal(raw, &index))
	for _, e := range index {
		for _, ex := range e.Examples {
			if e.Name == event && ok(ex) {
				return ex
			}
		}
	}
	t.Fatalf("no %s example matching the filter", event)
	return nil
}

// checkRuns are octokit's completed check_run example (Octocoders-linter on
// Codertocat/Hello-World#2) as a failure and as a success.
func checkRuns(t *testing.T) (failure, success []byte) {
	t.Helper()
	ex := octokitExample(t, "check_run", func(ex map[string]any) bool {
		return ex["action"] == "completed" && ex["check_run"].(map[string]any)["conclusion"] == "success"
	})
	success, err := json.Marshal(ex)
	require.NoError(t, err)
	ex["check_run"].(map[string]any)["conclusion"] = "failure"
	failure, err = json.Marshal(ex)
	require.NoError(t, err)
	return failure, success
}

// fullNotifications are the full notifications the model saw on k's thread.
func fullNotifications(e *deliverytest.Env, k inbox.ThreadKey) []agent.Frame {
	var out []agent.Frame
	for _, f := range visible(e, k) {
		if f.Signal.TagName == agent.TagNotification {
			out = append(out, f)
		}
	}
	return out
}

// githubWebhook serves the GitHub connector into e's inbox with the shipped ci route
// and returns a function posting a signed check_run delivery.
func githubWebhook(t *testing.T, e *deliverytest.Env) func(delivery string, body []byte) {
	post := githubHook(t, e)
	return func(delivery string, body []byte) { post("check_run", delivery, body) }
}

// githubHook serves the GitHub connector, its CI memory in e's store as the gateway
// keeps it, into e's inbox with the shipped ci route, and returns a function posting a
// signed delivery of an event.
func githubHook(t *testing.T, e *deliverytest.Env) func(event, delivery string, body []byte) {
	router, err := connectors.NewRouter([]connectors.RouteConfig{{
		Name:   "ci",
		Match:  connectors.RouteMatch{Source: inbox.StringList{"github"}, Kind: inbox.StringList{"ci-failure", "ci-recovered", "ci-passed"}},
		Thread: connectors.ThreadConfig{Agent: "coder", Resource: "{{.Repo}}", Thread: "{{.Repo}}#{{.Number}}"},
	}}, []string{"coder", "support"})
	require.NoError(t, err)
	h, err := github.NewHandler([]github.Config{{Name: "acme", Secret: ghSecret}}, connectors.NewPipeline(router, e.Inbox, nil),
		storetest.Logger(t), e.Now, github.WithCIState(github.NewStoreCIState(store.NewConnectorState(e.Store), "github")))
	require.NoError(t, err)
	srv := server.New(server.Config{}, storetest.Logger(t))
	h.Mount(srv.Echo())
	hs := httptest.NewServer(srv.Echo())
	t.Cleanup(hs.Close)
	return func(event, delivery string, body []byte) {
		req, err := http.NewRequest(http.MethodPost, hs.URL+"/webhooks/github/acme", bytes.NewReader(body))
		require.NoError(t, err)
		mac := hmac.New(sha256.New, []byte(ghSecret))
		mac.Write(body)
		req.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(mac.Sum(nil)))
		req.Header.Set("X-GitHub-Event", event)
		req.Header.Set("X-GitHub-Delivery", delivery)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
	}
}

// The measurement, with GitHub's own payloads through the webhook: a check that
// fails and passes again while the agent is busy no longer reaches the model as a
// failure and a recovery; one that failed while it was idle still gets its recovery.
func TestGitHubCIFlapThroughStream(t *testing.T) {
	failure, success := checkRuns(t)
	k := inbox.ThreadKey{Agent: "coder", Resource: "Codertocat/Hello-World", Thread: "Codertocat/Hello-World#2"}
	full := func(e *deliverytest.Env) []agent.Frame { return fullNotifications(e, k) }

	t.Run("busy: failure and recovery pending", func(t *testing.T) {
		e := deliverytest.New(t, deliverytest.Config{})
		post := githubWebhook(t, e)
		run := e.OpenRun(k)
		post("d1", failure)
		post("d2", success)
		settle(e)
		e.FinishRun(k, run.ID)
		settle(e)
		require.Empty(t, full(e), "neither the failure nor the recovery in full")
		recs, err := store.NewRecords(e.Store).ThreadRecords(t.Context(), k)
		require.NoError(t, err)
		require.Len(t, recs, 2)
		for _, r := range recs {
			require.Equal(t, inbox.StatusSuperseded, r.Status)
			require.Equal(t, "github:Codertocat/Hello-World#2:ci:check_run:Octocoders-linter", r.NetKey)
		}
		require.Equal(t, "net state unchanged: success", recs[1].Reason)
	})

	t.Run("idle: a pass with no failure before it is stored and reaches nothing", func(t *testing.T) {
		e := deliverytest.New(t, deliverytest.Config{})
		post := githubWebhook(t, e)
		post("d1", success)
		settle(e)
		require.Empty(t, visible(e, k), "no frame of any kind")
		recs, err := store.NewRecords(e.Store).ThreadRecords(t.Context(), k)
		require.NoError(t, err)
		require.Len(t, recs, 1, "readable in the inbox")
		require.Equal(t, github.KindCIPassed, recs[0].Kind)
		require.Equal(t, inbox.StatusSuperseded, recs[0].Status)
		require.Equal(t, "net state unchanged: success", recs[0].Reason)
	})

	t.Run("idle: failure delivered, then the recovery", func(t *testing.T) {
		e := deliverytest.New(t, deliverytest.Config{})
		post := githubWebhook(t, e)
		post("d1", failure)
		settle(e)
		got := full(e)
		require.Len(t, got, 1)
		require.Contains(t, got[0].Signal.Contents, `"Octocoders-linter" failed`)
		e.FinishRun(k, got[0].RunID)
		post("d2", success)
		settle(e)
		got = full(e)
		require.Len(t, got, 2)
		require.Contains(t, got[1].Signal.Contents, "passed again")
	})
}

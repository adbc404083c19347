package gateway

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

const githubReplaySecret = "gh-webhook-secret-0123456789"

// TestGitHubReplayIsDuplicate plays an attacker holding one captured signed GitHub
// delivery: without X-GitHub-Delivery it is refused, and under a new delivery id it
// is acknowledged as the redelivery it is, changing nothing.
func TestGitHubReplayIsDuplicate(t *testing.T) {
	body := octokitExample(t, "issue_comment")

	m := startMain(t, `
connectors:
  github: [ { name: acme, secret: "`+githubReplaySecret+`" } ]
routes:
  - name: all
    match: { source: github }
    thread: { agent: coder, resource: "{{.Repo}}", thread: "{{.Repo}}#{{.Number}}" }
`)
	post := func(delivery string) (int, map[string]any) {
		req, err := http.NewRequest(http.MethodPost, "http://"+m.Addr().String()+"/webhooks/github/acme", bytes.NewReader(body))
		require.NoError(t, err)
		mac := hmac.New(sha256.New, []byte(githubReplaySecret))
		mac.Write(body)
		req.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(mac.Sum(nil)))
		req.Header.Set("X-GitHub-Event", "issue_comment")
		if delivery != "" {
			req.Header.Set("X-GitHub-Delivery", delivery)
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		out := map[string]any{}
		b, _ := io.ReadAll(resp.Body)
		_ = json.Unmarshal(b, &out)
		return resp.StatusCode, out
	}

	code, first := post("72d3162e-cc78-11e3-81ab-4c9367dc0958")
	require.Equal(t, http.StatusOK, code, first)
	require.Equal(t, false, first["duplicate"])
	require.EqualValues(t, 1, first["records"])

	code, out := post("")
	require.Equal(t, http.StatusBadRequest, code, out)

	code, again := post("a-forged-new-delivery-id")
	require.Equal(t, http.StatusOK, code, again)
	require.Equal(t, true, again["duplicate"])
	require.Equal(t, first["eventId"], again["eventId"])
	require.EqualValues(t, 0, again["records"])
}

// octokitExample is the first octokit example of a GitHub event.
func octokitExample(t *testing.T, event string) []byte {
	t.Helper()
	return octokitExamples(t, event)[0]
}

// octokitExamples are the octokit examples of a GitHub event.
func octokitExamples(t *testing.T, event string) []json.RawMessage {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "connectors", "github", "testdata", "octokit", "api.github.com", "index.json"))
	if os.IsNotExist(err) {
		t.Skip("octokit examples missing: run scripts/fetch-github-examples.sh (make test does)")
	}
	require.NoError(t, err)
	var index []struct {
		Name     string            `json:"name"`
		Examples []json.RawMessage `json:"examples"`
	}
	require.NoError(t, json.Unmarshal(raw, &index))
	for _, e := range index {
		if e.Name == event {
			return e.Examples
		}
	}
	t.Fatalf("no octokit example of %s", event)
	return nil
}

package github

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/connectors/connectorstest"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/server"
)

const testSecret = "It's a Secret to Everybody"

func fixedNow() time.Time { return time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC) }

func testConfig() Config {
	return Config{Name: "acme", Secret: testSecret, BotLogin: "octocat", BotTeam: "bots", AllowedBots: []string{"renovate[bot]"}}
}

func allGitHubRoute() []connectors.RouteConfig {
	return []connectors.RouteConfig{{
		Name:   "all-github",
		Match:  connectors.RouteMatch{Source: inbox.StringList{"github"}},
		Thread: connectors.ThreadConfig{Agent: "coder", Resource: "{{.Repo}}", Thread: "{{.Repo}}#{{.Number}}"},
	}}
}

type harness struct {
	t   testing.TB
	e   *echo.Echo
	ing connectors.Ingester
	// fake is set when ing is the in-memory fake.
	fake *connectorstest.Ingester
}

func newHarness(t testing.TB, cfg Config, limit server.ByteSize) *harness {
	t.Helper()
	fake := connectorstest.NewIngester()
	h := newHarnessWith(t, cfg, limit, fake)
	h.fake = fake
	return h
}

func newHarnessWith(t testing.TB, cfg Config, limit server.ByteSize, ing connectors.Ingester, popts ...connectors.PipelineOption) *harness {
	t.Helper()
	log := slog.New(slog.DiscardHandler)
	srv := server.New(server.Config{BodyLimit: limit}, log)
	router, err := connectors.NewRouter(allGitHubRoute(), []string{"coder"})
	require.NoError(t, err)
	handler, err := NewHandler([]Config{cfg}, connectors.NewPipeline(router, ing, log, popts...), log, fixedNow)
	require.NoError(t, err)
	handler.Mount(srv.Echo())
	return &harness{t: t, e: srv.Echo(), ing: ing}
}

func sign(secret string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// newDelivery builds a signed GitHub delivery request.
func newDelivery(connector, event, delivery string, body []byte) *http.Request {
	req := httptest.NewRequest(http.MethodPost, "/webhooks/github/"+connector, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "GitHub-Hookshot/abc123")
	req.Header.Set("X-GitHub-Event", event)
	req.Header.Set("X-GitHub-Delivery", delivery)
	req.Header.Set("X-GitHub-Hook-ID", "42")
	req.Header.Set("X-Hub-Signature-256", sign(testSecret, body))
	return req
}

func (h *harness) do(req *http.Request) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.e.ServeHTTP(rec, req)
	return rec
}

func (h *harness) deliver(event, delivery string, body []byte) *httptest.ResponseRecorder {
	return h.do(newDelivery("acme", event, delivery, body))
}

func decodeOutcome(t testing.TB, rec *httptest.ResponseRecorder) connectors.Outcome {
	t.Helper()
	var out connectors.Outcome
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &out), rec.Body.String())
	return out
}

// examples reads the octokit examples of one index ("api.github.com", "ghes-35"),
// keyed by event name.
func examples(t testing.TB, index string) map[string][]json.RawMessage {
	t.Helper()
	path := filepath.Join("testdata", "octokit", index, "index.json")
	raw, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		t.Skipf("%s missing: run scripts/fetch-github-examples.sh (make test does) to fetch @octokit/webhooks-examples", path)
	}
	require.NoError(t, err)
	var list []struct {
		Name     string            `json:"name"`
		Examples []json.RawMessage `json:"examples"`
	}
	require.NoError(t, json.Unmarshal(raw, &list))
	out := map[string][]json.RawMessage{}
	for _, e := range list {
		out[e.Name] = e.Examples
	}
	return out
}

// pick returns the first example of event whose action is action ("" for any) and
// for which ok (when given) holds, decoded with numbers kept exact.
func pick(t testing.TB, ex map[string][]json.RawMessage, event, action string, ok func(map[string]any) bool) map[string]any {
	t.Helper()
	for _, raw := range ex[event] {
		m := decode(t, raw)
		if a, _ := m["action"].(string); action != "" && a != action {
			continue
		}
		if ok == nil || ok(m) {
			return m
		}
	}
	t.Fatalf("no %s example with action %q matching the filter", event, action)
	return nil
}

func decode(t testing.TB, raw []byte) map[string]any {
	t.Helper()
	m, err := decodeNumbers(raw)
	require.NoError(t, err)
	return m
}

// decodeNumbers decodes a JSON object keeping numbers as written (ids stay exact); it
// fails without a testing.T, for code off the test's goroutine.
func decodeNumbers(raw []byte) (map[string]any, error) {
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	return m, dec.Decode(&m)
}

func encode(t testing.TB, m map[string]any) []byte {
	t.Helper()
	b, err := json.Marshal(m)
	require.NoError(t, err)
	return b
}

// get reads a dotted path; set writes one (creating objects on the way).
func get(m map[string]any, path string) any {
	var cur any = m
	for _, k := range strings.Split(path, ".") {
		obj, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = obj[k]
	}
	return cur
}

func set(m map[string]any, path string, v any) {
	keys := strings.Split(path, ".")
	cur := m
	for _, k := range keys[:len(keys)-1] {
		next, ok := cur[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			cur[k] = next
		}
		cur = next
	}
	cur[keys[len(keys)-1]] = v
}

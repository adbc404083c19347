package langgraph

import (
	"crypto/hmac"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/targets/httptarget"
)

// WebhookPath is where a langgraph agent's runs report their end:
// POST /targets/langgraph/{agent}/webhook?resource=…&thread=…&run=…&sig=….
func WebhookPath(agentID string) string { return "/targets/langgraph/" + agentID + "/webhook" }

// webhookRoute is WebhookPath as the router matches it: every langgraph agent's.
const webhookRoute = "/targets/langgraph/:agent/webhook"

// webhookURL is the webhook of a run started for gateway run gatewayRun on k: "" when
// no callback_url is set (polling alone sees runs end).
func (s server) webhookURL(k inbox.ThreadKey, gatewayRun string) string {
	if s.CallbackURL == "" {
		return ""
	}
	q := url.Values{"resource": {k.Resource}, "thread": {k.Thread}, "run": {gatewayRun},
		"sig": {webhookSig([]byte(s.CallbackToken.Reveal()), k, gatewayRun)}}
	return strings.TrimRight(s.CallbackURL, "/") + WebhookPath(url.PathEscape(s.agent)) + "?" + q.Encode()
}

// Mount serves the agent's webhook endpoint on the gateway's router: one route for every
// langgraph agent, each follower taking its own agent's requests.
func (f *Follower) Mount(e *echo.Echo) {
	if f.cfg.CallbackURL == "" {
		return
	}
	httptarget.MountAgent(e, http.MethodPost, webhookRoute, f.id, f.serveWebhook)
}

// serveWebhook takes a run's webhook: the URL's signature proves the gateway made it
// (the server signs nothing), the body names the run and how it ended. It answers at
// once, having read the whole body: the JS server waits for the answer in the worker
// that ran the run, and loses that worker when the delivery fails. The thread is read
// from the server afterwards; the body only says which run ended.
func (f *Follower) serveWebhook(c echo.Context) error {
	q := c.QueryParams()
	k := inbox.ThreadKey{Agent: f.id, Resource: q.Get("resource"), Thread: q.Get("thread")}
	gatewayRun, sig := q.Get("run"), q.Get("sig")
	body := c.Request().Body
	defer func() { _, _ = io.Copy(io.Discard, body) }()
	if k.Resource == "" || k.Thread == "" || sig == "" {
		return echo.NewHTTPError(http.StatusBadRequest, "resource, thread and sig are required")
	}
	want := webhookSig([]byte(f.cfg.CallbackToken.Reveal()), k, gatewayRun)
	if !hmac.Equal([]byte(sig), []byte(want)) {
		return echo.NewHTTPError(http.StatusUnauthorized, "bad webhook signature")
	}
	fields := topLevelReader(body, "run_id", "status")
	var e runEnd
	_ = json.Unmarshal(fields["run_id"], &e.run)
	_ = json.Unmarshal(fields["status"], &e.status)
	e.gatewayRun = gatewayRun
	f.webhookTaken(k, e)
	return c.NoContent(http.StatusNoContent)
}

// topLevelReader is topLevel over a body read only as far as the keys (the server
// sends the run's fields, then the thread's whole state).
func topLevelReader(r io.Reader, keys ...string) map[string]json.RawMessage {
	out := map[string]json.RawMessage{}
	dec := json.NewDecoder(r)
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return out
	}
	for dec.More() && len(out) < len(keys) {
		t, err := dec.Token()
		if err != nil {
			return out
		}
		key, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return out
		}
		for _, want := range keys {
			if key == want {
				out[key] = v
			}
		}
	}
	return out
}

package generic

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/connectors/connectorstest"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/reply"
	"github.com/signalgate/signalgate/server"
	"github.com/signalgate/signalgate/stdwebhooks"
)

const testSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

type harness struct {
	handler *Handler
	e       *echo.Echo
	ing     *connectorstest.Ingester
	now     time.Time
	used    []string // "connector slot" of each verified delivery
}

func newHarness(t *testing.T, limit server.ByteSize, cfgs ...Config) *harness {
	t.Helper()
	if len(cfgs) == 0 {
		cfgs = []Config{{Name: "billing", Secret: testSecret}}
	}
	log := slog.New(slog.DiscardHandler)
	srv := server.New(server.Config{BodyLimit: limit}, log)
	router, err := connectors.NewRouter([]connectors.RouteConfig{{
		Name:   "generic",
		Match:  connectors.RouteMatch{Source: inbox.StringList{"generic"}},
		Thread: connectors.ThreadConfig{Agent: "ops", Resource: "{{.Connector}}", Thread: `{{default "general" (index .Extra "customer")}}`},
	}}, []string{"ops"})
	require.NoError(t, err)
	ing := connectorstest.NewIngester()
	h := &harness{e: srv.Echo(), ing: ing, now: testNow}
	p := connectors.NewPipeline(router, ing, log, connectors.WithSecretUsed(func(c, slot string) { h.used = append(h.used, c+" "+slot) }))
	handler, err := NewHandler(cfgs, p, log, func() time.Time { return h.now })
	require.NoError(t, err)
	handler.Mount(srv.Echo())
	h.handler = handler
	return h
}

func signedRequest(t *testing.T, connector, id string, ts time.Time, body []byte) *http.Request {
	t.Helper()
	return signedWith(t, testSecret, connector, id, ts, body)
}

func signedWith(t *testing.T, key, connector, id string, ts time.Time, body []byte) *http.Request {
	t.Helper()
	secret, err := stdwebhooks.ParseSecret(key)
	require.NoError(t, err)
	req := httptest.NewRequest(http.MethodPost, "/webhooks/generic/"+connector, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(stdwebhooks.HeaderID, id)
	req.Header.Set(stdwebhooks.HeaderTimestamp, strconv.FormatInt(ts.Unix(), 10))
	req.Header.Set(stdwebhooks.HeaderSignature, stdwebhooks.Sign(secret, id, ts, body))
	return req
}

func (h *harness) do(req *http.Request) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.e.ServeHTTP(rec, req)
	return rec
}

func (h *harness) post(t *testing.T, id string, body string) *httptest.ResponseRecorder {
	return h.do(signedRequest(t, "billing", id, h.now, []byte(body)))
}

const notificationJSON = `{
  "source": "stripe",
  "kind": "invoice.failed",
  "summary": "Invoice <b>in_42</b> for Globex failed: card declined.",
  "priority": "high",
  "payload": {"invoice": "in_42", "amount": 1200},
  "dedupeKey": "invoice:in_42",
  "coalesceKey": "customer:globex",
  "attributes": {"customer": "globex", "amount": 1200},
  "metadata": {"verified_by": "hmac-github", "trace": "abc",
    "replyTo": {"source": "slack", "connector": "acme", "channel": "C0EXECPRIV"}}
}`

func TestNotificationBody(t *testing.T) {
	h := newHarness(t, 0)
	rec := h.post(t, "msg_1", notificationJSON)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())

	call, ok := h.ing.Last()
	require.True(t, ok)
	assert.Equal(t, "generic", call.Event.Source)
	assert.Equal(t, "billing", call.Event.Connector)
	assert.Equal(t, "msg_1", call.Event.DeliveryID)
	assert.Equal(t, "invoice.failed", call.Event.Type)
	assert.NotContains(t, call.Event.Headers, "Webhook-Signature")
	require.Len(t, call.Notifications, 1)
	n := call.Notifications[0]
	assert.Equal(t, inbox.ThreadKey{Agent: "ops", Resource: "billing", Thread: "globex"}, n.Thread)
	assert.Equal(t, "generic", n.Source, "a body cannot claim another source")
	assert.Equal(t, "invoice.failed", n.Kind)
	assert.Equal(t, inbox.PriorityHigh, n.Priority)
	assert.Equal(t, "Invoice in_42 for Globex failed: card declined.", n.Summary)
	assert.JSONEq(t, `{"invoice": "in_42", "amount": 1200}`, string(n.Payload))
	assert.Equal(t, "invoice:in_42", n.DedupeKey)
	assert.Equal(t, "customer:globex", n.CoalesceKey)
	assert.Equal(t, "stripe", n.Attributes.String("origin"))
	assert.Equal(t, "1200", n.Attributes.String("amount"))
	assert.Equal(t, VerifiedBy, n.Metadata[connectors.MetaVerifiedBy], "provenance is the gateway's")
	assert.Equal(t, "abc", n.Metadata["trace"])
	assert.NotContains(t, n.Metadata, reply.MetadataKey, "where answers go is not the sender's to say: dropped, the event kept")
}

func TestMappedBody(t *testing.T) {
	cfg := Config{Name: "billing", Secret: testSecret, DefaultPriority: inbox.PriorityLow, Mapping: &Mapping{
		Kind: "$.type", Summary: "$.data.description", DedupeKey: "$.id", Priority: "$.severity",
		Payload: "$.data", Author: "$.data.actor.email", URL: "$.data.links.0",
		Priorities: map[string]inbox.Priority{"critical": inbox.PriorityUrgent},
		Attributes: map[string]string{"invoice": "$.data.invoice", "amount": "$.data.amount"},
		Fields:     map[string]string{"customer": "$.data.customer.slug"},
	}}
	h := newHarness(t, 0, cfg)
	body := `{"id": "evt_9", "type": "invoice.payment_failed", "severity": "critical",
	  "data": {"description": "Payment for in_7 failed", "invoice": "in_7", "amount": 99.5,
	           "customer": {"slug": "acme"}, "actor": {"email": "billing@example.com"},
	           "links": ["https://billing.example.com/in_7"]}}`
	rec := h.post(t, "msg_2", body)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	call, _ := h.ing.Last()
	require.Len(t, call.Notifications, 1)
	n := call.Notifications[0]
	assert.Equal(t, inbox.ThreadKey{Agent: "ops", Resource: "billing", Thread: "acme"}, n.Thread, "fields feed routes")
	assert.Equal(t, "invoice.payment_failed", n.Kind)
	assert.Equal(t, inbox.PriorityUrgent, n.Priority)
	assert.Equal(t, "Payment for in_7 failed", n.Summary)
	assert.Equal(t, "evt_9", n.DedupeKey)
	assert.Equal(t, "url=https://billing.example.com/in_7 author=billing@example.com amount=99.5 invoice=in_7", attrString(n.Attributes))
	var payload map[string]any
	require.NoError(t, json.Unmarshal(n.Payload, &payload))
	assert.Equal(t, "in_7", payload["invoice"])

	// Unknown severities fall back to the default; a missing summary is described.
	rec = h.post(t, "msg_3", `{"type": "ping", "severity": "meh"}`)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	call, _ = h.ing.Last()
	n = call.Notifications[0]
	assert.Equal(t, inbox.PriorityLow, n.Priority)
	assert.Equal(t, "billing sent a ping event.", n.Summary)
	assert.Equal(t, inbox.ThreadKey{Agent: "ops", Resource: "billing", Thread: "general"}, n.Thread)

	assert.Contains(t, h.invalid(t, "msg_4", `{"severity": "critical"}`), "kind: required")
	assert.Contains(t, h.invalid(t, "msg_5", `{"type": {"nested": true}}`), "kind: want a string")
}

func attrString(a inbox.Attributes) string {
	var parts []string
	for _, kv := range a {
		parts = append(parts, kv.Key+"="+inbox.FormatValue(kv.Value))
	}
	return strings.Join(parts, " ")
}

// invalid posts a signed body the connector cannot read and returns the reason it
// was stored with: verified but unreadable is 202 invalid, never a 400.
func (h *harness) invalid(t *testing.T, id, body string) string {
	t.Helper()
	before := len(h.ing.Calls())
	rec := h.post(t, id, body)
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	var out connectors.Outcome
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &out))
	assert.Equal(t, inbox.EventInvalid, out.Status)
	assert.NotEmpty(t, out.EventID)
	calls := h.ing.Calls()
	require.Len(t, calls, before+1, "stored for replay")
	ev := calls[len(calls)-1].Event
	assert.Equal(t, []byte(body), ev.Body)
	assert.Equal(t, id, ev.DeliveryID)
	assert.Empty(t, calls[len(calls)-1].Notifications)
	return ev.Error
}

func TestGenericUnrouted(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	srv := server.New(server.Config{}, log)
	router, err := connectors.NewRouter(nil, nil)
	require.NoError(t, err)
	ing := connectorstest.NewIngester()
	handler, err := NewHandler([]Config{{Name: "billing", Secret: testSecret}}, connectors.NewPipeline(router, ing, log), log,
		func() time.Time { return testNow })
	require.NoError(t, err)
	handler.Mount(srv.Echo())
	rec := httptest.NewRecorder()
	srv.Echo().ServeHTTP(rec, signedRequest(t, "billing", "msg_1", testNow, []byte(notificationJSON)))
	require.Equal(t, http.StatusAccepted, rec.Code)
	var out connectors.Outcome
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &out))
	assert.Equal(t, inbox.EventUnrouted, out.Status)
	_, stored := ing.Last()
	assert.True(t, stored)
}

func TestGenericConfigValidation(t *testing.T) {
	err := connectors.ValidateConfigs("generic", []Config{
		{Name: "a"},
		{Name: "b", Secret: "whsec_%%%", DefaultPriority: "asap",
			Mapping: &Mapping{Kind: "$..type", Priorities: map[string]inbox.Priority{"crit": "panic"}, Fields: map[string]string{"c": ""}}},
		{Name: "a", Secret: "s"},
	})
	require.Error(t, err)
	for _, want := range []string{
		"generic[0].secret: required (unsigned deliveries are never accepted)",
		"generic[1].secret: the part after whsec_ is not valid base64",
		`generic[1].default_priority: unknown "asap"`,
		"generic[1].mapping.kind: path",
		"generic[1].mapping.fields.c: empty path",
		`generic[1].mapping.priorities.crit: unknown "panic"`,
		`generic[2].name: duplicate connector name "a" (also generic[0])`,
	} {
		assert.Contains(t, err.Error(), want)
	}
}

var testNow = time.Unix(1_770_000_000, 0)

package generic

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/connectors/connectorstest"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/server"
)

// sentByLibrary is a delivery as the official Standard Webhooks library signs it.
func sentByLibrary(t *testing.T, connector, id string, ts time.Time, body []byte) *http.Request {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(testSecret)
	require.NoError(t, err)
	sig, err := wh.Sign(id, ts, body)
	require.NoError(t, err)
	req := httptest.NewRequest(http.MethodPost, "/webhooks/generic/"+connector, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(standardwebhooks.HeaderWebhookID, id)
	req.Header.Set(standardwebhooks.HeaderWebhookTimestamp, strconv.FormatInt(ts.Unix(), 10))
	req.Header.Set(standardwebhooks.HeaderWebhookSignature, sig)
	return req
}

// readPayload is a Standard Webhooks payload: a product sample, else one of testdata.
func readPayload(t *testing.T, name string) []byte {
	t.Helper()
	if b, err := SampleFile(name); err == nil {
		return b
	}
	b, err := os.ReadFile(filepath.Join("testdata", "standard-webhooks", name))
	require.NoError(t, err)
	return b
}

// TestStandardWebhooksEnvelope sends the canonical payloads of the spec and of a real
// sender, signed by the official library, to a connector with no mapping.
func TestStandardWebhooksEnvelope(t *testing.T) {
	for _, c := range []struct {
		file, kind, summary string
	}{
		{"example-event.json", "example.event", "billing sent example.event"},
		{"contact-created-full.json", "contact.created", "billing sent contact.created"},
		{"contact-created-thin.json", "contact.created", "billing sent contact.created"},
		{"example-created.json", "example.created", "billing sent example.created"},
		{"resend-email-sent.json", "email.sent", "Sending this example"},
	} {
		t.Run(c.file, func(t *testing.T) {
			h := newHarness(t, 0)
			body := readPayload(t, c.file)
			rec := h.do(sentByLibrary(t, "billing", "msg_2KWPBgLlAfxdpx2AI54pPJ85f4W", h.now, body))
			require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())

			call, ok := h.ing.Last()
			require.True(t, ok)
			assert.Equal(t, c.kind, call.Event.Type)
			assert.Equal(t, body, call.Event.Body, "stored as received")
			require.Len(t, call.Notifications, 1)
			n := call.Notifications[0]
			assert.Equal(t, c.kind, n.Kind)
			assert.Equal(t, c.summary, n.Summary)
			assert.Equal(t, inbox.PriorityMedium, n.Priority)
			assert.Equal(t, "msg_2KWPBgLlAfxdpx2AI54pPJ85f4W", n.DedupeKey, "dedupeKey is the webhook-id")
			var doc struct {
				Data json.RawMessage `json:"data"`
			}
			require.NoError(t, json.Unmarshal(body, &doc))
			assert.JSONEq(t, string(doc.Data), string(n.Payload), "payload is data")
			assert.Equal(t, VerifiedBy, n.Metadata[connectors.MetaVerifiedBy])
		})
	}
}

// TestStandardWebhooksRouteFields routes on data's scalars with match.extra.
func TestStandardWebhooksRouteFields(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	srv := server.New(server.Config{}, log)
	router, err := connectors.NewRouter([]connectors.RouteConfig{{
		Name:   "contacts",
		Match:  connectors.RouteMatch{Source: inbox.StringList{"generic"}, Kind: inbox.StringList{"contact.*"}, Extra: map[string]inbox.StringList{"type": {"contact"}}},
		Thread: connectors.ThreadConfig{Agent: "ops", Resource: "crm", Thread: `{{index .Extra "id"}}`},
	}}, []string{"ops"})
	require.NoError(t, err)
	ing := connectorstest.NewIngester()
	handler, err := NewHandler([]Config{{Name: "crm", Secret: testSecret}}, connectors.NewPipeline(router, ing, log), log, testNowFunc)
	require.NoError(t, err)
	handler.Mount(srv.Echo())
	post := func(file, id string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		srv.Echo().ServeHTTP(rec, sentByLibrary(t, "crm", id, testNow, readPayload(t, file)))
		return rec
	}

	rec := post("contact-created-full.json", "msg_1")
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	call, _ := ing.Last()
	require.Len(t, call.Notifications, 1)
	assert.Equal(t, inbox.ThreadKey{Agent: "ops", Resource: "crm", Thread: "1f81eb52-5198-4599-803e-771906343485"}, call.Notifications[0].Thread)

	// The thin payload has no data.type: stored, unrouted.
	rec = post("contact-created-thin.json", "msg_2")
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	call, _ = ing.Last()
	assert.Equal(t, inbox.EventUnrouted, call.Event.Status)
}

// TestNativeBodyStaysStrict: a body with kind or summary is a native body and its
// typos are still caught; the same typo-like field in an envelope is the sender's.
func TestNativeBodyStaysStrict(t *testing.T) {
	h := newHarness(t, 0)
	assert.Contains(t, h.invalid(t, "msg_1", `{"kind": "invoice.paid", "data": {"id": "in_1"}}`), `unknown field "data"`)
	assert.Contains(t, h.invalid(t, "msg_2", `{"summary": "paid", "type": "invoice.paid"}`), `unknown field "type"`)

	rec := h.post(t, "msg_3", `{"type": "invoice.paid", "timestamp": "2022-11-03T20:26:10.344522Z", "dedupe_key": "x", "data": {"id": "in_1"}}`)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
}

func testNowFunc() time.Time { return testNow }

package generic

import (
	"bytes"
	"encoding/base64"
	"log/slog"
	"net/http"
	"net/http/httptest"
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

// TestConformance runs the suite every HTTP connector passes, with deliveries
// signed by the official Standard Webhooks library: the webhook-id is signed with
// the body, so a request without one cannot be verified (401).
func TestConformance(t *testing.T) {
	body := readPayload(t, "example-event.json")
	unreadable := []connectorstest.Unreadable{
		{Name: "malformed JSON", Body: []byte(`{"kind": "x",`), Reason: "malformed JSON body"},
		{Name: "not an object", Body: []byte(`["kind"]`), Reason: "body: want a JSON object"},
		{Name: "missing kind", Body: []byte(`{"summary": "something happened"}`), Reason: "kind: required"},
		{Name: "typo in a native body", Body: []byte(`{"kind": "x", "dedupe_key": "k"}`), Reason: `unknown field "dedupe_key"`},
		{Name: "wrong type", Body: []byte(`{"kind": 7}`), Reason: "kind: wrong type"},
		{Name: "bad priority", Body: []byte(`{"kind": "x", "priority": "asap"}`), Reason: `priority: unknown "asap"`},
		{Name: "nested attribute", Body: []byte(`{"kind": "x", "attributes": {"a": {"b": 1}}}`), Reason: `attribute "a"`},
		{Name: "envelope type not a string", Body: []byte(`{"type": 7, "data": {}}`), Reason: "type: want a string"},
		{Name: "envelope without a type", Body: []byte(`{"timestamp": "2022-11-03T20:26:10.344522Z", "data": {"id": "1"}}`), Reason: "type: required"},
	}
	for i := range unreadable {
		sent := unreadable[i].Body
		unreadable[i].Check = func(t *testing.T, ev inbox.Event) { assert.Equal(t, sent, ev.Body, "stored as received") }
	}
	connectorstest.Exercise(t, connectorstest.HTTPConnector{
		Name:  "billing",
		Start: testNow,
		New: func(t *testing.T, limit server.ByteSize, ing connectors.Ingester, now func() time.Time) http.Handler {
			log := slog.New(slog.DiscardHandler)
			srv := server.New(server.Config{BodyLimit: limit}, log)
			router, err := connectors.NewRouter([]connectors.RouteConfig{{
				Name:   "generic",
				Match:  connectors.RouteMatch{Source: inbox.StringList{"generic"}},
				Thread: connectors.ThreadConfig{Agent: "ops", Resource: "{{.Connector}}", Thread: "general"},
			}}, []string{"ops"})
			require.NoError(t, err)
			handler, err := NewHandler([]Config{{Name: "billing", Secret: testSecret}}, connectors.NewPipeline(router, ing, log), log, now)
			require.NoError(t, err)
			handler.Mount(srv.Echo())
			return srv.Echo()
		},
		Body: func(*testing.T, string) []byte { return body },
		Request: func(t *testing.T, d connectorstest.Delivery) *http.Request {
			secret := testSecret
			if d.Secret != "" {
				secret = "whsec_" + base64.StdEncoding.EncodeToString([]byte(d.Secret))
			}
			wh, err := standardwebhooks.NewWebhook(secret)
			require.NoError(t, err)
			sig, err := wh.Sign(d.ID, d.At, d.Body)
			require.NoError(t, err)
			req := httptest.NewRequest(http.MethodPost, "/webhooks/generic/"+d.Connector, bytes.NewReader(d.Body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set(standardwebhooks.HeaderWebhookID, d.ID)
			req.Header.Set(standardwebhooks.HeaderWebhookTimestamp, strconv.FormatInt(d.At.Unix(), 10))
			req.Header.Set(standardwebhooks.HeaderWebhookSignature, sig)
			return req
		},
		SignatureHeader:  standardwebhooks.HeaderWebhookSignature,
		DeliveryIDHeader: standardwebhooks.HeaderWebhookID,
		IDSigned:         true,
		TimestampHeader:  standardwebhooks.HeaderWebhookTimestamp,
		Tolerance:        5 * time.Minute, // the spec's
		Unreadable:       unreadable,
	})
}

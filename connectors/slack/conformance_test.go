package slack

import (
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/connectors/connectorstest"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/server"
)

// TestConformance runs the suite every HTTP connector passes. Slack's delivery id
// is the envelope's event_id, in the body; its v0 scheme signs a timestamp.
func TestConformance(t *testing.T) {
	connectorstest.Exercise(t, connectorstest.HTTPConnector{
		Name: "acme",
		// slack-go checks the window against the wall clock as well.
		Start: time.Now().Truncate(time.Second),
		New: func(t *testing.T, limit server.ByteSize, ing connectors.Ingester, now func() time.Time) http.Handler {
			log := slog.New(slog.DiscardHandler)
			srv := server.New(server.Config{BodyLimit: limit}, log)
			router, err := connectors.NewRouter(allSlackRoutes(), []string{"support"})
			require.NoError(t, err)
			handler, err := NewHandler([]Config{testConfig()}, connectors.NewPipeline(router, ing, log), log, now)
			require.NoError(t, err)
			handler.Mount(srv.Echo())
			return srv.Echo()
		},
		Body: func(t *testing.T, id string) []byte {
			return callback(t, id, messageEvent("D024BE91L", "im", "1355517523.000005", "Hello hello can you hear me?"))
		},
		Request: func(_ *testing.T, d connectorstest.Delivery) *http.Request {
			req := newSignedRequest(d.Connector, d.Body, d.At.Unix())
			if d.Secret != "" {
				req.Header.Set(HeaderSignature, sign(d.Secret, d.At.Unix(), d.Body))
			}
			return req
		},
		SignatureHeader:  HeaderSignature,
		TimestampHeader:  HeaderTimestamp,
		Tolerance:        SignatureWindow,
		ReadLimitHeaders: map[string]string{HeaderNoRetry: "1"},
		Unreadable: []connectorstest.Unreadable{
			{Name: "truncated envelope", Body: []byte(`{"token":"XXYYZZ","team_id":"T0001","type":"event_callback","event":{`), Reason: "malformed JSON"},
			{Name: "wrong shape", Body: []byte(`{"token":"XXYYZZ","team_id":"T0001","type":"event_callback","event_id":"Ev05","event":{"type":"message","text":42,"ts":"1.2","channel":"C0001"}}`),
				Reason: `decode event: field "text" has the wrong type`,
				Check:  func(t *testing.T, ev inbox.Event) { assert.Equal(t, "Ev05", ev.DeliveryID) }},
		},
	})
}

package github

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/connectors/connectorstest"
	"github.com/signalgate/signalgate/server"
)

// TestConformance runs the suite every HTTP connector passes; GitHub signs no
// timestamp, and its X-GitHub-Delivery is always sent, so a request without one is a 400.
func TestConformance(t *testing.T) {
	body := issueCommentBody(t)
	connectorstest.Exercise(t, connectorstest.HTTPConnector{
		Name:  "acme",
		Start: fixedNow(),
		New: func(t *testing.T, limit server.ByteSize, ing connectors.Ingester, now func() time.Time) http.Handler {
			log := slog.New(slog.DiscardHandler)
			srv := server.New(server.Config{BodyLimit: limit}, log)
			router, err := connectors.NewRouter(allGitHubRoute(), []string{"coder"})
			require.NoError(t, err)
			handler, err := NewHandler([]Config{testConfig()}, connectors.NewPipeline(router, ing, log), log, now)
			require.NoError(t, err)
			handler.Mount(srv.Echo())
			return srv.Echo()
		},
		Body: func(*testing.T, string) []byte { return body },
		Request: func(_ *testing.T, d connectorstest.Delivery) *http.Request {
			req := httptest.NewRequest(http.MethodPost, "/webhooks/github/"+d.Connector, bytes.NewReader(d.Body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("User-Agent", "GitHub-Hookshot/abc123")
			req.Header.Set("X-GitHub-Event", "issue_comment")
			req.Header.Set("X-GitHub-Delivery", d.ID)
			req.Header.Set("X-GitHub-Hook-ID", "42")
			secret := testSecret
			if d.Secret != "" {
				secret = d.Secret
			}
			req.Header.Set("X-Hub-Signature-256", sign(secret, d.Body))
			return req
		},
		SignatureHeader:  "X-Hub-Signature-256",
		DeliveryIDHeader: "X-GitHub-Delivery",
		Unreadable: []connectorstest.Unreadable{
			{Name: "malformed JSON", Body: []byte(`{"action": "created", "comment": {`), Reason: "malformed JSON payload"},
			{Name: "unmapped, malformed", Body: []byte(`{"forkee": `), Reason: "malformed JSON payload", Prepare: event("fork")},
			{Name: "malformed form", Body: []byte(`payload=%zz`), Reason: "received a body under content type application/x-www-form-urlencoded that is not a valid form", Prepare: func(r *http.Request) {
				r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			}},
			{Name: "not an object", Body: []byte(`[]`), Reason: "decode check_run payload", Prepare: event("check_run")},
			{Name: "unmapped, not an object", Body: []byte(`[]`), Reason: "want a JSON object", Prepare: event("made_up_event")},
			{Name: "ping, not an object", Body: []byte(`null`), Reason: "want a JSON object", Prepare: event("ping")},
		},
	})
}

func event(name string) func(*http.Request) {
	return func(r *http.Request) { r.Header.Set("X-GitHub-Event", name) }
}

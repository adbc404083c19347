package alertmanager

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
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/connectors/connectorstest"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/reply"
	"github.com/signalgate/signalgate/server"
)

const (
	testToken   = "am-webhook-token-0123456789"
	grafanaKey  = "grafana-hmac-secret-0123456789"
	tsHeader    = "X-Grafana-Alerting-Signature-Timestamp"
	basicUser   = "alertmanager"
	basicPasswd = "basic-password-0123456789"
)

var testNow = time.Date(2024, 5, 1, 10, 1, 0, 0, time.UTC)

func sample(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return b
}

// harness is one handler behind a real server, routing every alert to the kind's
// default thread (a route naming only its agent).
type harness struct {
	e   http.Handler
	ing *connectorstest.Ingester
}

func newHarness(t *testing.T, limit server.ByteSize, now func() time.Time, cfgs ...Config) *harness {
	t.Helper()
	log := slog.New(slog.DiscardHandler)
	srv := server.New(server.Config{BodyLimit: limit}, log)
	router, err := connectors.NewRouter([]connectors.RouteConfig{{
		Name:   "alerts",
		Match:  connectors.RouteMatch{Source: inbox.StringList{Source}},
		Thread: connectors.ThreadConfig{Agent: "ops"},
	}}, []string{"ops"}, connectors.WithSources(Source, "github"), connectors.WithDefaultThreads(Source))
	require.NoError(t, err)
	ing := connectorstest.NewIngester()
	h, err := NewHandler(cfgs, connectors.NewPipeline(router, ing, log), log, now)
	require.NoError(t, err)
	h.Mount(srv.Echo())
	return &harness{e: srv.Echo(), ing: ing}
}

func (h *harness) post(connector string, body []byte, hdr http.Header) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, "/webhooks/alertmanager/"+connector, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		req.Header[k] = v
	}
	rec := httptest.NewRecorder()
	h.e.ServeHTTP(rec, req)
	return rec
}

func bearer(tok string) http.Header { return http.Header{"Authorization": {"Bearer " + tok}} }

func grafanaSign(key string, ts int64, body []byte) http.Header {
	m := hmac.New(sha256.New, []byte(key))
	h := http.Header{}
	if ts != 0 {
		s := strconv.FormatInt(ts, 10)
		m.Write([]byte(s + ":"))
		h.Set(tsHeader, s)
	}
	m.Write(body)
	h.Set(DefaultSignatureHeader, hex.EncodeToString(m.Sum(nil)))
	return h
}

// TestConformance runs the suite every HTTP connector passes, with Grafana's HMAC
// signature over a timestamp and the body (a bearer token or basic auth, which sign no
// body, are TestWebhookCredentials'), and the body's digest as its delivery id.
func TestConformance(t *testing.T) {
	hmacCfg := GrafanaHMAC{Secret: grafanaKey, TimestampHeader: tsHeader}
	connectorstest.Exercise(t, connectorstest.HTTPConnector{
		Name:  "prod",
		Start: testNow,
		New: func(t *testing.T, limit server.ByteSize, ing connectors.Ingester, now func() time.Time) http.Handler {
			log := slog.New(slog.DiscardHandler)
			srv := server.New(server.Config{BodyLimit: limit}, log)
			router, err := connectors.NewRouter([]connectors.RouteConfig{{Name: "alerts", Match: connectors.RouteMatch{Source: inbox.StringList{Source}},
				Thread: connectors.ThreadConfig{Agent: "ops"}}}, []string{"ops"})
			require.NoError(t, err)
			h, err := NewHandler([]Config{{Name: "prod", Grafana: &hmacCfg}}, connectors.NewPipeline(router, ing, log), log, now)
			require.NoError(t, err)
			h.Mount(srv.Echo())
			return srv.Echo()
		},
		Body: func(t *testing.T, _ string) []byte { return sample(t, "alertmanager-firing.json") },
		Request: func(t *testing.T, d connectorstest.Delivery) *http.Request {
			req := httptest.NewRequest(http.MethodPost, "/webhooks/alertmanager/"+d.Connector, bytes.NewReader(d.Body))
			req.Header = grafanaSign(cmpOr(d.Secret, grafanaKey), d.At.Unix(), d.Body)
			return req
		},
		SignatureHeader: DefaultSignatureHeader,
		TimestampHeader: tsHeader,
		Tolerance:       GrafanaTolerance,
		DeliveryIDOf:    DeliveryID,
		Unreadable: []connectorstest.Unreadable{
			{Name: "unknown version", Body: []byte(`{"version":"3","alerts":[]}`), Reason: `version: "3"`},
			{Name: "no version", Body: []byte(`{"alerts":[]}`), Reason: "version: required"},
			{Name: "alert status", Body: []byte(`{"version":"4","alerts":[{"status":"pending","fingerprint":"ab","labels":{"a":"b"}}]}`), Reason: "alerts[0].status"},
			{Name: "fingerprint", Body: []byte(`{"version":"4","alerts":[{"status":"firing","fingerprint":"not hex","labels":{"a":"b"}}]}`), Reason: "alerts[0].fingerprint"},
			{Name: "label name", Body: []byte(`{"version":"4","alerts":[{"status":"firing","fingerprint":"ab","labels":{"a b":"c"}}]}`), Reason: `"a b" is not a label name`},
			{Name: "labels of the wrong type", Body: []byte(`{"version":"4","alerts":[{"status":"firing","fingerprint":"ab","labels":{"a":1}}]}`), Reason: "alerts.labels"},
		},
	})
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// TestAlertmanagerNotification: each alert of a notification is an item in its lane
// (alert:<fingerprint>, firing or resolved, rest resolved), with its priority from
// severity, the kind's default thread per alertname and cluster/namespace, and the
// alert's place (fingerprint and labels) as its replyTo.
func TestAlertmanagerNotification(t *testing.T) {
	h := newHarness(t, 0, func() time.Time { return testNow }, Config{Name: "prod", BearerToken: testToken}.WithDefaults())
	body := sample(t, "alertmanager-firing.json")
	rec := h.post("prod", body, bearer(testToken))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	call, _ := h.ing.Last()
	assert.Equal(t, DeliveryID(body), call.Event.DeliveryID)
	assert.Equal(t, "alerts-firing", call.Event.Type)
	require.Len(t, call.Notifications, 2)

	firing, resolved := call.Notifications[0], call.Notifications[1]
	assert.Equal(t, inbox.ThreadKey{Agent: "ops", Resource: "alertmanager/prod", Thread: "HighLatency{cluster=eu1,namespace=shop}"}, firing.Thread)
	assert.Equal(t, firing.Thread, resolved.Thread, "one thread per alertname, cluster and namespace")
	assert.Equal(t, KindFiring, firing.Kind)
	assert.Equal(t, inbox.PriorityUrgent, firing.Priority, "severity critical")
	assert.Equal(t, "Firing: HighLatency (cluster eu1, namespace shop, instance api-1:9100): p99 latency over 2s", firing.Summary)
	assert.Equal(t, []string{"alert:5b8b6a6f3c1d2e4f", "firing", "resolved"}, []string{firing.NetKey, firing.State, firing.RestState})
	assert.Equal(t, "5b8b6a6f3c1d2e4f", firing.SourceID)
	assert.Equal(t, VerifiedByBearer, firing.Metadata[connectors.MetaVerifiedBy])
	to, ok := reply.FromMetadata(firing.Metadata)
	require.True(t, ok)
	p, err := reply.PlaceOf[Place](to)
	require.NoError(t, err)
	assert.Equal(t, Place{Fingerprint: "5b8b6a6f3c1d2e4f", AlertLabels: []string{"alertname=HighLatency", "cluster=eu1",
		"instance=api-1:9100", "job=api", "namespace=shop", "severity=critical"}}, p)

	assert.Equal(t, KindResolved, resolved.Kind)
	assert.Equal(t, "Resolved: HighLatency (cluster eu1, namespace shop, instance api-2:9100)", resolved.Summary, "short")
	assert.Equal(t, inbox.PriorityMedium, resolved.Priority)
	assert.Equal(t, []string{"alert:0a1b2c3d4e5f6789", "resolved", "resolved"}, []string{resolved.NetKey, resolved.State, resolved.RestState})

	// Priorities from another label, by the connector's table.
	h = newHarness(t, 0, func() time.Time { return testNow }, Config{Name: "prod", BearerToken: testToken,
		PriorityLabel: "job", Priorities: map[string]inbox.Priority{"API": inbox.PriorityLow}}.WithDefaults())
	require.Equal(t, http.StatusOK, h.post("prod", body, bearer(testToken)).Code)
	call, _ = h.ing.Last()
	assert.Equal(t, inbox.PriorityLow, call.Notifications[0].Priority)
}

// TestGrafanaNotification: Grafana's documented notification, signed as Grafana signs
// (hex HMAC-SHA256 of the body, or of "<timestamp>:<body>"), is read with its own
// fields; a signature under another key, over another body or timestamp, or a
// timestamp outside the window is refused.
func TestGrafanaNotification(t *testing.T) {
	body := sample(t, "grafana-firing.json")
	for _, tc := range []struct {
		name string
		cfg  GrafanaHMAC
		ts   int64
	}{
		{"body only", GrafanaHMAC{Secret: grafanaKey}, 0},
		{"with a timestamp", GrafanaHMAC{Secret: grafanaKey, TimestampHeader: tsHeader}, testNow.Unix()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{Name: "grafana", Grafana: &tc.cfg}.WithDefaults()
			require.NoError(t, cfg.Validate())
			h := newHarness(t, 0, func() time.Time { return testNow }, cfg)
			rec := h.post("grafana", body, grafanaSign(grafanaKey, tc.ts, body))
			require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
			call, _ := h.ing.Last()
			require.Len(t, call.Notifications, 2)
			n := call.Notifications[0]
			assert.Equal(t, "High memory usage", n.Thread.Thread)
			assert.Equal(t, "Firing: High memory usage: This alert was triggered for zone us-1", n.Summary)
			assert.Equal(t, "alert:c6eadffa33fcdf37", n.NetKey)
			assert.Equal(t, inbox.PriorityMedium, n.Priority)
			assert.Equal(t, inbox.PriorityHigh, call.Notifications[1].Priority, "severity warning")
			assert.Equal(t, VerifiedByGrafana, n.Metadata[connectors.MetaVerifiedBy])
			assert.Equal(t, "grafana", n.Metadata["sender"])
			var payload map[string]any
			require.NoError(t, json.Unmarshal(n.Payload, &payload))
			assert.Contains(t, payload["silenceURL"], "play.grafana.org/alerting/silence/new")
			assert.Equal(t, map[string]any{"B": 44.23943737541908, "C": 1.0}, payload["values"])

			refused := map[string]http.Header{
				"another key":   grafanaSign("not-the-grafana-key-0123456789", tc.ts, body),
				"another body":  grafanaSign(grafanaKey, tc.ts, append(bytes.Clone(body), ' ')),
				"no signature":  {},
				"not hex":       {DefaultSignatureHeader: {"sha256=abc"}},
				"bearer alone ": bearer(testToken),
			}
			if tc.ts != 0 {
				moved := grafanaSign(grafanaKey, tc.ts, body)
				moved.Set(tsHeader, strconv.FormatInt(tc.ts+1, 10))
				refused["timestamp changed"] = moved
				refused["stale"] = grafanaSign(grafanaKey, tc.ts-int64(GrafanaTolerance/time.Second)-1, body)
				noTS := grafanaSign(grafanaKey, tc.ts, body)
				noTS.Del(tsHeader)
				refused["no timestamp"] = noTS
			}
			for name, hdr := range refused {
				rec := h.post("grafana", body, hdr)
				assert.Equal(t, http.StatusUnauthorized, rec.Code, name)
			}
			assert.Len(t, h.ing.Calls(), 1, "nothing refused was stored")
		})
	}
}

// TestWebhookCredentials: basic auth as Alertmanager's http_config.basic_auth sends it;
// with Grafana's HMAC too, both must hold; wrong ones are refused.
func TestWebhookCredentials(t *testing.T) {
	body := sample(t, "alertmanager-firing.json")
	basic := func(u, p string) http.Header {
		r := httptest.NewRequest(http.MethodPost, "/", nil)
		r.SetBasicAuth(u, p)
		return r.Header
	}
	h := newHarness(t, 0, func() time.Time { return testNow }, Config{Name: "prod", BasicAuth: &BasicAuth{Username: basicUser, Password: basicPasswd}}.WithDefaults(),
		Config{Name: "both", BearerToken: testToken, Grafana: &GrafanaHMAC{Secret: grafanaKey}}.WithDefaults())
	assert.Equal(t, http.StatusOK, h.post("prod", body, basic(basicUser, basicPasswd)).Code)
	call, _ := h.ing.Last()
	assert.Equal(t, VerifiedByBasic, call.Notifications[0].Metadata[connectors.MetaVerifiedBy])
	for name, hdr := range map[string]http.Header{
		"wrong password": basic(basicUser, basicPasswd+"x"), "wrong user": basic("root", basicPasswd),
		"bearer": bearer(basicPasswd), "none": {},
	} {
		assert.Equal(t, http.StatusUnauthorized, h.post("prod", body, hdr).Code, name)
	}
	both := grafanaSign(grafanaKey, 0, body)
	assert.Equal(t, http.StatusUnauthorized, h.post("both", body, both).Code, "the bearer token is missing")
	both.Set("Authorization", "Bearer "+testToken)
	assert.Equal(t, http.StatusUnauthorized, h.post("both", append(bytes.Clone(body), '\n'), both).Code, "signed another body")
	assert.Equal(t, http.StatusOK, h.post("both", body, both).Code)
}

// TestConfigValidate names the key of each problem and never shows a secret.
func TestConfigValidate(t *testing.T) {
	err := Config{Name: "a/b", BearerToken: "short", BasicAuth: &BasicAuth{Username: "a:b", Password: "pw"},
		Grafana: &GrafanaHMAC{Secret: "s", Header: "X Bad"}, APIURL: "ftp://x", APIToken: "t", MaxSilence: time.Second,
		PriorityLabel: "1x", Priorities: map[string]inbox.Priority{"critical": "asap"}}.Validate()
	require.Error(t, err)
	for _, want := range []string{"name: \"a/b\"", "bearer_token: at least 16", "bearer_token, basic_auth: set one or the other",
		"basic_auth.username", "basic_auth.password: at least 16", "grafana_hmac.secret: at least 16", "grafana_hmac.header: \"X Bad\"",
		"api_url: want an http(s) base URL", "max_silence: at least 1m0s", "priority_label: \"1x\"", "priorities.critical: unknown \"asap\""} {
		assert.Contains(t, err.Error(), want)
	}
	assert.NotContains(t, err.Error(), "short")
	require.ErrorContains(t, Config{Name: "x"}.Validate(), "bearer_token: required (or basic_auth, or grafana_hmac)")
	require.ErrorContains(t, Config{Name: "x", BearerToken: testToken, APIToken: testToken}.Validate(), "api_token: needs api_url")
	require.NoError(t, Config{Name: "x", BearerToken: testToken, APIURL: "http://alertmanager:9093"}.WithDefaults().Validate())
}

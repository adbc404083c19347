package alertmanager

import (
	"bytes"
	"net/http"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/connectors/connectorstest"
	"github.com/signalgate/signalgate/secret"
)

// The documented deliveries — Alertmanager's webhook (version 4) with its bearer token,
// and Grafana's contact point signed with its HMAC over the timestamp and body — go
// through a real server, pipeline, inbox and store (SQLite and PostgreSQL), as in
// production: each is stored, and each alert in it reaches its thread.
func TestConformanceSamples(t *testing.T) {
	post := func(connector string, body []byte, hdr http.Header) func(t *testing.T, base string) *http.Request {
		return func(t *testing.T, base string) *http.Request {
			req, err := http.NewRequest(http.MethodPost, base+"/webhooks/alertmanager/"+connector, bytes.NewReader(body))
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/json")
			for k, v := range hdr {
				req.Header[k] = v
			}
			return req
		}
	}
	am, grafana := sample(t, "alertmanager-firing.json"), sample(t, "grafana-firing.json")
	cfgs := []Config{
		Config{Name: "prom", BearerToken: secret.Secret(testToken)}.WithDefaults(),
		Config{Name: "grafana", Grafana: &GrafanaHMAC{Secret: secret.Secret(grafanaKey), TimestampHeader: tsHeader}}.WithDefaults(),
	}
	connectorstest.ExerciseSamples(t, connectorstest.SampleConnector{
		Source: Source, Start: testNow, WatchResource: WatchResource,
		Samples: []connectorstest.Sample{
			{Name: "alertmanager", Connector: "prom", Request: post("prom", am, bearer(testToken))},
			{Name: "grafana", Connector: "grafana", Request: post("grafana", grafana, grafanaSign(grafanaKey, testNow.Unix(), grafana))},
		},
		Mount: func(t *testing.T, e *echo.Echo, p *connectors.Pipeline, now func() time.Time) connectorstest.Parser {
			h, err := NewHandler(cfgs, p, nil, now)
			require.NoError(t, err)
			h.Mount(e)
			return h
		},
	})
}

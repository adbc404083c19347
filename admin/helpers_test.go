package admin_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/admin"
	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/connectors/email"
	"github.com/signalgate/signalgate/connectors/generic"
	"github.com/signalgate/signalgate/connectors/kindstest"
	"github.com/signalgate/signalgate/deliverytest"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/server"
	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/store/storetest"
)

// Tokens of every env.
const (
	opsToken    = "ops-token-0123456789"
	viewerToken = "viewer-token-0123456789"
)

var t0 = time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)

const billingSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

// billingRoutes send generic billing events to the customer's thread of coder.
func billingRoutes() []connectors.RouteConfig {
	return []connectors.RouteConfig{
		{
			Name:   "billing",
			Match:  connectors.RouteMatch{Source: inbox.StringList{"generic"}, Connector: inbox.StringList{"billing"}},
			Thread: connectors.ThreadConfig{Agent: "coder", Resource: "billing", Thread: `{{index .Extra "customer"}}`},
		},
		{
			Name:   "github-prs",
			Match:  connectors.RouteMatch{Source: inbox.StringList{"github"}},
			Thread: connectors.ThreadConfig{Agent: "coder", Resource: "{{.Repo}}", Thread: "{{.Repo}}#{{.Number}}"},
		},
	}
}

// env is an admin API over a real store, served in process.
type env struct {
	t        *testing.T
	st       *store.DB
	clock    *deliverytest.Clock
	inbox    *inbox.Service
	deps     admin.Deps
	api      *admin.API
	e        *echo.Echo
	generic  *generic.Handler
	mu       sync.Mutex
	notified []inbox.ThreadKey
}

type envOpts struct {
	backend *storetest.Backend
	routes  []connectors.RouteConfig
	policy  inbox.PolicyConfig
	pollers []admin.Poller
	pprof   bool
	wakes   map[string]agent.WakeSettings
	watches connectors.WatchLookup

	// policyOpts build the policy with, e.g., its time intervals.
	policyOpts []inbox.PolicyOption
}

func newEnv(t *testing.T, o envOpts) *env {
	t.Helper()
	b := storetest.Backend{Name: "sqlite", Config: storetest.SQLiteConfig(t)}
	if o.backend != nil {
		b = *o.backend
	}
	en := &env{t: t, clock: deliverytest.NewClock(t0)}
	en.st = storetest.Open(t, b, store.WithClock(en.clock.Now))
	pol, err := inbox.NewPolicy(o.policy, o.policyOpts...)
	require.NoError(t, err)
	en.inbox = inbox.NewService(store.NewInbox(en.st), pol, inbox.WithClock(en.clock.Now))
	if o.routes == nil {
		o.routes = billingRoutes()
	}
	log := storetest.Logger(t)
	en.generic, err = generic.NewHandler([]generic.Config{{Name: "billing", Secret: billingSecret}}, nil, log, en.clock.Now)
	require.NoError(t, err)
	en.deps = admin.Deps{
		Store: store.NewAdmin(en.st), Inbox: en.inbox, Policy: pol, Router: router(t, o.routes), Agents: []string{"coder", "support"},
		Sources: kindstest.Sources(), Places: kindstest.Places(), Watchable: kindstest.Resources().Sources(),
		WatchLookup: o.watches,
		Parsers:     admin.Parsers{"generic": en.generic, "email": email.NewParser([]email.Config{{Name: "support"}})},
		Connectors:  []admin.ConnectorRef{{Source: "generic", Name: "billing"}, {Source: "email", Name: "support"}},
		Pollers:     o.pollers,
		Notify: func(ks []inbox.ThreadKey) {
			en.mu.Lock()
			en.notified = append(en.notified, ks...)
			en.mu.Unlock()
		},
		Log: log, Now: en.clock.Now, Wakes: o.wakes,
	}
	en.api = en.newAPIWith(en.deps, o.pprof)
	return en
}

// router compiles routes for the env's agents, as config loading does.
func router(t testing.TB, routes []connectors.RouteConfig) *connectors.Router {
	t.Helper()
	r, err := connectors.NewRouter(routes, []string{"coder", "support"}, connectors.WithWatchResources(kindstest.Resources()))
	require.NoError(t, err)
	return r
}

func (en *env) newAPI(d admin.Deps) *admin.API { return en.newAPIWith(d, false) }

func (en *env) newAPIWith(d admin.Deps, pprof bool) *admin.API {
	en.t.Helper()
	api, err := admin.New(admin.Config{Tokens: []admin.Token{
		{Name: "ops", Token: opsToken, Scopes: []string{admin.ScopeRead, admin.ScopeWrite}},
		{Name: "viewer", Token: viewerToken, Scopes: []string{admin.ScopeRead}},
	}, Pprof: pprof}, d)
	require.NoError(en.t, err)
	srv := server.New(server.Config{}, storetest.Logger(en.t))
	api.Mount(srv.Echo())
	en.e = srv.Echo()
	return api
}

// deliver stores a generic billing event as the live connector would (the signature
// is the only step left out) and returns the ingest outcome.
func (en *env) deliver(deliveryID string, body map[string]any) connectors.Outcome {
	en.t.Helper()
	raw, err := json.Marshal(body)
	require.NoError(en.t, err)
	ev := &inbox.Event{Source: "generic", Connector: "billing", DeliveryID: deliveryID, Body: raw,
		Headers: map[string]string{"Webhook-Id": deliveryID, "Content-Type": "application/json"}}
	items, err := en.generic.Items(context.Background(), ev)
	require.NoError(en.t, err)
	ev.Type = items[0].Kind
	out, err := connectors.NewPipeline(en.deps.Router, en.inbox, nil).Ingest(context.Background(), ev, items)
	require.NoError(en.t, err)
	en.clock.Advance(time.Second)
	return out
}

func invoice(customer, summary string) map[string]any {
	return map[string]any{"kind": "invoice-failed", "summary": summary, "priority": "high",
		"coalesceKey": "invoices:" + customer, "attributes": map[string]any{"customer": customer}}
}

// do sends a request with token ("" for none) and returns the status and raw body.
func (en *env) do(method, target, token string, body any) (int, []byte) {
	en.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = bytes.NewBufferString(b)
	default:
		raw, err := json.Marshal(b)
		require.NoError(en.t, err)
		rd = bytes.NewReader(raw)
	}
	req := httptest.NewRequest(method, target, rd)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	en.e.ServeHTTP(rec, req)
	return rec.Code, rec.Body.Bytes()
}

// get does an ops request and decodes a 200 answer into out.
func (en *env) call(method, target string, body, out any) {
	en.t.Helper()
	code, raw := en.do(method, target, opsToken, body)
	require.Equal(en.t, http.StatusOK, code, "%s %s: %s", method, target, raw)
	if out != nil {
		require.NoError(en.t, json.Unmarshal(raw, out), string(raw))
	}
}

// errorOf decodes an error body.
func errorOf(t *testing.T, raw []byte) (code, message string) {
	t.Helper()
	var e struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	require.NoError(t, json.Unmarshal(raw, &e), string(raw))
	return e.Error.Code, e.Error.Message
}

func (en *env) notifiedThreads() []inbox.ThreadKey {
	en.mu.Lock()
	defer en.mu.Unlock()
	return append([]inbox.ThreadKey(nil), en.notified...)
}

// forBackends runs fn on a fresh env per configured database.
func forBackends(t *testing.T, o envOpts, fn func(t *testing.T, en *env)) {
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			o := o
			o.backend = &b
			fn(t, newEnv(t, o))
		})
	}
}

// doHeader sends a request without body and with a raw Authorization header.
func (en *env) doHeader(method, target, authorization string) (int, []byte) {
	req := httptest.NewRequest(method, target, nil)
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	rec := httptest.NewRecorder()
	en.e.ServeHTTP(rec, req)
	return rec.Code, rec.Body.Bytes()
}

package connectorstest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/server"
	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/store/storetest"
	"github.com/signalgate/signalgate/watch"
)

// SampleAgent is the agent whose thread every sample is routed to.
const SampleAgent = "conformance"

// Sample is a provider's documented delivery, as the provider sends it.
type Sample struct {
	// Name names the case (a preset, an event type).
	Name string
	// Connector is the configured connector it is posted to; each sample has its own.
	Connector string
	// Request builds the delivery, signed, for the gateway listening at base
	// ("http://127.0.0.1:port"): a sender that signs the URL signs that one.
	Request func(t *testing.T, base string) *http.Request
	// Invalid, when set, says the delivery verifies but cannot be read: it is stored
	// invalid with this in its error, reaches no thread, and is answered 2xx all the
	// same (a 4xx or 5xx would only be retried).
	Invalid string
	// Check, when set, asserts more about the stored event and its records.
	Check func(t *testing.T, ev inbox.Event, records []inbox.Record)
	// When, when set, is a `when` expression only the sample's event satisfies: the
	// sample then reaches its thread through its own route with this `when` (not the
	// route every other sample takes), and a policy rule over that route with the same
	// `when` decides its records (action log), so routes and rules are both shown to
	// read the event as the expression expects.
	When string
	// Answer, when set, asserts the gateway's answer to each posting of the sample.
	Answer func(t *testing.T, resp *http.Response, body []byte)
	// Redeliver posts the sample a second time, as a provider retrying it does: the
	// redelivery is answered 2xx and stored nowhere new.
	Redeliver bool
}

// WhenAction is what the policy rule of a sample with a When decides.
const WhenAction = inbox.ActionLog

// Parser turns a stored event back into its items without verifying it, as replay
// and explain do.
type Parser interface {
	Items(ctx context.Context, ev *inbox.Event) ([]connectors.Item, error)
}

// SampleConnector adapts a connector to ExerciseSamples.
type SampleConnector struct {
	// Source is the connector kind's notification source: routes send each sample to
	// the thread "samples" of SampleAgent under a resource named after its connector.
	Source string
	// Start is what the gateway's clock reads (samples carrying a signed time are
	// signed for it).
	Start time.Time
	// Mount configures a connector for every sample, mounts them on e storing through
	// p, and returns what reads their stored events back.
	Mount func(t *testing.T, e *echo.Echo, p *connectors.Pipeline, now func() time.Time) Parser
	// Samples are the provider's documented deliveries.
	Samples []Sample
	// Explain, when set, is run on every stored sample event with its records: the
	// connector's check that explain (package admin, above this one) shows the decision
	// the gateway made.
	Explain func(t *testing.T, g *Gateway, ev inbox.Event, records []inbox.Record)
	// WatchResource is the kind's watch resource parser (its row's Watch); nil when the
	// kind cannot be watched.
	WatchResource func(resource string) (watch.Resource, error)
}

// Gateway is the ingest half of a real gateway on one store backend: the server
// package's HTTP server on a loopback port, the connector Mount puts on it, the
// ingest pipeline (routes and watches) and the inbox service over a migrated store.
// The inbox validates what it stores as it does in production: no fake stands in
// for it, so a delivery the store would refuse fails here as it would there.
type Gateway struct {
	URL    string
	Store  *store.DB
	Parser Parser
	// Router and Policy are the routes and policy the gateway runs, for explain.
	Router *connectors.Router
	Policy *inbox.Policy
	Now    func() time.Time
}

// StartGateway opens b, builds the stack over it and serves until the test ends.
func StartGateway(t *testing.T, b storetest.Backend, c SampleConnector) *Gateway {
	t.Helper()
	st := storetest.Open(t, b)
	inboxStore := store.NewInbox(st)
	now := func() time.Time { return c.Start }
	log := storetest.Logger(t)
	routes, rules := sampleRoutes(c)
	policy, err := inbox.NewPolicy(inbox.PolicyConfig{Rules: rules})
	require.NoError(t, err)
	svc := inbox.NewService(inboxStore, policy, inbox.WithClock(now), inbox.WithSnoozes(inboxStore), inbox.WithHeldRecords(inboxStore))
	var resources watch.Resources
	if c.WatchResource != nil {
		resources = watch.Resources{{Source: c.Source, Parse: c.WatchResource}}
	}
	router, err := connectors.NewRouter(routes, []string{SampleAgent}, connectors.WithWatchResources(resources))
	require.NoError(t, err)
	pipeline := connectors.NewPipeline(router, svc, log, connectors.WithWatches(store.NewWatches(st)), connectors.WithClock(now))

	srv := server.New(server.Config{Listen: "127.0.0.1:0"}, log)
	parser := c.Mount(t, srv.Echo(), pipeline, now)
	addr, err := srv.Listen()
	require.NoError(t, err)
	srv.Start()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		assert.NoError(t, srv.Shutdown(ctx))
	})
	return &Gateway{URL: "http://" + addr.String(), Store: st, Parser: parser, Router: router, Policy: policy, Now: now}
}

// sampleRoutes sends every sample to its thread: one route for the samples without
// a When, one route (and policy rule) for each sample with one.
func sampleRoutes(c SampleConnector) ([]connectors.RouteConfig, []inbox.Rule) {
	thread := connectors.ThreadConfig{Agent: SampleAgent, Resource: "{{.Connector}}", Thread: "samples"}
	var routes []connectors.RouteConfig
	var rules []inbox.Rule
	var plain inbox.StringList
	for _, s := range c.Samples {
		if s.When == "" {
			plain = append(plain, s.Connector)
			continue
		}
		name := "when-" + s.Connector
		routes = append(routes, connectors.RouteConfig{Name: name, Thread: thread,
			Match: connectors.RouteMatch{Source: inbox.StringList{c.Source}, Connector: inbox.StringList{s.Connector}, When: s.When}})
		rules = append(rules, inbox.Rule{Match: inbox.RuleMatch{Route: inbox.StringList{name}}, When: s.When,
			ActionSpec: inbox.ActionSpec{Action: WhenAction}})
	}
	if len(plain) > 0 {
		routes = append(routes, connectors.RouteConfig{Name: "samples", Thread: thread,
			Match: connectors.RouteMatch{Source: inbox.StringList{c.Source}, Connector: plain}})
	}
	return routes, rules
}

// ExerciseSamples posts each sample over HTTP to a real gateway on every store
// backend (SQLite, and PostgreSQL when storetest.PostgresEnv is set): the answer is
// 2xx, the event is stored routed with the body as sent, its records are readable
// with a JSON payload, and the stored event reads back into the same kinds. An
// Invalid sample is stored invalid instead, with no records. A sample with a When is
// routed and decided through it; one to Redeliver is stored once for two postings.
func ExerciseSamples(t *testing.T, c SampleConnector) {
	seen := map[string]bool{}
	for _, s := range c.Samples {
		require.False(t, seen[s.Connector], "samples need a connector each: %q is used twice", s.Connector)
		seen[s.Connector] = true
	}
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			g := StartGateway(t, b, c)
			for _, s := range c.Samples {
				t.Run(s.Name, func(t *testing.T) { g.sample(t, c, s) })
			}
		})
	}
}

// post delivers the sample once and returns what was sent and the answer.
func (g *Gateway) post(t *testing.T, s Sample) (sent []byte, resp *http.Response, answer []byte) {
	req := s.Request(t, g.URL).WithContext(t.Context())
	sent, err := io.ReadAll(req.Body)
	require.NoError(t, err)
	req.Body = io.NopCloser(bytes.NewReader(sent))
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	answer, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.True(t, resp.StatusCode >= 200 && resp.StatusCode < 300, "answered %d: %s", resp.StatusCode, answer)
	if s.Answer != nil {
		s.Answer(t, resp, answer)
	}
	return sent, resp, answer
}

func (g *Gateway) sample(t *testing.T, c SampleConnector, s Sample) {
	ctx := t.Context()
	source := c.Source
	sent, _, answer := g.post(t, s)
	if s.Redeliver {
		_, _, again := g.post(t, s)
		var out connectors.Outcome
		if json.Unmarshal(again, &out) == nil && out.EventID != "" {
			assert.True(t, out.Duplicate, "a redelivery is acknowledged as one: %s", again)
		}
	}

	events, _, err := store.NewAdmin(g.Store).ListEvents(ctx, inbox.EventFilter{Source: source, Connector: s.Connector})
	require.NoError(t, err)
	require.Len(t, events, 1, "stored once")
	ev, err := store.NewExplain(g.Store).GetEvent(ctx, events[0].ID)
	require.NoError(t, err)
	assert.Equal(t, sent, ev.Body, "the body is stored as received")
	if s.Redeliver {
		assert.Equal(t, 1, ev.Redeliveries, "the redelivery is counted on the event")
	}
	var out connectors.Outcome
	if json.Unmarshal(answer, &out) == nil && out.EventID != "" {
		assert.Equal(t, ev.ID, out.EventID, "the answer names the stored event")
		assert.Equal(t, ev.Status, out.Status)
	}
	if s.Invalid != "" {
		require.Equal(t, inbox.EventInvalid, ev.Status)
		assert.Contains(t, ev.Error, s.Invalid)
		records, _, err := store.NewAdmin(g.Store).ListRecords(ctx, inbox.RecordFilter{EventID: ev.ID})
		require.NoError(t, err)
		assert.Empty(t, records, "nothing reaches a thread")
		if s.Check != nil {
			s.Check(t, ev, records)
		}
		if c.Explain != nil {
			c.Explain(t, g, ev, records)
		}
		return
	}
	require.Equal(t, inbox.EventRouted, ev.Status, "error: %q", ev.Error)

	records, _, err := store.NewAdmin(g.Store).ListRecords(ctx, inbox.RecordFilter{EventID: ev.ID})
	require.NoError(t, err)
	require.NotEmpty(t, records, "routed to a thread")
	thread := inbox.ThreadKey{Agent: SampleAgent, Resource: s.Connector, Thread: "samples"}
	inThread, err := store.NewRecords(g.Store).ThreadRecords(ctx, thread)
	require.NoError(t, err)
	require.Len(t, inThread, len(records), "the records are in the sample's thread")
	for _, r := range records {
		got, err := store.NewAdmin(g.Store).GetRecord(ctx, r.ID)
		require.NoError(t, err)
		assert.Equal(t, source, got.Source)
		assert.Equal(t, thread, got.Thread)
		assert.NotEmpty(t, got.Kind)
		assert.NotEmpty(t, got.Summary)
		if len(got.Payload) > 0 {
			assert.True(t, json.Valid(got.Payload), "payload is JSON: %s", got.Payload)
		}
	}

	if g.Parser != nil {
		items, err := g.Parser.Items(ctx, &ev)
		require.NoError(t, err, "the stored event reads back")
		kinds := map[string]bool{}
		for _, it := range items {
			kinds[it.Kind] = true
		}
		for _, r := range records {
			assert.True(t, kinds[r.Kind], "replay yields the stored kind %q", r.Kind)
		}
	}
	if s.When != "" {
		for _, r := range records {
			got, err := store.NewAdmin(g.Store).GetRecord(ctx, r.ID)
			require.NoError(t, err)
			assert.Equal(t, "when-"+s.Connector, got.Route, "routed by the sample's `when`")
			assert.Equal(t, WhenAction, got.Action, "decided by the rule's `when`: %s", got.Reason)
		}
	}
	if s.Check != nil {
		s.Check(t, ev, records)
	}
	if c.Explain != nil {
		c.Explain(t, g, ev, records)
	}
}

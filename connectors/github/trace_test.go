package github

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/server"
	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/store/storetest"
)

const (
	senderTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	senderTP    = "00-" + senderTrace + "-00f067aa0ba902b7-01"
)

type tracedGateway struct {
	e   http.Handler
	rec *tracetest.SpanRecorder
	st  *store.DB
}

// newTracedGateway is the ingest path as the gateway wires it with tracing on: the
// server, the GitHub handler, the pipeline, the inbox service over a real store.
func newTracedGateway(t *testing.T, b storetest.Backend) *tracedGateway {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	st := storetest.Open(t, b, store.WithClock(fixedNow), store.WithTracing(tp))
	pol, err := inbox.NewPolicy(inbox.PolicyConfig{})
	require.NoError(t, err)
	svc := inbox.NewService(store.NewInbox(st), pol, inbox.WithClock(fixedNow))
	log := slog.New(slog.DiscardHandler)
	srv := server.New(server.Config{}, log, server.WithTracing(tp))
	router, err := connectors.NewRouter(allGitHubRoute(), []string{"coder"})
	require.NoError(t, err)
	h, err := NewHandler([]Config{testConfig()}, connectors.NewPipeline(router, svc, log), log, fixedNow)
	require.NoError(t, err)
	h.Mount(srv.Echo())
	return &tracedGateway{e: srv.Echo(), rec: rec, st: st}
}

func spanNamed(t *testing.T, spans []sdktrace.ReadOnlySpan, name string) sdktrace.ReadOnlySpan {
	t.Helper()
	var found sdktrace.ReadOnlySpan
	for _, s := range spans {
		if s.Name() == name {
			require.Nil(t, found, "one %q span", name)
			found = s
		}
	}
	require.NotNil(t, found, "a %q span", name)
	return found
}

func childOf(t *testing.T, parent, child sdktrace.ReadOnlySpan) {
	t.Helper()
	require.Equal(t, parent.SpanContext().TraceID(), child.SpanContext().TraceID(), "%s in %s's trace", child.Name(), parent.Name())
	require.Equal(t, parent.SpanContext().SpanID(), child.Parent().SpanID(), "%s is a child of %s", child.Name(), parent.Name())
}

func attr(s sdktrace.ReadOnlySpan, key string) any {
	for _, kv := range s.Attributes() {
		if string(kv.Key) == key {
			return kv.Value.AsInterface()
		}
	}
	return nil
}

// A verified delivery continues its sender's trace: the server span is a child of the
// traceparent it carried, and the ingest's steps are children of the server span; the
// stored event and record point at the server span.
func TestTraceVerifiedDelivery(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			g := newTracedGateway(t, b)
			req := newDelivery("acme", "issue_comment", "d-trace", issueCommentBody(t))
			req.Header.Set("Traceparent", senderTP)
			rec := httptestDo(g.e, req)
			require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
			out := decodeOutcome(t, rec)

			spans := g.rec.Ended()
			srv := spanNamed(t, spans, "POST "+RoutePath)
			require.Equal(t, trace.SpanKindServer, srv.SpanKind())
			require.Equal(t, senderTrace, srv.SpanContext().TraceID().String())
			require.True(t, srv.Parent().IsRemote(), "continues the sender's span")
			for _, name := range []string{"verify", "parse", "route", "INSERT events"} {
				childOf(t, srv, spanNamed(t, spans, name))
			}
			verify := spanNamed(t, spans, "verify")
			require.Equal(t, "acme", attr(verify, "signalgate.connector"))
			require.Equal(t, "current", attr(verify, "signalgate.secret.slot"))
			require.Equal(t, "issue_comment", attr(spanNamed(t, spans, "parse"), "signalgate.event.type"))
			require.EqualValues(t, 1, attr(spanNamed(t, spans, "route"), "signalgate.notifications"))
			db := spanNamed(t, spans, "INSERT events")
			require.Equal(t, trace.SpanKindClient, db.SpanKind())
			require.Equal(t, "INSERT", attr(db, "db.operation.name"))
			require.Equal(t, "events", attr(db, "db.collection.name"))
			wantSystem := map[string]string{"sqlite": "sqlite", "postgres": "postgresql"}[b.Name]
			require.Equal(t, wantSystem, attr(db, "db.system.name"))
			require.NotEmpty(t, attr(db, "db.namespace"))
			decide := spanNamed(t, spans, "decide")
			childOf(t, db, decide)
			require.NotEmpty(t, attr(decide, "signalgate.decision.action"))
			require.NotEmpty(t, attr(decide, "signalgate.decision.reason"))
			require.Contains(t, attr(decide, "signalgate.thread"), "coder/")

			wantTP := "00-" + senderTrace + "-" + srv.SpanContext().SpanID().String() + "-01"
			ev, err := store.NewExplain(g.st).GetEvent(t.Context(), out.EventID)
			require.NoError(t, err)
			require.Equal(t, wantTP, ev.TraceParent, "the stored event points at the server span")
			r, err := store.NewAdmin(g.st).GetRecord(t.Context(), attr(decide, "signalgate.record.id").(string))
			require.NoError(t, err)
			require.Equal(t, wantTP, r.TraceParent, "so does its record")
			require.Equal(t, senderTrace, r.TraceID())
		})
	}
}

// A delivery whose signature fails is not believed about its trace either: a new root,
// and nothing of it is parsed, routed or stored.
func TestTraceBadSignatureIsANewRoot(t *testing.T) {
	g := newTracedGateway(t, storetest.Backend{Name: "sqlite", Config: storetest.SQLiteConfig(t)})
	req := newDelivery("acme", "issue_comment", "d-forged", issueCommentBody(t))
	req.Header.Set("X-Hub-Signature-256", sign("not the secret", issueCommentBody(t)))
	req.Header.Set("Traceparent", senderTP)
	rec := httptestDo(g.e, req)
	require.Equal(t, http.StatusUnauthorized, rec.Code)

	spans := g.rec.Ended()
	srv := spanNamed(t, spans, "POST "+RoutePath)
	require.NotEqual(t, senderTrace, srv.SpanContext().TraceID().String(), "the forged request's traceparent is ignored")
	require.False(t, srv.Parent().IsValid(), "a new root")
	require.EqualValues(t, http.StatusUnauthorized, attr(srv, "http.response.status_code"))
	for _, s := range spans {
		require.Equal(t, srv.SpanContext().TraceID(), s.SpanContext().TraceID(), "nothing in the sender's trace")
		require.NotContains(t, []string{"parse", "route", "INSERT events", "decide"}, s.Name())
	}
	childOf(t, srv, spanNamed(t, spans, "verify"))
	require.Nil(t, attr(spanNamed(t, spans, "verify"), "signalgate.secret.slot"))
}

// With tracing off nothing of the sender's trace reaches the store.
func TestTraceOffStoresNoTraceparent(t *testing.T) {
	h := newHarness(t, testConfig(), 0)
	req := newDelivery("acme", "issue_comment", "d-off", issueCommentBody(t))
	req.Header.Set("Traceparent", senderTP)
	rec := h.do(req)
	require.Equal(t, http.StatusOK, rec.Code)
	call, ok := h.fake.Last()
	require.True(t, ok)
	require.Empty(t, call.Event.TraceParent, "tracing off: the sender's header is not stored as the event's trace")
}

func httptestDo(h http.Handler, req *http.Request) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

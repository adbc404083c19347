package delivery_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/delivery"
	"github.com/signalgate/signalgate/deliverytest"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/targets/webhook"
	"github.com/signalgate/signalgate/telemetry"
)

// recording is a tracer provider whose ended spans a test reads.
func recording(t *testing.T) (*tracetest.SpanRecorder, *sdktrace.TracerProvider) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return rec, tp
}

// eventTrace is the traceparent an ingest span leaves on an event (its own provider: the
// test's recorder sees only the delivery side).
func eventTrace(t *testing.T) (string, trace.SpanContext) {
	ctx, span := sdktrace.NewTracerProvider().Tracer("ingest").Start(context.Background(), "POST /webhooks/github/:connector")
	span.End()
	tp := telemetry.Traceparent(ctx)
	require.NotEmpty(t, tp)
	return tp, span.SpanContext()
}

// ingestTraced stores n as an event whose span is tp.
func ingestTraced(t *testing.T, e *deliverytest.Env, n inbox.Notification, tp string) string {
	t.Helper()
	res, err := e.Inbox.Ingest(context.Background(), &inbox.Event{Source: n.Source, Connector: "test", Type: "test", TraceParent: tp},
		[]inbox.Notification{n})
	require.NoError(t, err)
	require.Len(t, res.Records, 1)
	return res.Records[0].RecordID
}

func named(spans []sdktrace.ReadOnlySpan, name string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range spans {
		if s.Name() == name {
			out = append(out, s)
		}
	}
	return out
}

func attr(s sdktrace.ReadOnlySpan, k string) attribute.Value {
	for _, a := range s.Attributes() {
		if string(a.Key) == k {
			return a.Value
		}
	}
	return attribute.Value{}
}

func linked(s sdktrace.ReadOnlySpan) []trace.SpanContext {
	var out []trace.SpanContext
	for _, l := range s.Links() {
		out = append(out, l.SpanContext.WithRemote(false))
	}
	return out
}

func urgent(k inbox.ThreadKey, summary string) inbox.Notification {
	return inbox.Notification{Thread: k, Source: "github", Kind: "ci-failure", Priority: inbox.PriorityUrgent, Summary: summary}
}

// The delivery of a record made by one event stays in that event's trace: the deliver
// span is a child of the event's span, links the pass, and the stored frame carries the
// deliver span's traceparent; the publish to live subscribers is its child.
func TestTraceDeliverContinuesRecordTrace(t *testing.T) {
	rec, tp := recording(t)
	forBackends(t, deliverytest.Config{Dispatch: []delivery.Option{delivery.WithTracerProvider(tp)}}, func(t *testing.T, e *deliverytest.Env) {
		k := key("trace-" + t.Name())
		evTP, ev := eventTrace(t)
		ingestTraced(t, e, urgent(k, "CI failed on main"), evTP)
		e.Pass()

		spans := rec.Ended()
		var mine []sdktrace.ReadOnlySpan
		for _, s := range named(spans, "deliver stream") {
			if attr(s, "signalgate.thread").AsString() == k.String() {
				mine = append(mine, s)
			}
		}
		require.Len(t, mine, 1)
		del := mine[0]
		require.Equal(t, ev.TraceID(), del.SpanContext().TraceID(), "the delivery stays in the event's trace")
		require.Equal(t, ev.SpanID(), del.Parent().SpanID())
		require.True(t, del.Parent().IsRemote())
		require.Equal(t, "stream", attr(del, "signalgate.target.kind").AsString())
		require.Equal(t, "delivered", attr(del, "signalgate.delivery.status").AsString())
		require.False(t, attr(del, "signalgate.delivery.retry").AsBool())
		require.EqualValues(t, 1, attr(del, "signalgate.records").AsInt64())
		require.EqualValues(t, 1, attr(del, "signalgate.delivery.attempt").AsInt64())

		var pass sdktrace.ReadOnlySpan
		for _, p := range named(spans, "dispatch pass") {
			if slicesContain(linked(del), p.SpanContext()) {
				pass = p
			}
		}
		require.NotNil(t, pass, "the deliver span links its pass")
		require.False(t, pass.Parent().IsValid(), "a pass is a root")
		require.EqualValues(t, 1, attr(pass, "signalgate.dispatch.records").AsInt64())

		frames := e.Log(k)
		var sig *agent.Frame
		for i := range frames {
			if frames[i].Event == agent.EventSignal {
				sig = &frames[i]
			}
		}
		require.NotNil(t, sig)
		require.Equal(t, attr(del, "signalgate.signal.id").AsString(), sig.ID)
		tpFrame, _ := sig.Signal.Metadata[delivery.MetaTraceparent].(string)
		sc := telemetry.SpanContext(tpFrame)
		require.Equal(t, del.SpanContext().TraceID(), sc.TraceID(), "the stored frame carries the trace")
		require.Equal(t, del.SpanContext().SpanID(), sc.SpanID())

		var pub []sdktrace.ReadOnlySpan
		for _, s := range named(spans, "publish stream") {
			if s.Parent().SpanID() == del.SpanContext().SpanID() {
				pub = append(pub, s)
			}
		}
		require.Len(t, pub, 1)
		require.Equal(t, trace.SpanKindProducer, pub[0].SpanKind())
		require.Equal(t, "signalgate", attr(pub[0], "messaging.system").AsString())
		require.Equal(t, "send", attr(pub[0], "messaging.operation.type").AsString())
		require.Equal(t, "stream", attr(pub[0], "messaging.destination.name").AsString())
	})
}

func slicesContain(scs []trace.SpanContext, sc trace.SpanContext) bool {
	for _, s := range scs {
		if s.TraceID() == sc.TraceID() && s.SpanID() == sc.SpanID() {
			return true
		}
	}
	return false
}

// A pass that finds nothing due leaves no span.
func TestTraceIdlePassNoSpan(t *testing.T) {
	rec, tp := recording(t)
	e := deliverytest.New(t, deliverytest.Config{Dispatch: []delivery.Option{delivery.WithTracerProvider(tp)}})
	_, err := e.Dispatcher.RunOnce(context.Background())
	require.NoError(t, err)
	require.Empty(t, rec.Ended())
}

// A record merged from two events continues the first's trace and links the second's.
func TestTraceMergedRecordLinks(t *testing.T) {
	rec, tp := recording(t)
	forBackends(t, deliverytest.Config{Dispatch: []delivery.Option{delivery.WithTracerProvider(tp)}}, func(t *testing.T, e *deliverytest.Env) {
		k := key("merge-" + t.Name())
		tp1, ev1 := eventTrace(t)
		tp2, ev2 := eventTrace(t)
		n := urgent(k, "CI failed")
		n.CoalesceKey = "ci:main"
		id1 := ingestTraced(t, e, n, tp1)
		id2 := ingestTraced(t, e, n, tp2)
		require.Equal(t, id1, id2, "the second event merged into the record")
		e.Pass()
		var del sdktrace.ReadOnlySpan
		for _, s := range named(rec.Ended(), "deliver stream") {
			if attr(s, "signalgate.thread").AsString() == k.String() {
				del = s
			}
		}
		require.NotNil(t, del)
		require.Equal(t, ev1.TraceID(), del.SpanContext().TraceID())
		require.Equal(t, ev1.SpanID(), del.Parent().SpanID())
		require.True(t, slicesContain(linked(del), ev2), "the merged event is linked")
		require.Len(t, del.Links(), 2, "the merged event and the pass")
	})
}

// A summary of three records from three events is a trace of its own linking each.
func TestTraceSummaryLinksEveryEvent(t *testing.T) {
	rec, tp := recording(t)
	forBackends(t, deliverytest.Config{Dispatch: []delivery.Option{delivery.WithTracerProvider(tp)}}, func(t *testing.T, e *deliverytest.Env) {
		k := key("summary-" + t.Name())
		e.OpenRun(k) // an active thread gets high-priority records as a summary
		var evs []trace.SpanContext
		for _, s := range []string{"one", "two", "three"} {
			tpN, ev := eventTrace(t)
			evs = append(evs, ev)
			ingestTraced(t, e, inbox.Notification{Thread: k, Source: "github", Kind: "comment", Priority: inbox.PriorityHigh, Summary: s}, tpN)
		}
		e.Pass()
		var del sdktrace.ReadOnlySpan
		for _, s := range named(rec.Ended(), "deliver stream") {
			if attr(s, "signalgate.thread").AsString() == k.String() {
				del = s
			}
		}
		require.NotNil(t, del)
		require.EqualValues(t, 3, attr(del, "signalgate.records").AsInt64(), "one summary of the three")
		require.Equal(t, string(agent.TypeNotification), attr(del, "signalgate.signal.type").AsString())
		require.False(t, del.Parent().IsValid(), "a summary starts its own trace")
		for _, ev := range evs {
			require.NotEqual(t, ev.TraceID(), del.SpanContext().TraceID())
			require.True(t, slicesContain(linked(del), ev), "every event is linked")
		}
		require.Len(t, del.Links(), 4, "three events and the pass")
	})
}

// spanLogs keeps the span context each log record was made in, by message.
type spanLogs struct {
	mu  sync.Mutex
	got map[string]trace.SpanContext
}

func (h *spanLogs) Enabled(context.Context, slog.Level) bool { return true }
func (h *spanLogs) Handle(ctx context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.got[r.Message] = trace.SpanContextFromContext(ctx)
	return nil
}
func (h *spanLogs) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *spanLogs) WithGroup(string) slog.Handler      { return h }

// A failed attempt the dispatcher will retry says so, with an error status, and its
// log line is made in the deliver span (so it carries its trace and span ids).
func TestTraceFailedAttemptRetried(t *testing.T) {
	rec, tp := recording(t)
	logs := &spanLogs{got: map[string]trace.SpanContext{}}
	e := deliverytest.New(t, deliverytest.Config{
		Logger:   slog.New(logs),
		Dispatch: []delivery.Option{delivery.WithTracerProvider(tp)},
		Routes: func(delivery.Target) map[string]delivery.Route {
			down := delivery.TargetFunc(func(context.Context, agent.Handoff) (agent.Result, error) {
				return agent.Result{}, &agent.DeliveryError{Err: errors.New("HTTP 503"), Status: http.StatusServiceUnavailable, Retry: true}
			})
			return map[string]delivery.Route{"coder": {Kind: "webhook", Target: down}}
		},
	})
	evTP, ev := eventTrace(t)
	ingestTraced(t, e, urgent(key("down"), "x"), evTP)
	e.Pass()
	dels := named(rec.Ended(), "deliver webhook")
	require.Len(t, dels, 1)
	require.Equal(t, ev.TraceID(), dels[0].SpanContext().TraceID())
	require.Equal(t, "failed", attr(dels[0], "signalgate.delivery.status").AsString())
	require.True(t, attr(dels[0], "signalgate.delivery.retry").AsBool())
	require.Equal(t, codes.Error, dels[0].Status().Code)
	logs.mu.Lock()
	defer logs.mu.Unlock()
	require.Equal(t, dels[0].SpanContext().SpanID(), logs.got["delivery failed"].SpanID())
}

// With tracing off a frame carries no traceparent, whatever the record has.
func TestTraceOffFrameHasNoTraceparent(t *testing.T) {
	e := deliverytest.New(t, deliverytest.Config{})
	evTP, _ := eventTrace(t)
	k := key("off")
	ingestTraced(t, e, urgent(k, "x"), evTP)
	e.Pass()
	n := 0
	for _, f := range e.Log(k) {
		if f.Event == agent.EventSignal {
			n++
			require.NotContains(t, f.Signal.Metadata, delivery.MetaTraceparent)
		}
	}
	require.Equal(t, 1, n)
}

// A webhook target's request carries the traceparent of its client span, in the
// record's trace, and the span's url.full shows neither the URL's credentials nor its
// query or path.
func TestTraceWebhookRequestCarriesTraceparent(t *testing.T) {
	rec, tp := recording(t)
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Header.Get("traceparent"))
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	u := strings.Replace(srv.URL, "http://", "http://hookuser:hookpass@", 1) + "/hook/tok-s3cret?token=q-s3cret"
	cfg := webhook.Agent("coder", deliverytest.CoderToken, webhook.Config{URL: u, Secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"})
	e := deliverytest.New(t, deliverytest.Config{
		Agents:   []agent.Config{cfg},
		Dispatch: []delivery.Option{delivery.WithTracerProvider(tp)},
		Routes: func(delivery.Target) map[string]delivery.Route {
			tg, err := webhook.New(cfg, webhook.WithTracerProvider(tp))
			require.NoError(t, err)
			return map[string]delivery.Route{"coder": delivery.RouteOf(cfg, tg)}
		},
	})
	evTP, ev := eventTrace(t)
	ingestTraced(t, e, urgent(key("hook"), "x"), evTP)
	e.Pass()
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, got, 1)
	sent := telemetry.SpanContext(got[0])
	require.Equal(t, ev.TraceID(), sent.TraceID(), "the request continues the record's trace")

	spans := rec.Ended()
	dels := named(spans, "deliver webhook")
	require.Len(t, dels, 1)
	posts := named(spans, "POST")
	require.Len(t, posts, 1)
	post := posts[0]
	require.Equal(t, sent.SpanID(), post.SpanContext().SpanID(), "the header is the client span's")
	require.Equal(t, dels[0].SpanContext().SpanID(), post.Parent().SpanID())
	require.Equal(t, trace.SpanKindClient, post.SpanKind())
	require.EqualValues(t, http.StatusNoContent, attr(post, "http.response.status_code").AsInt64())
	full := attr(post, "url.full").AsString()
	require.NotEmpty(t, full)
	for _, secret := range []string{"s3cret", "hookpass", "token="} {
		require.NotContains(t, full, secret)
	}
}

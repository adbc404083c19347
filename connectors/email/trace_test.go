package email

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/store/storetest"
)

// A fetch round that finds mail is an "imap fetch" span; each message's ingest is a
// child of it, and its event and record point at the message's span.
func TestTraceFetchRound(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	srv := newMemIMAP(t)
	srv.deliver("INBOX", testMail(1))
	srv.deliver("INBOX", testMail(2))
	e := newEnvOn(t, storetest.OpenSQLite(t, store.WithTracing(tp)))
	o := newObserver()
	e.startPoller(testConfig(srv.addr), o, WithTracing(tp))
	o.waitFor(t, "both messages", storedAtLeast(2))

	var fetch sdktrace.ReadOnlySpan
	var msgs []sdktrace.ReadOnlySpan
	byID := map[trace.SpanID]sdktrace.ReadOnlySpan{}
	for _, s := range rec.Ended() {
		byID[s.SpanContext().SpanID()] = s
		switch s.Name() {
		case "imap fetch":
			require.Nil(t, fetch, "one round found mail")
			fetch = s
		case "ingest message":
			msgs = append(msgs, s)
		}
	}
	require.NotNil(t, fetch)
	require.Equal(t, trace.SpanKindClient, fetch.SpanKind())
	require.False(t, fetch.Parent().IsValid(), "a round starts its own trace")
	attrs := map[string]any{}
	for _, kv := range fetch.Attributes() {
		attrs[string(kv.Key)] = kv.Value.AsInterface()
	}
	require.Equal(t, "INBOX", attrs["signalgate.mailbox"])
	require.EqualValues(t, 2, attrs["signalgate.messages"])
	require.Equal(t, "127.0.0.1", attrs["server.address"])
	require.Len(t, msgs, 2)
	calls := e.rec.all()
	require.Len(t, calls, 2)
	for i, m := range msgs {
		require.Equal(t, fetch.SpanContext().SpanID(), m.Parent().SpanID())
		require.Equal(t, "00-"+m.SpanContext().TraceID().String()+"-"+m.SpanContext().SpanID().String()+"-01",
			calls[i].Event.TraceParent, "the stored event points at its message's span")
	}
	var parses, inserts int
	for _, s := range rec.Ended() {
		parent, ok := byID[s.Parent().SpanID()]
		switch s.Name() {
		case "parse", "INSERT events", "route":
			require.True(t, ok)
			require.Equal(t, "ingest message", parent.Name(), "%s under its message", s.Name())
			if s.Name() == "parse" {
				parses++
			} else if s.Name() == "INSERT events" {
				inserts++
			}
		}
	}
	require.Equal(t, 2, parses)
	require.Equal(t, 2, inserts)
}

package store_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/store/storetest"
	"github.com/signalgate/signalgate/telemetry"
)

func spanAttr(s sdktrace.ReadOnlySpan, key string) any {
	for _, kv := range s.Attributes() {
		if string(kv.Key) == key {
			return kv.Value.AsInterface()
		}
	}
	return nil
}

// An event merged into a pending record shows as a "merge" span of its ingest
// transaction; the record keeps the first event's traceparent and links the second's.
func TestTraceIngestAndMerge(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			rec := tracetest.NewSpanRecorder()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
			t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
			s := storetest.Open(t, b, store.WithTracing(tp))
			pol, err := inbox.NewPolicy(inbox.PolicyConfig{})
			require.NoError(t, err)
			svc := inbox.NewService(store.NewInbox(s), pol)
			tracer := telemetry.Tracer(tp)

			arrive := func(delivery string) (inbox.IngestResult, string) {
				ctx, span := tracer.Start(t.Context(), "POST /webhooks/github/:connector")
				defer span.End()
				ev := event(delivery)
				ev.TraceParent = telemetry.Traceparent(ctx) // what the pipeline does
				res, err := svc.Ingest(ctx, ev, []inbox.Notification{comment("Jane commented", "", "c1")})
				require.NoError(t, err)
				return res, ev.TraceParent
			}
			first, tp1 := arrive("d1")
			second, tp2 := arrive("d2")
			require.True(t, second.Records[0].Merged)
			id := first.Records[0].RecordID

			var inserts, decides, merges []sdktrace.ReadOnlySpan
			for _, sp := range rec.Ended() {
				switch sp.Name() {
				case "INSERT events":
					inserts = append(inserts, sp)
				case "decide":
					decides = append(decides, sp)
				case "merge":
					merges = append(merges, sp)
				}
			}
			require.Len(t, inserts, 2)
			require.Len(t, decides, 2)
			require.Len(t, merges, 1)
			require.Equal(t, tp2, "00-"+inserts[1].Parent().TraceID().String()+"-"+inserts[1].Parent().SpanID().String()+"-01",
				"the transaction is a child of the request's span")
			for i, d := range decides {
				require.Equal(t, inserts[i].SpanContext().SpanID(), d.Parent().SpanID())
				require.Equal(t, id, spanAttr(d, "signalgate.record.id"))
				require.Equal(t, "coder/acme/api/acme/api#7", spanAttr(d, "signalgate.thread"))
			}
			require.Equal(t, inserts[1].SpanContext().SpanID(), merges[0].Parent().SpanID())
			require.Equal(t, id, spanAttr(merges[0], "signalgate.record.id"))
			require.EqualValues(t, 2, spanAttr(merges[0], "signalgate.coalesced_count"))

			r, err := store.NewAdmin(s).GetRecord(t.Context(), id)
			require.NoError(t, err)
			require.Equal(t, tp1, r.TraceParent)
			require.Equal(t, []string{tp2}, r.TraceLinks)
		})
	}
}

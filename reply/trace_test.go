package reply_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/signalgate/signalgate/connectors/kindstest"
	"github.com/signalgate/signalgate/reply"
	"github.com/signalgate/signalgate/service"
	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/store/storetest"
)

// seen is a sender that keeps the span context each send ran in.
type seen struct {
	*platform
	ctxs []trace.SpanContext
}

func (s *seen) Send(ctx context.Context, r reply.Reply) (reply.Sent, bool, error) {
	s.ctxs = append(s.ctxs, trace.SpanContextFromContext(ctx))
	return s.platform.Send(ctx, r)
}

// Every send attempt is a "reply {source}" span with its outcome, and the sender runs
// inside it (its client spans are children).
func TestReplyAttemptSpans(t *testing.T) {
	each(t, func(t *testing.T, b storetest.Backend) {
		rec := tracetest.NewSpanRecorder()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
		f := setup(t, b, nil)
		snd := &seen{platform: newPlatform()}
		snd.fails, snd.retry = []error{errors.New("slack: ratelimited token=xoxb-secret-value")}, true
		svc := reply.New(store.NewReplies(f.st), map[string]reply.Sender{"slack": snd}, service.Base{Now: f.clk.now}, reply.WithRandom(func() float64 { return 0 }), reply.WithProvenance(trust),
			reply.WithTracerProvider(tp), reply.WithSecrets([]string{"xoxb-secret-value"}), reply.WithPlaces(kindstest.Places()))
		ctx := context.Background()
		f.notify(t, thread, "d1", dm)
		_, err := svc.Queue(ctx, thread, reply.Request{ID: "r1", Text: "on it"})
		require.NoError(t, err)
		_, err = svc.RunOnce(ctx)
		require.NoError(t, err)
		f.clk.add(reply.DefaultMaxAge / 100) // past the backoff
		_, err = svc.RunOnce(ctx)
		require.NoError(t, err)

		spans := rec.Ended()
		require.Len(t, spans, 2)
		for i, s := range spans {
			require.Equal(t, "reply slack", s.Name())
			require.False(t, s.Parent().IsValid())
			require.Equal(t, s.SpanContext().SpanID(), snd.ctxs[i].SpanID(), "the sender runs in the attempt's span")
			for _, a := range s.Attributes() {
				require.NotContains(t, a.Value.Emit(), "xoxb-secret-value")
			}
		}
		status := func(s sdktrace.ReadOnlySpan) string {
			for _, a := range s.Attributes() {
				if a.Key == "signalgate.reply.status" {
					return a.Value.AsString()
				}
			}
			return ""
		}
		require.Equal(t, string(reply.StatusQueued), status(spans[0]), "retried")
		require.Equal(t, string(reply.StatusSent), status(spans[1]))
		require.Equal(t, codes.Unset, spans[1].Status().Code)
	})
}

package telemetry_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/signalgate/signalgate/telemetry"
)

func recorder(t *testing.T) (*tracetest.SpanRecorder, *sdktrace.TracerProvider) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return rec, tp
}

func value(s sdktrace.ReadOnlySpan, k string) attribute.Value {
	for _, a := range s.Attributes() {
		if string(a.Key) == k {
			return a.Value
		}
	}
	return attribute.Value{}
}

// headers answers with status and hands back the traceparent each request carried.
func headers(t *testing.T, status int) (*httptest.Server, chan string) {
	got := make(chan string, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Get("traceparent")
		w.WriteHeader(status)
	}))
	t.Cleanup(srv.Close)
	return srv, got
}

// A request is a client span carrying its own traceparent, in the caller's trace; the
// span's url.full keeps neither userinfo nor the query, and the caller's request is
// left as it was.
func TestTransportSpanAndTraceparent(t *testing.T) {
	rec, tp := recorder(t)
	srv, got := headers(t, http.StatusAccepted)
	parentCtx, parent := tp.Tracer("test").Start(context.Background(), "deliver webhook")
	u := strings.Replace(srv.URL, "http://", "http://user:pa55word@", 1) + "/api/agents/a/signals?token=t0ken-value#frag"
	req, err := http.NewRequestWithContext(parentCtx, http.MethodPost, u, nil)
	require.NoError(t, err)
	resp, err := (&http.Client{Transport: telemetry.Transport(nil, tp)}).Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	parent.End()
	require.Empty(t, req.Header.Get("traceparent"), "the caller's request is not changed")

	sent := telemetry.SpanContext(<-got)
	spans := rec.Ended()
	require.Len(t, spans, 2)
	post := spans[0]
	require.Equal(t, "POST", post.Name())
	require.Equal(t, trace.SpanKindClient, post.SpanKind())
	require.Equal(t, post.SpanContext().SpanID(), sent.SpanID(), "the header is the client span's")
	require.Equal(t, parent.SpanContext().TraceID(), sent.TraceID())
	require.Equal(t, parent.SpanContext().SpanID(), post.Parent().SpanID())
	srvURL, _ := url.Parse(srv.URL)
	require.Equal(t, srvURL.Hostname(), value(post, "server.address").AsString())
	require.Equal(t, srvURL.Port(), value(post, "server.port").Emit())
	require.Equal(t, "POST", value(post, "http.request.method").AsString())
	require.EqualValues(t, http.StatusAccepted, value(post, "http.response.status_code").AsInt64())
	require.Equal(t, srv.URL+"/api/agents/a/signals", value(post, "url.full").AsString())
	for _, a := range post.Attributes() {
		for _, secret := range []string{"pa55word", "t0ken-value", "frag"} {
			require.NotContains(t, a.Value.Emit(), secret)
		}
	}
	require.Equal(t, codes.Unset, post.Status().Code)
}

// A 5xx answer and a transport failure are errors with error.type; the failure's
// message (which may repeat the URL) is not recorded.
func TestTransportErrors(t *testing.T) {
	rec, tp := recorder(t)
	srv, _ := headers(t, http.StatusBadGateway)
	client := &http.Client{Transport: telemetry.Transport(nil, tp)}
	resp, err := client.Get(srv.URL)
	require.NoError(t, err)
	resp.Body.Close()
	failing := telemetry.Transport(roundTripFunc(func(*http.Request) (*http.Response, error) {
		return nil, errors.New("dial https://x.example/?token=t0ken-value: refused")
	}), tp)
	req, _ := http.NewRequest(http.MethodGet, "https://x.example/hook?token=t0ken-value", nil)
	_, err = failing.RoundTrip(req)
	require.Error(t, err)

	spans := rec.Ended()
	require.Len(t, spans, 2)
	require.Equal(t, codes.Error, spans[0].Status().Code)
	require.Equal(t, "502", value(spans[0], "error.type").AsString())
	require.Equal(t, codes.Error, spans[1].Status().Code)
	require.NotEmpty(t, value(spans[1], "error.type").AsString())
	require.NotContains(t, spans[1].Status().Description, "t0ken")
	require.EqualValues(t, 443, value(spans[1], "server.port").AsInt64(), "the scheme's port")
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// With tracing off the transport is the base itself: no span, no header, even when the
// caller's context has a span.
func TestTransportOff(t *testing.T) {
	base := &http.Transport{}
	require.Same(t, base, telemetry.Transport(base, telemetry.Off()))
	require.Same(t, base, telemetry.Transport(base, nil))
	require.Nil(t, telemetry.Transport(nil, telemetry.Off()), "nil stays the client's default")

	_, tp := recorder(t)
	ctx, span := tp.Tracer("test").Start(context.Background(), "caller")
	defer span.End()
	srv, got := headers(t, http.StatusOK)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	resp, err := (&http.Client{Transport: telemetry.Transport(nil, telemetry.Off())}).Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Empty(t, <-got)
}

// Third parties' APIs get a client span but no trace context.
func TestTransportWithoutPropagation(t *testing.T) {
	rec, tp := recorder(t)
	srv, got := headers(t, http.StatusOK)
	ctx, span := tp.Tracer("test").Start(context.Background(), "reply github")
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	resp, err := (&http.Client{Transport: telemetry.Transport(nil, tp, telemetry.WithoutPropagation())}).Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	span.End()
	require.Empty(t, <-got)
	require.Len(t, rec.Ended(), 2)
	require.Equal(t, span.SpanContext().SpanID(), rec.Ended()[0].Parent().SpanID())
}

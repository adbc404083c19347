package approval_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/signalgate/signalgate/approval"
	"github.com/signalgate/signalgate/service"
	"github.com/signalgate/signalgate/store"
)

// Posting an approval is an "approval request" span (a child of the asking request's),
// a person's decision an "approval decide" span with the status it set.
func TestApprovalSpans(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	e := newEnv(t, approval.Config{})
	e.svc = approval.New(approval.Config{Channel: "C0APPROVE", SlackConnector: "acme", Approvers: []string{"U0JANE"}},
		approval.Deps{Store: store.NewApprovals(e.st), Places: store.NewApprovals(e.st), Slack: e.slack, Resumer: e.resumer, Emitter: e.emitter, Traces: tp,
			Base: service.Base{Now: func() time.Time { return e.now }}})
	ctx, asking := tp.Tracer("test").Start(context.Background(), "POST /agents/:agent/approvals")
	a, created, err := e.svc.Request(ctx, approval.Request{Thread: k, Origin: approval.OriginMastra, RunID: "run-1",
		ToolCallID: "call-1", Tool: "deploy"})
	require.NoError(t, err)
	require.True(t, created)
	asking.End()
	require.Empty(t, e.click(t, a.ID, "U0JANE", true))

	spans := rec.Ended()
	require.Len(t, spans, 3)
	req, decide := spans[0], spans[2]
	require.Equal(t, "approval request", req.Name())
	require.Equal(t, asking.SpanContext().SpanID(), req.Parent().SpanID())
	require.Equal(t, "approval decide", decide.Name())
	require.False(t, decide.Parent().IsValid(), "the click's context had no span")
	got := map[string]string{}
	for _, kv := range decide.Attributes() {
		got[string(kv.Key)] = kv.Value.Emit()
	}
	require.Equal(t, a.ID, got["signalgate.approval.id"])
	require.Equal(t, string(approval.StatusApproved), got["signalgate.approval.status"])
	require.Equal(t, k.String(), got["signalgate.thread"])
}

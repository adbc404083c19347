package connectors_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/condition"
	"github.com/signalgate/signalgate/condition/conditiontest"
	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/connectors/connectorstest"
	"github.com/signalgate/signalgate/inbox"
)

// A clock that never moves: only the step budget can run out, whatever the machine.
func stillClock() time.Time { return time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC) }

// The attacker's 117 KB body makes a fair `when` quadratic. The event is answered: the
// route does not match, the stored event says why, and the hook (the metric) hears of it
// once, however many items and routes ran out.
func TestPipelineWhenOverBudget(t *testing.T) {
	r, err := connectors.NewRouter([]connectors.RouteConfig{
		{Name: "unblocked", Match: connectors.RouteMatch{When: conditiontest.ScanWhen},
			Thread: connectors.ThreadConfig{Agent: "coder", Resource: "r", Thread: "t"}},
		{Name: "scans", Match: connectors.RouteMatch{When: `kind == "scan"`},
			Thread: connectors.ThreadConfig{Agent: "coder", Resource: "r", Thread: "scans"}},
	}, []string{"coder"}, connectors.WithExpressionLimits(condition.Limits{Now: stillClock}))
	require.NoError(t, err)
	ing := connectorstest.NewIngester()
	over := 0
	p := connectors.NewPipeline(r, ing, nil, connectors.WithBudgetExceeded(func() { over++ }))

	items := []connectors.Item{item("scan"), item("scan")}
	ev := &inbox.Event{Source: "generic", Connector: "billing", DeliveryID: "d1", Body: conditiontest.ScanBomb()}
	out, err := p.Ingest(context.Background(), ev, items)
	require.NoError(t, err)
	assert.Equal(t, inbox.EventUnrouted, out.Status, "the cheap route came after the budget was spent")
	call, ok := ing.Last()
	require.True(t, ok)
	budget := `when "any(payload.items, {# in payload.blocked})": expression budget exceeded: more than 1000000 steps`
	assert.Contains(t, call.Event.Error, `route "unblocked": `+budget)
	assert.Contains(t, call.Event.Error, `route "scans": when "kind == \"scan\"": expression budget exceeded`)
	assert.Equal(t, 1, over)

	// Explain's view: one evaluation, every route's trace says why.
	rt := r.RouteTraced(condition.DecodePayload(ev.Body), items)
	require.Len(t, rt.Traces, 2)
	assert.False(t, rt.Traces[0][0].Matched)
	assert.True(t, errors.Is(rt.Traces[0][0].WhenErr, condition.ErrBudgetExceeded))
	assert.EqualError(t, rt.Traces[0][0].WhenErr, budget)

	// An ordinary body is routed by both, and nothing is counted.
	ev = &inbox.Event{Source: "generic", Connector: "billing", DeliveryID: "d2", Body: []byte(`{"items":[1,2],"blocked":[2]}`)}
	out, err = p.Ingest(context.Background(), ev, items[:1])
	require.NoError(t, err)
	assert.Equal(t, 2, out.Records)
	assert.Equal(t, 1, over)
}

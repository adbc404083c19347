package inbox

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/condition"
	"github.com/signalgate/signalgate/condition/conditiontest"
)

func stillClock() time.Time { return now }

// decidingStore decides every notification, as the real store does inside its ingest
// transaction.
type decidingStore struct{}

func (decidingStore) Ingest(_ context.Context, ev *Event, ns []Notification, decide DecideFunc, _ func() string) (IngestResult, error) {
	res := IngestResult{EventID: ev.ID}
	for _, n := range ns {
		res.Records = append(res.Records, RecordOutcome{Thread: n.Thread, Decision: decide(n.Subject(), PresenceIdle, ev.ReceivedAt)})
	}
	return res, nil
}

// A rule whose `when` the attacker's body makes quadratic does not match: the next
// layer decides, the record's reason names the rule and the budget, and the hook (the
// metric) hears of the event once for all its records.
func TestPolicyWhenOverBudget(t *testing.T) {
	p, err := NewPolicy(PolicyConfig{Rules: []Rule{
		{When: conditiontest.ScanWhen, ActionSpec: ActionSpec{Action: ActionDiscard}},
		{When: `kind == "scan"`, ActionSpec: ActionSpec{Action: ActionLog}},
	}}, WithExpressionLimits(condition.Limits{Now: stillClock}))
	require.NoError(t, err)
	over := 0
	svc := NewService(decidingStore{}, p, WithClock(stillClock), WithBudgetExceeded(func() { over++ }))
	n := func(thread string) Notification {
		return Notification{Thread: ThreadKey{Agent: "coder", Resource: "r", Thread: thread}, Source: "generic", Kind: "scan",
			Summary: "s", Priority: PriorityMedium, DeliverAs: DeliverAsNotification}
	}
	ev := &Event{Source: "generic", Connector: "billing", Body: conditiontest.ScanBomb()}
	res, err := svc.Ingest(context.Background(), ev, []Notification{n("a"), n("b")})
	require.NoError(t, err)
	require.Len(t, res.Records, 2)
	for _, r := range res.Records {
		d := r.Decision
		require.Equal(t, ActionDeliver, d.Action, "neither rule matched: the default table decided")
		require.True(t, strings.HasPrefix(d.Reason, "default: medium priority, thread idle → deliver now (wakes) (rule[0] not matched: when "), d.Reason)
		require.Contains(t, d.Reason, "expression budget exceeded")
		require.Contains(t, d.Reason, `rule[1] not matched: when "kind == \"scan\"": expression budget exceeded`, "the event's budget was spent")
	}
	require.Equal(t, 1, over)

	ev = &Event{Source: "generic", Connector: "billing", Body: []byte(`{"items":[1],"blocked":[2]}`)}
	res, err = svc.Ingest(context.Background(), ev, []Notification{n("a")})
	require.NoError(t, err)
	require.Equal(t, ActionLog, res.Records[0].Decision.Action)
	require.Equal(t, 1, over)
}

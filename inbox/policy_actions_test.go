package inbox

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// persist is Mastra's: the record stays pending in the inbox with nothing scheduled, so
// the dispatcher never sends it; log is what persist used to be (written to the thread
// now, never waking); queue is due now and, on an active thread, waits for it to idle.
func TestPolicyActionsAsMastra(t *testing.T) {
	p := mustPolicy(t, PolicyConfig{Sources: map[string]ActionSpec{
		"quiet": {Action: ActionPersist}, "audit": {Action: ActionLog}, "ci": {Action: ActionQueue},
	}})
	n := Notification{Thread: ThreadKey{Agent: "a", Resource: "r", Thread: "t"}, Source: "quiet", Kind: "k", Summary: "s"}

	d := p.Decide(n.Subject(), PresenceIdle, now)
	require.Equal(t, Decision{Action: ActionPersist, Reason: "source quiet → persist", Code: "source"}, d)
	r := NewRecord("r1", "e1", n, d, now)
	require.Equal(t, StatusPending, r.Status, "in the inbox")
	require.Nil(t, r.DueAt(), "never sent: no due time")

	d = p.Decide(Subject{Source: "audit", Kind: "k"}, PresenceIdle, now)
	require.Equal(t, Decision{Action: ActionLog, DeliverAt: at(0), Reason: "source audit → log", Code: "source"}, d)

	for _, pres := range []Presence{PresenceIdle, PresenceActive} {
		d = p.Decide(Subject{Source: "ci", Kind: "k"}, pres, now)
		require.Equal(t, Decision{Action: ActionQueue, DeliverAt: at(0), FullWhenIdle: true, Reason: "source ci → queue", Code: "source"}, d, pres)
	}

	// A persisted record absorbs later events and keeps staying untold; a stronger
	// decision merged in schedules it.
	r.Merge(n, Decision{Action: ActionPersist, Reason: "again"}, now.Add(time.Minute))
	require.Nil(t, r.DueAt())
	r.Merge(n, Decision{Action: ActionDeliver, DeliverAt: at(2 * time.Minute), Reason: "deliver"}, now.Add(2*time.Minute))
	require.Equal(t, ActionDeliver, r.Action)
	require.Equal(t, at(2*time.Minute), r.DueAt())
}

func TestPersistAndQueueTakeNoTime(t *testing.T) {
	_, err := NewPolicy(PolicyConfig{Rules: []Rule{
		{ActionSpec: ActionSpec{Action: ActionPersist, After: time.Minute}},
		{ActionSpec: ActionSpec{Action: ActionQueue, At: "08:00"}},
		{ActionSpec: ActionSpec{Action: ActionLog, After: time.Minute}},
		{ActionSpec: ActionSpec{Action: "later"}},
	}})
	require.EqualError(t, err, `rules[0]: persist takes no after or at (a timed delivery is defer; a timed write to the thread is log)
rules[1]: queue takes no after or at (a timed delivery is defer; a timed write to the thread is log)
rules[3].action: unknown action "later" (want deliver, queue, summarize, defer, log, persist or discard)`)
}

func TestPersistUses(t *testing.T) {
	c := PolicyConfig{
		Rules:      []Rule{{ActionSpec: ActionSpec{Action: ActionLog}}, {ActionSpec: ActionSpec{Action: ActionPersist}}},
		Sources:    map[string]ActionSpec{"slack": {Action: ActionPersist}, "github": {Action: ActionDeliver}},
		Priorities: map[Priority]ActionSpec{PriorityLow: {Action: ActionPersist}},
		Default:    &ActionSpec{Action: ActionPersist},
	}
	require.Equal(t, []string{"rules[1]", "sources.slack", "priorities.low", "default"}, c.PersistUses())
	require.Empty(t, (&PolicyConfig{}).PersistUses())
}

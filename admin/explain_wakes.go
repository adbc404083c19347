package admin

import (
	"context"
	"fmt"
	"time"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/inbox"
)

// ExplainedWake is a thread's wake accounting, shown when its agent has a wake_budget
// or max_concurrent_wakes: what a wake for this notification would meet now.
type ExplainedWake struct {
	Budget string `json:"budget,omitempty"` // "6/1h"
	// Used counts the wakes inside the budget's window; FreesAt is when the oldest of
	// them leaves it (set once the budget is spent).
	Used    int        `json:"used"`
	Spent   bool       `json:"spent"`
	FreesAt *time.Time `json:"freesAt,omitempty"`
	// MaxConcurrent is max_concurrent_wakes; OpenWakes the agent's wake runs open now.
	MaxConcurrent int `json:"maxConcurrent,omitempty"`
	OpenWakes     int `json:"openWakes"`
	// QueuedSince is set while the thread waits for a wake slot.
	QueuedSince *time.Time `json:"queuedSince,omitempty"`
	// Note says what a wake would do.
	Note string `json:"note"`
}

// wakeStater is the store's read of a thread's wake accounting (an empty inbox has none).
type wakeStater interface {
	WakeState(ctx context.Context, k inbox.ThreadKey, now time.Time) (agent.WakeState, error)
}

// explainWake describes the wake budget and cap of k's agent; nil when it has neither.
func (x *Explainer) explainWake(ctx context.Context, o Outcome, now time.Time) (*ExplainedWake, error) {
	set := x.wakes[o.Thread.Agent]
	if set.Budget == nil && set.Limit == 0 {
		return nil, nil
	}
	var st agent.WakeState
	if ws, ok := x.st.(wakeStater); ok {
		var err error
		if st, err = ws.WakeState(ctx, o.Thread, now); err != nil {
			return nil, err
		}
	}
	out := &ExplainedWake{MaxConcurrent: set.Limit, OpenWakes: st.OpenWakes, QueuedSince: st.QueuedAt}
	exempt := o.Record.Priority == inbox.PriorityUrgent || o.Record.DeliverAs != inbox.DeliverAsNotification
	if b := set.Budget; b != nil {
		out.Budget = b.String()
		out.Used = len(agent.InWindow(st.Wakes, now, b.Per))
		if spent, frees := b.Spent(st.Wakes, now); spent {
			out.Spent, out.FreesAt = true, &frees
		}
	}
	switch {
	case o.Presence == inbox.PresenceActive:
		out.Note = "the thread is active: nothing to wake"
	case out.Spent && exempt:
		out.Note = fmt.Sprintf("wake budget %s spent, but %s always wakes", out.Budget, exemptWhat(o.Record))
	case out.Spent:
		out.Note = fmt.Sprintf("wake budget %s spent: a wake would be held for the next summary (a slot frees at %s)",
			out.Budget, out.FreesAt.UTC().Format(time.RFC3339))
	case set.Limit > 0 && st.OpenWakes >= set.Limit:
		out.Note = fmt.Sprintf("max_concurrent_wakes %d reached: a wake would wait its turn", set.Limit)
	case out.Budget != "":
		out.Note = fmt.Sprintf("a wake would be allowed (%d of %s used)", out.Used, out.Budget)
	default:
		out.Note = fmt.Sprintf("a wake would be allowed (%d of %d wake runs open)", st.OpenWakes, set.Limit)
	}
	return out, nil
}

func exemptWhat(r inbox.Record) string {
	if r.DeliverAs != inbox.DeliverAsNotification {
		return "a message"
	}
	return "an urgent record"
}

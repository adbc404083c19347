package delivery

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/inbox"
)

var (
	pnow = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	pk   = inbox.ThreadKey{Agent: "coder", Resource: "r", Thread: "t"}
)

func at(d time.Duration) *time.Time { t := pnow.Add(d); return &t }

func rec(id string, pr inbox.Priority, age time.Duration) inbox.Record {
	return inbox.Record{ID: id, Thread: pk, Source: "github", Kind: "comment", Priority: pr, Summary: id,
		Status: inbox.StatusPending, CoalescedCount: 1, CreatedAt: pnow.Add(-age), UpdatedAt: pnow.Add(-age)}
}

func deliverNow(r inbox.Record) inbox.Record {
	r.DeliverAt, r.Action = at(0), inbox.ActionDeliver
	return r
}
func summaryNow(r inbox.Record) inbox.Record {
	r.SummaryAt, r.Action = at(0), inbox.ActionSummarize
	return r
}

func ids(it item) []string {
	var out []string
	for _, r := range it.records {
		out = append(out, r.ID)
	}
	return out
}

func TestPlanOrderAndSummary(t *testing.T) {
	w := Work{Thread: pk, CreatedAt: pnow.Add(-time.Hour), Records: []inbox.Record{
		deliverNow(rec("m-old", inbox.PriorityMedium, 3*time.Minute)),
		deliverNow(rec("u", inbox.PriorityUrgent, time.Minute)),
		summaryNow(rec("l", inbox.PriorityLow, 5*time.Minute)),
		summaryNow(rec("h", inbox.PriorityHigh, time.Second)),
		deliverNow(rec("m-new", inbox.PriorityMedium, 2*time.Minute)),
	}}
	p := planThread(w, pnow, 10*time.Second)
	require.Empty(t, p.reschedules)
	require.Len(t, p.items, 4)
	require.Equal(t, []string{"u"}, ids(p.items[0]))
	require.True(t, p.items[1].summary, "the summary ranks by its highest priority")
	require.Equal(t, []string{"h", "l"}, ids(p.items[1]))
	require.False(t, p.items[1].persist)
	require.Equal(t, []string{"m-old"}, ids(p.items[2]))
	require.Equal(t, []string{"m-new"}, ids(p.items[3]))
	require.Equal(t, `<notification-summary pending="2" priority="high">github: 2</notification-summary>`, agent.RenderXML(p.items[1].signal))
}

func TestPlanLowOnlySummaryPersists(t *testing.T) {
	w := Work{Thread: pk, Records: []inbox.Record{summaryNow(rec("a", inbox.PriorityLow, 0)), summaryNow(rec("b", inbox.PriorityLow, 0))}}
	p := planThread(w, pnow, 10*time.Second)
	require.Len(t, p.items, 1)
	require.True(t, p.items[0].persist)
}

func TestPlanPacing(t *testing.T) {
	last := pnow.Add(-4 * time.Second)
	w := Work{Thread: pk, RunID: "run", LastSummaryAt: &last, Records: []inbox.Record{
		summaryNow(rec("a", inbox.PriorityMedium, 0)), deliverNow(rec("u", inbox.PriorityUrgent, 0)),
	}}
	p := planThread(w, pnow, 10*time.Second)
	require.Len(t, p.items, 1, "the urgent record is not paced")
	require.Equal(t, []string{"u"}, ids(p.items[0]))
	require.Equal(t, []Reschedule{{RecordID: "a", UpdatedAt: pnow, Coalesced: 1, DueAt: at(6 * time.Second)}}, p.reschedules)

	// Not paced while idle, nor once the interval passed.
	w.RunID = ""
	require.Len(t, planThread(w, pnow, 10*time.Second).items, 2)
	w.RunID = "run"
	require.Len(t, planThread(w, pnow.Add(6*time.Second), 10*time.Second).items, 2)
}

func TestPlanFullWhenIdle(t *testing.T) {
	r := rec("h", inbox.PriorityHigh, time.Minute)
	r.FullWhenIdle, r.SummarySignal = true, "sum-1"
	w := Work{Thread: pk, RunID: "run", Records: []inbox.Record{r}}
	p := planThread(w, pnow, 10*time.Second)
	require.Empty(t, p.items, "active: it waits for idle")
	require.Equal(t, []Reschedule{{RecordID: "h", UpdatedAt: r.UpdatedAt, Coalesced: 1}}, p.reschedules)

	w.RunID = ""
	p = planThread(w, pnow, 10*time.Second)
	require.Len(t, p.items, 1)
	require.False(t, p.items[0].summary)
	require.Equal(t, agent.TagNotification, p.items[0].signal.TagName)

	// A full-when-idle record not summarised yet on a thread already idle: straight in full.
	fresh := summaryNow(rec("h2", inbox.PriorityHigh, 0))
	fresh.FullWhenIdle = true
	p = planThread(Work{Thread: pk, Records: []inbox.Record{fresh}}, pnow, 10*time.Second)
	require.Len(t, p.items, 1)
	require.False(t, p.items[0].summary)
}

func TestPlanBackoffAndMessages(t *testing.T) {
	backing := deliverNow(rec("b", inbox.PriorityHigh, 0))
	backing.NextAttemptAt = at(time.Minute)
	msg := deliverNow(rec("m", inbox.PriorityMedium, 0))
	msg.DeliverAs = inbox.DeliverAsMessage
	msg.Attributes = inbox.Attributes{{Key: "name", Value: "Jane"}, {Key: "from", Value: "slack"}}
	queued := deliverNow(rec("q", inbox.PriorityMedium, 0))
	queued.DeliverAs = inbox.DeliverAsQueued
	w := Work{Thread: pk, RunID: "run", Records: []inbox.Record{backing, msg, queued}}
	p := planThread(w, pnow, 10*time.Second)
	require.Len(t, p.items, 1)
	require.Equal(t, `<user name="Jane" from="slack">m</user>`, agent.RenderXML(p.items[0].signal))
	require.Equal(t, []Reschedule{
		{RecordID: "b", UpdatedAt: backing.UpdatedAt, Coalesced: 1, DueAt: at(time.Minute)},
		{RecordID: "q", UpdatedAt: queued.UpdatedAt, Coalesced: 1, FullWhenIdle: true},
	}, p.reschedules)
}

func TestSignalIDsStable(t *testing.T) {
	r := deliverNow(rec("a", inbox.PriorityHigh, 0))
	require.Equal(t, fullSignalID(r), fullSignalID(r), "a retry reuses the id")
	merged := r
	merged.CoalescedCount = 2
	require.NotEqual(t, fullSignalID(r), fullSignalID(merged), "new content, new signal")
	w := Work{Thread: pk, CreatedAt: pnow}
	first := summarySignalID(w)
	require.Equal(t, first, summarySignalID(w))
	w.Summaries++
	require.NotEqual(t, first, summarySignalID(w))
	other := w
	other.Thread.Thread = "u"
	require.NotEqual(t, summarySignalID(w), summarySignalID(other))
}

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

// summaryAfter is a record whose summary fell due d before pnow.
func summaryAfter(r inbox.Record, d time.Duration) inbox.Record {
	r.SummaryAt, r.Action = at(-d), inbox.ActionSummarize
	return r
}

func TestPlanLowOnlySummaryNeverWakes(t *testing.T) {
	w := Work{Thread: pk, Records: []inbox.Record{summaryAfter(rec("a", inbox.PriorityLow, 0), 10*time.Second),
		summaryAfter(rec("b", inbox.PriorityLow, 0), time.Second)}}
	p := planThread(w, pnow, 10*time.Second)
	require.Len(t, p.items, 1)
	require.True(t, p.items[0].noWake, "persisted on an idle thread, delivered into a running loop")
	require.False(t, p.items[0].persist)
	w.RunID = "run"
	p = planThread(w, pnow, 10*time.Second)
	require.True(t, p.items[0].noWake)
	require.False(t, p.items[0].persist, "an active thread gets it in its running loop")
}

// TestPlanLowBatches: ten low records a second apart make one summary, idle or active:
// a low-only summary waits one interval after the first of them fell due.
func TestPlanLowBatches(t *testing.T) {
	for _, runID := range []string{"", "run"} {
		var recs []inbox.Record
		for i := range 10 {
			// Arrived 9s, 8s, … 0s ago.
			recs = append(recs, summaryAfter(rec(string(rune('a'+i)), inbox.PriorityLow, 0), time.Duration(9-i)*time.Second))
		}
		w := Work{Thread: pk, RunID: runID, Records: recs}
		p := planThread(w, pnow, 10*time.Second)
		require.Empty(t, p.items, "the window is still open")
		require.Len(t, p.reschedules, 10)
		for _, r := range p.reschedules {
			require.Equal(t, at(time.Second), r.DueAt, "all wait for the end of the first one's window")
		}
		p = planThread(w, pnow.Add(time.Second), 10*time.Second)
		require.Len(t, p.items, 1)
		require.Len(t, p.items[0].records, 10, "one summary of all ten")
	}
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

	// Paced while idle too; not once the interval passed.
	w.RunID = ""
	p = planThread(w, pnow, 10*time.Second)
	require.Len(t, p.items, 1, "idle: paced as well")
	require.Equal(t, []Reschedule{{RecordID: "a", UpdatedAt: pnow, Coalesced: 1, DueAt: at(6 * time.Second)}}, p.reschedules)
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

	// A full-when-idle record not summarised yet on a thread already idle: both are
	// due, and the summary goes first (Mastra's isSummaryDue before isDeliverDue).
	fresh := summaryNow(rec("h2", inbox.PriorityHigh, 0))
	fresh.FullWhenIdle = true
	p = planThread(Work{Thread: pk, Records: []inbox.Record{fresh}}, pnow, 10*time.Second)
	require.Len(t, p.items, 1)
	require.True(t, p.items[0].summary, "summary first; the full one follows once it is done")

	// Pacing never holds back what is due in full: the summary slot is taken, so it
	// goes out in full now.
	last := pnow.Add(-time.Second)
	p = planThread(Work{Thread: pk, LastSummaryAt: &last, Records: []inbox.Record{fresh}}, pnow, 10*time.Second)
	require.Len(t, p.items, 1)
	require.False(t, p.items[0].summary)
	require.Equal(t, agent.TagNotification, p.items[0].signal.TagName)
}

// TestPlanSummaryBeforeFull: a record whose summaryAt and deliverAt have both passed (a
// merge kept the earlier of each) is summarised first, as in Mastra.
func TestPlanSummaryBeforeFull(t *testing.T) {
	r := rec("m", inbox.PriorityMedium, time.Minute)
	r.SummaryAt, r.DeliverAt = at(-time.Minute), at(-time.Second)
	p := planThread(Work{Thread: pk, RunID: "run", Records: []inbox.Record{r}}, pnow, 10*time.Second)
	require.Len(t, p.items, 1)
	require.True(t, p.items[0].summary)
	require.Empty(t, p.reschedules)
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

package delivery

import (
	"sort"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/inbox"
)

// item is one signal a pass will send.
type item struct {
	summary bool
	records []inbox.Record
	signal  agent.Signal
	persist bool // logged without waking or interrupting, whatever the presence
	noWake  bool // delivered into an active run, persisted on an idle thread
	// deliverAs is the record's message mode (inbox.DeliverAsMessage, DeliverAsQueued).
	deliverAs string
	rank      int
	created   time.Time
}

// exempt reports whether the item wakes whatever the wake budget: a message, or one
// carrying an urgent record.
func (it item) exempt() bool {
	if it.deliverAs != inbox.DeliverAsNotification {
		return true
	}
	for _, r := range it.records {
		if r.Priority == inbox.PriorityUrgent {
			return true
		}
	}
	return false
}

// plan is what one pass over a thread does: signals to send, in order, and due records
// that wait (pacing, backoff, the thread turning idle).
type plan struct {
	items       []item
	reschedules []Reschedule
}

// planThread decides a pass over w at now. It is pure: the same work gives the same
// plan, and signal ids are derived from the records so a retried pass reuses them.
//
// Every due record ends in exactly one place: a full notification (deliverAt reached, or
// a full-when-idle record on an idle thread, or a message), the thread's one summary
// (summaryAt reached), or a reschedule. A record whose summary and full delivery are both
// due goes into the summary first, as Mastra checks isSummaryDue before isDeliverDue; its
// full notification follows in a later pass. Summaries are paced whether the thread is
// active or idle: one waits until summaryInterval after the previous one, and a summary of
// only low records also until summaryInterval after the first of them fell due, so a
// burst of low events makes one summary. Records arriving meanwhile join it. Pacing never
// holds back a full notification that is due.
func planThread(w Work, now time.Time, summaryInterval time.Duration) plan {
	var p plan
	active := w.Active()
	next := nextQueued(w.Records, now)
	var summarize []inbox.Record
	full := func(r inbox.Record) bool { return reached(r.DeliverAt, now) || (r.FullWhenIdle && !active) }
	addFull := func(r inbox.Record) {
		p.items = append(p.items, item{records: []inbox.Record{r}, signal: agent.NotificationSignal(r, fullSignalID(r), now),
			persist: r.Action == inbox.ActionLog, rank: r.Priority.Rank(), created: r.CreatedAt})
	}
	for _, r := range w.Records {
		switch {
		case r.NextAttemptAt != nil && r.NextAttemptAt.After(now):
			p.wait(r, r.NextAttemptAt, false)
		case r.DeliverAs == inbox.DeliverAsQueued && (active || r.ID != next):
			// A queued message starts the next run: it waits for this one to end, and
			// only the earliest queued one starts it, so each gets its own run in order.
			p.wait(r, nil, true)
		case r.DeliverAs != inbox.DeliverAsNotification:
			p.items = append(p.items, item{records: []inbox.Record{r}, signal: agent.MessageSignal(r, fullSignalID(r), now),
				deliverAs: r.DeliverAs, rank: messageRank, created: r.CreatedAt})
		case r.Action == inbox.ActionQueue && active && !reached(r.SummaryAt, now):
			// Next-turn input: it waits for the active run to end (the idle transition
			// makes it due) and then goes in full, waking the thread.
			p.wait(r, later(now, r.SummaryAt), true)
		case reached(r.SummaryAt, now):
			summarize = append(summarize, r)
		case full(r):
			addFull(r)
		default:
			// Due only to be looked at again: e.g. full-when-idle while the thread works.
			p.wait(r, later(now, r.DeliverAt, r.SummaryAt), false)
		}
	}
	if len(summarize) > 0 {
		if at := summarySlot(w, summarize, summaryInterval); at.After(now) {
			// Not yet: what is due in full goes now, the rest waits for the slot.
			for _, r := range summarize {
				if full(r) {
					addFull(r)
				} else {
					p.wait(r, &at, false)
				}
			}
		} else {
			sortRecords(summarize)
			allLow := true
			for _, r := range summarize {
				allLow = allLow && r.Priority == inbox.PriorityLow
			}
			// A low-only summary goes into a running loop but never wakes, as Mastra
			// sends it with ifIdle persist only.
			p.items = append(p.items, item{summary: true, records: summarize, signal: agent.SummarySignal(summarize, summarySignalID(w), now),
				noWake: allLow, rank: summarize[0].Priority.Rank(), created: summarize[0].CreatedAt})
		}
	}
	sort.SliceStable(p.items, func(i, j int) bool {
		a, b := p.items[i], p.items[j]
		if a.rank != b.rank {
			return a.rank > b.rank
		}
		return a.created.Before(b.created)
	})
	return p
}

// summarySlot is the earliest time the thread's next summary of records may go out:
// summaryInterval after the previous summary, and for a batch of only low records also
// summaryInterval after the first of them fell due (the batching window).
func summarySlot(w Work, records []inbox.Record, summaryInterval time.Duration) time.Time {
	var at time.Time
	if w.LastSummaryAt != nil {
		at = w.LastSummaryAt.Add(summaryInterval)
	}
	var first *time.Time
	for _, r := range records {
		if r.Priority != inbox.PriorityLow {
			return at
		}
		if first == nil || r.SummaryAt.Before(*first) {
			first = r.SummaryAt
		}
	}
	if window := first.Add(summaryInterval); window.After(at) {
		at = window
	}
	return at
}

// messageRank puts people's messages ahead of every notification, in arrival order
// whatever their priority: someone talking to the agent is answered first.
const messageRank = 1 << 10

// nextQueued is the id of the earliest-arrived queued message that is not backing off.
func nextQueued(rs []inbox.Record, now time.Time) string {
	var best *inbox.Record
	for i := range rs {
		r := &rs[i]
		if r.DeliverAs != inbox.DeliverAsQueued || (r.NextAttemptAt != nil && r.NextAttemptAt.After(now)) {
			continue
		}
		if best == nil || r.CreatedAt.Before(best.CreatedAt) || (r.CreatedAt.Equal(best.CreatedAt) && r.ID < best.ID) {
			best = r
		}
	}
	if best == nil {
		return ""
	}
	return best.ID
}

func (p *plan) wait(r inbox.Record, due *time.Time, fullWhenIdle bool) {
	p.reschedules = append(p.reschedules, Reschedule{RecordID: r.ID, UpdatedAt: r.UpdatedAt, Coalesced: r.CoalescedCount,
		DueAt: due, FullWhenIdle: fullWhenIdle})
}

// sortRecords orders records most urgent first, then oldest.
func sortRecords(rs []inbox.Record) {
	sort.SliceStable(rs, func(i, j int) bool {
		if a, b := rs[i].Priority.Rank(), rs[j].Priority.Rank(); a != b {
			return a > b
		}
		if !rs[i].CreatedAt.Equal(rs[j].CreatedAt) {
			return rs[i].CreatedAt.Before(rs[j].CreatedAt)
		}
		return rs[i].ID < rs[j].ID
	})
}

func reached(t *time.Time, now time.Time) bool { return t != nil && !t.After(now) }

// later is the earliest of ts strictly after now, or nil.
func later(now time.Time, ts ...*time.Time) *time.Time {
	var out *time.Time
	for _, t := range ts {
		if t != nil && t.After(now) && (out == nil || t.Before(*out)) {
			out = t
		}
	}
	return out
}

// signalNamespace scopes the name-based signal ids.
func signalNamespace() uuid.UUID { return agent.SignalNamespace() }

// fullSignalID names the full notification (or message) of a record's current content.
func fullSignalID(r inbox.Record) string { return agent.RecordSignalID(r) }

// summarySignalID names a thread's next summary: the count of summaries delivered so far
// only moves on success, so every retry of a summary carries the same id.
func summarySignalID(w Work) string {
	k := w.Thread
	name := "summary\x00" + k.Agent + "\x00" + k.Resource + "\x00" + k.Thread + "\x00" +
		strconv.FormatInt(w.CreatedAt.UnixMicro(), 10) + "\x00" + strconv.FormatInt(w.Summaries, 10)
	return uuid.NewSHA1(signalNamespace(), []byte(name)).String()
}

package agent

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/signalgate/signalgate/inbox"
)

// The operations behind MCP's notification-inbox tool, which mirrors Mastra's
// createNotificationInboxTool: looking at notifications marks them seen, and read hands
// unread ones to the thread as full notification signals. The read-only inbox_* tools and
// GET …/notifications stay for reading without side effects.

// DefaultInboxToolLimit is the page of list, search and read when no limit is given, as
// in Mastra.
const DefaultInboxToolLimit = 20

// InboxToolQuery filters the notification-inbox tool's list, search and read.
type InboxToolQuery struct {
	Status   inbox.Status   // "": the action's default (list and read: pending and delivered; search: all)
	Priority inbox.Priority // "": every priority
	Source   string         // "": every source
	Query    string         // search only: a case-insensitive substring of summary, kind or source
	Limit    int            // 0: DefaultInboxToolLimit; at most MaxListLimit
}

// InboxToolPage is list's and search's answer, Mastra's {notifications, hasMore,
// markedSeen}: the records newest first, as they are after being marked seen.
type InboxToolPage struct {
	Notifications []inbox.Record `json:"notifications"`
	HasMore       bool           `json:"hasMore"`
	MarkedSeen    int            `json:"markedSeen"`
}

// InboxToolRead is read's answer, Mastra's.
type InboxToolRead struct {
	Message     string `json:"message"`
	Delivered   int    `json:"delivered"`   // sent to the thread now as full notifications
	MarkedSeen  int    `json:"markedSeen"`  // delivered in full before: only marked seen
	Unavailable int    `json:"unavailable"` // could not be sent now (left as they were)
	AlreadyRead int    `json:"alreadyRead"` // neither pending nor delivered
}

func (q InboxToolQuery) records(k inbox.ThreadKey, search bool) (RecordQuery, error) {
	rq := RecordQuery{Thread: k, Limit: DefaultInboxToolLimit}
	switch {
	case q.Status != "":
		if !q.Status.Valid() {
			return rq, invalidf("status: unknown %q (want pending, delivered, seen, dismissed, archived, discarded, failed or superseded)", q.Status)
		}
		rq.Statuses = []inbox.Status{q.Status}
	case !search:
		rq.Statuses = []inbox.Status{inbox.StatusPending, inbox.StatusDelivered}
	}
	if q.Priority != "" {
		if !q.Priority.Valid() {
			return rq, invalidf("priority: unknown %q (want low, medium, high or urgent)", q.Priority)
		}
		rq.Priorities = []inbox.Priority{q.Priority}
	}
	if q.Source != "" {
		if err := checkID(q.Source); err != nil {
			return rq, invalidf("source: %v", err)
		}
		rq.Sources = []string{q.Source}
	}
	if search {
		if strings.TrimSpace(q.Query) == "" {
			return rq, invalidf("query: required for search")
		}
		if len(q.Query) > maxSearchLen {
			return rq, invalidf("query: longer than %d bytes", maxSearchLen)
		}
		rq.Search = q.Query
	}
	if q.Limit != 0 {
		if q.Limit < 1 || q.Limit > MaxListLimit {
			return rq, invalidf("limit: want 1 to %d, got %d", MaxListLimit, q.Limit)
		}
		rq.Limit = q.Limit
	}
	return rq, nil
}

// readable is Mastra's isReadable: a record the agent has not looked at yet.
func readable(r inbox.Record) bool {
	return r.Status == inbox.StatusPending || r.Status == inbox.StatusDelivered
}

// InboxToolList is the tool's list (search false) and search: a page of thread k's
// records newest first, and every unread notification on it marked seen, so the backlog
// drains as the agent triages it. Messages (deliverAs message, queued-message) are listed
// but never marked: they are handed over as input, not read. A failed mark leaves the
// page with its stored statuses (logged), as Mastra's does.
func (s *Service) InboxToolList(ctx context.Context, k inbox.ThreadKey, q InboxToolQuery, search bool) (InboxToolPage, error) {
	rq, err := q.records(k, search)
	if err != nil {
		return InboxToolPage{}, err
	}
	limit := rq.Limit
	rq.Limit++ // one more tells hasMore
	recs, err := s.Records.ListThreadRecords(ctx, rq)
	if err != nil {
		return InboxToolPage{}, err
	}
	out := InboxToolPage{Notifications: recs, HasMore: len(recs) > limit}
	if out.HasMore {
		out.Notifications = recs[:limit]
	}
	var ids []string
	for _, r := range out.Notifications {
		if readable(r) && r.DeliverAs == inbox.DeliverAsNotification {
			ids = append(ids, r.ID)
		}
	}
	if len(ids) == 0 {
		return out, nil
	}
	if err := s.Records.MarkSeen(ctx, ids, s.now().UTC()); err != nil {
		s.log.Error("mark listed notifications seen", "thread", k.String(), "error", err.Error())
		return out, nil
	}
	// Read back what the mark made of them (a concurrent change wins).
	now, err := s.Records.ThreadRecordsByID(ctx, k, ids)
	if err != nil {
		s.log.Error("read marked notifications", "thread", k.String(), "error", err.Error())
		return out, nil
	}
	for _, r := range now {
		i := slices.IndexFunc(out.Notifications, func(o inbox.Record) bool { return o.ID == r.ID })
		if r.Status == inbox.StatusSeen {
			out.MarkedSeen++
		}
		out.Notifications[i] = r
	}
	return out, nil
}

// InboxToolReadRecords is the tool's read: id's record (not found when it is not on thread
// k), or the page of unread notifications q selects (newest first, as Mastra selects
// them). Each pending notification is sent to the thread, oldest first, as its full
// <notification> signal — into the active run, or waking an idle thread, as Mastra's
// sendSignal does by default — and marked seen; one delivered in full before is only
// marked seen. A message waiting its turn and a notification the target did not take
// are unavailable and stay as they were, for the dispatcher; anything else was read
// already.
func (s *Service) InboxToolReadRecords(ctx context.Context, k inbox.ThreadKey, id string, q InboxToolQuery) (InboxToolRead, error) {
	var recs []inbox.Record
	if id != "" {
		r, err := s.GetNotification(ctx, k, id)
		if err != nil {
			return InboxToolRead{}, err
		}
		recs = []inbox.Record{r}
	} else {
		rq, err := q.records(k, false)
		if err != nil {
			return InboxToolRead{}, err
		}
		if recs, err = s.Records.ListThreadRecords(ctx, rq); err != nil {
			return InboxToolRead{}, err
		}
		slices.Reverse(recs) // the thread reads them in the order they happened
	}
	var out InboxToolRead
	for _, r := range recs {
		switch {
		case !readable(r):
			out.AlreadyRead++
		case r.DeliverAs != inbox.DeliverAsNotification:
			out.Unavailable++
		case r.Status == inbox.StatusDelivered:
			if err := s.seen(ctx, k, r.ID, &out.MarkedSeen, &out.AlreadyRead); err != nil {
				return out, err
			}
		default:
			err := s.sendRecord(ctx, k, r)
			switch {
			case errors.Is(err, ErrSignalLogged):
				// A delivery pass handed it over meanwhile under the same id.
				if err := s.seen(ctx, k, r.ID, &out.MarkedSeen, &out.AlreadyRead); err != nil {
					return out, err
				}
			case err != nil:
				if ctx.Err() != nil {
					return out, ctx.Err()
				}
				s.log.Warn("read: notification not delivered", "thread", k.String(), "record_id", r.ID, "error", err.Error())
				out.Unavailable++
			default:
				moved := 0
				if err := s.seen(ctx, k, r.ID, &moved, &moved); err != nil {
					return out, err
				}
				out.Delivered++
			}
		}
	}
	out.Message = "No unread notifications needed delivery."
	if out.Delivered > 0 {
		plural := "s"
		if out.Delivered == 1 {
			plural = ""
		}
		out.Message = fmt.Sprintf("%d notification%s will now be delivered.", out.Delivered, plural)
	}
	return out, nil
}

// seen marks record id seen, counting it in marked, or in other when it had moved on
// (read, dismissed) meanwhile.
func (s *Service) seen(ctx context.Context, k inbox.ThreadKey, id string, marked, other *int) error {
	_, changed, err := s.Records.TransitionRecord(ctx, k, id, inbox.StatusSeen,
		[]inbox.Status{inbox.StatusPending, inbox.StatusDelivered}, s.now().UTC())
	if err != nil && !errors.Is(err, inbox.ErrNotFound) {
		return err
	}
	if changed {
		*marked++
	} else {
		*other++
	}
	return nil
}

// sendRecord hands r's full notification to thread k under the id a delivery pass would
// use (so the two never show it twice): into the live run, or waking the idle thread
// within max_concurrent_wakes (at the cap it stays pending, for the dispatcher).
func (s *Service) sendRecord(ctx context.Context, k inbox.ThreadKey, r inbox.Record) error {
	now := s.now().UTC()
	d := Handoff{Thread: k, Signal: NotificationSignal(r, RecordSignalID(r), now), Behavior: BehaviorDeliver,
		RecordIDs: []string{r.ID}, Attempt: r.Attempts + 1}
	live, err := s.Runs.Live(ctx, k)
	if err != nil {
		return err
	}
	woke := false
	if live != nil {
		d.RunID = live.ID
	} else {
		run, created, err := s.ownWake(ctx, k)
		if err != nil {
			return err
		}
		d.Behavior, d.RunID, woke = BehaviorWake, run.ID, created
	}
	_, err = s.Deliverer.Deliver(ctx, d)
	if err != nil && woke {
		s.abortWake(ctx, k, d.RunID)
	}
	return err
}

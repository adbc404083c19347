package admin

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/delivery"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/server"
	"github.com/signalgate/signalgate/telemetry"
)

var recordParams = []string{"agent", "resource", "thread", "status", "priority", "source", "kind", "text", "event", "limit", "cursor"}

func recordFilter(p *params) inbox.RecordFilter {
	return inbox.RecordFilter{
		Agent: p.text("agent"), Resource: p.text("resource"), Thread: p.text("thread"),
		Status: p.statuses("status"), Priority: p.priority("priority"), Source: p.text("source"),
		Kind: p.text("kind"), Text: p.text("text"), EventID: p.text("event"),
		Limit: p.limit(), Cursor: p.cursor(),
	}
}

// RecordPage is one page of GET /notifications.
type RecordPage struct {
	Notifications []inbox.Record `json:"notifications"`
	NextCursor    string         `json:"nextCursor,omitempty"`
}

// Notifications lists records newest first, every status unless filtered, with GET
// /notifications' query parameters. Unlike the agent's listing it never marks anything seen.
func (a *API) Notifications(ctx context.Context, q url.Values) (RecordPage, error) {
	p := readParams(q, recordParams...)
	f := recordFilter(p)
	if p.err != nil {
		return RecordPage{}, p.err
	}
	recs, next, err := a.d.Store.ListRecords(ctx, f)
	if err != nil {
		return RecordPage{}, err
	}
	if recs == nil {
		recs = []inbox.Record{}
	}
	return RecordPage{Notifications: recs, NextCursor: next}, nil
}

func (a *API) listNotifications(c echo.Context) error {
	page, err := a.Notifications(c.Request().Context(), c.QueryParams())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, page)
}

// NotificationDetail is a record with everything that explains its fate: the decision
// reason, attempts and last error (on the record), the event it came from, the delivery
// attempt log and the signals that carried it.
type NotificationDetail struct {
	inbox.Record
	Event      *inbox.EventRef    `json:"event"` // nil when retention deleted it
	Deliveries []delivery.Attempt `json:"deliveries"`
	Signals    []agent.Frame      `json:"signals"`
	// TraceURL links the trace of the event that made the record ("": no template or
	// no trace).
	TraceURL string `json:"traceUrl,omitempty"`
}

// MarshalJSON keeps the detail's fields beside the record's (inbox.Record.MarshalJSON
// would be promoted and drop them).
func (d NotificationDetail) MarshalJSON() ([]byte, error) {
	return d.Record.JSONWith(struct {
		Event      *inbox.EventRef    `json:"event"`
		Deliveries []delivery.Attempt `json:"deliveries"`
		Signals    []agent.Frame      `json:"signals"`
		TraceURL   string             `json:"traceUrl,omitempty"`
	}{d.Event, d.Deliveries, d.Signals, d.TraceURL})
}

func (a *API) getNotification(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	out, err := a.Notification(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, out)
}

// Notification is GET /notifications/{id}.
func (a *API) Notification(ctx context.Context, id string) (NotificationDetail, error) {
	id, err := checkID("id", id)
	if err != nil {
		return NotificationDetail{}, err
	}
	rec, err := a.d.Store.GetRecord(ctx, id)
	if err != nil {
		return NotificationDetail{}, notFound(err, "notification", id)
	}
	out := NotificationDetail{Record: rec, TraceURL: telemetry.TraceURL(a.d.TraceURL, rec.TraceID())}
	if rec.EventID != "" {
		ev, err := a.d.Store.GetEvent(ctx, rec.EventID)
		switch {
		case err == nil:
			out.Event = &inbox.EventRef{ID: ev.ID, Type: ev.Type, Status: ev.Status, Error: ev.Error, ReceivedAt: ev.ReceivedAt}
		case !errors.Is(err, inbox.ErrNotFound):
			return NotificationDetail{}, err
		}
	}
	if out.Deliveries, err = a.d.Store.ListAttempts(ctx, delivery.AttemptFilter{RecordID: id, Limit: inbox.MaxPageSize}); err != nil {
		return NotificationDetail{}, err
	}
	if out.Signals, err = a.d.Store.RecordSignals(ctx, rec.Thread, id); err != nil {
		return NotificationDetail{}, err
	}
	if out.Deliveries == nil {
		out.Deliveries = []delivery.Attempt{}
	}
	if out.Signals == nil {
		out.Signals = []agent.Frame{}
	}
	return out, nil
}

// dismiss is POST /notifications/{id}/dismiss.
func (a *API) dismiss(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	rec, err := a.Dismiss(c.Request().Context(), id, tokenName(c))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, rec)
}

// Dismiss is the agent's dismiss on the operator's behalf: pending, delivered, seen and
// failed records can be dismissed (409 otherwise). by names the admin token in the log.
func (a *API) Dismiss(ctx context.Context, id, by string) (inbox.Record, error) {
	id, err := checkID("id", id)
	if err != nil {
		return inbox.Record{}, err
	}
	rec, err := a.d.Store.GetRecord(ctx, id)
	if err != nil {
		return inbox.Record{}, notFound(err, "notification", id)
	}
	from := []inbox.Status{inbox.StatusPending, inbox.StatusSnoozed, inbox.StatusDelivered, inbox.StatusSeen, inbox.StatusFailed}
	rec, changed, err := a.d.Store.TransitionRecord(ctx, rec.Thread, id, inbox.StatusDismissed, from, a.d.Now().UTC())
	if err != nil {
		return inbox.Record{}, notFound(err, "notification", id)
	}
	if !changed && rec.Status != inbox.StatusDismissed {
		return inbox.Record{}, server.NewError(http.StatusConflict, "conflict", "notification %q is %s and cannot be dismissed", id, rec.Status)
	}
	a.log.Info("notification dismissed", "token", by, "record_id", id, "thread", rec.Thread.String())
	return rec, nil
}

// Snooze is the agent's snooze on the operator's behalf: a pending record is hidden
// until `until` (in the future, at most 30 days ahead; 400 naming the field otherwise),
// then decided again by the policy; any other record is 409. by names the admin token
// in the log.
func (a *API) Snooze(ctx context.Context, id string, until time.Time, by string) (inbox.Record, error) {
	id, err := checkID("id", id)
	if err != nil {
		return inbox.Record{}, err
	}
	now := a.d.Now().UTC()
	if err := inbox.CheckSnoozeUntil(until, now); err != nil {
		return inbox.Record{}, server.BadRequest("%v", err)
	}
	rec, err := a.d.Store.GetRecord(ctx, id)
	if err != nil {
		return inbox.Record{}, notFound(err, "notification", id)
	}
	rec, err = a.d.Store.SnoozeRecord(ctx, rec.Thread, id, until.UTC(), now)
	if errors.Is(err, inbox.ErrNotSnoozable) {
		what := string(rec.Status)
		switch {
		case rec.NetKey != "":
			what += " in a net-state lane (a newer state supersedes it)"
		case rec.Status == inbox.StatusPending:
			what += " and being delivered at this moment (ask again in a moment)"
		}
		return inbox.Record{}, server.NewError(http.StatusConflict, "conflict", "notification %q is %s: only a pending notification can be snoozed", id, what)
	}
	if err != nil {
		return inbox.Record{}, notFound(err, "notification", id)
	}
	a.log.Info("notification snoozed", "token", by, "record_id", id, "thread", rec.Thread.String(), "until", until.UTC().Format(time.RFC3339))
	return rec, nil
}

// redeliverable are the statuses a record may be queued again from.
func redeliverable() []inbox.Status { return []inbox.Status{inbox.StatusFailed, inbox.StatusDelivered} }

// redeliver is POST /notifications/{id}/redeliver.
func (a *API) redeliver(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	rec, err := a.Redeliver(c.Request().Context(), id, tokenName(c))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, rec)
}

// Redeliver makes a failed or delivered record pending again, due now, in a fresh round
// of attempts (409 for another status); the policy's decision stays beside it.
func (a *API) Redeliver(ctx context.Context, id, by string) (inbox.Record, error) {
	id, err := checkID("id", id)
	if err != nil {
		return inbox.Record{}, err
	}
	now := a.d.Now().UTC()
	rec, changed, err := a.d.Store.RequeueRecord(ctx, id, redeliverable(), requeueAction(by, now), now)
	if err != nil {
		return inbox.Record{}, notFound(err, "notification", id)
	}
	if !changed {
		return inbox.Record{}, server.NewError(http.StatusConflict, "conflict",
			"notification %q is %s: only failed or delivered notifications are redelivered", id, rec.Status)
	}
	a.d.Notify([]inbox.ThreadKey{rec.Thread})
	a.log.Info("notification redelivered", "token", by, "record_id", id, "thread", rec.Thread.String())
	return rec, nil
}

// requeueAction is the operator's action kept beside the record's policy decision.
func requeueAction(by string, at time.Time) string {
	return fmt.Sprintf("redelivered by %q at %s → deliver now", by, at.Format(time.RFC3339))
}

// RedeliverResult lists the dead letters queued again.
type RedeliverResult struct {
	Redelivered []string `json:"redelivered"`
	// More is set when more failed records matched than the limit.
	More bool `json:"more"`
}

// redeliverFailed is POST /notifications/redeliver with the filters of GET
// /notifications (status is always failed): up to limit dead letters are queued again.
// Requeued records leave the failed set, so repeating the call continues.
func (a *API) redeliverFailed(c echo.Context) error {
	out, err := a.RedeliverFailed(c.Request().Context(), c.QueryParams(), tokenName(c))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, out)
}

// RedeliverFailed queues up to limit failed records matching q (GET /notifications'
// filters but status and cursor) again.
func (a *API) RedeliverFailed(ctx context.Context, q url.Values, by string) (RedeliverResult, error) {
	allowed := make([]string, 0, len(recordParams))
	for _, name := range recordParams {
		if name != "status" && name != "cursor" {
			allowed = append(allowed, name)
		}
	}
	p := readParams(q, allowed...)
	f := recordFilter(p)
	if p.err != nil {
		return RedeliverResult{}, p.err
	}
	f.Status = []inbox.Status{inbox.StatusFailed}
	recs, next, err := a.d.Store.ListRecords(ctx, f)
	if err != nil {
		return RedeliverResult{}, err
	}
	out := RedeliverResult{Redelivered: []string{}, More: next != ""}
	var threads []inbox.ThreadKey
	seen := map[inbox.ThreadKey]bool{}
	now := a.d.Now().UTC()
	action := requeueAction(by, now)
	for _, r := range recs {
		_, changed, err := a.d.Store.RequeueRecord(ctx, r.ID, []inbox.Status{inbox.StatusFailed}, action, now)
		if err != nil && !errors.Is(err, inbox.ErrNotFound) { // deleted meanwhile: nothing to do
			return RedeliverResult{}, err
		}
		if !changed {
			continue
		}
		out.Redelivered = append(out.Redelivered, r.ID)
		if !seen[r.Thread] {
			seen[r.Thread] = true
			threads = append(threads, r.Thread)
		}
	}
	if len(threads) > 0 {
		a.d.Notify(threads)
	}
	a.log.Info("failed notifications redelivered", "token", by, "records", len(out.Redelivered), "more", out.More)
	return out, nil
}

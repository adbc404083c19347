package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/signalgate/signalgate/inbox"
)

// APISource is the event source of every notification created through the agent API,
// and the record source when the body names none. The event's source is never the body's:
// a body saying "slack" must not share a Slack connector's delivery ids (dedupe) nor pass
// for a Slack message where the event's kind is what counts.
const APISource = "agent-api"

type notificationRequest struct {
	inbox.NotificationInput
	DeliverAs string `json:"deliverAs"`
	// DeliveryID makes a retried create a no-op (also the Idempotency-Key header).
	DeliveryID string `json:"deliveryId"`
	// IfIdle carries Mastra's ifIdle.streamOptions for the wake the notification may
	// start (stored on the record; behavior is the policy's, so it is not taken here).
	IfIdle *struct {
		StreamOptions map[string]any `json:"streamOptions"`
	} `json:"ifIdle"`
}

// NotificationResult is what creating a notification did, in Mastra's shape (accepted,
// notificationId, record, decision) beside the gateway's (eventId, recordId, duplicate,
// merged, net).
type NotificationResult struct {
	// Accepted is true when the decision sends a signal now: a delivery or a summary due
	// at once. The signal itself goes out from the dispatcher, after this answer, so
	// Mastra's runId and signal are not part of it (the record's deliveredSignalId and
	// summarySignalId name the signals once sent).
	Accepted       bool   `json:"accepted"`
	NotificationID string `json:"notificationId,omitempty"`
	// Record is the stored record (absent for a duplicate delivery, which changed nothing).
	Record    *inbox.Record `json:"record,omitempty"`
	EventID   string        `json:"eventId"`
	Duplicate bool          `json:"duplicate"`
	RecordID  string        `json:"recordId,omitempty"`
	Merged    bool          `json:"merged"`
	// Decision is absent for a duplicate delivery (nothing was decided).
	Decision *inbox.Decision `json:"decision,omitempty"`
	// Created is true when a new record was made (201 on the agent API).
	Created bool `json:"-"`
	// Net is the net-state verdict when the notification has a netKey.
	Net *inbox.NetDecision `json:"net,omitempty"`
}

// MaxNotificationBatch bounds the notifications of one create.
const MaxNotificationBatch = 100

// CreateNotification takes the connectors' path: body (the agent API's JSON request) becomes
// one event (source the body's source or agent-api, connector the agent id) with one
// notification for thread k, stored and decided in one transaction; the dispatcher is
// woken by the inbox. idempotencyKey stands in for a body without deliveryId.
func (s *Service) CreateNotification(ctx context.Context, k inbox.ThreadKey, body []byte, idempotencyKey string) (NotificationResult, error) {
	var req notificationRequest
	if err := DecodeJSON(body, &req, false); err != nil {
		return NotificationResult{}, err
	}
	n, err := s.notificationOf(k, req)
	if err != nil {
		return NotificationResult{}, err
	}
	delivery := req.DeliveryID
	if delivery == "" {
		delivery = idempotencyKey
	}
	if err := checkOptionalID(delivery); err != nil {
		return NotificationResult{}, invalidf("deliveryId: %v", err)
	}
	ev := &inbox.Event{Source: APISource, Connector: k.Agent, DeliveryID: delivery, Type: "notification", Body: body}
	out, err := s.ingestNotifications(ctx, k, ev, []inbox.Notification{n})
	if err != nil {
		return NotificationResult{}, err
	}
	return out[0], nil
}

// CreateNotifications takes a JSON array of up to 100 create bodies for thread k, as
// Mastra's sendNotificationSignal takes an array: one event (source agent-api) whose
// notifications are stored and decided in one transaction, answered in input order. A
// batch is retried as a whole with idempotencyKey; its items carry no deliveryId.
func (s *Service) CreateNotifications(ctx context.Context, k inbox.ThreadKey, body []byte, idempotencyKey string) ([]NotificationResult, error) {
	var raws []json.RawMessage
	if err := json.Unmarshal(body, &raws); err != nil {
		return nil, invalidf("request body: want a JSON object or an array of them: %s", describeJSONError(err))
	}
	if len(raws) == 0 || len(raws) > MaxNotificationBatch {
		return nil, invalidf("request body: an array of 1 to %d notifications, got %d", MaxNotificationBatch, len(raws))
	}
	ns := make([]inbox.Notification, len(raws))
	for i, raw := range raws {
		var req notificationRequest
		err := DecodeJSON(raw, &req, false)
		if err == nil && req.DeliveryID != "" {
			err = invalidf("deliveryId: not in a batch (the Idempotency-Key header covers the whole batch)")
		}
		if err == nil {
			ns[i], err = s.notificationOf(k, req)
		}
		var ae *Error
		if errors.As(err, &ae) {
			return nil, NewError(ae.Kind, ae.Code, "[%d]: %s", i, ae.Message)
		} else if err != nil {
			return nil, err
		}
	}
	if err := checkOptionalID(idempotencyKey); err != nil {
		return nil, invalidf("Idempotency-Key: %v", err)
	}
	ev := &inbox.Event{Source: APISource, Connector: k.Agent, DeliveryID: idempotencyKey, Type: "notification", Body: body}
	return s.ingestNotifications(ctx, k, ev, ns)
}

// notificationOf checks one create body and makes it thread k's notification.
func (s *Service) notificationOf(k inbox.ThreadKey, req notificationRequest) (inbox.Notification, error) {
	cfg := s.agents[k.Agent]
	if len(req.Summary) > int(cfg.MaxContents) {
		return inbox.Notification{}, tooLargef("summary is %d bytes, over the limit of %d bytes", len(req.Summary), cfg.MaxContents)
	}
	attrs, err := NormalizeAttributes(req.Attributes)
	if err != nil {
		return inbox.Notification{}, invalidf("attributes: %v", err)
	}
	pr, err := inbox.ParsePriority(req.Priority)
	if err != nil {
		return inbox.Notification{}, invalidf("priority: %v", err)
	}
	if _, ok := req.Metadata[MetaReplyTo]; ok {
		// Where answers go is the connectors' to say, from what they verified: a place
		// named here would let the agent post wherever it likes as the gateway.
		return inbox.Notification{}, invalidf("metadata.replyTo: reserved; only the gateway's connectors say where answers go (a notification created by an agent has no place to answer)")
	}
	if req.Source == "" {
		req.Source = APISource
	}
	meta := apiProvenance(req.Metadata, k.Agent)
	if req.DeliverAs == inbox.DeliverAsMessage || req.DeliverAs == inbox.DeliverAsQueued {
		// A message is user-authored input and says who wrote it, as a route's does;
		// attributes the caller gives win.
		name, _ := meta[MetaAuthor].(string)
		attrs = inbox.Attributes{}.Set("name", name).Set("from", req.Source).Merge(attrs)
	}
	n := inbox.Notification{
		Thread: k, Source: req.Source, SourceID: req.SourceID, Kind: req.Kind, Priority: pr, Summary: req.Summary, Payload: req.Payload,
		DedupeKey: req.DedupeKey, CoalesceKey: req.CoalesceKey, Attributes: attrs, Metadata: meta, DeliverAs: req.DeliverAs,
		NetKey: req.NetKey, State: req.State, RestState: req.RestState,
	}
	if req.IfIdle != nil {
		n.StreamOptions = req.IfIdle.StreamOptions
	}
	if req.Priority == "" {
		n.Priority = "" // a merge keeps the record's priority; a new record defaults to medium
	}
	if err := errors.Join(n.Validate(), n.CheckBounds()); err != nil {
		return inbox.Notification{}, invalidf("%s", strings.ReplaceAll(err.Error(), "\n", "; "))
	}
	return n, nil
}

// ingestNotifications stores ev with ns and answers one result per notification, in
// order, each with its stored record.
func (s *Service) ingestNotifications(ctx context.Context, k inbox.ThreadKey, ev *inbox.Event, ns []inbox.Notification) ([]NotificationResult, error) {
	res, err := s.Inbox.Ingest(ctx, ev, ns)
	if err != nil {
		return nil, err
	}
	out := make([]NotificationResult, len(ns))
	ids := make([]string, 0, len(res.Records))
	for i := range out {
		out[i] = NotificationResult{EventID: res.EventID, Duplicate: res.Duplicate}
		if i >= len(res.Records) {
			continue // a duplicate delivery changed nothing
		}
		r := res.Records[i]
		out[i].RecordID, out[i].NotificationID, out[i].Merged, out[i].Decision, out[i].Net = r.RecordID, r.RecordID, r.Merged, &r.Decision, r.Net
		out[i].Created = !r.Merged
		out[i].Accepted = sendsNow(r.Decision, ev.ReceivedAt)
		ids = append(ids, r.RecordID)
	}
	if len(ids) == 0 {
		return out, nil
	}
	recs, err := s.Records.ThreadRecordsByID(ctx, k, ids)
	if err != nil {
		return nil, fmt.Errorf("read the created records: %w", err)
	}
	byID := make(map[string]*inbox.Record, len(recs))
	for i := range recs {
		byID[recs[i].ID] = &recs[i]
	}
	for i := range out {
		out[i].Record = byID[out[i].RecordID]
	}
	return out, nil
}

// sendsNow reports whether decision d sends a signal at once: a delivery or a summary
// due at now.
func sendsNow(d inbox.Decision, now time.Time) bool {
	due := func(t *time.Time) bool { return t != nil && !t.After(now) }
	switch d.Action {
	case inbox.ActionDeliver, inbox.ActionDefer:
		return due(d.DeliverAt)
	case inbox.ActionSummarize:
		return due(d.SummaryAt)
	}
	return false
}

// Provenance metadata of notifications created through the agent API; the keys are the
// connectors' (verified_by, author).
const (
	MetaVerifiedBy       = "verified_by"
	MetaAuthor           = "author"
	VerifiedByAgentToken = "agent-token"
)

// apiProvenance is the body's metadata with the provenance the gateway vouches for: the
// caller proved the agent's token (verified_by, which the body cannot change) and is
// the author unless the body names one (an agent relaying a person's message).
func apiProvenance(body map[string]any, agentID string) map[string]any {
	meta := make(map[string]any, len(body)+2)
	for k, v := range body {
		meta[k] = v
	}
	if author, ok := meta[MetaAuthor].(string); !ok || author == "" {
		meta[MetaAuthor] = agentID
	}
	meta[MetaVerifiedBy] = VerifiedByAgentToken
	return meta
}

func checkOptionalID(v string) error {
	if v == "" {
		return nil
	}
	return checkID(v)
}

// Listing limits.
const (
	defaultListLimit = 50
	// MaxListLimit is the largest page a listing returns.
	MaxListLimit = 200
)

// InboxPage is one page of a thread's inbox.
type InboxPage struct {
	Notifications []inbox.Record `json:"notifications"`
	NextCursor    string         `json:"nextCursor,omitempty"`
}

// ListParams select a page of a thread's inbox, as GET …/notifications takes them.
type ListParams struct {
	Status  string   // "" for pending and delivered, "all", or a comma list of statuses
	Sources []string // any of these sources; none: every source
	Kinds   []string // any of these kinds; none: every kind
	Search  string   // case-insensitive substring of summary, kind or source
	Limit   int      // 1 to 200; 0 for the default, 50
	Cursor  string   // nextCursor of the previous page
}

// Bounds of a listing's filters: they become query arguments.
const (
	maxFilterValues = 20
	maxSearchLen    = 512
)

// ListInbox lists thread k's records newest first: by default the pending and delivered
// ones, filtered by source, kind and a search, continuing after a cursor. Listing and
// searching change nothing (unlike Mastra's inbox tool, which InboxToolList mirrors): a
// pending record keeps its scheduled delivery until the agent reads it or moves it.
func (s *Service) ListInbox(ctx context.Context, k inbox.ThreadKey, p ListParams) (InboxPage, error) {
	q := RecordQuery{Thread: k, Statuses: []inbox.Status{inbox.StatusPending, inbox.StatusDelivered}, Search: p.Search, Limit: defaultListLimit}
	if p.Status != "" {
		st, err := parseStatuses(p.Status)
		if err != nil {
			return InboxPage{}, err
		}
		q.Statuses = st
	}
	var err error
	if q.Sources, err = filterValues("source", p.Sources); err != nil {
		return InboxPage{}, err
	}
	if q.Kinds, err = filterValues("kind", p.Kinds); err != nil {
		return InboxPage{}, err
	}
	if len(p.Search) > maxSearchLen {
		return InboxPage{}, invalidf("q: longer than %d bytes", maxSearchLen)
	}
	if p.Limit != 0 {
		if p.Limit < 1 || p.Limit > MaxListLimit {
			return InboxPage{}, invalidf("limit: want 1 to %d, got %d", MaxListLimit, p.Limit)
		}
		q.Limit = p.Limit
	}
	if p.Cursor != "" {
		cur, err := ParseRecordCursor(p.Cursor)
		if err != nil {
			return InboxPage{}, invalidf("%v", err)
		}
		q.After = &cur
	}
	limit := q.Limit
	q.Limit++ // one more tells whether there is a next page
	recs, err := s.Records.ListThreadRecords(ctx, q)
	if err != nil {
		return InboxPage{}, err
	}
	out := InboxPage{Notifications: recs}
	if len(recs) > limit {
		out.Notifications = recs[:limit]
		last := out.Notifications[limit-1]
		out.NextCursor = RecordCursor{CreatedAt: last.CreatedAt, ID: last.ID}.String()
	}
	if out.Notifications == nil {
		out.Notifications = []inbox.Record{}
	}
	return out, nil
}

func filterValues(name string, vs []string) ([]string, error) {
	if len(vs) > maxFilterValues {
		return nil, invalidf("%s: at most %d values", name, maxFilterValues)
	}
	for _, v := range vs {
		if err := checkID(v); err != nil {
			return nil, invalidf("%s: %v", name, err)
		}
	}
	return vs, nil
}

func parseStatuses(raw string) ([]inbox.Status, error) {
	if raw == "all" {
		return nil, nil
	}
	var out []inbox.Status
	for _, s := range strings.Split(raw, ",") {
		st := inbox.Status(strings.TrimSpace(s))
		if !st.Valid() {
			return nil, invalidf("status: unknown %q (want all or a comma list of pending, delivered, seen, dismissed, archived, discarded, failed, superseded, snoozed)", st)
		}
		out = append(out, st)
	}
	return out, nil
}

func (s *Service) markSeen(ctx context.Context, recs []inbox.Record) error {
	var ids []string
	for _, r := range recs {
		if r.Status == inbox.StatusPending || r.Status == inbox.StatusSnoozed || r.Status == inbox.StatusDelivered {
			ids = append(ids, r.ID)
		}
	}
	return s.Records.MarkSeen(ctx, ids, s.now().UTC())
}

// maxRead bounds one read.
const maxRead = 100

// ReadNotification is a record read in full with the XML of its full notification.
type ReadNotification struct {
	inbox.Record
	XML string `json:"xml"`
}

// MarshalJSON keeps xml beside the record's fields (inbox.Record.MarshalJSON would be
// promoted and drop it).
func (n ReadNotification) MarshalJSON() ([]byte, error) {
	return n.Record.JSONWith(struct {
		XML string `json:"xml"`
	}{n.XML})
}

// ReadInbox returns unread notifications of thread k in full — every field, payload
// included, and the XML of the full notification as the model would see it — and marks
// them seen, so the dispatcher will not deliver them as well. Unread means pending (not
// yet delivered in full, summarised or not), oldest first, at most 100; ids reads those
// records instead, whatever their status (404 naming any not on this thread).
func (s *Service) ReadInbox(ctx context.Context, k inbox.ThreadKey, ids []string) ([]ReadNotification, error) {
	if len(ids) > maxRead {
		return nil, invalidf("ids: at most %d per read", maxRead)
	}
	var recs []inbox.Record
	var err error
	if len(ids) > 0 {
		recs, err = s.Records.ThreadRecordsByID(ctx, k, ids)
		if err != nil {
			return nil, err
		}
		if len(recs) != len(ids) {
			return nil, notFoundf("notifications not found on this thread: %s", strings.Join(missing(ids, recs), ", "))
		}
	} else {
		recs, err = s.Records.ListThreadRecords(ctx, RecordQuery{Thread: k, Statuses: []inbox.Status{inbox.StatusPending}, Oldest: true, Limit: maxRead})
		if err != nil {
			return nil, err
		}
	}
	now := s.now().UTC()
	out := make([]ReadNotification, len(recs))
	for i, r := range recs {
		out[i] = ReadNotification{Record: r, XML: RenderXML(NotificationSignal(r, "", now))}
	}
	if err := s.markSeen(ctx, recs); err != nil {
		return nil, err
	}
	return out, nil
}

func missing(ids []string, recs []inbox.Record) []string {
	have := map[string]bool{}
	for _, r := range recs {
		have[r.ID] = true
	}
	var out []string
	for _, id := range ids {
		if !have[id] {
			out = append(out, strconv.Quote(id))
		}
	}
	return out
}

// GetNotification is record id of thread k (not found when it is on another thread).
func (s *Service) GetNotification(ctx context.Context, k inbox.ThreadKey, id string) (inbox.Record, error) {
	recs, err := s.Records.ThreadRecordsByID(ctx, k, []string{id})
	if err != nil {
		return inbox.Record{}, err
	}
	if len(recs) == 0 {
		return inbox.Record{}, notFoundf("notification %q not found on this thread", id)
	}
	return recs[0], nil
}

// transition gives an action's target status and the statuses it may leave. Seen never
// revives a dismissed or archived record; archive takes anything but a discarded one. A
// snoozed record may be seen, dismissed or archived (its snooze ends with it).
func transition(action string) (to inbox.Status, from []inbox.Status, ok bool) {
	switch action {
	case "seen":
		return inbox.StatusSeen, []inbox.Status{inbox.StatusPending, inbox.StatusSnoozed, inbox.StatusDelivered}, true
	case "dismiss":
		return inbox.StatusDismissed, []inbox.Status{inbox.StatusPending, inbox.StatusSnoozed, inbox.StatusDelivered, inbox.StatusSeen,
			inbox.StatusFailed}, true
	case "archive":
		return inbox.StatusArchived, []inbox.Status{inbox.StatusPending, inbox.StatusSnoozed, inbox.StatusDelivered, inbox.StatusSeen,
			inbox.StatusDismissed, inbox.StatusFailed, inbox.StatusSuperseded}, true
	}
	return "", nil, false
}

// ActOn moves record id of thread k: action seen, dismiss or archive. Repeating an
// action is fine; an action the record's status does not allow is 409, a record not on
// this thread 404.
func (s *Service) ActOn(ctx context.Context, k inbox.ThreadKey, id, action string) (inbox.Record, error) {
	if err := checkID(id); err != nil {
		return inbox.Record{}, invalidf("id: %v", err)
	}
	to, from, ok := transition(action)
	if !ok {
		return inbox.Record{}, notFoundf("unknown action %q (want seen, dismiss or archive)", action)
	}
	rec, changed, err := s.Records.TransitionRecord(ctx, k, id, to, from, s.now().UTC())
	if errors.Is(err, inbox.ErrNotFound) {
		return inbox.Record{}, notFoundf("notification %q not found on this thread", id)
	}
	if err != nil {
		return inbox.Record{}, err
	}
	if !changed && rec.Status != to {
		return inbox.Record{}, NewError(KindConflict, "conflict", "notification %q is %s and cannot be marked %s", id, rec.Status, to)
	}
	return rec, nil
}

// Snooze hides pending record id of thread k until `until` (RFC 3339, in the future, at
// most 30 days ahead; 400 naming the field otherwise): it is not delivered, summarised
// or counted as backlog until then, when the policy decides it again as if it had just
// arrived. A record that is not pending (or is a net-state lane's, or is due while a
// delivery pass holds the thread) is 409, one not on this thread 404.
func (s *Service) Snooze(ctx context.Context, k inbox.ThreadKey, id, until string) (inbox.Record, error) {
	if err := checkID(id); err != nil {
		return inbox.Record{}, invalidf("id: %v", err)
	}
	now := s.now().UTC()
	at, err := inbox.ParseSnoozeUntil(until, now)
	if err != nil {
		return inbox.Record{}, invalidf("%v", err)
	}
	rec, err := s.Records.SnoozeRecord(ctx, k, id, at, now)
	switch {
	case errors.Is(err, inbox.ErrNotFound):
		return inbox.Record{}, notFoundf("notification %q not found on this thread", id)
	case errors.Is(err, inbox.ErrNotSnoozable) && rec.NetKey != "" && rec.Status == inbox.StatusPending:
		return inbox.Record{}, NewError(KindConflict, "conflict",
			"notification %q reports the state of %q, which a newer state supersedes: it cannot be snoozed (dismiss it instead)", id, rec.NetKey)
	case errors.Is(err, inbox.ErrNotSnoozable) && rec.Status == inbox.StatusPending:
		return inbox.Record{}, NewError(KindConflict, "conflict",
			"notification %q is being delivered at this moment: ask again in a moment (it may then be delivered)", id)
	case errors.Is(err, inbox.ErrNotSnoozable):
		return inbox.Record{}, NewError(KindConflict, "conflict", "notification %q is %s: only a pending notification can be snoozed", id, rec.Status)
	case err != nil:
		return inbox.Record{}, err
	}
	return rec, nil
}

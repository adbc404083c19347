package admin

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/condition"
	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/server"
)

// Sample is what explain looks at: a stored event by id, or an event as a connector
// would receive it. GET /events/{id} output is a valid sample as it is.
type Sample struct {
	EventID    string            `json:"eventId,omitempty"`
	Source     string            `json:"source,omitempty"`
	Connector  string            `json:"connector,omitempty"`
	Type       string            `json:"type,omitempty"` // else from the headers (X-GitHub-Event)
	DeliveryID string            `json:"deliveryId,omitempty"`
	Headers    map[string]string `json:"headers,omitempty"`
	// Body is the raw body as a JSON string, or the JSON document itself.
	Body       json.RawMessage `json:"body,omitempty"`
	BodyBase64 string          `json:"bodyBase64,omitempty"`
}

// Explanation answers "why did (or didn't) my agent hear about this?" for one event.
type Explanation struct {
	At    time.Time      `json:"at"`
	Event ExplainedEvent `json:"event"`
	// DuplicateOf is the stored event with the sample's delivery id: delivered for real,
	// the sample would be acknowledged as a redelivery and change nothing.
	DuplicateOf string            `json:"duplicateOf,omitempty"`
	Status      inbox.EventStatus `json:"status"`
	Reason      string            `json:"reason,omitempty"`
	Items       []ExplainedItem   `json:"items"`
	Routes      []RouteResult     `json:"routes"`
	// RoutesNote says why Routes is empty: the connector produced nothing to route (and
	// why), or no routes are configured.
	RoutesNote    string    `json:"routesNote,omitempty"`
	Notifications []Outcome `json:"notifications"`
}

// ExplainedEvent names the event explained.
type ExplainedEvent struct {
	ID         string `json:"id,omitempty"` // a stored event
	Source     string `json:"source"`
	Connector  string `json:"connector"`
	Type       string `json:"type,omitempty"`
	DeliveryID string `json:"deliveryId,omitempty"`
}

// ExplainedItem is what the connector made of the event, with the fields routes match.
type ExplainedItem struct {
	Kind        string           `json:"kind"`
	Priority    inbox.Priority   `json:"priority,omitempty"`
	Summary     string           `json:"summary"`
	DedupeKey   string           `json:"dedupeKey,omitempty"`
	CoalesceKey string           `json:"coalesceKey,omitempty"`
	Attributes  inbox.Attributes `json:"attributes"`
	Fields      map[string]any   `json:"fields"` // route match keys (snake_case) with values
	Skip        string           `json:"skip,omitempty"`
	NetKey      string           `json:"netKey,omitempty"`
	State       string           `json:"state,omitempty"`
	RestState   string           `json:"restState,omitempty"`
}

// RouteResult is one configured route against one item, in config order.
type RouteResult struct {
	Route   string           `json:"route"`
	Item    int              `json:"item"`
	Matched bool             `json:"matched"`
	Thread  *inbox.ThreadKey `json:"thread,omitempty"`
	Error   string           `json:"error,omitempty"` // matched, but the thread did not render
	// SameThreadAs names an earlier route that already feeds this thread: one
	// notification per item and thread.
	SameThreadAs string `json:"sameThreadAs,omitempty"`
	// When is the route's match.when, evaluated once the other match fields held.
	When string `json:"when,omitempty"`
	// Watch is the watch that matched (route "watch"), or that let a `watched: true`
	// route keep its thread.
	Watch string `json:"watch,omitempty"`
	// Unwatched: a `watched: true` route whose thread no live watch of the event has.
	Unwatched bool `json:"unwatched,omitempty"`
}

// Outcome is what one notification would do in the inbox now.
type Outcome struct {
	Route        string             `json:"route"`
	Thread       inbox.ThreadKey    `json:"thread"`
	Notification inbox.Notification `json:"notification"`
	Presence     inbox.Presence     `json:"presence"`
	ActiveRun    *agent.ActiveRun   `json:"activeRun,omitempty"`
	// Merge is the pending record it would dedupe or coalesce into.
	Merge *Merge `json:"merge,omitempty"`
	// Net is the net-state verdict of a notification with a netKey (which never merges).
	Net      *inbox.NetDecision `json:"net,omitempty"`
	Decision inbox.Decision     `json:"decision"`
	// Record is the record as it would be after this event (no id when new).
	Record inbox.Record `json:"record"`
	// Wake is the thread's wake budget and its agent's wake cap, when configured.
	Wake *ExplainedWake `json:"wake,omitempty"`
}

// Merge names the pending record a notification would merge into and why.
type Merge struct {
	RecordID string       `json:"recordId"`
	On       string       `json:"on"` // dedupeKey or coalesceKey
	Record   inbox.Record `json:"record"`
}

// Explainer dry-runs events through the connectors, today's routes and the policy
// against the current inbox and presence. It never writes.
type Explainer struct {
	st      ExplainStore
	sources []string // the integration kinds' sources, for the error naming them
	policy  *inbox.Policy
	router  *connectors.Router
	parsers Parsers
	wakes   map[string]agent.WakeSettings
	watches connectors.WatchLookup
	holds   inbox.Holder // the silences; nil: none
	now     func() time.Time
}

// NewExplainer builds an explainer from the parts of d it reads: Router, Policy,
// Parsers and Now, over st (d.Store, or an empty inbox for a database without schema).
func NewExplainer(st ExplainStore, d Deps) (*Explainer, error) {
	if st == nil {
		return nil, errors.New("admin: a store is required")
	}
	x := &Explainer{st: st, sources: d.Sources, policy: d.Policy, router: d.Router, parsers: d.Parsers, wakes: d.Wakes,
		watches: d.WatchLookup, holds: d.Holder, now: d.Now}
	var err error
	if x.router == nil {
		if x.router, err = connectors.NewRouter(nil, nil); err != nil {
			return nil, err
		}
	}
	if x.policy == nil {
		if x.policy, err = inbox.NewPolicy(inbox.PolicyConfig{}); err != nil {
			return nil, err
		}
	}
	if x.now == nil {
		x.now = time.Now
	}
	return x, nil
}

// Explain explains s. Bad samples are 400s naming the field; an unknown event id 404.
func (x *Explainer) Explain(ctx context.Context, s Sample) (*Explanation, error) {
	ev, err := x.event(ctx, s)
	if err != nil {
		return nil, err
	}
	now := x.now().UTC()
	out := &Explanation{At: now, Event: ExplainedEvent{ID: ev.ID, Source: ev.Source, Connector: ev.Connector, Type: ev.Type},
		Items: []ExplainedItem{}, Routes: []RouteResult{}, Notifications: []Outcome{}}
	items, status, reason := parseEvent(ctx, x.parsers, ev)
	out.Event.DeliveryID = deliveryID(ev, items)
	if out.Event.Type == "" {
		out.Event.Type = eventType(ev, items)
	}
	if ev.ID == "" && out.Event.DeliveryID != "" {
		id, ok, err := x.st.EventByDelivery(ctx, inbox.CleanText(ev.Source), inbox.CleanText(ev.Connector), inbox.StoredKey(out.Event.DeliveryID))
		if err != nil {
			return nil, err
		}
		if ok {
			out.DuplicateOf = id
		}
	}
	payload := ev.ExprPayload() // as routes' and rules' `when` see it on ingest
	// One evaluation of the routes and watches, under the event's expression budget as
	// on ingest; a sample is received now.
	at := ev.ReceivedAt
	if at.IsZero() {
		at = now
	}
	routing, err := x.router.RouteWatched(ctx, x.watches, payload, items, at)
	if err != nil {
		return nil, err
	}
	ns := routing.Notifications
	out.Status, out.Reason = connectors.EventStatus(status, reason, items, ns, routing.Errs)
	for i, it := range items {
		out.Items = append(out.Items, explainItem(it))
		if it.Skip == "" {
			out.Routes = append(out.Routes, routeResults(i, routing.Traces[i])...)
		}
	}
	if len(out.Routes) == 0 {
		out.RoutesNote = routesNote(ev, status, reason, items, x.router.Len())
	}
	var touched []inbox.Record // records this event itself would create or change
	// The event's notifications share one budget for the rules' `when`s, as on ingest.
	rules := x.policy.NewBudget()
	for _, n := range ns {
		o, err := x.outcome(ctx, n, policyInput{payload, rules}, now, &touched)
		if err != nil {
			return nil, err
		}
		out.Notifications = append(out.Notifications, o)
	}
	return out, nil
}

// event resolves the sample: the stored event, or one built from the sample's fields.
func (x *Explainer) event(ctx context.Context, s Sample) (*inbox.Event, error) {
	if s.EventID != "" {
		if s.Source != "" || s.Connector != "" || len(s.Body) > 0 || s.BodyBase64 != "" {
			return nil, server.BadRequest("eventId: give a stored event id or a sample event, not both")
		}
		if err := checkText(s.EventID); err != nil {
			return nil, server.BadRequest("eventId: %v", err)
		}
		ev, err := x.st.GetEvent(ctx, s.EventID)
		if err != nil {
			return nil, notFound(err, "event", s.EventID)
		}
		return &ev, nil
	}
	for _, f := range []struct{ name, v string }{{"source", s.Source}, {"connector", s.Connector}, {"type", s.Type}, {"deliveryId", s.DeliveryID}} {
		if err := checkText(f.v); err != nil {
			return nil, server.BadRequest("%s: %v", f.name, err)
		}
	}
	switch {
	case s.Source == "":
		return nil, server.BadRequest("source: required (%s), or give eventId", orList(x.sources))
	case x.parsers[s.Source] == nil:
		return nil, server.BadRequest("source: no connector parses %q events", s.Source)
	case s.Connector == "":
		return nil, server.BadRequest("connector: required: the configured connector name")
	}
	ev := &inbox.Event{Source: s.Source, Connector: s.Connector, Type: s.Type, DeliveryID: s.DeliveryID, Headers: map[string]string{}}
	for k, v := range s.Headers {
		ev.Headers[http.CanonicalHeaderKey(k)] = v
	}
	switch {
	case s.BodyBase64 != "":
		b, err := base64.StdEncoding.DecodeString(s.BodyBase64)
		if err != nil {
			return nil, server.BadRequest("bodyBase64: not valid base64")
		}
		ev.Body = b
	case bytes.HasPrefix(bytes.TrimSpace(s.Body), []byte(`"`)):
		var raw string
		if err := json.Unmarshal(s.Body, &raw); err != nil {
			return nil, server.BadRequest("body: not a valid JSON string")
		}
		ev.Body = []byte(raw)
	case len(s.Body) > 0 && !bytes.Equal(bytes.TrimSpace(s.Body), []byte("null")):
		ev.Body = s.Body
	default:
		return nil, server.BadRequest("body: required (the raw body as a string, or the JSON document), or bodyBase64")
	}
	return ev, nil
}

// routesNote says why no route was tried: the connector made nothing to route (it
// refused or ignored the event, or skipped every item), or there are no routes.
func routesNote(ev *inbox.Event, status inbox.EventStatus, reason string, items []connectors.Item, routes int) string {
	var why string
	var skips []string
	for _, it := range items {
		if it.Skip != "" {
			skips = append(skips, it.Skip)
		}
	}
	switch {
	case status == inbox.EventInvalid:
		why = "it would be stored as invalid: " + reason
	case status != "":
		why = "it would be stored as " + string(status) + ": " + reason
	case len(items) == 0:
		why = "it made no items of this event"
	case len(skips) == len(items):
		why = "every item is skipped: " + strings.Join(skips, "; ")
	}
	none := "no routes are configured: add routes in config.yaml"
	switch {
	case why == "":
		return none
	case routes == 0:
		why += " (and " + none + ")"
	}
	return "connector " + ev.Source + "/" + ev.Connector + " produced nothing to route: " + why
}

// deliveryID is the provider's id for the event: given, or as the connector reads it.
func deliveryID(ev *inbox.Event, items []connectors.Item) string {
	if ev.DeliveryID != "" {
		return ev.DeliveryID
	}
	for _, it := range items {
		if id, ok := it.Metadata["delivery_id"].(string); ok && id != "" {
			return id
		}
	}
	return connectors.Header(ev.Headers, "Webhook-Id") // generic: Standard Webhooks
}

// eventType is the type a sample would be stored with, as its connector sets it.
func eventType(ev *inbox.Event, items []connectors.Item) string {
	if t := connectors.Header(ev.Headers, "X-GitHub-Event"); t != "" {
		return t
	}
	if ev.Source == "generic" && len(items) > 0 {
		return items[0].Kind // a generic event's type is its kind
	}
	return ""
}

func routeResults(item int, traces []connectors.Trace) []RouteResult {
	var out []RouteResult
	for _, tr := range traces {
		rr := RouteResult{Route: tr.Route, Item: item, Matched: tr.Matched, Thread: tr.Thread, SameThreadAs: tr.SameThreadAs,
			When: tr.When, Watch: tr.Watch, Unwatched: tr.Unwatched}
		if tr.Err != nil {
			rr.Error = tr.Err.Error()
		}
		if tr.WhenErr != nil {
			rr.Error = tr.WhenErr.Error()
		}
		out = append(out, rr)
	}
	return out
}

// policyInput is what the rules' `when`s see of the event, and the budget they share.
type policyInput struct {
	payload any
	budget  *condition.Budget
}

// outcome finds the record n would merge into (one this event already touched, else
// a pending one in the store), samples presence and asks the policy, as Ingest would.
// touched gets the record as it would be after n.

func (x *Explainer) outcome(ctx context.Context, n inbox.Notification, in policyInput, now time.Time, touched *[]inbox.Record) (Outcome, error) {
	o := Outcome{Route: n.Route, Thread: n.Thread, Notification: n, Presence: inbox.PresenceIdle}
	run, err := x.st.LiveRun(ctx, n.Thread, now)
	if err != nil {
		return o, err
	}
	if run != nil {
		o.Presence = inbox.PresenceActive
		o.ActiveRun = &agent.ActiveRun{RunID: run.ID, Origin: run.Origin, Since: run.OpenedAt, LeaseUntil: run.LeaseUntil}
	}
	if n.NetKey != "" {
		return x.netOutcome(ctx, o, n, in, now)
	}
	var existing *inbox.Record
	at := slices.IndexFunc(*touched, func(r inbox.Record) bool { return r.Mergeable(n) })
	if at >= 0 {
		existing = &(*touched)[at]
	} else {
		if existing, err = x.st.FindMergeable(ctx, n.Stored()); err != nil {
			return o, err
		}
	}
	sub := n.Subject()
	sub.Payload, sub.Budget = in.payload, in.budget
	if existing != nil && sub.Priority == "" {
		sub.Priority = existing.Priority
	}
	o.Decision = inbox.ApplyHolds(x.holds, sub, x.policy.Decide(sub, o.Presence, now), now)
	if existing == nil {
		o.Record = inbox.NewRecord("", "", n, o.Decision, now)
		*touched = append(*touched, o.Record)
		o.Wake, err = x.explainWake(ctx, o, now)
		return o, err
	}
	on := "coalesceKey"
	if n.DedupeKey != "" && existing.DedupeKey == n.DedupeKey {
		on = "dedupeKey"
	}
	o.Merge = &Merge{RecordID: existing.ID, On: on, Record: *existing}
	merged := *existing
	merged.Metadata = maps.Clone(existing.Metadata) // Merge writes into it
	merged.Merge(n, o.Decision, now)
	o.Record = merged
	if at >= 0 {
		(*touched)[at] = merged
	} else {
		*touched = append(*touched, merged)
	}
	o.Wake, err = x.explainWake(ctx, o, now)
	return o, err
}

// netOutcome is outcome for a notification of a net-state lane, as Ingest decides it:
// the policy, then the lane's verdict. (One event makes at most one notification per
// thread, so no earlier notification of it is in the same lane.)
func (x *Explainer) netOutcome(ctx context.Context, o Outcome, n inbox.Notification, in policyInput, now time.Time) (Outcome, error) {
	lane, err := x.st.NetLane(ctx, n.Thread, inbox.StoredKey(n.NetKey))
	if err != nil {
		return o, err
	}
	sub := n.Subject()
	sub.Payload, sub.Budget = in.payload, in.budget
	o.Decision = inbox.ApplyHolds(x.holds, sub, x.policy.Decide(sub, o.Presence, now), now)
	nd := inbox.DecideNet(n, lane)
	o.Net = &nd
	o.Record = inbox.NewRecord("", "", n, o.Decision, now)
	if o.Record.Status == inbox.StatusPending {
		o.Record.ApplyNet(nd)
	} else {
		o.Record.CoalescedCount = nd.CoalescedCount
	}
	return o, nil
}

// explainItem lists the item with the fields routes match, by their config keys.
func explainItem(it connectors.Item) ExplainedItem {
	out := ExplainedItem{Kind: it.Kind, Priority: it.Priority, Summary: it.Summary, DedupeKey: it.DedupeKey,
		CoalesceKey: it.CoalesceKey, Attributes: it.Attributes, Skip: it.Skip, Fields: map[string]any{},
		NetKey: it.NetKey, State: it.State, RestState: it.RestState}
	if out.Attributes == nil {
		out.Attributes = inbox.Attributes{}
	}
	f := it.Fields
	if f.Kind == "" {
		f.Kind = it.Kind // as the router reads it
	}
	out.Fields = f.Values()
	return out
}

// explain is POST /explain: a dry run of a sample or stored event.
func (a *API) explain(c echo.Context) error {
	var s Sample
	body, err := io.ReadAll(c.Request().Body)
	if err != nil {
		return err
	}
	// Lenient: GET /events/{id} output (with id, status, …) is a sample as it is.
	if err := json.Unmarshal(body, &s); err != nil {
		return server.BadRequest("request body: want a JSON object with eventId, or source, connector, headers and body")
	}
	out, err := a.Explain(c.Request().Context(), s)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, out)
}

// Explain dry-runs a sample or stored event through today's routes and policy.
func (a *API) Explain(ctx context.Context, s Sample) (*Explanation, error) {
	return a.explainer.Explain(ctx, s)
}

// orList is "a, b or c".
func orList(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " or " + items[len(items)-1]
}

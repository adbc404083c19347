package watch

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/service"
)

// Scope is what an agent may watch (main answers it from config and the store).
type Scope interface {
	// Connectors are the connectors of source the agent may watch through: those its
	// routes admit and agents[].watch_connectors.
	Connectors(agent, source string) []string
	// Admit applies the rule of source's kind to what its connector may watch (the
	// kind's Admit; nil when it has none).
	Admit(ctx context.Context, source, connector string, r Resource) error
}

// Ingester stores an event and its notifications (inbox.Service): a watch's end is
// announced through it, so the store ends the watch and keeps the notification in one
// transaction.
type Ingester interface {
	Ingest(ctx context.Context, ev *inbox.Event, ns []inbox.Notification) (inbox.IngestResult, error)
}

// Request is what an agent asks to watch.
type Request struct {
	Source    string `json:"source"`
	Connector string `json:"connector,omitempty"`
	Resource  string `json:"resource"`
	// Kinds are path.Match patterns over the item kind; empty: all.
	Kinds []string `json:"kinds,omitempty"`
	// Until is an RFC 3339 time or "forever"; TTL a Go duration or whole days ("7d").
	// Neither: watches.default_ttl.
	Until    string         `json:"until,omitempty"`
	TTL      string         `json:"ttl,omitempty"`
	Priority inbox.Priority `json:"priority,omitempty"`
}

// EndedConnector is the connector name of the events announcing watch ends.
const EndedConnector = "watches"

// EndedDeliveryID is the delivery id of the event announcing the end of watch id: one
// per watch, so a repeated end is a duplicate delivery and the thread hears it once.
func EndedDeliveryID(id string) string { return "watch-ended:" + id }

// Service creates, lists and ends watches for the fronts (the agent API, MCP, the admin
// API) and the expiry sweep. It knows no HTTP.
type Service struct {
	store Store
	cfg   Config
	res   Resources
	scope Scope
	in    Ingester
	base  service.Base
}

// NewService builds the service; cfg gets its defaults. rs are the sources a watch may
// name and how each reads its resources.
func NewService(st Store, cfg Config, rs Resources, scope Scope, in Ingester, base service.Base) *Service {
	return &Service{store: st, cfg: cfg.WithDefaults(), res: rs, scope: scope, in: in, base: base.Component("watches")}
}

// Sources are the sources a watch may name, in the kinds table's order.
func (s *Service) Sources() []string { return s.res.Sources() }

// Config is the service's configuration with defaults filled.
func (s *Service) Config() Config { return s.cfg }

// Create makes thread k watch what req names; created is false when k had a live watch
// of the same source, connector and resource (answered as it is).
func (s *Service) Create(ctx context.Context, k inbox.ThreadKey, req Request) (Watch, bool, error) {
	now := s.base.Now().UTC()
	w, err := s.check(ctx, k, req, now)
	if err != nil {
		return Watch{}, false, err
	}
	return s.create(ctx, w)
}

// CheckConversation refuses what WatchConversation would refuse before a reply with
// watch: true is accepted, as Create refuses a watch: the scope check of every watch
// (ErrForbidden, ErrUnknown), a malformed resource (ErrInvalid).
func (s *Service) CheckConversation(ctx context.Context, k inbox.ThreadKey, source, connector, resource string) error {
	_, err := s.conversation(ctx, k, source, connector, resource)
	return err
}

// WatchConversation makes k watch the conversation a reply was sent to (watch: true):
// the default life, the scope check of every watch (the reply's place being the
// thread's own does not widen what the agent may watch), the cap.
func (s *Service) WatchConversation(ctx context.Context, k inbox.ThreadKey, source, connector, resource, replyID string) (Watch, bool, error) {
	canonical, err := s.conversation(ctx, k, source, connector, resource)
	if err != nil {
		return Watch{}, false, err
	}
	now := s.base.Now().UTC()
	return s.create(ctx, Watch{ID: NewID(), Thread: k, Source: source, Connector: connector, Resource: canonical,
		CreatedAt: now, ExpiresAt: now.Add(s.cfg.DefaultTTL), ReplyID: replyID})
}

// conversation checks a conversation watch as check does a requested one, and answers
// its canonical resource.
func (s *Service) conversation(ctx context.Context, k inbox.ThreadKey, source, connector, resource string) (string, error) {
	r, err := s.res.Resource(source, resource)
	if err != nil {
		return "", err
	}
	if err := checkName("connector", connector); err != nil {
		return "", err
	}
	if _, err := s.admit(ctx, k.Agent, source, connector, r); err != nil {
		return "", err
	}
	return r.Canonical, nil
}

func (s *Service) create(ctx context.Context, w Watch) (Watch, bool, error) {
	got, created, err := s.store.CreateWatch(ctx, w, s.cfg.MaxPerAgent)
	if errors.Is(err, ErrTooMany) {
		return Watch{}, false, fmt.Errorf("%w: agent %q has %d live watches, the most watches.max_per_agent allows; delete some first",
			ErrTooMany, w.Thread.Agent, s.cfg.MaxPerAgent)
	}
	if err != nil {
		return Watch{}, false, fmt.Errorf("record watch: %w", err)
	}
	if created {
		s.base.Logger.Info("watch created", "watch_id", got.ID, "agent", got.Thread.Agent, "source", got.Source,
			"connector", got.Connector, "expires_at", got.ExpiresAt)
	}
	return got, created, nil
}

// check validates req, naming the field at fault, and builds the watch.
func (s *Service) check(ctx context.Context, k inbox.ThreadKey, req Request, now time.Time) (Watch, error) {
	switch {
	case req.Source == "":
		return Watch{}, fmt.Errorf("%w: source: required (%s)", ErrInvalid, strings.TrimPrefix(s.res.want(), "want "))
	case !s.res.Known(req.Source):
		return Watch{}, fmt.Errorf("%w: source: unknown %q (%s)", ErrInvalid, clip(req.Source), s.res.want())
	}
	resource, err := s.res.Resource(req.Source, req.Resource)
	if err != nil {
		return Watch{}, err
	}
	kinds, err := checkKinds(req.Kinds)
	if err != nil {
		return Watch{}, err
	}
	if req.Priority != "" && !req.Priority.Valid() {
		return Watch{}, fmt.Errorf("%w: priority: unknown %q (want low, medium, high or urgent)", ErrInvalid, clip(string(req.Priority)))
	}
	forever, expires, err := s.expiry(req, now)
	if err != nil {
		return Watch{}, err
	}
	conn, err := s.admit(ctx, k.Agent, req.Source, req.Connector, resource)
	if err != nil {
		return Watch{}, err
	}
	return Watch{ID: NewID(), Thread: k, Source: req.Source, Connector: conn, Resource: resource.Canonical, Kinds: kinds,
		Priority: req.Priority, Forever: forever, CreatedAt: now, ExpiresAt: expires}, nil
}

// admit is the scope check of every watch: the connector (asked, or the agent's only
// one of source) the agent may watch through, and the rule of source's kind (a GitHub
// repository the connector receives events for, whole only where it allows that).
func (s *Service) admit(ctx context.Context, agent, source, asked string, r Resource) (string, error) {
	conn, err := s.connector(agent, source, asked)
	if err != nil {
		return "", err
	}
	if err := s.scope.Admit(ctx, source, conn, r); err != nil {
		return "", err
	}
	return conn, nil
}

// connector is the asked connector if the agent may watch through it, or the agent's
// only connector of source when none is asked.
func (s *Service) connector(agent, source, asked string) (string, error) {
	allowed := s.scope.Connectors(agent, source)
	names := strings.Join(allowed, ", ")
	if asked == "" {
		switch len(allowed) {
		case 0:
			return "", fmt.Errorf("%w: agent %q may watch no %s connector (its routes and agents[].watch_connectors admit none)", ErrForbidden, agent, source)
		case 1:
			return allowed[0], nil
		}
		return "", fmt.Errorf("%w: connector: required, the agent may watch %s through several: %s", ErrInvalid, source, names)
	}
	if err := checkName("connector", asked); err != nil {
		return "", err
	}
	if !slices.Contains(allowed, asked) {
		if len(allowed) == 0 {
			return "", fmt.Errorf("%w: connector: agent %q may watch no %s connector", ErrForbidden, agent, source)
		}
		return "", fmt.Errorf("%w: connector: agent %q may not watch through %q; it may use %s", ErrForbidden, agent, clip(asked), names)
	}
	return asked, nil
}

// expiry reads until and ttl: an RFC 3339 time or "forever", a duration; neither is the
// default life. Every life is within max_ttl.
func (s *Service) expiry(req Request, now time.Time) (forever bool, expires time.Time, err error) {
	limit := now.Add(s.cfg.MaxTTL)
	switch {
	case req.Until != "" && req.TTL != "":
		return false, time.Time{}, fmt.Errorf("%w: until, ttl: give one of them, not both", ErrInvalid)
	case req.Until == Forever:
		return true, limit, nil
	case req.Until != "":
		t, err := time.Parse(time.RFC3339, req.Until)
		if err != nil {
			return false, time.Time{}, fmt.Errorf("%w: until: want an RFC 3339 time (2026-05-01T12:00:00Z) or %q, got %q", ErrInvalid, Forever, clip(req.Until))
		}
		if !t.After(now) {
			return false, time.Time{}, fmt.Errorf("%w: until: %s is not in the future", ErrInvalid, req.Until)
		}
		if t.After(limit) {
			return false, time.Time{}, fmt.Errorf("%w: until: at most watches.max_ttl (%s) from now", ErrInvalid, s.cfg.MaxTTL)
		}
		return false, t.UTC(), nil
	case req.TTL != "":
		d, err := ParseTTL(req.TTL)
		if err != nil {
			return false, time.Time{}, fmt.Errorf("%w: ttl: %v", ErrInvalid, err)
		}
		if d > s.cfg.MaxTTL {
			return false, time.Time{}, fmt.Errorf("%w: ttl: at most watches.max_ttl (%s)", ErrInvalid, s.cfg.MaxTTL)
		}
		return false, now.Add(d), nil
	}
	return false, now.Add(s.cfg.DefaultTTL), nil
}

// ParseTTL reads a Go duration ("36h") or a whole number of days ("7d"); it must be
// positive.
func ParseTTL(v string) (time.Duration, error) {
	var d time.Duration
	if days, ok := strings.CutSuffix(v, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n > 100_000 {
			return 0, fmt.Errorf("want a duration (36h, 90m) or whole days (7d), got %q", clip(v))
		}
		d = time.Duration(n) * 24 * time.Hour
	} else {
		var err error
		if d, err = time.ParseDuration(v); err != nil {
			return 0, fmt.Errorf("want a duration (36h, 90m) or whole days (7d), got %q", clip(v))
		}
	}
	if d <= 0 {
		return 0, fmt.Errorf("must be positive, got %q", clip(v))
	}
	return d, nil
}

func checkKinds(kinds []string) ([]string, error) {
	if len(kinds) > MaxKinds {
		return nil, fmt.Errorf("%w: kinds: at most %d entries", ErrInvalid, MaxKinds)
	}
	out := make([]string, 0, len(kinds))
	for i, k := range kinds {
		if err := inbox.CheckText(k, MaxKindBytes); err != nil || k == "" {
			return nil, fmt.Errorf("%w: kinds[%d]: want 1 to %d bytes of printable text", ErrInvalid, i, MaxKindBytes)
		}
		if _, err := path.Match(k, ""); err != nil {
			return nil, fmt.Errorf("%w: kinds[%d]: %q is not a valid pattern (path.Match: *, ?, [a-z])", ErrInvalid, i, k)
		}
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// checkName refuses a connector name no config could hold.
func checkName(field, v string) error {
	if err := inbox.CheckText(v, 100); err != nil || v == "" || strings.ContainsAny(v, "\x1f\r\n\t ") {
		return fmt.Errorf("%w: %s: want a connector name", ErrInvalid, field)
	}
	return nil
}

// clip bounds what an error quotes back of a request.
func clip(v string) string {
	if len(v) > 64 {
		return strings.ToValidUTF8(v[:64], "") + "…"
	}
	return v
}

// List lists watches (the caller scopes f: the agent fronts set the thread).
func (s *Service) List(ctx context.Context, f Filter) (Page, error) {
	p, err := s.store.ListWatches(ctx, f)
	if err != nil {
		return Page{}, fmt.Errorf("list watches: %w", err)
	}
	if p.Watches == nil {
		p.Watches = []Watch{}
	}
	return p, nil
}

// Get is thread k's watch id; another thread's is inbox.ErrNotFound like a missing one.
func (s *Service) Get(ctx context.Context, k inbox.ThreadKey, id string) (Watch, error) {
	w, err := s.store.Watch(ctx, id)
	if errors.Is(err, inbox.ErrNotFound) || (err == nil && w.Thread != k) {
		return Watch{}, fmt.Errorf("watch %q: %w", clip(id), inbox.ErrNotFound)
	}
	if err != nil {
		return Watch{}, fmt.Errorf("read watch: %w", err)
	}
	return w, nil
}

// Delete ends thread k's watch id (the agent asked: no notification); deleting an ended
// watch answers it as it is.
func (s *Service) Delete(ctx context.Context, k inbox.ThreadKey, id string) (Watch, error) {
	if _, err := s.Get(ctx, k, id); err != nil {
		return Watch{}, err
	}
	w, ended, err := s.store.EndWatch(ctx, id, EndDeleted, s.base.Now().UTC())
	if err != nil {
		return Watch{}, fmt.Errorf("end watch %s: %w", id, err)
	}
	if ended {
		s.base.Logger.Info("watch deleted", "watch_id", id, "agent", k.Agent)
	}
	return w, nil
}

// End ends watch id for reason and tells its thread, once: the notification travels
// with a synthetic event whose delivery id is the watch's, and the store ends the watch
// in the same transaction, keeping the notification only if the watch was live. ended
// reports that this call ended it; a watch that had ended is answered as it is.
func (s *Service) End(ctx context.Context, id, reason string) (Watch, bool, error) {
	w, err := s.store.Watch(ctx, id)
	if err != nil {
		return Watch{}, false, fmt.Errorf("read watch %q: %w", clip(id), err)
	}
	if w.EndedAt != nil {
		return w, false, nil
	}
	now := s.base.Now().UTC()
	ev := &inbox.Event{Source: EndedSource, Connector: EndedConnector, Type: Kind, DeliveryID: EndedDeliveryID(id), ReceivedAt: now}
	res, err := s.in.Ingest(ctx, ev, []inbox.Notification{Ended(w, reason)})
	if err != nil {
		return Watch{}, false, fmt.Errorf("announce the end of watch %s: %w", id, err)
	}
	told := !res.Duplicate && len(res.Records) > 0
	// Whatever the ingest did, the watch must not stay live (a sweep would find it
	// again and again): ending an ended watch changes nothing.
	got, fallback, err := s.store.EndWatch(ctx, id, reason, now)
	if err != nil {
		return Watch{}, false, fmt.Errorf("end watch %s: %w", id, err)
	}
	if fallback {
		s.base.Logger.Warn("watch ended without its notification", "watch_id", id, "reason", reason)
	}
	if told || fallback {
		s.base.Logger.Info("watch ended", "watch_id", id, "agent", w.Thread.Agent, "reason", reason)
	}
	return got, told || fallback, nil
}

// Code is the stable code the fronts answer a refusal of the service with; ok is false
// for anything else (a fault of the gateway).
func Code(err error) (code string, ok bool) {
	switch {
	case errors.Is(err, ErrInvalid):
		return "invalid_request", true
	case errors.Is(err, ErrUnknown):
		return "unknown_resource", true
	case errors.Is(err, ErrForbidden):
		return "forbidden", true
	case errors.Is(err, ErrTooMany):
		return "too_many_watches", true
	case errors.Is(err, inbox.ErrNotFound):
		return "not_found", true
	}
	return "", false
}

// NotFoundMessage is what the fronts say of another thread's watch (or none).
const NotFoundMessage = "no such watch in this thread"

// Message is what the fronts say of a refusal: another thread's watch reads as one that
// does not exist.
func Message(err error) string {
	if errors.Is(err, inbox.ErrNotFound) {
		return NotFoundMessage
	}
	return err.Error()
}

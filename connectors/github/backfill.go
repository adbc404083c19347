package github

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	gh "github.com/google/go-github/v62/github"

	"github.com/signalgate/signalgate/attempt"
	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/service"
)

// Backfill outcomes, the metric's outcome label.
const (
	BackfillIngested  = "ingested"  // a missed delivery stored and routed (or unrouted)
	BackfillDuplicate = "duplicate" // the gateway already had the delivery
	BackfillIgnored   = "ignored"   // stored but ignored or invalid, or gone from GitHub
)

// Connector state keys of backfill (connector "github/<name>").
const (
	// StateBackfillSince is the connector's first configured moment (RFC 3339): no pass
	// looks before it.
	StateBackfillSince = "backfill_since"
	// stateHookPrefix + hook key is a hook's cursor (JSON hookCursor).
	stateHookPrefix = "backfill_hook:"
)

// backfillErrorWait is the wait after a pass that could not reach GitHub: the API
// coming back is noticed within it.
const backfillErrorWait = 30 * time.Second

// BackfillState is where backfill keeps its cursors and marks (the store's connector
// state).
type BackfillState interface {
	ConnectorState(ctx context.Context, connector, key string) (string, bool, error)
	SetConnectorState(ctx context.Context, connector, key, value string) error
}

// DeliveryLookup finds the event stored under a delivery id.
type DeliveryLookup interface {
	EventByDelivery(ctx context.Context, source, connector, deliveryID string) (string, bool, error)
}

// Lock lets one replica at a time read a hook (PostgreSQL's advisory locks; a single
// process needs none).
type Lock interface {
	TryLock(ctx context.Context, key string) (release func(), ok bool, err error)
}

// NoLock always says yes: one process backfills every hook.
type NoLock struct{}

// TryLock always succeeds.
func (NoLock) TryLock(context.Context, string) (func(), bool, error) { return func() {}, true, nil }

// BackfillPass is what one pass did (kept per connector for check, the console and
// the admin API).
type BackfillPass = connectors.BackfillPass

// hookCursor is where a hook's reading stands. Mark is the newest delivery id every
// older one of which was looked at; a scan under way (newest page first) keeps the
// page it resumes from and the newest id it saw, which becomes Mark when it ends.
type hookCursor struct {
	Mark   int64  `json:"mark"`
	Top    int64  `json:"top,omitempty"`
	Cursor string `json:"cursor,omitempty"`
}

// BackfillOption configures a Backfiller.
type BackfillOption func(*Backfiller)

// WithBackfillLock lets one replica at a time read each hook.
func WithBackfillLock(l Lock) BackfillOption { return func(b *Backfiller) { b.lock = l } }

// WithBackfillCounted reports every delivery's outcome (the metric).
func WithBackfillCounted(fn func(connector, outcome string)) BackfillOption {
	return func(b *Backfiller) { b.counted = fn }
}

// Backfiller reads one connector's hook deliveries from GitHub's API and ingests the
// ones the gateway never accepted, through the handler's pipeline.
type Backfiller struct {
	service.StartStop
	base    service.Base
	h       *Handler
	cfg     Config
	conn    replyConn
	hooks   []hookRef
	state   BackfillState
	events  DeliveryLookup
	lock    Lock
	counted func(connector, outcome string)
	// notBefore is when GitHub's rate limit lets the next pass read (zero: now). Only
	// the loop's goroutine (or a test's RunOnce) touches it.
	notBefore time.Time

	// TestSignals: every pass the loop ran.
	TestSignals service.Signal[BackfillPass]
}

// NewBackfiller builds the backfill of h's connector name; nil when it has no
// backfill block.
func NewBackfiller(h *Handler, name string, state BackfillState, events DeliveryLookup, base service.Base, opts ...BackfillOption) (*Backfiller, error) {
	cfg, ok := h.conns[name]
	if !ok {
		return nil, fmt.Errorf("no github connector named %q", name)
	}
	if cfg.Backfill == nil {
		return nil, nil
	}
	conn, err := newReplyConn(cfg)
	if err != nil {
		return nil, err
	}
	b := &Backfiller{base: base.Component("github_backfill", "connector", name), h: h, cfg: cfg, conn: conn,
		hooks: cfg.Backfill.hooks(cfg), state: state, events: events, lock: NoLock{}, counted: func(string, string) {}}
	if b.base.Now == nil {
		b.base.Now = time.Now
	}
	for _, o := range opts {
		o(b)
	}
	b.TestSignals.Init()
	return b, nil
}

// Name names the part in logs.
func (b *Backfiller) Name() string { return "github backfill " + b.cfg.Name }

// Start runs a pass now and then every interval.
func (b *Backfiller) Start(ctx context.Context) error {
	loop := service.Loop[BackfillPass]{
		Base:      b.base,
		Pass:      func(ctx context.Context) (BackfillPass, bool, error) { p, err := b.RunOnce(ctx); return p, p.More, err },
		Failed:    "github backfill pass failed",
		Signal:    &b.TestSignals,
		Interval:  b.cfg.Backfill.Interval,
		ErrorWait: backfillErrorWait,
	}
	return b.StartStop.Start(ctx, loop.Run)
}

func (b *Backfiller) stateKey() string { return Source + "/" + b.cfg.Name }

// RunOnce runs one pass over every hook and records it.
func (b *Backfiller) RunOnce(ctx context.Context) (BackfillPass, error) {
	now := b.base.Now().UTC()
	pass := BackfillPass{At: now}
	err := b.run(ctx, now, &pass)
	if err != nil {
		pass.Error = attempt.Redact(err.Error(), b.secrets())
	}
	raw, _ := json.Marshal(pass)
	if serr := b.state.SetConnectorState(ctx, b.stateKey(), connectors.StateBackfillPass, string(raw)); serr != nil && err == nil {
		err = serr
	}
	return pass, err
}

func (b *Backfiller) run(ctx context.Context, now time.Time, pass *BackfillPass) error {
	if now.Before(b.notBefore) {
		until := b.notBefore
		pass.RateLimitedUntil = &until
		return nil
	}
	floor, err := b.floor(ctx, now)
	if err != nil {
		return err
	}
	// Fresh clients each pass: go-github remembers a rate limit by the wall clock, while
	// the pass keeps its own (notBefore, by the injected clock).
	conn, err := newReplyConn(b.cfg)
	if err != nil {
		return err
	}
	b.conn = conn
	budget := b.cfg.Backfill.MaxRequests
	for _, hk := range b.hooks {
		more, err := b.hook(ctx, hk, floor, now, &budget, pass)
		if err != nil {
			return fmt.Errorf("backfill hook %s: %w", hk.key(), err)
		}
		pass.More = pass.More || more
		if pass.RateLimitedUntil != nil {
			pass.More = false
			return nil
		}
	}
	return nil
}

// floor is the oldest delivery time a pass looks at: the window back from now, never
// before the connector's first configured moment (recorded by its first pass).
func (b *Backfiller) floor(ctx context.Context, now time.Time) (time.Time, error) {
	floor := now.Add(-b.cfg.Backfill.Window)
	v, ok, err := b.state.ConnectorState(ctx, b.stateKey(), StateBackfillSince)
	if err != nil {
		return time.Time{}, err
	}
	if !ok {
		if err := b.state.SetConnectorState(ctx, b.stateKey(), StateBackfillSince, now.Format(time.RFC3339Nano)); err != nil {
			return time.Time{}, err
		}
		return now, nil
	}
	since, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, fmt.Errorf("read %s: %w", StateBackfillSince, err)
	}
	if since.After(floor) {
		floor = since
	}
	return floor, nil
}

// hook reads one hook's deliveries, newest page first, down to its mark or the floor.
// more reports a scan the request budget cut short.
func (b *Backfiller) hook(ctx context.Context, hk hookRef, floor, now time.Time, budget *int, pass *BackfillPass) (more bool, err error) {
	release, ok, err := b.lock.TryLock(ctx, b.stateKey()+"/backfill/"+hk.key())
	if err != nil {
		return false, err
	}
	if !ok {
		pass.Busy++
		return false, nil
	}
	defer release()
	cur, err := b.cursor(ctx, hk)
	if err != nil {
		return false, err
	}
	seen := map[string]bool{}
	save := func() error { return b.saveCursor(ctx, hk, cur) }
	for {
		if pass.RateLimitedUntil != nil {
			return false, save()
		}
		if *budget <= 0 {
			return true, save()
		}
		*budget--
		pass.Requests++
		page, resp, err := b.list(ctx, hk, cur.Cursor)
		if stop, rerr := b.rateLimited(err, resp, now, pass); stop {
			return false, errors.Join(rerr, save())
		}
		if err != nil {
			if cur.Cursor != "" && isStatus(err, http.StatusBadRequest, http.StatusUnprocessableEntity, http.StatusNotFound) {
				// An expired cursor: scan again from the newest page (known deliveries cost
				// only a lookup).
				cur.Cursor = ""
				continue
			}
			return false, errors.Join(err, save())
		}
		done := resp.Cursor == ""
		var missing []*gh.HookDelivery
		for _, d := range page { // newest first
			if d.GetID() <= cur.Mark || d.GetDeliveredAt().Time.Before(floor) {
				done = true
				break
			}
			cur.Top = max(cur.Top, d.GetID())
			missing = append(missing, d)
		}
		for i := len(missing) - 1; i >= 0; i-- { // oldest first
			d := missing[i]
			guid := d.GetGUID()
			if guid == "" || seen[guid] {
				continue
			}
			_, known, err := b.events.EventByDelivery(ctx, Source, b.cfg.Name, inbox.StoredKey(guid))
			if err != nil {
				return false, errors.Join(err, save())
			}
			if known {
				seen[guid] = true
				b.count(pass, BackfillDuplicate)
				continue
			}
			if pass.RateLimitedUntil != nil {
				return false, save() // resume from this page
			}
			if *budget <= 0 {
				// Resume from this page: what was ingested is known next time.
				return true, save()
			}
			*budget--
			pass.Requests++
			full, resp, err := b.get(ctx, hk, d.GetID())
			if stop, rerr := b.rateLimited(err, resp, now, pass); stop {
				return false, errors.Join(rerr, save())
			}
			if isStatus(err, http.StatusNotFound) {
				seen[guid] = true
				b.count(pass, BackfillIgnored) // GitHub no longer has it
				continue
			}
			if err != nil {
				return false, errors.Join(err, save())
			}
			if err := b.ingest(ctx, full, now, pass); err != nil {
				return false, errors.Join(err, save())
			}
			seen[guid] = true
		}
		if done {
			cur = hookCursor{Mark: max(cur.Mark, cur.Top)}
			return false, save()
		}
		cur.Cursor = resp.Cursor
	}
}

// ingest stores one delivery read from GitHub through the webhook's pipeline.
func (b *Backfiller) ingest(ctx context.Context, d *gh.HookDelivery, now time.Time, pass *BackfillPass) error {
	req := d.GetRequest()
	if req == nil || req.RawPayload == nil {
		b.count(pass, BackfillIgnored)
		return nil
	}
	hdr := http.Header{}
	for k, v := range req.Headers {
		hdr.Set(k, v)
	}
	// The API gives the payload as JSON whatever the hook's content type.
	hdr.Set("Content-Type", "application/json")
	hdr.Set(gh.DeliveryIDHeader, d.GetGUID())
	if hdr.Get(gh.EventTypeHeader) == "" {
		hdr.Set(gh.EventTypeHeader, d.GetEvent())
	}
	out, _, err := b.h.ingest(ctx, b.cfg, hdr, []byte(*req.RawPayload), now, VerifiedByAPI)
	if err != nil {
		return fmt.Errorf("ingest delivery %s: %w", d.GetGUID(), err)
	}
	switch {
	case out.Duplicate:
		b.count(pass, BackfillDuplicate)
	case out.Status == inbox.EventIgnored || out.Status == inbox.EventInvalid:
		b.count(pass, BackfillIgnored)
	default:
		b.count(pass, BackfillIngested)
		if at := d.GetDeliveredAt().Time; !at.IsZero() {
			pass.LagSeconds = max(pass.LagSeconds, now.Sub(at).Seconds())
		}
	}
	return nil
}

func (b *Backfiller) count(pass *BackfillPass, outcome string) {
	switch outcome {
	case BackfillIngested:
		pass.Ingested++
	case BackfillDuplicate:
		pass.Duplicate++
	default:
		pass.Ignored++
	}
	b.counted(b.cfg.Name, outcome)
}

// list reads one page of hk's deliveries, newest first.
func (b *Backfiller) list(ctx context.Context, hk hookRef, cursor string) ([]*gh.HookDelivery, *gh.Response, error) {
	opts := &gh.ListCursorOptions{PerPage: backfillPageSize, Cursor: cursor}
	switch {
	case hk.app:
		return b.conn.app.Apps.ListHookDeliveries(ctx, opts)
	case hk.repo != "":
		return b.conn.client.Repositories.ListHookDeliveries(ctx, hk.owner, hk.repo, hk.id, opts)
	}
	return b.conn.client.Organizations.ListHookDeliveries(ctx, hk.owner, hk.id, opts)
}

// get reads one delivery with its request headers and payload.
func (b *Backfiller) get(ctx context.Context, hk hookRef, id int64) (*gh.HookDelivery, *gh.Response, error) {
	switch {
	case hk.app:
		return b.conn.app.Apps.GetHookDelivery(ctx, id)
	case hk.repo != "":
		return b.conn.client.Repositories.GetHookDelivery(ctx, hk.owner, hk.repo, hk.id, id)
	}
	return b.conn.client.Organizations.GetHookDelivery(ctx, hk.owner, hk.id, id)
}

// rateLimited stops the pass on GitHub's rate limits: primary (exhausted, or the
// reserve left to replies reached: wait for the reset) and secondary (Retry-After).
func (b *Backfiller) rateLimited(err error, resp *gh.Response, now time.Time, pass *BackfillPass) (bool, error) {
	var wait time.Duration
	var abuse *gh.AbuseRateLimitError
	var primary *gh.RateLimitError
	switch {
	case errors.As(err, &abuse):
		wait = abuse.GetRetryAfter()
		if wait <= 0 {
			wait = defaultRateWait
		}
	case errors.As(err, &primary):
		wait = primary.Rate.Reset.Sub(now)
	case err != nil && resp != nil && resp.StatusCode == http.StatusTooManyRequests:
		wait = attempt.ParseRetryAfter(resp.Header.Get("Retry-After"), now)
		if wait <= 0 {
			wait = defaultRateWait
		}
	case err == nil && resp != nil && resp.Rate.Limit > 0 && resp.Rate.Remaining < backfillRateReserve:
		wait = resp.Rate.Reset.Sub(now)
		if wait <= 0 {
			return false, nil
		}
		// This answer is good; the pass stops after it only to leave replies their share.
		until, _ := attempt.After(wait, now)
		b.notBefore, pass.RateLimitedUntil = until, &until
		return false, nil
	default:
		return false, nil
	}
	until, ok := attempt.After(max(wait, time.Second), now)
	if !ok {
		until = now.Add(time.Second)
	}
	b.notBefore, pass.RateLimitedUntil = until, &until
	return true, nil
}

func (b *Backfiller) cursor(ctx context.Context, hk hookRef) (hookCursor, error) {
	var cur hookCursor
	v, ok, err := b.state.ConnectorState(ctx, b.stateKey(), stateHookPrefix+hk.key())
	if err != nil || !ok {
		return cur, err
	}
	if err := json.Unmarshal([]byte(v), &cur); err != nil {
		return hookCursor{}, nil // unreadable: scan again (known deliveries cost a lookup)
	}
	return cur, nil
}

func (b *Backfiller) saveCursor(ctx context.Context, hk hookRef, cur hookCursor) error {
	raw, _ := json.Marshal(cur)
	return b.state.SetConnectorState(context.WithoutCancel(ctx), b.stateKey(), stateHookPrefix+hk.key(), string(raw))
}

func (b *Backfiller) secrets() []string {
	var out []string
	if b.cfg.Token != "" {
		out = append(out, b.cfg.Token.Reveal())
	}
	return out
}

// isStatus reports a GitHub answer with one of codes.
func isStatus(err error, codes ...int) bool {
	var er *gh.ErrorResponse
	if !errors.As(err, &er) || er.Response == nil {
		return false
	}
	for _, c := range codes {
		if er.Response.StatusCode == c {
			return true
		}
	}
	return false
}

// LastBackfill reads a connector's last pass; nil before the first.
func LastBackfill(ctx context.Context, state interface {
	ConnectorStates(ctx context.Context, connector string) (map[string]string, error)
}, connector string) (*BackfillPass, error) {
	states, err := state.ConnectorStates(ctx, Source+"/"+connector)
	if err != nil {
		return nil, err
	}
	return connectors.ReadBackfillPass(states)
}

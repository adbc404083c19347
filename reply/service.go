package reply

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"regexp"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/attempt"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/service"
	"github.com/signalgate/signalgate/watch"
)

// Defaults of the service.
const (
	DefaultMaxAge = 24 * time.Hour
	// DefaultLease bounds one pass over a claimed reply; a send gets at most half of it,
	// so it has returned before the lease lapses and another replica may claim the reply.
	DefaultLease        = 2 * time.Minute
	DefaultBatch        = 64
	DefaultPollInterval = 30 * time.Second
	DefaultErrorBackoff = 5 * time.Second
	// MaxTextBytes bounds a reply's text whatever the platform (each Sender checks its
	// own, smaller limit).
	MaxTextBytes = 256 << 10
	// threadOrigins is how many of a thread's newest records are read for their replyTo.
	threadOrigins = 500
)

// Store keeps the outbox (the store package).
type Store interface {
	// CreateReply inserts r unless its id exists: then it returns that reply and false.
	CreateReply(ctx context.Context, r Reply) (Reply, bool, error)
	// GetReply reads one reply; inbox.ErrNotFound when there is none.
	GetReply(ctx context.Context, id string) (Reply, error)
	// ThreadOrigins lists the replyTo of the thread's newest records (up to limit
	// records read) with each record's provenance, newest first, without repeats.
	ThreadOrigins(ctx context.Context, k inbox.ThreadKey, limit int) ([]Origin, error)
	// ClaimReplies leases up to limit queued replies due at now to owner until until,
	// earliest due first, skipping those another owner holds.
	ClaimReplies(ctx context.Context, owner string, now, until time.Time, limit int) ([]Reply, error)
	// BeginReplyAttempt counts an attempt of a reply owner still holds (false: it does
	// not), durably, before the send.
	BeginReplyAttempt(ctx context.Context, id, owner string, now time.Time) (bool, error)
	// FinishReply records a pass's outcome and releases the lease.
	FinishReply(ctx context.Context, id, owner string, o Outcome) error
	// NextReplyDue is the earliest due time of a queued reply (nil: none).
	NextReplyDue(ctx context.Context) (*time.Time, error)
	// ListReplies lists replies newest first; next is "" on the last page.
	ListReplies(ctx context.Context, f Filter) ([]Reply, string, error)
	// RequeueReply moves a reply in status from to queued, due at now (false: it was
	// not in from).
	RequeueReply(ctx context.Context, id string, from Status, now time.Time) (Reply, bool, error)
	// DeclineReply moves a pending reply to declined (false: it was not pending).
	DeclineReply(ctx context.Context, id, reason string, now time.Time) (Reply, bool, error)
}

// Origin is a place a record of a thread names (its metadata.replyTo) and the record's
// provenance (its metadata.verified_by).
type Origin struct {
	To         To
	VerifiedBy string
}

// Outcome is what a pass did with a claimed reply: Status sent (Sent says where),
// failed (Error says why), or queued again for NextAttemptAt (Error says why).
type Outcome struct {
	Status        Status
	Sent          Sent
	NextAttemptAt time.Time
	Error         string
	Now           time.Time
}

// Filter selects replies, newest first. Zero fields match all.
type Filter struct {
	Agent     string
	Resource  string
	Thread    string
	Source    string
	Connector string
	Status    []Status
	Limit     int
	Cursor    string
}

// Watches records conversation watches (the watch service): a reply sent with watch:
// true makes its thread hear further messages of that conversation even where no route
// matches.
type Watches interface {
	// CheckConversation refuses, before a reply with watch: true is accepted, a watch
	// of resource the agent's scope refuses (watch.ErrForbidden, watch.ErrUnknown), as
	// the watch API refuses it.
	CheckConversation(ctx context.Context, k inbox.ThreadKey, source, connector, resource string) error
	// WatchConversation makes k watch resource (To.WatchResource) of source through
	// connector; watch.ErrTooMany when the agent holds the most watches it may (the reply
	// goes out without one). Idempotent.
	WatchConversation(ctx context.Context, k inbox.ThreadKey, source, connector, resource, replyID string) (watch.Watch, bool, error)
}

// Approver posts a draft to the people who approve replies (the approvals service); the
// decision comes back through Service.Decided.
type Approver interface {
	RequestReplyApproval(ctx context.Context, r Reply) error
	// OnReplyDecided subscribes d to the approvers' decisions on drafts.
	OnReplyDecided(d Decider)
}

// Decider is told an approver's decision on a draft (the Service, which subscribes to
// its Approver when it is built).
type Decider interface {
	Decided(ctx context.Context, id string, approved bool, by string) (bool, error)
	// Expired is told that nobody decided on a draft (why says what ended the wait): a
	// draft nobody approved is never sent, and must not stay pending forever.
	Expired(ctx context.Context, id, why string) (bool, error)
}

// Request is a reply as the agent asks for it.
type Request struct {
	ID      string `json:"id"`
	Text    string `json:"text"`
	ReplyTo *To    `json:"replyTo,omitempty"`
	Watch   bool   `json:"watch,omitempty"`
	// Approval asks an approver first, whatever the agent's replies.approval.
	Approval bool `json:"approval,omitempty"`
}

// Errors the service answers with besides the Sender's (ErrUnknownPlace,
// ErrNoCredentials, ErrTooLong).
var (
	// ErrInvalid: a malformed request (id, empty text); the message says what.
	ErrInvalid = errors.New("invalid reply")
	// ErrConflict: the id names another reply (other text or another thread).
	ErrConflict = errors.New("reply id already used for another reply")
	// ErrNotRetryable: only a failed reply is retried.
	ErrNotRetryable = errors.New("only a failed reply can be retried")
	// ErrNoApprovers: approval asked where nobody can approve (no
	// approvals.slack_connector); sending it unreviewed is not what was asked.
	ErrNoApprovers = errors.New("approval asked but no approvers are configured (approvals.slack_connector)")
)

// idPattern keeps ids safe inside every marker: an HTML comment, a Message-ID's local
// part, Slack metadata.
var idPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$`)

// ValidID reports whether id can name a reply.
func ValidID(id string) bool { return idPattern.MatchString(id) }

// Service accepts replies into the outbox and sends them: its loop claims due replies
// (leased, so one replica sends each), looks for the marker of a reply attempted before,
// sends, and records sent, failed or a retry with backoff.
type Service struct {
	store    Store
	senders  map[string]Sender // by source
	approver Approver
	watches  Watches
	places   Places
	trust    agent.ReplyProvenance
	approval func(agent string) bool // agents[].replies.approval: required
	log      *slog.Logger
	now      func() time.Time
	rnd      func() float64
	owner    string
	maxAge   time.Duration
	lease    time.Duration
	poll     time.Duration
	errWait  time.Duration
	batch    int
	secrets  []string
	kick     *service.Kick
	tracer   trace.Tracer // traced: WithTracerProvider
	traced   bool

	service.StartStop
	// TestSignals are where tests wait; see service.Signal.
	TestSignals struct {
		Pass service.Signal[Pass] // a pass of the loop ended
	}
}

// Pass is what one pass did: the replies it claimed, and its error.
type Pass struct {
	Claimed int
	Err     error
}

// Option configures a Service.
type Option func(*Service)

// WithMaxAge sets replies.max_age: a reply not sent that long after it was queued fails.
func WithMaxAge(d time.Duration) Option {
	return func(s *Service) {
		if d > 0 {
			s.maxAge = d
		}
	}
}

// WithLease sets how long a claimed reply stays leased to this replica.
func WithLease(d time.Duration) Option { return func(s *Service) { s.lease = d } }

// WithPollInterval bounds the sleep between passes (other replicas' replies wake no one here).
func WithPollInterval(d time.Duration) Option { return func(s *Service) { s.poll = d } }

// WithRandom injects the jitter source (values in [0, 1)), safe for concurrent use.
func WithRandom(rnd func() float64) Option { return func(s *Service) { s.rnd = rnd } }

// WithSecrets lists strings redacted from stored errors.
func WithSecrets(secrets []string) Option { return func(s *Service) { s.secrets = secrets } }

// WithApprovals makes replies of agents for which required says so (or asked with
// approval: true) wait for a person: a posts their draft.
func WithApprovals(a Approver, required func(agent string) bool) Option {
	return func(s *Service) { s.approver, s.approval = a, required }
}

// WithProvenance says which records' replyTo the outbox answers to: only a record whose
// verified_by p vouches for, for the source its replyTo names. Without it no record
// names a place and every reply is refused.
func WithProvenance(p agent.ReplyProvenance) Option { return func(s *Service) { s.trust = p } }

// WithPlaces says how each connector kind's places read (the kinds table's place
// codecs): an agent's replyTo is matched to the thread's origins, and a reply's
// conversation watched, through them. A replyTo of a source none of p reads names no
// place.
func WithPlaces(p Places) Option { return func(s *Service) { s.places = p } }

// WithWatches records the watches of replies sent with watch: true in w.
func WithWatches(w Watches) Option { return func(s *Service) { s.watches = w } }

// New builds the service over st, sending through senders (keyed by source).
func New(st Store, senders map[string]Sender, base service.Base, opts ...Option) *Service {
	base = base.Component("replies")
	s := &Service{store: st, senders: senders, log: base.Logger, now: base.Now, rnd: rand.Float64,
		owner: inbox.NewID(), maxAge: DefaultMaxAge, lease: DefaultLease, poll: DefaultPollInterval,
		errWait: DefaultErrorBackoff, batch: DefaultBatch, kick: service.NewKick(),
		approval: func(string) bool { return false }}
	for _, o := range opts {
		o(s)
	}
	if s.approver != nil {
		s.approver.OnReplyDecided(s)
	}
	return s
}

// Name names the service in start and stop errors.
func (s *Service) Name() string { return "replies" }

// Start runs the loop until Stop: a pass, again at once while it claimed a full batch,
// else at the next reply's due time, a Notify or the poll interval.
func (s *Service) Start(ctx context.Context) error {
	loop := service.Loop[Pass]{
		Base: service.Base{Logger: s.log, Now: s.now},
		Pass: func(ctx context.Context) (Pass, bool, error) {
			n, err := s.RunOnce(ctx)
			return Pass{n, err}, n >= s.batch, err
		},
		Failed:    "reply pass failed",
		Signal:    &s.TestSignals.Pass,
		NextDue:   s.store.NextReplyDue,
		Kick:      s.kick.C(),
		Interval:  s.poll,
		ErrorWait: s.errWait,
	}
	return s.StartStop.Start(ctx, loop.Run)
}

// Notify wakes the loop (a reply was queued); it never blocks.
func (s *Service) Notify() { s.kick.Kick() }

// Queue accepts r for thread k: it is on disk when Queue returns. The same id again
// answers the reply as it is; other text or another thread under a used id is
// ErrConflict.
func (s *Service) Queue(ctx context.Context, k inbox.ThreadKey, req Request) (Reply, error) {
	if !idPattern.MatchString(req.ID) {
		return Reply{}, fmt.Errorf("%w: id must be 1-128 characters of letters, digits, '.', '_', ':' and '-', starting with a letter or digit", ErrInvalid)
	}
	if req.Text == "" {
		return Reply{}, fmt.Errorf("%w: text is empty", ErrInvalid)
	}
	if len(req.Text) > MaxTextBytes {
		return Reply{}, fmt.Errorf("%w: text is %d bytes, at most %d", ErrTooLong, len(req.Text), MaxTextBytes)
	}
	text := inbox.CleanText(req.Text)
	// A used id answers first: a retried request must not fail on a place that changed.
	if old, err := s.store.GetReply(ctx, req.ID); err == nil {
		return same(old, k, text)
	} else if !errors.Is(err, inbox.ErrNotFound) {
		return Reply{}, fmt.Errorf("read reply %s: %w", req.ID, err)
	}
	if req.Approval && s.approver == nil {
		return Reply{}, fmt.Errorf("approval: %w", ErrNoApprovers)
	}
	to, err := s.destination(ctx, k, req.ReplyTo)
	if err != nil {
		return Reply{}, err
	}
	snd, ok := s.senders[to.Source]
	if !ok {
		return Reply{}, fmt.Errorf("%w: no connector of source %q can send replies", ErrUnknownPlace, to.Source)
	}
	if err := snd.Check(to, text); err != nil {
		return Reply{}, err
	}
	if req.Watch && s.watches != nil {
		if resource, ok := s.places.WatchResource(to); ok {
			if err := s.watches.CheckConversation(ctx, k, to.Source, to.Connector, resource); err != nil {
				return Reply{}, fmt.Errorf("watch: %w", err)
			}
		}
	}
	now := s.now().UTC()
	r := Reply{ID: req.ID, Thread: k, Text: text, To: to, Watch: req.Watch, Status: StatusQueued,
		NextAttemptAt: &now, CreatedAt: now, UpdatedAt: now, QueuedAt: now}
	held := s.approver != nil && (req.Approval || s.approval(k.Agent))
	if held {
		r.Status, r.NextAttemptAt = StatusPending, nil
	}
	got, created, err := s.store.CreateReply(ctx, r)
	if err != nil {
		return Reply{}, fmt.Errorf("record reply: %w", err)
	}
	if !created {
		return same(got, k, text) // a concurrent request with the same id won
	}
	if held {
		if err := s.approver.RequestReplyApproval(ctx, got); err != nil {
			// No approval exists to ever decide it (one whose Slack post failed does
			// exist, shows why, and expires): it must not stay pending forever.
			s.log.Warn("reply approval not requested", "reply_id", got.ID, "error", s.redact(err))
			declined, _, derr := s.store.DeclineReply(context.WithoutCancel(ctx), got.ID,
				"not approved: the approval could not be requested: "+s.redact(err), s.now().UTC())
			if derr != nil {
				return Reply{}, fmt.Errorf("decline reply %s whose approval could not be requested: %w", got.ID, derr)
			}
			return declined, nil
		}
	} else {
		s.Notify()
	}
	return got, nil
}

// same answers a used id: the reply when it is the same one asked again.
func same(r Reply, k inbox.ThreadKey, text string) (Reply, error) {
	if r.Thread != k || r.Text != text {
		return Reply{}, fmt.Errorf("reply %q: %w", r.ID, ErrConflict)
	}
	return r, nil
}

// destination is the asked replyTo when the thread's notifications came from that
// place (the thread's record of it, so the agent cannot change a sender or subject),
// else the thread's most recent origin when none is asked. Only records the connector
// kind of the place verified count (WithProvenance); places compare by their kind's key
// (WithPlaces).
func (s *Service) destination(ctx context.Context, k inbox.ThreadKey, asked *To) (To, error) {
	all, err := s.store.ThreadOrigins(ctx, k, threadOrigins)
	if err != nil {
		return To{}, fmt.Errorf("read the thread's origins: %w", err)
	}
	origins := make([]To, 0, len(all))
	for _, o := range all {
		if s.trust.Vouches(o.To.Source, o.VerifiedBy) {
			origins = append(origins, s.places.Normal(o.To))
		}
	}
	if asked == nil {
		if len(origins) == 0 {
			return To{}, fmt.Errorf("%w: no replyTo given and no notification of this thread says where to answer", ErrUnknownPlace)
		}
		return origins[0], nil
	}
	// A source no kind answers for names no place of the thread; an agent's place may
	// only hold fields places have, of their types.
	key, err := s.places.key(*asked)
	switch {
	case errors.Is(err, ErrUnknownPlace):
	case err != nil:
		return To{}, err
	default:
		if err := s.places.check(*asked); err != nil {
			return To{}, err
		}
		for _, o := range origins {
			if got, err := s.places.key(o); err == nil && got == key {
				return s.places.instruct(o, *asked)
			}
		}
	}
	return To{}, fmt.Errorf("%w: replyTo names no place a notification of this thread came from", ErrUnknownPlace)
}

// Get reads a reply of thread k; another thread's is inbox.ErrNotFound.
func (s *Service) Get(ctx context.Context, k inbox.ThreadKey, id string) (Reply, error) {
	r, err := s.store.GetReply(ctx, id)
	if err != nil {
		return Reply{}, err
	}
	if r.Thread != k {
		return Reply{}, fmt.Errorf("reply %s: %w", id, inbox.ErrNotFound)
	}
	return r, nil
}

// List lists replies (the admin API).
func (s *Service) List(ctx context.Context, f Filter) ([]Reply, string, error) {
	return s.store.ListReplies(ctx, f)
}

// Retry queues a failed reply again, due now, with a fresh max_age (the admin API).
func (s *Service) Retry(ctx context.Context, id string) (Reply, error) {
	r, ok, err := s.store.RequeueReply(ctx, id, StatusFailed, s.now().UTC())
	if err != nil {
		return Reply{}, err
	}
	if !ok {
		return r, fmt.Errorf("reply %s is %s: %w", id, r.Status, ErrNotRetryable)
	}
	s.Notify()
	return r, nil
}

// Decided applies an approver's decision on a pending reply: approved queues it,
// declined ends it. A reply no longer pending changes nothing (false).
func (s *Service) Decided(ctx context.Context, id string, approved bool, by string) (bool, error) {
	now := s.now().UTC()
	if approved {
		_, ok, err := s.store.RequeueReply(ctx, id, StatusPending, now)
		if ok {
			s.Notify()
		}
		return ok, err
	}
	_, ok, err := s.store.DeclineReply(ctx, id, "declined by "+by, now)
	return ok, err
}

// Expired ends a pending reply whose approval expired: declined, saying why.
func (s *Service) Expired(ctx context.Context, id, why string) (bool, error) {
	_, ok, err := s.store.DeclineReply(ctx, id, "not approved: "+why, s.now().UTC())
	return ok, err
}

// RunOnce claims due replies and sends them; it returns how many it claimed.
func (s *Service) RunOnce(ctx context.Context) (int, error) {
	now := s.now().UTC()
	rs, err := s.store.ClaimReplies(ctx, s.owner, now, now.Add(s.lease), s.batch)
	if err != nil {
		return 0, fmt.Errorf("claim due replies: %w", err)
	}
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	for _, r := range rs {
		wg.Go(func() {
			if err := s.send(ctx, r, now); err != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("reply %s: %w", r.ID, err))
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return len(rs), errors.Join(errs...)
}

// attempt runs one claimed reply: Find first when it was attempted before, then the
// send, counted durably before it starts, within half the lease.
func (s *Service) attempt(ctx context.Context, r Reply, claimed time.Time) error {
	deadline := claimed.Add(s.lease / 2)
	snd, ok := s.senders[r.To.Source]
	if !ok {
		return s.finish(ctx, r, Outcome{Status: StatusFailed, Error: fmt.Sprintf("no connector of source %q sends replies", r.To.Source)})
	}
	sctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	if r.Attempts > 0 {
		// The gateway may have died after the platform took it: look before posting again.
		sent, found, err := snd.Find(sctx, r)
		if err != nil {
			return s.retry(ctx, r, s.now(), fmt.Errorf("look for an earlier post: %w", err))
		}
		if found {
			return s.sent(ctx, r, sent)
		}
	}
	now := s.now()
	if now.Sub(r.QueuedAt) > s.maxAge {
		msg := fmt.Sprintf("not sent within replies.max_age (%s)", s.maxAge)
		if r.LastError != "" {
			msg += "; last error: " + r.LastError
		}
		return s.finish(ctx, r, Outcome{Status: StatusFailed, Error: msg})
	}
	if now.After(deadline) {
		return s.retry(ctx, r, now, errors.New("the lease ran short before the send"))
	}
	ok, err := s.store.BeginReplyAttempt(ctx, r.ID, s.owner, now)
	if err != nil {
		return fmt.Errorf("count the attempt: %w", err)
	}
	if !ok {
		return nil // the lease lapsed; whoever holds it now sends
	}
	r.Attempts++
	sent, retry, err := snd.Send(sctx, r)
	switch {
	case err == nil:
		s.log.InfoContext(ctx, "reply sent", "reply_id", r.ID, "source", r.To.Source, "connector", r.To.Connector, "attempts", r.Attempts)
		return s.sent(ctx, r, sent)
	case retry:
		return s.retry(ctx, r, s.now(), err)
	default:
		s.log.WarnContext(ctx, "reply failed", "reply_id", r.ID, "source", r.To.Source, "error", s.redact(err))
		return s.finish(ctx, r, Outcome{Status: StatusFailed, Error: s.redact(err)})
	}
}

// sent records r sent, its watch first: a watch not recorded retries the reply, whose
// next attempt finds the post by its marker and records both.
func (s *Service) sent(ctx context.Context, r Reply, sent Sent) error {
	if r.Watch && s.watches != nil {
		resource, ok := s.places.WatchResource(r.To)
		if !ok {
			s.log.WarnContext(ctx, "reply sent without its watch: its place names no conversation", "reply_id", r.ID)
			return s.finish(ctx, r, Outcome{Status: StatusSent, Sent: sent})
		}
		_, _, err := s.watches.WatchConversation(context.WithoutCancel(ctx), r.Thread, r.To.Source, r.To.Connector, resource, r.ID)
		switch {
		case errors.Is(err, watch.ErrTooMany):
			s.log.WarnContext(ctx, "reply sent without its watch: the agent holds the most watches it may",
				"reply_id", r.ID, "thread", r.Thread.String())
		case errors.Is(err, watch.ErrForbidden), errors.Is(err, watch.ErrUnknown), errors.Is(err, watch.ErrInvalid):
			// Checked when the reply was accepted; the scope changed since (a reload).
			s.log.WarnContext(ctx, "reply sent without its watch: the agent may not watch its place",
				"reply_id", r.ID, "thread", r.Thread.String(), "error", err.Error())
		case err != nil:
			return s.retry(ctx, r, s.now(), fmt.Errorf("record the watch: %w", err))
		}
	}
	return s.finish(ctx, r, Outcome{Status: StatusSent, Sent: sent})
}

func (s *Service) retry(ctx context.Context, r Reply, now time.Time, err error) error {
	next := NextAttemptAt(now, r.Attempts, err, s.rnd)
	s.log.InfoContext(ctx, "reply retried later", "reply_id", r.ID, "attempts", r.Attempts, "next_attempt_at", next, "error", s.redact(err))
	return s.finish(ctx, r, Outcome{Status: StatusQueued, NextAttemptAt: next, Error: s.redact(err)})
}

func (s *Service) finish(ctx context.Context, r Reply, o Outcome) error {
	o.Now = s.now().UTC()
	traceOutcome(ctx, o)
	// Recorded whatever ctx does: what the platform did already happened.
	if err := s.store.FinishReply(context.WithoutCancel(ctx), r.ID, s.owner, o); err != nil {
		return fmt.Errorf("record %s: %w", o.Status, err)
	}
	return nil
}

func (s *Service) redact(err error) string { return attempt.Redact(err.Error(), s.secrets) }

// NextAttemptAt is when a reply that failed transiently after attempts sends is tried
// again: the platform's wait when it named one (RetryAfter, capped at
// attempt.MaxRetryAfter), else the dispatcher's backoff (1s, 2s, 4s … 10 min, jittered).
func NextAttemptAt(now time.Time, attempts int, err error, rnd func() float64) time.Time {
	var ra *RetryAfter
	if errors.As(err, &ra) && ra.Wait > 0 {
		return now.Add(min(ra.Wait, attempt.MaxRetryAfter))
	}
	return attempt.NextAt(now, attempts, rnd)
}

// Lookup reads any reply by id (the admin API).
func (s *Service) Lookup(ctx context.Context, id string) (Reply, error) {
	return s.store.GetReply(ctx, id)
}

// Valid reports a known status.
func (st Status) Valid() bool {
	switch st {
	case StatusQueued, StatusSent, StatusFailed, StatusPending, StatusDeclined:
		return true
	}
	return false
}

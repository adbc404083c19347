// Package retention keeps the database bounded: a cleaner deletes events, terminal inbox
// records, ended silences and watches, and finished replies older than their configured
// age. Pending records are never deleted, nor the events they came from, nor live
// silences and watches, nor replies still to be sent or approved.
package retention

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/signalgate/signalgate/service"
)

// Defaults of the `retention:` section.
const (
	DefaultEvents  = 30 * 24 * time.Hour
	DefaultRecords = 30 * 24 * time.Hour
	// An ended silence or watch stays a week, to be read back (what held this, what
	// watched that) over a weekend and the week after; a finished reply stays as long
	// as the records it answered.
	DefaultSilences = 7 * 24 * time.Hour
	DefaultWatches  = 7 * 24 * time.Hour
	DefaultReplies  = 30 * 24 * time.Hour
	DefaultInterval = time.Hour
	// batch bounds one delete transaction, so a large backlog never holds the
	// (SQLite: single) writer for long.
	batch = 1000
)

// Config is the `retention:` section of config.yaml. An age of 0s keeps that kind
// forever; an unset age takes its default.
type Config struct {
	// Events is how long events are kept after they were received.
	Events *time.Duration `yaml:"events"`
	// Records is how long records in a terminal status (delivered, seen, dismissed,
	// archived, discarded, failed, superseded) are kept after their last change, and
	// a thread's told state of a net-state lane after it was last told.
	Records *time.Duration `yaml:"records"`
	// Silences is how long a silence is kept after it ended (on time or expired early).
	Silences *time.Duration `yaml:"silences"`
	// Watches is how long a watch is kept after it ended.
	Watches *time.Duration `yaml:"watches"`
	// Replies is how long a finished reply (sent, failed, declined) is kept after its
	// last change.
	Replies *time.Duration `yaml:"replies"`
	// Interval is the time between two cleaning passes; the first runs at start.
	Interval time.Duration `yaml:"interval"`
}

// WithDefaults fills unset fields.
func (c Config) WithDefaults() Config {
	if c.Events == nil {
		d := DefaultEvents
		c.Events = &d
	}
	for _, f := range []struct {
		age **time.Duration
		def time.Duration
	}{{&c.Records, DefaultRecords}, {&c.Silences, DefaultSilences}, {&c.Watches, DefaultWatches}, {&c.Replies, DefaultReplies}} {
		if *f.age == nil {
			d := f.def
			*f.age = &d
		}
	}
	if c.Interval == 0 {
		c.Interval = DefaultInterval
	}
	return c
}

// Validate reports problems with key paths relative to `retention`.
func (c Config) Validate() error {
	var errs []error
	if c.Events != nil && *c.Events < 0 {
		errs = append(errs, errors.New("events: must not be negative (0s keeps events forever)"))
	}
	for _, f := range []struct {
		key string
		age *time.Duration
	}{{"records", c.Records}, {"silences", c.Silences}, {"watches", c.Watches}, {"replies", c.Replies}} {
		if f.age != nil && *f.age < 0 {
			errs = append(errs, fmt.Errorf("%s: must not be negative (0s keeps %s forever)", f.key, f.key))
		}
	}
	if c.Interval < 0 || (c.Interval > 0 && c.Interval < time.Second) {
		errs = append(errs, errors.New("interval: must be at least 1s"))
	}
	return errors.Join(errs...)
}

// Store deletes in bounded batches (*store.Retention).
type Store interface {
	DeleteEventsBefore(ctx context.Context, cutoff time.Time, limit int) (int64, error)
	DeleteTerminalRecordsBefore(ctx context.Context, cutoff time.Time, limit int) (int64, error)
	DeleteNetStatesBefore(ctx context.Context, cutoff time.Time, limit int) (int64, error)
	DeleteEndedSilencesBefore(ctx context.Context, cutoff time.Time, limit int) (int64, error)
	DeleteEndedWatchesBefore(ctx context.Context, cutoff time.Time, limit int) (int64, error)
	DeleteFinishedRepliesBefore(ctx context.Context, cutoff time.Time, limit int) (int64, error)
}

// Result is what one pass deleted.
type Result struct {
	Events    int64
	Records   int64
	NetStates int64 // told states of net-state lanes
	Silences  int64 // ended silences
	Watches   int64 // ended watches
	Replies   int64 // finished replies
}

// Cleaner runs passes every interval in a goroutine it owns, between Start and Stop.
type Cleaner struct {
	service.Base
	service.StartStop
	cfg     Config
	st      Store
	wait    func(ctx context.Context, d time.Duration) bool
	deleted func(kind string, n int64)

	// TestSignals are where tests wait; see service.Signal.
	TestSignals struct {
		Pass service.Signal[Pass] // a pass of the loop ended
	}
}

// Pass is what one pass of the loop did.
type Pass struct {
	Result Result
	Err    error
}

// Option configures a Cleaner.
type Option func(*Cleaner)

// WithWait replaces the wait between passes (nil: sleep); it returns false when ctx
// ended first.
func WithWait(wait func(ctx context.Context, d time.Duration) bool) Option {
	return func(c *Cleaner) { c.wait = wait }
}

// WithObserver is told how many rows of a kind (events, records, net_states, silences,
// watches, replies) a pass deleted;
// metrics count them.
func WithObserver(fn func(kind string, n int64)) Option { return func(c *Cleaner) { c.deleted = fn } }

// New builds a stopped cleaner; cfg gets its defaults.
func New(cfg Config, st Store, base service.Base, opts ...Option) *Cleaner {
	c := &Cleaner{Base: base.Component("retention"), cfg: cfg.WithDefaults(), st: st,
		deleted: func(string, int64) {}}
	for _, o := range opts {
		o(c)
	}
	return c
}

// Name names the service in start errors.
func (c *Cleaner) Name() string { return "retention cleaner" }

// Start runs a pass now and then every interval until Stop.
func (c *Cleaner) Start(ctx context.Context) error {
	loop := service.Loop[Pass]{
		Base: c.Base,
		Pass: func(ctx context.Context) (Pass, bool, error) {
			res, err := c.RunOnce(ctx)
			return Pass{res, err}, false, err // RunOnce drains itself
		},
		Failed:   "retention pass failed",
		Signal:   &c.TestSignals.Pass,
		Interval: c.cfg.Interval,
		Wait:     c.wait,
	}
	return c.StartStop.Start(ctx, loop.Run)
}

// RunOnce deletes what is past its age: terminal records first, so the events they
// came from can go in the same pass.
func (c *Cleaner) RunOnce(ctx context.Context) (Result, error) {
	now := c.Now()
	var res Result
	var err error
	if age := *c.cfg.Records; age > 0 {
		res.Records, err = drain(ctx, now.Add(-age), c.st.DeleteTerminalRecordsBefore)
		c.report("records", res.Records)
		if err != nil {
			return res, err
		}
		// A lane's told state is request-made memory too: it ages with the records.
		res.NetStates, err = drain(ctx, now.Add(-age), c.st.DeleteNetStatesBefore)
		c.report("net_states", res.NetStates)
		if err != nil {
			return res, err
		}
	}
	if age := *c.cfg.Events; age > 0 {
		res.Events, err = drain(ctx, now.Add(-age), c.st.DeleteEventsBefore)
		c.report("events", res.Events)
		if err != nil {
			return res, err
		}
	}
	for _, k := range []struct {
		kind string
		age  time.Duration
		n    *int64
		del  func(context.Context, time.Time, int) (int64, error)
	}{
		{"silences", *c.cfg.Silences, &res.Silences, c.st.DeleteEndedSilencesBefore},
		{"watches", *c.cfg.Watches, &res.Watches, c.st.DeleteEndedWatchesBefore},
		{"replies", *c.cfg.Replies, &res.Replies, c.st.DeleteFinishedRepliesBefore},
	} {
		if k.age <= 0 {
			continue
		}
		*k.n, err = drain(ctx, now.Add(-k.age), k.del)
		c.report(k.kind, *k.n)
		if err != nil {
			return res, err
		}
	}
	return res, nil
}

func (c *Cleaner) report(kind string, n int64) {
	if n == 0 {
		return
	}
	c.deleted(kind, n)
	c.Logger.Info("retention deleted", "kind", kind, "rows", n)
}

// drain deletes batch after batch until one comes back short.
func drain(ctx context.Context, cutoff time.Time, del func(context.Context, time.Time, int) (int64, error)) (int64, error) {
	var total int64
	for {
		n, err := del(ctx, cutoff, batch)
		total += n
		if err != nil {
			return total, fmt.Errorf("retention: %w", err)
		}
		if n < batch || ctx.Err() != nil {
			return total, ctx.Err()
		}
	}
}

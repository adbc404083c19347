package watch

import (
	"context"
	"errors"
	"time"

	"github.com/signalgate/signalgate/service"
)

// DefaultSweepBatch is how many due watches a sweep reads at once.
const DefaultSweepBatch = 200

// Due lists the watches past their expiry (Store.DueWatches).
type Due interface {
	DueWatches(ctx context.Context, now time.Time, limit int) ([]Watch, error)
}

// Ender ends a watch and tells its thread (Service.End).
type Ender interface {
	End(ctx context.Context, id, reason string) (Watch, bool, error)
}

// Sweep ends expired watches every sweep_interval, in a goroutine it owns between
// Start and Stop. It is crash-safe as it is: a watch it did not get to stays due, and
// ending one twice (another replica, a pass after a crash) tells the thread once.
type Sweep struct {
	service.Base
	service.StartStop
	due      Due
	end      Ender
	interval time.Duration
	batch    int
	wait     func(ctx context.Context, d time.Duration) bool

	// TestSignals are where tests wait; see service.Signal.
	TestSignals struct {
		Pass service.Signal[SweepPass] // a pass of the loop ended
	}
}

// SweepPass is what one pass did: the watches it ended, and its error.
type SweepPass struct {
	Ended int
	Err   error
}

// SweepOption configures a Sweep.
type SweepOption func(*Sweep)

// WithSweepWait replaces the wait between passes (nil: sleep); it returns false when
// ctx ended first.
func WithSweepWait(wait func(ctx context.Context, d time.Duration) bool) SweepOption {
	return func(s *Sweep) { s.wait = wait }
}

// WithSweepBatch sets how many due watches a pass reads at once.
func WithSweepBatch(n int) SweepOption {
	return func(s *Sweep) {
		if n > 0 {
			s.batch = n
		}
	}
}

// NewSweep builds a stopped sweep over due, ending through end every cfg.SweepInterval.
func NewSweep(due Due, end Ender, cfg Config, base service.Base, opts ...SweepOption) *Sweep {
	s := &Sweep{Base: base.Component("watch_sweep"), due: due, end: end, interval: cfg.WithDefaults().SweepInterval,
		batch: DefaultSweepBatch}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Name names the service in start and stop errors.
func (s *Sweep) Name() string { return "watch sweep" }

// Start runs a pass now and then every interval until Stop.
func (s *Sweep) Start(ctx context.Context) error {
	loop := service.Loop[SweepPass]{
		Base: s.Base,
		Pass: func(ctx context.Context) (SweepPass, bool, error) {
			n, err := s.RunOnce(ctx)
			return SweepPass{n, err}, false, err // RunOnce drains itself
		},
		Failed:   "watch sweep failed",
		Signal:   &s.TestSignals.Pass,
		Interval: s.interval,
		Wait:     s.wait,
	}
	return s.StartStop.Start(ctx, loop.Run)
}

// RunOnce ends every watch due now, batch by batch. A watch that cannot be ended is
// left for the next pass, which stops this one after the batch: it would be read again.
func (s *Sweep) RunOnce(ctx context.Context) (int, error) {
	now := s.Now()
	ended := 0
	for {
		due, err := s.due.DueWatches(ctx, now, s.batch)
		if err != nil {
			return ended, err
		}
		var errs []error
		for _, w := range due {
			_, ok, err := s.end.End(ctx, w.ID, EndExpired)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if ok {
				ended++
			}
		}
		if len(errs) > 0 || len(due) < s.batch {
			return ended, errors.Join(errs...)
		}
	}
}

package agent

import (
	"context"
	"errors"

	"github.com/signalgate/signalgate/inbox"
)

// Turns of an agent session that reports them (Claude Code's hooks): a turn starting
// or going on keeps the thread active, a turn ending turns it idle. They map onto runs
// without the caller knowing a run id.

// TurnBusy marks thread k active: its live run's lease is renewed, or a run opened.
func (s *Service) TurnBusy(ctx context.Context, k inbox.ThreadKey) (Run, error) {
	run, created, err := s.OpenRun(ctx, k)
	if err != nil || created {
		return run, err
	}
	renewed, err := s.Runs.Heartbeat(ctx, k, run.ID)
	if errors.Is(err, ErrRunClosed) {
		// It closed in between: open the next one.
		run, _, err = s.OpenRun(ctx, k)
		return run, err
	}
	return renewed, err
}

// TurnIdle ends thread k's live run, if any, as finished (the turn's signals are
// acknowledged) or aborted (they are delivered again in the next run). nil: the thread
// was idle already.
func (s *Service) TurnIdle(ctx context.Context, k inbox.ThreadKey, status string) (*Run, error) {
	live, err := s.Runs.Live(ctx, k)
	if err != nil || live == nil {
		return nil, err
	}
	run, err := s.Finish(ctx, k, live.ID, FinishRequest{Status: status})
	if err != nil {
		return nil, err
	}
	return &run, nil
}

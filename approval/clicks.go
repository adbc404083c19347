package approval

import "context"

// Slack wants an interactivity request answered within 3 seconds, while a decision may
// wait up to resumeTimeout for Mastra: clicks are decided after the request is answered,
// one at a time, by a worker the service owns.

// clickQueue bounds the clicks waiting for the worker.
const clickQueue = 64

type laterClick struct {
	click  Click
	answer func(ctx context.Context, notice string)
}

// Later queues c to be decided once the request that carried it has been answered;
// answer then gets what to tell the person privately, if anything (also when deciding
// failed). It reports false when the service is not running or its queue is full: the
// caller decides within the request instead.
func (s *Service) Later(c Click, answer func(ctx context.Context, notice string)) bool {
	s.mu.Lock()
	q := s.clicks
	s.mu.Unlock()
	if q == nil {
		return false
	}
	select {
	case q <- laterClick{click: c, answer: answer}:
		return true
	default:
		return false
	}
}

func (s *Service) decideClicks(ctx context.Context, q <-chan laterClick) {
	for {
		select {
		case <-ctx.Done():
			return
		case lc := <-q:
			s.decideLater(ctx, lc)
		}
	}
}

func (s *Service) decideLater(ctx context.Context, lc laterClick) {
	// A decision under way outlives a stop: once recorded it is delivered, or reopened.
	ctx = context.WithoutCancel(ctx)
	notice, err := s.Decide(ctx, lc.click)
	if err != nil {
		s.Logger.Error("decide approval click", "approval_id", lc.click.ApprovalID, "user", lc.click.UserID, "error", err.Error())
		notice = "Your click could not be recorded just now; nothing was changed, please try again."
	}
	if notice != "" {
		lc.answer(ctx, notice)
	}
}

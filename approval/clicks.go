package approval

import "context"

// Slack wants an interactivity or Events API request answered within 3 seconds, while a
// decision or an answer may wait up to resumeTimeout for Mastra: clicks and replies are
// applied after the request is answered, one at a time, by a worker the service owns.

// clickQueue bounds the clicks and replies waiting for the worker.
const clickQueue = 64

// laterJob is a click or a reply to apply; answer gets what to tell the person.
type laterJob struct {
	apply  func(ctx context.Context) (string, error)
	answer func(ctx context.Context, notice string)
	// failed is the notice when apply fails; logged with the error as what.
	failed, what, user string
}

// Later queues c to be decided once the request that carried it has been answered;
// answer then gets what to tell the person privately, if anything (also when deciding
// failed). It reports false when the service is not running or its queue is full: the
// caller decides within the request instead.
func (s *Service) Later(c Click, answer func(ctx context.Context, notice string)) bool {
	return s.later(laterJob{apply: func(ctx context.Context) (string, error) { return s.Decide(ctx, c) }, answer: answer,
		failed: "Your click could not be recorded just now; nothing was changed, please try again.",
		what:   "decide approval click " + c.ApprovalID, user: c.UserID})
}

// LaterAnswer queues r like Later queues a click (see Answer).
func (s *Service) LaterAnswer(r Reply, answer func(ctx context.Context, notice string)) bool {
	return s.later(laterJob{apply: func(ctx context.Context) (string, error) { return s.Answer(ctx, r) }, answer: answer,
		failed: "Your reply could not be taken as the answer just now; nothing was changed, please reply again.",
		what:   "answer question", user: r.UserID})
}

func (s *Service) later(j laterJob) bool {
	s.mu.Lock()
	q := s.clicks
	s.mu.Unlock()
	if q == nil {
		return false
	}
	select {
	case q <- j:
		return true
	default:
		return false
	}
}

func (s *Service) decideClicks(ctx context.Context, q <-chan laterJob) {
	for {
		select {
		case <-ctx.Done():
			return
		case j := <-q:
			s.decideLater(ctx, j)
		}
	}
}

func (s *Service) decideLater(ctx context.Context, j laterJob) {
	// A decision under way outlives a stop: once recorded it is delivered, or reopened.
	ctx = context.WithoutCancel(ctx)
	notice, err := j.apply(ctx)
	if err != nil {
		s.Logger.Error(j.what, "user", j.user, "error", err.Error())
		notice = j.failed
	}
	if notice != "" {
		j.answer(ctx, notice)
	}
}

package approval

import "context"

// WakeSlotFreed is told (agent.WithWakeSlotHook) that a wake run of agentID closed on
// this replica, so a max_concurrent_wakes slot may be free: the decisions of its
// threads waiting in the wake queue are sent at once, in the queue's order, by the
// service's worker. It never blocks the closing caller.
func (s *Service) WakeSlotFreed(agentID string) {
	s.mu.Lock()
	s.freed[agentID] = struct{}{}
	s.mu.Unlock()
	select {
	case s.slotKick <- struct{}{}:
	default:
	}
}

// slotLoop sends the waiting decisions of the agents WakeSlotFreed named until ctx ends.
func (s *Service) slotLoop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.slotKick:
		}
		s.mu.Lock()
		agents := make([]string, 0, len(s.freed))
		for id := range s.freed {
			agents = append(agents, id)
		}
		clear(s.freed)
		s.mu.Unlock()
		for _, id := range agents {
			if err := s.SendQueued(ctx, id); err != nil && ctx.Err() == nil {
				s.Logger.Warn("send approval signals waiting for a wake slot", "agent", id, "error", err.Error())
			}
		}
	}
}

// SendQueued sends the signals of agentID's decisions waiting in its wake queue, first
// in the queue first, until one still finds no free slot: those behind it wait too.
func (s *Service) SendQueued(ctx context.Context, agentID string) error {
	now := s.Now().UTC()
	as, err := s.Store.QueuedApprovals(ctx, agentID, now.Add(-DeliverFor), sweepBatch)
	if err != nil {
		return err
	}
	for _, a := range as {
		if !s.resend(ctx, a) {
			return nil
		}
	}
	return nil
}

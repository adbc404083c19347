package agent

import (
	"context"

	"github.com/signalgate/signalgate/inbox"
)

// MaxCancelIDs bounds the ids of one cancel request.
const MaxCancelIDs = 100

// CancelRequest is the body of POST …/messages/cancel, as Mastra's cancelQueuedMessages
// takes its signalIds.
type CancelRequest struct {
	SignalIDs []string `json:"signalIds"`
}

// CancelResult is what a cancel did: the ids, as given, of the messages it cancelled.
type CancelResult struct {
	CancelledSignalIDs []string `json:"cancelledSignalIds"`
}

// CancelQueuedMessages dismisses the messages of thread k (records created with deliverAs
// queued-message or message) that are not yet handed over to the agent, named by the
// signal id they are handed over under or by their record id. Ids that name nothing
// cancellable (unknown, another thread's, already handed over) are not in the answer, as
// in Mastra, and an empty list cancels nothing; a missing list or one over MaxCancelIDs is
// invalid.
func (s *Service) CancelQueuedMessages(ctx context.Context, k inbox.ThreadKey, req CancelRequest) (CancelResult, error) {
	if req.SignalIDs == nil {
		return CancelResult{}, invalidf("signalIds: required (the signal or record ids of the queued messages)")
	}
	if len(req.SignalIDs) > MaxCancelIDs {
		return CancelResult{}, invalidf("signalIds: at most %d ids per request, got %d", MaxCancelIDs, len(req.SignalIDs))
	}
	for i, id := range req.SignalIDs {
		if err := checkID(id); err != nil {
			return CancelResult{}, invalidf("signalIds[%d]: %v", i, err)
		}
	}
	ids, err := s.Records.CancelMessages(ctx, k, req.SignalIDs, s.now().UTC())
	if err != nil {
		return CancelResult{}, err
	}
	if len(ids) > 0 {
		s.log.Info("queued messages cancelled", "thread", k.String(), "count", len(ids))
	}
	return CancelResult{CancelledSignalIDs: ids}, nil
}

package agent

import (
	"context"

	"github.com/signalgate/signalgate/inbox"
)

// FrameReader reads a thread's log.
type FrameReader interface {
	FramesAfter(ctx context.Context, k inbox.ThreadKey, after int64, limit int) ([]Frame, error)
	LastSeq(ctx context.Context, k inbox.ThreadKey) (int64, error)
}

// StreamTarget reaches agents that subscribe over SSE. The dispatcher appends every
// accepted signal to its thread's durable log in the same transaction that records the
// delivery; for a stream agent that append is the delivery itself — every subscriber,
// present or future, reads the frame from the log — so the target only has to accept.
// A crash before that commit leaves both undone, and the retry appends exactly once.
type StreamTarget struct{}

// NewStreamTarget returns the stream target.
func NewStreamTarget() *StreamTarget { return &StreamTarget{} }

// Deliver accepts the signal; its frame is committed with the dispatcher's outcome.
func (*StreamTarget) Deliver(context.Context, Handoff) (Result, error) { return Result{}, nil }

package delivery

import (
	"context"

	"github.com/signalgate/signalgate/agent"
)

// frameCompleter is a Queue whose commit returns the frames it logged, as the log holds
// them (the store).
type frameCompleter interface {
	CompleteThreadFrames(ctx context.Context, owner string, o Outcome) ([]agent.Frame, error)
}

// commit applies o; logged is nil when the queue cannot say what it logged.
func (d *Dispatcher) commit(ctx context.Context, owner string, o Outcome) (logged []agent.Frame, err error) {
	if fc, ok := d.q.(frameCompleter); ok {
		return fc.CompleteThreadFrames(ctx, owner, o)
	}
	return nil, d.q.CompleteThread(ctx, owner, o)
}

// publish tells subscribers that o's commit, now durable, grew the thread's log: with
// the frames themselves when both the queue and the broker can, so a live subscriber
// need not read them back; otherwise with a wake-up to read the log.
func (d *Dispatcher) publish(o Outcome, logged []agent.Frame) {
	if len(o.Frames) == 0 {
		return
	}
	fp, ok := d.pub.(agent.FramePublisher)
	if _, known := d.q.(frameCompleter); ok && known {
		fp.PublishFrames(o.Thread, logged) // none logged (all repeats): nothing to tell
		return
	}
	d.pub.Publish(o.Thread)
}

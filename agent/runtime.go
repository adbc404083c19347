package agent

import (
	"context"
	"time"

	"github.com/signalgate/signalgate/inbox"
)

// RuntimeState is what a thread's runtime is doing as its target kind knows it (an A2A
// task, a runtime's run), for the console's thread page.
type RuntimeState struct {
	Kind   string    // the target kind
	What   string    // what the runtime calls it: task, run
	ID     string    // its id in the runtime
	State  string    // its state, as the runtime names it
	Detail string    // more to show (the runtime's context, the question it asks)
	Since  time.Time // when the state was seen
}

// RuntimeViewer says what a thread's runtime is doing; ok is false when it knows nothing
// of the thread.
type RuntimeViewer interface {
	RuntimeState(ctx context.Context, k inbox.ThreadKey) (state RuntimeState, ok bool, err error)
}

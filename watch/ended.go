package watch

import (
	"fmt"

	"github.com/signalgate/signalgate/inbox"
)

// EndedSource is the source of a watch-ended notification and of the event the expiry
// sweep stores for it: the gateway itself speaks.
const EndedSource = "signalgate"

// Ended is the notification telling w's thread that w ended for reason. The store keeps
// it only if it is what ends w (inbox.Notification.EndsWatch), so the thread hears of
// each end once whichever way it came (expiry, a terminal event, an operator).
func Ended(w Watch, reason string) inbox.Notification {
	attrs := inbox.Attributes{}.
		Set("watch", w.ID).
		Set("source", w.Source).
		Set("connector", w.Connector).
		Set("resource", w.Resource).
		Set("reason", reason)
	return inbox.Notification{
		Thread:     w.Thread,
		Route:      Route,
		Source:     EndedSource,
		SourceID:   w.ID,
		Kind:       Kind,
		Summary:    fmt.Sprintf("Stopped watching %s %s: %s.", w.Source, w.Resource, why(reason)),
		DedupeKey:  Kind + ":" + w.ID,
		Attributes: attrs,
		Metadata:   map[string]any{"verified_by": EndedSource, "watch": w.ID, "reason": reason},
		EndsWatch:  &inbox.WatchEnd{ID: w.ID, Reason: reason},
	}
}

func why(reason string) string {
	switch reason {
	case EndExpired:
		return "the watch expired"
	case EndMerged:
		return "the pull request was merged"
	case EndClosed:
		return "it was closed"
	case EndDeleted:
		return "the watch was deleted"
	case EndOperator:
		return "an operator removed the watch"
	}
	return reason
}

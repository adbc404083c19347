package admin

import (
	"context"
	"time"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/approval"
	"github.com/signalgate/signalgate/delivery"
	"github.com/signalgate/signalgate/inbox"
)

// ExplainStore is what explain reads; it never writes.
type ExplainStore interface {
	GetEvent(ctx context.Context, id string) (inbox.Event, error)
	// EventByDelivery finds the stored event with a provider delivery id, each value as
	// the inbox stores it (clean text; the id inbox.StoredKey).
	EventByDelivery(ctx context.Context, source, connector, deliveryID string) (id string, ok bool, err error)
	// FindMergeable returns the pending record n (as stored: Notification.Stored) would
	// merge into, or nil.
	FindMergeable(ctx context.Context, n inbox.Notification) (*inbox.Record, error)
	LiveRun(ctx context.Context, k inbox.ThreadKey, now time.Time) (*agent.Run, error)
	// NetLane reads a thread's net-state lane (netKey as stored: inbox.StoredKey): its
	// pending records and told state.
	NetLane(ctx context.Context, k inbox.ThreadKey, netKey string) (inbox.NetLane, error)
}

// Store is the database behind the admin API (*store.Admin).
type Store interface {
	ExplainStore
	ListEvents(ctx context.Context, f inbox.EventFilter) ([]inbox.Event, string, error)
	GetRecord(ctx context.Context, id string) (inbox.Record, error)
	ListRecords(ctx context.Context, f inbox.RecordFilter) ([]inbox.Record, string, error)
	TransitionRecord(ctx context.Context, k inbox.ThreadKey, id string, to inbox.Status, from []inbox.Status, now time.Time) (inbox.Record, bool, error)
	// SnoozeRecord hides pending record id until `until` (inbox.ErrNotSnoozable, with the
	// record as it is, when it is not pending or is a net-state lane's).
	SnoozeRecord(ctx context.Context, k inbox.ThreadKey, id string, until, now time.Time) (inbox.Record, error)
	// RequeueRecord makes a record in one of from pending and due now again; changed is
	// false when it was in another status (the record is returned as it is).
	RequeueRecord(ctx context.Context, id string, from []inbox.Status, operator string, now time.Time) (rec inbox.Record, changed bool, err error)
	ListThreads(ctx context.Context, f agent.ThreadFilter, now time.Time) ([]agent.Thread, string, error)
	ListAttempts(ctx context.Context, f delivery.AttemptFilter) ([]delivery.Attempt, error)
	// RecordSignals lists the signals of k's log that carried record id, oldest first.
	RecordSignals(ctx context.Context, k inbox.ThreadKey, id string) ([]agent.Frame, error)
	ConnectorActivity(ctx context.Context, source, connector string) (inbox.ConnectorActivity, error)
	ConnectorStates(ctx context.Context, connector string) (map[string]string, error)
	// TargetStates and Backlog are the targets' shared health and what waits for them.
	TargetStates(ctx context.Context) ([]delivery.TargetState, error)
	Backlog(ctx context.Context, now time.Time) (map[string]int, error)
	// ListApprovals and GetApproval read tool approvals.
	ListApprovals(ctx context.Context, f approval.Filter) ([]approval.Approval, string, error)
	GetApproval(ctx context.Context, id string) (approval.Approval, error)
}

package store

import (
	"context"
	"time"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/approval"
	"github.com/signalgate/signalgate/delivery"
	"github.com/signalgate/signalgate/inbox"
)

// The ports: one type per interface a domain declares for its persistence, each over the
// one DB, built by its constructor (cheap: a port holds nothing but the DB). A port's
// methods are those its consumer asks for; what two ports share is a core method.
type (
	// Inbox stores what the inbox ingests and releases (inbox.Store, SnoozeStore,
	// HoldStore).
	Inbox struct{ *core }
	// Queue is the dispatcher's (delivery.Queue, with the thread log reads and in-flight
	// recoveries it asks for).
	Queue struct{ *core }
	// Targets is the targets' shared health (delivery.Health, metrics.TargetReader).
	Targets struct{ *core }
	// Runs is presence: runs, leases and wakes (agent.RunStore, agent.WakeStore).
	Runs struct{ *core }
	// Frames is the thread log (agent.FrameReader).
	Frames struct{ *core }
	// Records is the agent API's inbox operations on records (agent.RecordStore).
	Records struct{ *core }
	// States is the cached-state lanes (agent.StateStore).
	States struct{ *core }
	// Replies is the reply outbox (reply.Store, reply.Own).
	Replies struct{ *core }
	// Watches is agents' watches (watch.Store, connectors.WatchLookup, admin.WatchReader).
	Watches struct{ *core }
	// SeenRepos is the repositories GitHub deliveries came from (github.SeenRepos, and
	// the watch scope's RepoSeen).
	SeenRepos struct{ *core }
	// Approvals is tool approvals and questions (approval.Store, approval.Places).
	Approvals struct{ *core }
	// Schedules is schedules and their fires (schedule.Store).
	Schedules struct{ *core }
	// Silences is silences (silence.Store).
	Silences struct{ *core }
	// Explain is what explain reads (admin.ExplainStore); it never writes.
	Explain struct{ *core }
	// Admin is the operator API's read model (admin.Store): explain's reads and the rest.
	Admin struct{ *Explain }
	// ConsoleSessions is the console's sign-ins (console.Sessions).
	ConsoleSessions struct{ *core }
	// ConnectorState is connectors' durable key-value state: mailbox cursors, CI states
	// (email.CursorStore, github.StateStore).
	ConnectorState struct{ *core }
	// Sessions is the sessions hosted agent runtimes keep for threads (session.Store).
	Sessions struct{ *core }
	// Retention deletes what retention no longer keeps (retention.Store).
	Retention struct{ *core }
	// Gauges are the counts metrics read at scrape time (metrics.StatsReader).
	Gauges struct{ *core }
)

// NewInbox is db's inbox port.
func NewInbox(db *DB) *Inbox { return &Inbox{db.core} }

// NewQueue is db's dispatch queue.
func NewQueue(db *DB) *Queue { return &Queue{db.core} }

// NewTargets is db's target health.
func NewTargets(db *DB) *Targets { return &Targets{db.core} }

// NewRuns is db's presence.
func NewRuns(db *DB) *Runs { return &Runs{db.core} }

// NewFrames is db's thread log.
func NewFrames(db *DB) *Frames { return &Frames{db.core} }

// NewRecords is db's records as the agent API changes them.
func NewRecords(db *DB) *Records { return &Records{db.core} }

// NewStates is db's cached-state lanes.
func NewStates(db *DB) *States { return &States{db.core} }

// NewReplies is db's reply outbox.
func NewReplies(db *DB) *Replies { return &Replies{db.core} }

// NewWatches is db's watches.
func NewWatches(db *DB) *Watches { return &Watches{db.core} }

// NewSeenRepos is db's seen repositories.
func NewSeenRepos(db *DB) *SeenRepos { return &SeenRepos{db.core} }

// NewApprovals is db's approvals.
func NewApprovals(db *DB) *Approvals { return &Approvals{db.core} }

// NewSchedules is db's schedules.
func NewSchedules(db *DB) *Schedules { return &Schedules{db.core} }

// NewSilences is db's silences.
func NewSilences(db *DB) *Silences { return &Silences{db.core} }

// NewExplain is what explain reads of db.
func NewExplain(db *DB) *Explain { return &Explain{db.core} }

// NewAdmin is the operator API's read model of db.
func NewAdmin(db *DB) *Admin { return &Admin{NewExplain(db)} }

// NewConsoleSessions is db's console sessions.
func NewConsoleSessions(db *DB) *ConsoleSessions { return &ConsoleSessions{db.core} }

// NewConnectorState is db's connector state.
func NewConnectorState(db *DB) *ConnectorState { return &ConnectorState{db.core} }

// NewSessions is db's hosted runtime sessions.
func NewSessions(db *DB) *Sessions { return &Sessions{db.core} }

// NewRetention is db's retention deletes.
func NewRetention(db *DB) *Retention { return &Retention{db.core} }

// NewGauges is db's scrape-time counts.
func NewGauges(db *DB) *Gauges { return &Gauges{db.core} }

// The reads two consumers ask for are written once, on the port that owns them.

// GetFrame returns one logged signal of k (the dispatcher recognises a resent one).
func (s *Queue) GetFrame(ctx context.Context, k inbox.ThreadKey, id string) (agent.Frame, error) {
	return (&Frames{s.core}).GetFrame(ctx, k, id)
}

// LiveRun is Runs.LiveRun.
func (s *Explain) LiveRun(ctx context.Context, k inbox.ThreadKey, now time.Time) (*agent.Run, error) {
	return (&Runs{s.core}).LiveRun(ctx, k, now)
}

// TransitionRecord is Records.TransitionRecord.
func (s *Admin) TransitionRecord(ctx context.Context, k inbox.ThreadKey, id string, to inbox.Status, from []inbox.Status, now time.Time) (inbox.Record, bool, error) {
	return (&Records{s.core}).TransitionRecord(ctx, k, id, to, from, now)
}

// SnoozeRecord is Records.SnoozeRecord.
func (s *Admin) SnoozeRecord(ctx context.Context, k inbox.ThreadKey, id string, until, now time.Time) (inbox.Record, error) {
	return (&Records{s.core}).SnoozeRecord(ctx, k, id, until, now)
}

// TargetStates is Targets.TargetStates.
func (s *Admin) TargetStates(ctx context.Context) ([]delivery.TargetState, error) {
	return (&Targets{s.core}).TargetStates(ctx)
}

// Backlog is Targets.Backlog.
func (s *Admin) Backlog(ctx context.Context, now time.Time) (map[string]int, error) {
	return (&Targets{s.core}).Backlog(ctx, now)
}

// ListApprovals is Approvals.ListApprovals.
func (s *Admin) ListApprovals(ctx context.Context, f approval.Filter) ([]approval.Approval, string, error) {
	return (&Approvals{s.core}).ListApprovals(ctx, f)
}

// GetApproval is Approvals.GetApproval.
func (s *Admin) GetApproval(ctx context.Context, id string) (approval.Approval, error) {
	return (&Approvals{s.core}).GetApproval(ctx, id)
}

// ConnectorStates is ConnectorState.ConnectorStates.
func (s *Admin) ConnectorStates(ctx context.Context, connector string) (map[string]string, error) {
	return (&ConnectorState{s.core}).ConnectorStates(ctx, connector)
}

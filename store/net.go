package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/signalgate/signalgate/delivery"
	"github.com/signalgate/signalgate/inbox"
)

// Net-state lanes: a thread's records with one netKey, and the state the model was last
// told in each (table net_states). See inbox.DecideNet for the rules.

// The lane's queries, each served by an index (records_net_pending, records_net), so a
// lane a sender fills with thousands of records costs the same per event as a new one.
const (
	qLanePending = `SELECT ` + recordColumns + ` FROM records
		WHERE agent = ? AND resource_id = ? AND thread_id = ? AND net_key = ? AND status = 'pending' AND net_key <> ''
		ORDER BY created_at, id`
	qLaneHead = `SELECT ` + recordReadColumns + ` FROM records
		WHERE agent = ? AND resource_id = ? AND thread_id = ? AND net_key = ? AND net_key <> ''
		ORDER BY created_at DESC, id DESC LIMIT 1`
)

// NetLane reads the lane of netKey in thread k as ingest would see it now (explain).
// netKey is taken as the inbox stores it (inbox.StoredKey).
func (s *Explain) NetLane(ctx context.Context, k inbox.ThreadKey, netKey string) (inbox.NetLane, error) {
	return s.netLane(ctx, s.r, k, netKey)
}

func (s *core) netLane(ctx context.Context, q sqlx.QueryerContext, k inbox.ThreadKey, netKey string) (inbox.NetLane, error) {
	var lane inbox.NetLane
	var err error
	lane.Pending, err = s.selectRecords(ctx, q, qLanePending, k.Agent, k.Resource, k.Thread, netKey)
	if err != nil {
		return lane, fmt.Errorf("read net-state lane of %s: %w", k, err)
	}
	lane.Told, lane.HasTold, err = s.toldState(ctx, q, k, netKey)
	return lane, err
}

func (s *core) toldState(ctx context.Context, q sqlx.QueryerContext, k inbox.ThreadKey, netKey string) (string, bool, error) {
	var told string
	err := sqlx.GetContext(ctx, q, &told, s.q(`SELECT told_state FROM net_states
		WHERE agent = ? AND resource_id = ? AND thread_id = ? AND net_key = ?`), k.Agent, k.Resource, k.Thread, netKey)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("read told state of %s: %w", k, err)
	}
	return told, true, nil
}

// ingestNet stores n, a notification with a netKey, in its lane: the pending records of
// the lane are superseded by the new record, which is itself superseded on arrival when
// its state is what the model already knows.
func (s *Inbox) ingestNet(ctx context.Context, tx *sqlx.Tx, ev *inbox.Event, n inbox.Notification, d inbox.Decision,
	newID func() string) (inbox.RecordOutcome, error) {
	now := ev.ReceivedAt
	lane, err := s.netLane(ctx, tx, n.Thread, n.NetKey)
	if err != nil {
		return inbox.RecordOutcome{}, err
	}
	nd := inbox.DecideNet(n, lane)
	r := inbox.NewRecord(newID(), ev.ID, n, d, now)
	r.TraceParent = ev.TraceParent
	for i := range lane.Pending {
		old := &lane.Pending[i]
		old.Supersede(r.ID, n.State, now)
		if err := s.updateRecord(ctx, tx, old); err != nil {
			return inbox.RecordOutcome{}, err
		}
	}
	if r.Status == inbox.StatusPending {
		r.ApplyNet(nd)
	} else {
		r.CoalescedCount = nd.CoalescedCount // discarded by the policy: it still ends the lane's pending record
	}
	if err := s.insertRecord(ctx, tx, &r); err != nil {
		return inbox.RecordOutcome{}, err
	}
	return inbox.RecordOutcome{RecordID: r.ID, Thread: n.Thread, Decision: d, Net: &nd}, nil
}

// toldRecord is a record whose full content reached the model.
type toldRecord struct {
	ID        string `db:"id"`
	NetKey    string `db:"net_key"`
	State     string `db:"net_state"`
	RestState string `db:"rest_state"`
}

// tellNet remembers that the model was told r's state in its lane, then settles the
// lane: its newest record may have been decided against an older told state (it
// arrived while r was on its way).
func (s *core) tellNet(ctx context.Context, tx *sqlx.Tx, k inbox.ThreadKey, r toldRecord, now time.Time) error {
	if r.NetKey == "" || r.State == "" {
		return nil
	}
	var err error
	if r.State == r.RestState {
		// At rest: nothing told compares with the rest state alike, so no row is kept.
		_, err = tx.ExecContext(ctx, s.q(`DELETE FROM net_states WHERE agent = ? AND resource_id = ? AND thread_id = ? AND net_key = ?`),
			k.Agent, k.Resource, k.Thread, r.NetKey)
	} else {
		_, err = tx.ExecContext(ctx, s.q(`INSERT INTO net_states (agent, resource_id, thread_id, net_key, told_state, record_id, told_at)
			VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (agent, resource_id, thread_id, net_key)
			DO UPDATE SET told_state = excluded.told_state, record_id = excluded.record_id, told_at = excluded.told_at`),
			k.Agent, k.Resource, k.Thread, r.NetKey, r.State, r.ID, micros(now))
	}
	if err != nil {
		return fmt.Errorf("remember told state of %s: %w", k, err)
	}
	return s.settleNet(ctx, tx, k, r, now)
}

// settleNet re-applies the net-state rule to the lane's newest record after the told
// state changed under it: a pending record whose state is now the told one is
// superseded; a record superseded on arrival as unchanged whose state now differs is
// pending again, with the schedule the policy gave it.
func (s *core) settleNet(ctx context.Context, tx *sqlx.Tx, k inbox.ThreadKey, told toldRecord, now time.Time) error {
	heads, err := s.selectRecords(ctx, tx, qLaneHead, k.Agent, k.Resource, k.Thread, told.NetKey)
	if err != nil {
		return fmt.Errorf("read newest record of a net-state lane of %s: %w", k, err)
	}
	if len(heads) == 0 || heads[0].ID == told.ID || heads[0].State == "" {
		return nil
	}
	h := &heads[0]
	base := told.State
	if base == told.RestState {
		base = h.RestState // nothing remembered: the head compares with its rest state
	}
	switch {
	case h.Status == inbox.StatusPending && base != "" && h.State == base:
		h.Status, h.Reason = inbox.StatusSuperseded, "net state unchanged: "+h.State
	case h.Status == inbox.StatusSuperseded && h.SupersededBy == "" && h.State != base:
		h.Status = inbox.StatusPending
		h.Reason = fmt.Sprintf("net state changed: %s was told while this arrived → %s", told.State, h.State)
		if h.DueAt() == nil {
			h.DeliverAt = &now
		}
	default:
		return nil
	}
	h.UpdatedAt = now
	return s.updateRecord(ctx, tx, h)
}

// netRecord is a record of a net-state lane and its thread.
type netRecord struct {
	toldRecord
	threadKeyRow
}

// pendingNet reads those of ids pending in a net-state lane, about to be told to the
// model (read by the agent). It locks their threads first, as everything that changes a
// thread's records does, and reads them after: a lane's record superseded meanwhile is
// not read as told. Threads are locked in key order, so two callers never take the same
// threads crosswise (a deadlock on PostgreSQL).
func (s *Records) pendingNet(ctx context.Context, tx *sqlx.Tx, ids []string, now time.Time) ([]netRecord, error) {
	in, args, err := sqlx.In(`SELECT DISTINCT agent, resource_id, thread_id FROM records WHERE id IN (?) AND net_key <> ''
		ORDER BY agent, resource_id, thread_id`, ids)
	if err != nil {
		return nil, fmt.Errorf("read threads of net-state lanes: %w", err)
	}
	var threads []threadKeyRow
	if err := tx.SelectContext(ctx, &threads, s.q(in), args...); err != nil {
		return nil, fmt.Errorf("read threads of net-state lanes: %w", err)
	}
	if len(threads) == 0 {
		return nil, nil
	}
	for _, k := range threads {
		if err := s.lockThread(ctx, tx, inbox.ThreadKey{Agent: k.Agent, Resource: k.Resource, Thread: k.Thread}, now); err != nil {
			return nil, err
		}
	}
	in, args, err = sqlx.In(`SELECT id, agent, resource_id, thread_id, net_key, net_state, rest_state FROM records
		WHERE id IN (?) AND status = 'pending' AND net_key <> '' AND net_state <> ''`, ids)
	if err != nil {
		return nil, fmt.Errorf("read records of net-state lanes: %w", err)
	}
	var rows []netRecord
	if err := tx.SelectContext(ctx, &rows, s.q(in), args...); err != nil {
		return nil, fmt.Errorf("read records of net-state lanes: %w", err)
	}
	return rows, nil
}

// tellRecords remembers the told state of rs (read by pendingNet, now seen).
func (s *Records) tellRecords(ctx context.Context, tx *sqlx.Tx, rs []netRecord, now time.Time) error {
	for _, r := range rs {
		k := inbox.ThreadKey{Agent: r.Agent, Resource: r.Resource, Thread: r.Thread}
		if err := s.tellNet(ctx, tx, k, r.toldRecord, now); err != nil {
			return err
		}
	}
	return nil
}

// DeleteNetStatesBefore forgets up to limit told states last told before cutoff,
// oldest first (retention: a request-made lane must not be remembered forever).
func (s *Retention) DeleteNetStatesBefore(ctx context.Context, cutoff time.Time, limit int) (int64, error) {
	var query string
	if s.driver == DriverPostgres {
		query = `DELETE FROM net_states WHERE ctid IN (SELECT ctid FROM net_states WHERE told_at < ? ORDER BY told_at LIMIT ?)`
	} else {
		query = `DELETE FROM net_states WHERE rowid IN (SELECT rowid FROM net_states WHERE told_at < ? ORDER BY told_at LIMIT ?)`
	}
	res, err := s.w.ExecContext(ctx, s.q(query), micros(cutoff), limit)
	if err != nil {
		return 0, fmt.Errorf("delete told states before %s: %w", cutoff.Format(time.RFC3339), err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("delete told states: %w", err)
	}
	return n, nil
}

// deliveredNet records that d, a record of a net-state lane, reached the model in
// full. A newer record of the lane may have superseded it while it was on its way
// (marked, the delivery found it no longer pending): it was delivered all the same, so
// it says so, and the lane is settled against what the model now knows.
func (s *Queue) deliveredNet(ctx context.Context, tx *sqlx.Tx, k inbox.ThreadKey, d delivery.Sent, marked sql.Result, now time.Time) error {
	if n, err := marked.RowsAffected(); err == nil && n == 0 {
		_, err := tx.ExecContext(ctx, s.q(`UPDATE records SET status = 'delivered', delivered_signal_id = ?, delivered_at = ?,
			due_at = NULL, lease_owner = NULL, lease_until = NULL WHERE id = ? AND status = 'superseded'`),
			d.SignalID, micros(now), d.RecordID)
		if err != nil {
			return fmt.Errorf("mark superseded record %s delivered: %w", d.RecordID, err)
		}
	}
	return s.tellNet(ctx, tx, k, toldRecord{ID: d.RecordID, NetKey: d.NetKey, State: d.State, RestState: d.RestState}, now)
}

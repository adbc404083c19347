package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jmoiron/sqlx"
	"go.opentelemetry.io/otel/trace"

	"github.com/signalgate/signalgate/inbox"
)

// Ingest stores the event and creates or merges its records in one transaction.
// A (source, connector, delivery id) seen before is reported as a duplicate and
// nothing changes.
func (s *Inbox) Ingest(ctx context.Context, ev *inbox.Event, ns []inbox.Notification, decide inbox.DecideFunc, newID func() string) (inbox.IngestResult, error) {
	var res inbox.IngestResult
	// Compressed outside the transaction: the writer is shared.
	body, bodyEnc := s.body.pack(ev.Body)
	status := ev.Status // endWatches may change it: a rolled back attempt must not have
	ctx, span := s.startIngestSpan(ctx)
	err := s.inIngestTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		if span != nil {
			// SQLite's group commit runs this under its own context.
			ctx = trace.ContextWithSpan(ctx, span)
		}
		res = inbox.IngestResult{EventID: ev.ID}
		// Every notification either creates or merges a record, or the tx rolls back.
		ev.Records, ev.Status = len(ns), status
		inserted, err := s.insertEvent(ctx, tx, ev, body, bodyEnc)
		if err != nil {
			return err
		}
		if cp := ev.Checkpoint; cp != nil {
			if err := s.setConnectorState(ctx, tx, cp.Connector, cp.Key, cp.Value, ev.ReceivedAt); err != nil {
				return err
			}
		}
		if !inserted {
			res.Duplicate = true
			return s.redelivered(ctx, tx, ev, &res.EventID)
		}
		kept, err := s.endWatches(ctx, tx, ev, ns)
		if err != nil {
			return err
		}
		for _, n := range kept {
			out, err := s.ingestOne(ctx, tx, ev, n, decide, newID)
			if err != nil {
				return err
			}
			res.Records = append(res.Records, out)
		}
		return nil
	})
	endSpan(span, err)
	if err != nil {
		return inbox.IngestResult{}, err
	}
	return res, nil
}

// endWatches ends the watches ns announce the end of (Notification.EndsWatch) and
// answers the notifications to store: an announcement whose watch had ended already (a
// terminal event and the expiry sweep both saw it live) is dropped, so a thread hears of
// each end once. The event row then counts only the kept ones.
func (s *Inbox) endWatches(ctx context.Context, tx *sqlx.Tx, ev *inbox.Event, ns []inbox.Notification) ([]inbox.Notification, error) {
	if !slices.ContainsFunc(ns, func(n inbox.Notification) bool { return n.EndsWatch != nil }) {
		return ns, nil
	}
	kept := make([]inbox.Notification, 0, len(ns))
	for _, n := range ns {
		if e := n.EndsWatch; e != nil {
			ended, err := s.endWatch(ctx, tx, e.ID, e.Reason, ev.ReceivedAt)
			if err != nil {
				return nil, err
			}
			if !ended {
				continue
			}
		}
		kept = append(kept, n)
	}
	if len(kept) == len(ns) {
		return ns, nil
	}
	ev.Records = len(kept)
	if ev.Status == inbox.EventRouted && len(kept) == 0 {
		ev.Status = inbox.EventUnrouted
	}
	if _, err := tx.ExecContext(ctx, s.q(`UPDATE events SET records = ?, status = ? WHERE id = ?`),
		ev.Records, string(ev.Status), ev.ID); err != nil {
		return nil, fmt.Errorf("count the records of event %s: %w", ev.ID, err)
	}
	return kept, nil
}

func (s *Inbox) insertEvent(ctx context.Context, tx *sqlx.Tx, ev *inbox.Event, body []byte, bodyEnc string) (bool, error) {
	headers, err := json.Marshal(ev.Headers)
	if err != nil {
		return false, fmt.Errorf("encode event headers: %w", err)
	}
	var delivery sql.NullString
	if ev.DeliveryID != "" {
		delivery = sql.NullString{String: ev.DeliveryID, Valid: true}
	}
	var digest sql.NullString
	if ev.BodyDigest != "" {
		digest = sql.NullString{String: ev.BodyDigest, Valid: true}
	}
	var replayOf sql.NullString
	if ev.ReplayOf != "" {
		replayOf = sql.NullString{String: ev.ReplayOf, Valid: true}
	}
	r, err := s.writeTx(tx).exec(ctx, qInsertEvent, ev.ID, ev.Source, ev.Connector, delivery, ev.Type, string(headers), body,
		micros(ev.ReceivedAt), string(ev.Status), ev.Error, replayOf, ev.Records, digest, ev.TraceParent, bodyEnc)
	if err != nil {
		return false, fmt.Errorf("insert event: %w", err)
	}
	n, err := r.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("insert event: %w", err)
	}
	return n == 1, nil
}

// redelivered counts a redelivery on the event that made ev a duplicate (same
// delivery id, else same body digest) and sets id to that event's.
func (s *Inbox) redelivered(ctx context.Context, tx *sqlx.Tx, ev *inbox.Event, id *string) error {
	q := s.writeTx(tx)
	err := q.get(ctx, id, qRedelivered, micros(ev.ReceivedAt), ev.Source, ev.Connector, ev.DeliveryID)
	if errors.Is(err, sql.ErrNoRows) && ev.BodyDigest != "" {
		err = q.get(ctx, id, qRedeliveredBody, micros(ev.ReceivedAt), ev.Source, ev.Connector, ev.BodyDigest)
	}
	if err != nil {
		return fmt.Errorf("record redelivery of %s event: %w", ev.Source, err)
	}
	return nil
}

func (s *Inbox) ingestOne(ctx context.Context, tx *sqlx.Tx, ev *inbox.Event, n inbox.Notification, decide inbox.DecideFunc, newID func() string) (inbox.RecordOutcome, error) {
	now := ev.ReceivedAt
	// Serialise merges per (thread, source, kind) across transactions and replicas:
	// "equal dedupeKey OR equal coalesceKey" cannot be one unique index.
	if err := s.lockMergeFamily(ctx, tx, n.Thread, n.Source, n.Kind); err != nil {
		return inbox.RecordOutcome{}, err
	}
	if err := s.touchThread(ctx, tx, n.Thread, now); err != nil {
		return inbox.RecordOutcome{}, err
	}
	presence, err := s.presence(ctx, s.writeTx(tx), n.Thread, now)
	if err != nil {
		return inbox.RecordOutcome{}, err
	}
	sub := n.Subject()
	if n.NetKey != "" {
		// A lane's records never merge; the thread row upserted above serialises the
		// lane's writers on PostgreSQL.
		d, span := s.decide(ctx, n, func() inbox.Decision { return decide(sub, presence, now) })
		out, err := s.ingestNet(ctx, tx, ev, n, d, newID)
		endDecide(span, out.RecordID)
		return out, err
	}
	existing, err := s.findMergeable(ctx, s.writeTx(tx), n)
	if err != nil {
		return inbox.RecordOutcome{}, err
	}
	if existing != nil {
		if sub.Priority == "" {
			sub.Priority = existing.Priority
		}
		d, span := s.decide(ctx, n, func() inbox.Decision { return decide(sub, presence, now) })
		endDecide(span, existing.ID)
		existing.Merge(n, d, now)
		existing.LinkTrace(ev.TraceParent)
		s.mergeSpan(ctx, existing)
		if err := s.updateRecord(ctx, tx, existing); err != nil {
			return inbox.RecordOutcome{}, err
		}
		return inbox.RecordOutcome{RecordID: existing.ID, Thread: n.Thread, Merged: true, Decision: d}, nil
	}
	d, span := s.decide(ctx, n, func() inbox.Decision { return decide(sub, presence, now) })
	r := inbox.NewRecord(newID(), ev.ID, n, d, now)
	endDecide(span, r.ID)
	r.TraceParent = ev.TraceParent
	if err := s.insertRecord(ctx, tx, &r); err != nil {
		return inbox.RecordOutcome{}, err
	}
	return inbox.RecordOutcome{RecordID: r.ID, Thread: n.Thread, Decision: d}, nil
}

func (s *Inbox) touchThread(ctx context.Context, tx *sqlx.Tx, k inbox.ThreadKey, now time.Time) error {
	_, err := s.writeTx(tx).exec(ctx, qTouchThread, k.Agent, k.Resource, k.Thread, micros(now), micros(now))
	if err != nil {
		return fmt.Errorf("record thread %s: %w", k, err)
	}
	return nil
}

// presence is active when the thread has an open run whose lease has not expired.
func (s *Inbox) presence(ctx context.Context, q txq, k inbox.ThreadKey, now time.Time) (inbox.Presence, error) {
	var n int
	err := q.get(ctx, &n, qPresence, k.Agent, k.Resource, k.Thread, micros(now))
	if err != nil {
		return "", fmt.Errorf("read presence of %s: %w", k, err)
	}
	if n > 0 {
		return inbox.PresenceActive, nil
	}
	return inbox.PresenceIdle, nil
}

func (s *core) findMergeable(ctx context.Context, q txq, n inbox.Notification) (*inbox.Record, error) {
	if n.DedupeKey == "" && n.CoalesceKey == "" {
		return nil, nil
	}
	var row recordRow
	err := q.get(ctx, &row, mergeQuery(n.DedupeKey != "", n.CoalesceKey != ""), mergeArgs(n)...)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("find mergeable record: %w", err)
	}
	r, err := row.record()
	if err != nil {
		return nil, err
	}
	return &r, nil
}

package store_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/delivery"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/store"
)

const ciLane = "github:acme/api#7:ci:check_run:lint"

func ci(state string) inbox.Notification {
	kind := "ci-failure"
	if state == "success" {
		kind = "ci-recovered"
	}
	n := comment("lint "+state, "", "github:acme/api#7:"+kind)
	n.Kind, n.Priority = kind, inbox.PriorityHigh
	n.NetKey, n.State, n.RestState = ciLane, state, "success"
	return n
}

func record(t *testing.T, s *store.DB, id string) inbox.Record {
	t.Helper()
	r, err := store.NewAdmin(s).GetRecord(context.Background(), id)
	require.NoError(t, err)
	return r
}

// deliver commits a pass that delivered r in full, as the dispatcher does.
func deliver(t *testing.T, s *store.DB, r inbox.Record, at time.Time) {
	t.Helper()
	err := store.NewQueue(s).CompleteThread(context.Background(), "", delivery.Outcome{Thread: r.Thread, Now: at, Delivered: []delivery.Sent{{
		RecordID: r.ID, UpdatedAt: r.UpdatedAt, Coalesced: r.CoalescedCount, SignalID: "sig-" + r.ID, Attempts: 1,
		NetKey: r.NetKey, State: r.State, RestState: r.RestState}}})
	require.NoError(t, err)
}

func TestNetStatePendingFailureThenSuccess(t *testing.T) {
	forEach(t, func(t *testing.T, s *store.DB, svc *inbox.Service) {
		fail := ingest(t, svc, "d1", ci("failure")).Records[0]
		require.NotNil(t, fail.Net)
		require.Equal(t, "net state changed: success (rest state) → failure", fail.Net.Reason)
		ok := ingest(t, svc, "d2", ci("success")).Records[0]
		require.True(t, ok.Net.Unchanged)
		require.Equal(t, []string{fail.RecordID}, ok.Net.Supersedes)

		old := record(t, s, fail.RecordID)
		require.Equal(t, inbox.StatusSuperseded, old.Status)
		require.Equal(t, ok.RecordID, old.SupersededBy)
		require.Nil(t, old.DueAt())
		nw := record(t, s, ok.RecordID)
		require.Equal(t, inbox.StatusSuperseded, nw.Status)
		require.Equal(t, "net state unchanged: success", nw.Reason)
		require.Equal(t, 2, nw.CoalescedCount, "the new record carries the count on")
		require.Empty(t, nw.SupersededBy)
		pending, err := store.NewRecords(s).ThreadRecords(context.Background(), thread, inbox.StatusPending)
		require.NoError(t, err)
		require.Empty(t, pending, "nothing reaches the model")
	})
}

func TestNetStateDeliveredFailureThenSuccess(t *testing.T) {
	forEach(t, func(t *testing.T, s *store.DB, svc *inbox.Service) {
		fail := ingest(t, svc, "d1", ci("failure")).Records[0]
		deliver(t, s, record(t, s, fail.RecordID), t0)
		require.Equal(t, inbox.StatusDelivered, record(t, s, fail.RecordID).Status)

		ok := ingest(t, svc, "d2", ci("success")).Records[0]
		require.False(t, ok.Net.Unchanged)
		require.True(t, ok.Net.HasTold)
		require.Equal(t, "net state changed: failure (last told) → success", ok.Net.Reason)
		r := record(t, s, ok.RecordID)
		require.Equal(t, inbox.StatusPending, r.Status, "the recovery is delivered")
		require.Equal(t, 1, r.CoalescedCount)

		// Told the rest state, the lane needs no memory: a second success is unchanged.
		deliver(t, s, r, t0)
		again := ingest(t, svc, "d3", ci("success")).Records[0]
		require.True(t, again.Net.Unchanged)
		require.False(t, again.Net.HasTold)
	})
}

func TestNetStateFlapWhilePendingDeliversOneFailure(t *testing.T) {
	forEach(t, func(t *testing.T, s *store.DB, svc *inbox.Service) {
		records := store.NewRecords(s)
		ingest(t, svc, "d1", ci("failure"))
		ingest(t, svc, "d2", ci("success"))
		last := ingest(t, svc, "d3", ci("failure")).Records[0]
		pending, err := records.ThreadRecords(context.Background(), thread, inbox.StatusPending)
		require.NoError(t, err)
		require.Len(t, pending, 1)
		require.Equal(t, last.RecordID, pending[0].ID)
		require.Equal(t, "failure", pending[0].State)
		all, err := records.ThreadRecords(context.Background(), thread)
		require.NoError(t, err)
		require.Len(t, all, 3, "superseded records are kept")
	})
}

// A success that arrives while the failure is on its way to the model is decided against
// what was told before the failure; the failure's delivery settles the lane again.
func TestNetStateSuccessDuringFailureDelivery(t *testing.T) {
	forEach(t, func(t *testing.T, s *store.DB, svc *inbox.Service) {
		fail := ingest(t, svc, "d1", ci("failure")).Records[0]
		sent := record(t, s, fail.RecordID) // the dispatcher read it and sends it
		ok := ingest(t, svc, "d2", ci("success")).Records[0]
		require.True(t, ok.Net.Unchanged)
		deliver(t, s, sent, t0.Add(time.Second))

		old := record(t, s, fail.RecordID)
		require.Equal(t, inbox.StatusDelivered, old.Status, "it reached the model")
		require.Equal(t, "sig-"+fail.RecordID, old.SignalID)
		r := record(t, s, ok.RecordID)
		require.Equal(t, inbox.StatusPending, r.Status, "so the recovery is owed")
		require.Contains(t, r.Reason, "net state changed")
		require.NotNil(t, r.DueAt())

		// The other way round: a failure again while the first was on its way is
		// already known once the first is delivered.
		deliver(t, s, r, t0.Add(2*time.Second))
		f2 := ingest(t, svc, "d3", ci("failure")).Records[0]
		sent = record(t, s, f2.RecordID)
		f3 := ingest(t, svc, "d4", ci("failure")).Records[0]
		require.False(t, f3.Net.Unchanged)
		deliver(t, s, sent, t0.Add(3*time.Second))
		r = record(t, s, f3.RecordID)
		require.Equal(t, inbox.StatusSuperseded, r.Status)
		require.Equal(t, "net state unchanged: failure", r.Reason)
	})
}

func TestNetStateReadByTheAgentIsTold(t *testing.T) {
	forEach(t, func(t *testing.T, s *store.DB, svc *inbox.Service) {
		explain := store.NewExplain(s)
		records := store.NewRecords(s)
		ctx := context.Background()
		fail := ingest(t, svc, "d1", ci("failure")).Records[0]
		require.NoError(t, records.MarkSeen(ctx, []string{fail.RecordID}, t0))
		ok := ingest(t, svc, "d2", ci("success")).Records[0]
		require.True(t, ok.Net.HasTold)
		require.Equal(t, inbox.StatusPending, record(t, s, ok.RecordID).Status)

		_, changed, err := records.TransitionRecord(ctx, thread, ok.RecordID, inbox.StatusSeen,
			[]inbox.Status{inbox.StatusPending, inbox.StatusDelivered}, t0)
		require.NoError(t, err)
		require.True(t, changed)
		lane, err := explain.NetLane(ctx, thread, ciLane)
		require.NoError(t, err)
		require.False(t, lane.HasTold, "told the rest state")

		// Dismissing is not reading: nothing is told.
		f2 := ingest(t, svc, "d3", ci("failure")).Records[0]
		_, _, err = records.TransitionRecord(ctx, thread, f2.RecordID, inbox.StatusDismissed, []inbox.Status{inbox.StatusPending}, t0)
		require.NoError(t, err)
		lane2, err := explain.NetLane(ctx, thread, ciLane)
		require.NoError(t, err)
		require.False(t, lane2.HasTold)
	})
}

func TestNetStateLanesNeverMerge(t *testing.T) {
	forEach(t, func(t *testing.T, s *store.DB, svc *inbox.Service) {
		lint := ci("failure")
		test := ci("failure")
		test.NetKey = "github:acme/api#7:ci:check_run:test"
		plain := comment("a comment", "", lint.CoalesceKey)
		plain.Kind = lint.Kind
		a := ingest(t, svc, "d1", lint).Records[0]
		b := ingest(t, svc, "d2", test).Records[0]
		c := ingest(t, svc, "d3", plain).Records[0]
		require.False(t, b.Merged)
		require.False(t, c.Merged, "a record without a netKey stays out of lanes")
		require.Empty(t, b.Net.Supersedes, "another lane")
		for _, id := range []string{a.RecordID, b.RecordID, c.RecordID} {
			require.Equal(t, inbox.StatusPending, record(t, s, id).Status)
		}
	})
}

// A stranger's netKey is an index key: bounded like dedupe keys, hashed past 255 bytes,
// and equal keys still meet in one lane.
func TestNetKeyBounded(t *testing.T) {
	forEach(t, func(t *testing.T, s *store.DB, svc *inbox.Service) {
		long := strings.Repeat("k", 64<<10)
		n := ci("failure")
		n.NetKey = long
		first := ingest(t, svc, "d1", n).Records[0]
		r := record(t, s, first.RecordID)
		require.True(t, strings.HasPrefix(r.NetKey, "sha256:"))
		require.LessOrEqual(t, len(r.NetKey), inbox.MaxKeyBytes)
		n2 := ci("success")
		n2.NetKey = long
		second := ingest(t, svc, "d2", n2).Records[0]
		require.Equal(t, []string{first.RecordID}, second.Net.Supersedes)

		// A state too long to keep makes the event invalid, like an over-long kind.
		bad := ci(strings.Repeat("s", inbox.MaxLabelBytes+1))
		res, err := svc.Ingest(context.Background(), event("d3"), []inbox.Notification{bad})
		require.NoError(t, err)
		require.Empty(t, res.Records)
		ev, err := store.NewExplain(s).GetEvent(context.Background(), res.EventID)
		require.NoError(t, err)
		require.Equal(t, inbox.EventInvalid, ev.Status)
		require.Contains(t, ev.Error, "state: 201 bytes")
	})
}

func TestNetStatesPrunedByRetention(t *testing.T) {
	forEach(t, func(t *testing.T, s *store.DB, svc *inbox.Service) {
		explain := store.NewExplain(s)
		retention := store.NewRetention(s)
		ctx := context.Background()
		fail := ingest(t, svc, "d1", ci("failure")).Records[0]
		deliver(t, s, record(t, s, fail.RecordID), t0)
		lane, err := explain.NetLane(ctx, thread, ciLane)
		require.NoError(t, err)
		require.True(t, lane.HasTold)

		n, err := retention.DeleteNetStatesBefore(ctx, t0, 10)
		require.NoError(t, err)
		require.Zero(t, n, "told at t0, not before")
		n, err = retention.DeleteNetStatesBefore(ctx, t0.Add(time.Hour), 10)
		require.NoError(t, err)
		require.Equal(t, int64(1), n)
		lane, err = explain.NetLane(ctx, thread, ciLane)
		require.NoError(t, err)
		require.False(t, lane.HasTold)
	})
}

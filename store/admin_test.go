package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/delivery"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/store"
)

func TestFindMergeableAndEventByDelivery(t *testing.T) {
	ctx := context.Background()
	forEach(t, func(t *testing.T, s *store.DB, svc *inbox.Service) {
		explain := store.NewExplain(s)
		res := ingest(t, svc, "d1", comment("first", "k1", "c1"))
		rec, err := explain.FindMergeable(ctx, comment("second", "", "c1"))
		require.NoError(t, err)
		require.NotNil(t, rec)
		require.Equal(t, res.Records[0].RecordID, rec.ID)

		for _, n := range []inbox.Notification{comment("x", "", ""), comment("x", "k2", "c2")} {
			rec, err = explain.FindMergeable(ctx, n)
			require.NoError(t, err)
			require.Nil(t, rec)
		}
		require.NoError(t, store.NewRecords(s).SetRecordStatus(ctx, res.Records[0].RecordID, inbox.StatusDelivered, t0))
		rec, err = explain.FindMergeable(ctx, comment("second", "k1", ""))
		require.NoError(t, err)
		require.Nil(t, rec, "a delivered record never absorbs")

		id, ok, err := explain.EventByDelivery(ctx, "github", "acme", "d1")
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, res.EventID, id)
		_, ok, err = explain.EventByDelivery(ctx, "github", "other", "d1")
		require.NoError(t, err)
		require.False(t, ok)
	})
}

func TestRequeueRecord(t *testing.T) {
	ctx := context.Background()
	forEach(t, func(t *testing.T, s *store.DB, svc *inbox.Service) {
		reads := store.NewAdmin(s)
		id := ingest(t, svc, "d1", comment("first", "k1", "")).Records[0].RecordID
		from := []inbox.Status{inbox.StatusFailed, inbox.StatusDelivered}

		rec, changed, err := reads.RequeueRecord(ctx, id, from, "redelivered", t0.Add(time.Hour))
		require.NoError(t, err)
		require.False(t, changed, "a pending record is queued already")
		require.Equal(t, inbox.StatusPending, rec.Status)

		decision := rec.Reason
		// Three attempts, the last a dead letter.
		require.NoError(t, store.NewQueue(s).CompleteThread(ctx, "", delivery.Outcome{Thread: rec.Thread, Now: t0.Add(time.Minute),
			Failures: []delivery.Failure{{RecordID: id, Attempts: 3, FirstAttemptAt: t0, Error: "target answered 503", Failed: true}}}))
		later := t0.Add(time.Hour)
		rec, changed, err = reads.RequeueRecord(ctx, id, from, "redelivered by ops", later)
		require.NoError(t, err)
		require.True(t, changed)
		require.Equal(t, inbox.StatusPending, rec.Status)
		require.Equal(t, inbox.ActionDeliver, rec.Action)
		require.Equal(t, decision, rec.Reason, "the policy's decision stays")
		require.Equal(t, "redelivered by ops", rec.OperatorAction)
		require.Equal(t, 3, rec.Attempts, "attempts go on counting")
		require.Equal(t, 3, rec.AttemptsBefore, "the redelivery starts a round")
		require.Nil(t, rec.FirstAttemptAt)
		require.Empty(t, rec.LastError)
		got, err := reads.GetRecord(ctx, id)
		require.NoError(t, err)
		require.Equal(t, rec, got)
		require.Equal(t, later, *rec.DeliverAt)
		require.Equal(t, later, *rec.DueAt())
		require.Equal(t, later, rec.UpdatedAt)

		st, err := store.NewGauges(s).Stats(ctx, later)
		require.NoError(t, err)
		require.Equal(t, 1, st.Due, "the dispatcher sees it due")

		_, _, err = reads.RequeueRecord(ctx, "nope", from, "x", later)
		require.ErrorIs(t, err, inbox.ErrNotFound)
	})
}

func TestListThreads(t *testing.T) {
	ctx := context.Background()
	forEach(t, func(t *testing.T, s *store.DB, _ *inbox.Service) {
		reads := store.NewAdmin(s)
		records := store.NewRecords(s)
		pol, err := inbox.NewPolicy(inbox.PolicyConfig{})
		require.NoError(t, err)
		clock := t0
		svc := inbox.NewService(store.NewInbox(s), pol, inbox.WithClock(func() time.Time { clock = clock.Add(time.Second); return clock }))
		k := func(name string) inbox.ThreadKey {
			return inbox.ThreadKey{Agent: "coder", Resource: "acme/api", Thread: name}
		}
		add := func(th string, pr inbox.Priority) string {
			n := comment("c", "", "")
			n.Thread, n.Priority = k(th), pr
			res, err := svc.Ingest(ctx, event(""), []inbox.Notification{n})
			require.NoError(t, err)
			return res.Records[0].RecordID
		}
		add("a", inbox.PriorityUrgent)
		add("a", inbox.PriorityLow)
		failed := add("a", inbox.PriorityHigh)
		require.NoError(t, records.SetRecordStatus(ctx, failed, inbox.StatusFailed, clock))
		add("b", inbox.PriorityMedium)
		delivered := add("c", inbox.PriorityHigh)
		require.NoError(t, records.SetRecordStatus(ctx, delivered, inbox.StatusDelivered, clock))
		_, _, err = store.NewRuns(s).OpenRun(ctx, agent.Run{ID: "run-1", Thread: k("b"), Status: agent.RunOpen, Origin: agent.OriginAgent,
			OpenedAt: clock, LeaseUntil: clock.Add(time.Minute)})
		require.NoError(t, err)
		now := clock.Add(time.Second)

		all, next, err := reads.ListThreads(ctx, agent.ThreadFilter{}, now)
		require.NoError(t, err)
		require.Empty(t, next)
		require.Len(t, all, 3)
		require.Equal(t, []string{"c", "b", "a"}, threadNames(all), "most recently active first")
		a, b, c := all[2], all[1], all[0]
		require.Equal(t, agent.PendingCounts{Urgent: 1, Low: 1, Total: 2}, a.Pending)
		require.Equal(t, 1, a.Failed)
		require.Equal(t, inbox.PresenceIdle, a.Presence)
		require.Nil(t, a.ActiveRun)
		require.Equal(t, inbox.PresenceActive, b.Presence)
		require.Equal(t, &agent.ActiveRun{RunID: "run-1", Origin: agent.OriginAgent, Since: clock, LeaseUntil: clock.Add(time.Minute)}, b.ActiveRun)
		require.Equal(t, int64(1), b.LastSeq, "the run frame")
		require.Equal(t, agent.PendingCounts{}, c.Pending)

		list := func(f agent.ThreadFilter, at time.Time) []string {
			out, _, err := reads.ListThreads(ctx, f, at)
			require.NoError(t, err)
			return threadNames(out)
		}
		require.Equal(t, []string{"b"}, list(agent.ThreadFilter{Presence: inbox.PresenceActive}, now))
		require.Equal(t, []string{"c", "a"}, list(agent.ThreadFilter{Presence: inbox.PresenceIdle}, now))
		require.Equal(t, []string{"c", "b", "a"}, list(agent.ThreadFilter{Presence: inbox.PresenceIdle}, now.Add(time.Hour)), "a lapsed lease is idle")
		require.Equal(t, []string{"b", "a"}, list(agent.ThreadFilter{Pending: true}, now))
		require.Equal(t, []string{"a"}, list(agent.ThreadFilter{Thread: "a"}, now))
		require.Empty(t, list(agent.ThreadFilter{Agent: "support"}, now))

		var pages []string
		cursor := ""
		for range 5 {
			page, next, err := reads.ListThreads(ctx, agent.ThreadFilter{Limit: 2, Cursor: cursor}, now)
			require.NoError(t, err)
			pages = append(pages, threadNames(page)...)
			if next == "" {
				break
			}
			cursor = next
		}
		require.Equal(t, []string{"c", "b", "a"}, pages)

		_, _, err = reads.ListThreads(ctx, agent.ThreadFilter{Cursor: inbox.Cursor{At: now, ID: "not json"}.Encode()}, now)
		require.ErrorIs(t, err, inbox.ErrBadCursor)
	})
}

func threadNames(ts []agent.Thread) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Thread)
	}
	return out
}

func TestRecordSignals(t *testing.T) {
	ctx := context.Background()
	forEach(t, func(t *testing.T, s *store.DB, _ *inbox.Service) {
		reads := store.NewAdmin(s)
		frame := func(id string, records ...string) {
			_, _, err := store.NewFrames(s).AppendFrame(ctx, agent.Frame{Event: agent.EventSignal, ID: id, Thread: thread, Behavior: agent.BehaviorDeliver,
				Signal: agent.Signal{ID: id, Type: agent.TypeNotification, TagName: "notification"}, RecordIDs: records, CreatedAt: t0})
			require.NoError(t, err)
		}
		frame("s1", "r1")
		frame("s2", "r10", "r2")
		frame("s3", "r1", "r2")
		frame("s4", "%")
		ids := func(id string) []string {
			frames, err := reads.RecordSignals(ctx, thread, id)
			require.NoError(t, err)
			var out []string
			for _, f := range frames {
				out = append(out, f.ID)
			}
			return out
		}
		require.Equal(t, []string{"s1", "s3"}, ids("r1"), "r10 is not r1")
		require.Equal(t, []string{"s2", "s3"}, ids("r2"))
		require.Equal(t, []string{"s4"}, ids("%"), "LIKE metacharacters match literally")
		require.Empty(t, ids("r_"))
		other, err := reads.RecordSignals(ctx, inbox.ThreadKey{Agent: "coder", Resource: "x", Thread: "y"}, "r1")
		require.NoError(t, err)
		require.Empty(t, other)
	})
}

func TestConnectorActivity(t *testing.T) {
	ctx := context.Background()
	forEach(t, func(t *testing.T, s *store.DB, _ *inbox.Service) {
		reads := store.NewAdmin(s)
		act, err := reads.ConnectorActivity(ctx, "github", "acme")
		require.NoError(t, err)
		require.Equal(t, inbox.ConnectorActivity{}, act)

		pol, err := inbox.NewPolicy(inbox.PolicyConfig{})
		require.NoError(t, err)
		clock := t0
		svc := inbox.NewService(store.NewInbox(s), pol, inbox.WithClock(func() time.Time { clock = clock.Add(time.Second); return clock }))
		put := func(status inbox.EventStatus, errText string) string {
			ev := event("")
			ev.Status, ev.Error = status, errText
			res, err := svc.Ingest(ctx, ev, nil)
			require.NoError(t, err)
			return res.EventID
		}
		bad := put(inbox.EventInvalid, "decode payload: unexpected shape")
		put(inbox.EventIgnored, "a bot's own comment")
		last := put(inbox.EventUnrouted, "")

		act, err = reads.ConnectorActivity(ctx, "github", "acme")
		require.NoError(t, err)
		require.Equal(t, &inbox.EventRef{ID: last, Type: "issue_comment", Status: inbox.EventUnrouted, ReceivedAt: t0.Add(3 * time.Second)}, act.LastEvent)
		require.Equal(t, &inbox.EventRef{ID: bad, Type: "issue_comment", Status: inbox.EventInvalid,
			Error: "decode payload: unexpected shape", ReceivedAt: t0.Add(time.Second)}, act.LastError)
	})
}

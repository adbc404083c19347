package retention_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/reply"
	"github.com/signalgate/signalgate/retention"
	"github.com/signalgate/signalgate/service"
	"github.com/signalgate/signalgate/silence"
	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/store/storetest"
	"github.com/signalgate/signalgate/watch"
)

var th = inbox.ThreadKey{Agent: "coder", Resource: "acme/api", Thread: "t"}

// seedEnded stores, as of t0, silences, watches and replies in every state, ended or
// finished at t0 ("old") or a day before now ("recent"), and returns now: eight days on.
func seedEnded(t *testing.T, s *store.DB) time.Time {
	silences := store.NewSilences(s)
	watches := store.NewWatches(s)
	t.Helper()
	ctx := context.Background()
	now := t0.Add(8 * 24 * time.Hour)
	recent := now.Add(-24 * time.Hour)

	sil := func(id string, ends time.Time) {
		require.NoError(t, silences.CreateSilence(ctx, silence.Silence{ID: id, UpdatedAt: t0.Add(-time.Hour),
			Input: silence.Input{Matchers: []silence.Matcher{{Name: "agent", Value: "coder"}},
				StartsAt: t0.Add(-time.Hour), EndsAt: ends, CreatedBy: "ops", Comment: id}}))
	}
	sil("s-old", t0)
	sil("s-recent", recent)
	sil("s-live", now.Add(time.Hour))
	sil("s-expired-early", t0.Add(30*24*time.Hour))
	_, err := silences.ExpireSilence(ctx, "s-expired-early", "ops", t0)
	require.NoError(t, err)

	w := func(id, res string) {
		_, _, err := watches.CreateWatch(ctx, watch.Watch{ID: id, Thread: th, Source: "github", Connector: "acme", Resource: res,
			CreatedAt: t0.Add(-time.Hour), ExpiresAt: t0.Add(time.Hour)}, 100)
		require.NoError(t, err)
	}
	w("w-old", "acme/api#1")
	w("w-recent", "acme/api#2")
	w("w-past-expiry", "acme/api#3") // expired by time, not ended yet: the sweep ends it
	_, _, err = watches.EndWatch(ctx, "w-old", watch.EndClosed, t0)
	require.NoError(t, err)
	_, _, err = watches.EndWatch(ctx, "w-recent", watch.EndMerged, recent)
	require.NoError(t, err)

	to := reply.To{Source: "slack", Connector: "acme", Place: json.RawMessage(`{"channel":"C1","team":"T1"}`)}
	rep := func(id string, status reply.Status, at time.Time) {
		_, _, err := store.NewReplies(s).CreateReply(ctx, reply.Reply{ID: id, Thread: th, Text: id, To: to, Status: status,
			QueuedAt: t0, CreatedAt: t0, UpdatedAt: at})
		require.NoError(t, err)
	}
	rep("r-sent-old", reply.StatusSent, t0)
	rep("r-failed-old", reply.StatusFailed, t0)
	rep("r-declined-old", reply.StatusDeclined, t0)
	rep("r-sent-recent", reply.StatusSent, recent)
	rep("r-queued-old", reply.StatusQueued, t0)   // still to be sent
	rep("r-pending-old", reply.StatusPending, t0) // still awaiting approval
	return now
}

// The cleaner deletes silences and watches that ended, and replies that were sent,
// failed or declined, longer ago than their age; live silences and watches, and replies
// still to be sent or approved, are never deleted.
func TestRunOnceDeletesEndedSilencesWatchesAndReplies(t *testing.T) {
	ctx := context.Background()
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			s := storetest.Open(t, b)
			watches := store.NewWatches(s)
			now := seedEnded(t, s)
			c := retention.New(retention.Config{Replies: dur(7 * 24 * time.Hour)}, store.NewRetention(s), service.Base{Logger: storetest.Logger(t), Now: func() time.Time { return now }})
			res, err := c.RunOnce(ctx)
			require.NoError(t, err)
			require.Equal(t, retention.Result{Silences: 2, Watches: 1, Replies: 3}, res)

			for id, kept := range map[string]bool{"s-old": false, "s-expired-early": false, "s-recent": true, "s-live": true} {
				_, err := store.NewSilences(s).Silence(ctx, id)
				if kept {
					require.NoError(t, err, id)
				} else {
					require.ErrorIs(t, err, inbox.ErrNotFound, id)
				}
			}
			for id, kept := range map[string]bool{"w-old": false, "w-recent": true, "w-past-expiry": true} {
				_, err := watches.Watch(ctx, id)
				if kept {
					require.NoError(t, err, id)
				} else {
					require.ErrorIs(t, err, inbox.ErrNotFound, id)
				}
			}
			for id, kept := range map[string]bool{"r-sent-old": false, "r-failed-old": false, "r-declined-old": false,
				"r-sent-recent": true, "r-queued-old": true, "r-pending-old": true} {
				_, err := store.NewReplies(s).GetReply(ctx, id)
				if kept {
					require.NoError(t, err, id)
				} else {
					require.ErrorIs(t, err, inbox.ErrNotFound, id)
				}
			}

			// A late end for a deleted watch is no second end.
			_, ended, err := watches.EndWatch(ctx, "w-old", watch.EndMerged, now)
			require.ErrorIs(t, err, inbox.ErrNotFound)
			require.False(t, ended)

			res, err = c.RunOnce(ctx)
			require.NoError(t, err)
			require.Equal(t, retention.Result{}, res, "nothing left to delete")
		})
	}
}

// The defaults: ended silences and watches a week, finished replies a month; 0s keeps
// each forever.
func TestEndedAgesAndForever(t *testing.T) {
	ctx := context.Background()
	s := storetest.OpenSQLite(t)
	retentionStore := store.NewRetention(s)
	now := seedEnded(t, s)
	forever := retention.New(retention.Config{Silences: dur(0), Watches: dur(0), Replies: dur(0)}, retentionStore,
		service.Base{Logger: storetest.Logger(t), Now: func() time.Time { return now.Add(10 * 365 * 24 * time.Hour) }})
	res, err := forever.RunOnce(ctx)
	require.NoError(t, err)
	require.Equal(t, retention.Result{}, res)

	defaults := retention.New(retention.Config{}, retentionStore, service.Base{Logger: storetest.Logger(t), Now: func() time.Time { return now }})
	res, err = defaults.RunOnce(ctx)
	require.NoError(t, err)
	require.Equal(t, retention.Result{Silences: 2, Watches: 1}, res, "replies are kept a month")
	monthOn := retention.New(retention.Config{}, retentionStore, service.Base{Logger: storetest.Logger(t), Now: func() time.Time { return t0.Add(31 * 24 * time.Hour) }})
	res, err = monthOn.RunOnce(ctx)
	require.NoError(t, err)
	require.Equal(t, retention.Result{Silences: 2, Watches: 1, Replies: 3}, res, "the rest has ended by now; replies finished a month ago go")
}

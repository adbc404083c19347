package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/schedule"
	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/store/storetest"
)

// leaseEverything leaves, under owner "gone", a claimed thread, a reply claimed with one
// send begun, and a claimed schedule fire, each leased for an hour from t0.
func leaseEverything(t *testing.T, s *store.DB) {
	replies := store.NewReplies(s)
	schedules := store.NewSchedules(s)
	t.Helper()
	ctx := context.Background()
	pol, err := inbox.NewPolicy(inbox.PolicyConfig{})
	require.NoError(t, err)
	svc := inbox.NewService(store.NewInbox(s), pol, inbox.WithClock(func() time.Time { return t0 }))
	ingest(t, svc, "d1", comment("CI failed", "", ""))
	keys, err := store.NewQueue(s).ClaimThreads(ctx, "gone", t0, t0.Add(time.Hour), 10)
	require.NoError(t, err)
	require.Len(t, keys, 1)

	_, _, err = replies.CreateReply(ctx, newReply("r1", t0))
	require.NoError(t, err)
	got, err := replies.ClaimReplies(ctx, "gone", t0, t0.Add(time.Hour), 10)
	require.NoError(t, err)
	require.Len(t, got, 1)
	ok, err := replies.BeginReplyAttempt(ctx, "r1", "gone", t0)
	require.NoError(t, err)
	require.True(t, ok)

	require.NoError(t, schedules.CreateSchedule(ctx, schedule.Schedule{Spec: schedule.Spec{ID: "daily", Agent: "coder",
		ResourceID: "acme/api", ThreadID: "standup", Cron: "0 9 * * *", Timezone: "UTC", Contents: "standup"},
		Origin: "api", Status: schedule.StatusActive, NextFireAt: &t0, CreatedAt: t0, UpdatedAt: t0}))
	due, err := schedules.DueSchedules(ctx, t0, 10)
	require.NoError(t, err)
	require.Len(t, due, 1)
	ok, err = schedules.ClaimFire(ctx, due[0], t0, t0.Add(time.Hour))
	require.NoError(t, err)
	require.True(t, ok)
}

// After a crash on SQLite the next process (the only one: it holds the database's lock)
// takes back every lease at once: the thread, the reply and the schedule fire are
// claimable a second later, not an hour later. On PostgreSQL another replica's leases
// keep their meaning.
func TestTakeBackLeasesAfterCrash(t *testing.T) {
	ctx := context.Background()
	soon := t0.Add(time.Second)
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			var next *store.DB
			if b.Config.Driver == store.DriverSQLite {
				crashed, err := store.Open(ctx, b.Config, storetest.Logger(t))
				require.NoError(t, err)
				_, err = crashed.Migrate(ctx)
				require.NoError(t, err)
				leaseEverything(t, crashed)
				// Its leases stay in the database as a SIGKILL leaves them; the lock
				// goes with the process (TestSecondProcessRefused).
				require.NoError(t, crashed.Close())
				next = storetest.Open(t, b)
			} else {
				leaseEverything(t, storetest.Open(t, b))
				next = storetest.Open(t, b) // another replica, alive or not
			}

			back, err := next.TakeBackLeases(ctx)
			require.NoError(t, err)
			threads, err := store.NewQueue(next).ClaimThreads(ctx, "new", soon, soon.Add(time.Minute), 10)
			require.NoError(t, err)
			replies, err := store.NewReplies(next).ClaimReplies(ctx, "new", soon, soon.Add(time.Minute), 10)
			require.NoError(t, err)
			due, err := store.NewSchedules(next).DueSchedules(ctx, soon, 10)
			require.NoError(t, err)

			if b.Config.Driver == store.DriverPostgres {
				require.Equal(t, store.Takeover{}, back, "replicas' leases are not taken back")
				require.Empty(t, threads, "leased by another replica")
				require.Empty(t, replies)
				require.Empty(t, due)
				later := t0.Add(time.Hour)
				threads, err = store.NewQueue(next).ClaimThreads(ctx, "new", later, later.Add(time.Minute), 10)
				require.NoError(t, err)
				require.Len(t, threads, 1, "claimable once the lease lapsed")
				return
			}
			require.Equal(t, store.Takeover{Threads: 1, Replies: 1, Schedules: 1}, back)
			require.Equal(t, []inbox.ThreadKey{thread}, threads)
			require.Len(t, replies, 1)
			require.Equal(t, 1, replies[0].Attempts, "a send may have reached the platform: it is looked for first")
			require.Len(t, due, 1)
			require.Equal(t, t0, *due[0].ClaimFireAt, "the claimed fire goes out again, under the same id")
			ok, err := store.NewSchedules(next).ClaimFire(ctx, due[0], t0, soon.Add(time.Minute))
			require.NoError(t, err)
			require.True(t, ok)

		})
	}
}

package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/service"
	"github.com/signalgate/signalgate/silence"
	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/store/storetest"
)

// Silences are stored, listed by state, read and expired early: the expire ends it at
// that moment and moves the holds of its records there in the same transaction; a
// second expire answers it as it is; an unknown one is not found.
func TestSilenceRows(t *testing.T) {
	ctx := context.Background()
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			clock := t0
			s := storetest.Open(t, b)
			reads := store.NewAdmin(s)
			gauges := store.NewGauges(s)
			sil := silence.NewService(store.NewSilences(s), silence.Config{}, service.Base{Now: func() time.Time { return clock }})
			svc := heldService(t, s, &clock, sil)
			in := silence.Input{Matchers: []silence.Matcher{{Name: "agent", Value: "coder"}}, EndsAt: t0.Add(2 * time.Hour),
				CreatedBy: "ops", Comment: "deploy"}
			active, err := sil.Create(ctx, in)
			require.NoError(t, err)
			require.Equal(t, silence.StateActive, active.Status.State)
			later := in
			later.StartsAt, later.EndsAt = t0.Add(time.Hour), t0.Add(3*time.Hour)
			pending, err := sil.Create(ctx, later)
			require.NoError(t, err)
			require.Equal(t, silence.StatePending, pending.Status.State)

			stats, err := gauges.Stats(ctx, clock)
			require.NoError(t, err)
			require.Equal(t, [3]int{1, 1, 0}, [3]int{stats.SilencesPending, stats.SilencesActive, stats.SilencesExpired})

			id := ingest(t, svc, "d1", comment("CI failed", "", "")).Records[0].RecordID
			r, err := reads.GetRecord(ctx, id)
			require.NoError(t, err)
			require.Equal(t, "silence:"+active.ID, r.HeldBy)

			for state, want := range map[silence.State][]string{"": {pending.ID, active.ID},
				silence.StateActive: {active.ID}, silence.StatePending: {pending.ID}, silence.StateExpired: nil} {
				got, err := sil.List(ctx, state)
				require.NoError(t, err)
				var ids []string
				for _, g := range got {
					ids = append(ids, g.ID)
				}
				require.ElementsMatch(t, want, ids, "state %q", state)
			}
			got, err := sil.Get(ctx, active.ID)
			require.NoError(t, err)
			require.Equal(t, in.Matchers[0].Name, got.Matchers[0].Name)
			require.True(t, *got.Matchers[0].IsEqual)
			require.Equal(t, "deploy", got.Comment)

			clock = t0.Add(30 * time.Minute)
			ended, err := sil.Expire(ctx, active.ID, "alice")
			require.NoError(t, err)
			require.Equal(t, silence.StateExpired, ended.Status.State)
			require.Equal(t, clock, ended.EndsAt)
			require.Equal(t, "alice", ended.ExpiredBy)
			r, err = reads.GetRecord(ctx, id)
			require.NoError(t, err)
			require.Equal(t, clock, *r.HeldUntil, "its records' holds end now")

			clock = t0.Add(40 * time.Minute)
			again, err := sil.Expire(ctx, active.ID, "bob")
			require.NoError(t, err, "idempotent")
			require.Equal(t, t0.Add(30*time.Minute), again.EndsAt)
			require.Equal(t, "alice", again.ExpiredBy)

			early, err := sil.Expire(ctx, pending.ID, "alice")
			require.NoError(t, err)
			require.Equal(t, clock, early.StartsAt, "a pending silence expired never starts")
			expired, err := sil.List(ctx, silence.StateExpired)
			require.NoError(t, err)
			require.Len(t, expired, 2)
			stats, err = gauges.Stats(ctx, clock)
			require.NoError(t, err)
			require.Equal(t, [3]int{0, 0, 2}, [3]int{stats.SilencesPending, stats.SilencesActive, stats.SilencesExpired})

			_, err = sil.Expire(ctx, "nope", "alice")
			require.ErrorIs(t, err, inbox.ErrNotFound)
			_, err = sil.Get(ctx, "nope")
			require.ErrorIs(t, err, inbox.ErrNotFound)

			n, err := svc.ReleaseHeld(ctx)
			require.NoError(t, err)
			require.Equal(t, 1, n)
		})
	}
}

// A replica whose silences have not caught up with an early expire (up to a refresh
// behind) still holds by it: the hold is bounded by the silence's stored end, so the
// record is released, not kept until the silence's first end.
func TestStaleSilenceHoldIsBoundedByItsStoredEnd(t *testing.T) {
	ctx := context.Background()
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			clock := t0
			s := storetest.Open(t, b)
			reads := store.NewAdmin(s)
			silences := store.NewSilences(s)
			base := service.Base{Now: func() time.Time { return clock }}
			one := silence.NewService(silences, silence.Config{}, base)
			stale := silence.NewService(silences, silence.Config{}, base) // another replica's
			sil, err := one.Create(ctx, silence.Input{Matchers: []silence.Matcher{{Name: "agent", Value: "coder"}},
				EndsAt: t0.Add(2 * time.Hour), CreatedBy: "ops", Comment: "deploy"})
			require.NoError(t, err)
			require.NoError(t, stale.Refresh(ctx))

			clock = t0.Add(time.Minute)
			_, err = one.Expire(ctx, sil.ID, "ops")
			require.NoError(t, err)
			clock = t0.Add(2 * time.Minute)
			svc := heldService(t, s, &clock, stale)
			id := ingest(t, svc, "d1", comment("CI failed", "", "")).Records[0].RecordID
			r, err := reads.GetRecord(ctx, id)
			require.NoError(t, err)
			require.Equal(t, "silence:"+sil.ID, r.HeldBy, "the stale replica held it")
			require.Equal(t, t0.Add(time.Minute), *r.HeldUntil, "until the silence's stored end")
			n, err := svc.ReleaseHeld(ctx)
			require.NoError(t, err)
			require.Equal(t, 1, n)
			require.NoError(t, stale.Refresh(ctx))
			_, err = svc.ReleaseHeld(ctx)
			require.NoError(t, err)
			r, err = reads.GetRecord(ctx, id)
			require.NoError(t, err)
			require.Empty(t, r.HeldBy, "released once the replica caught up")
			require.NotNil(t, r.DueAt())
		})
	}
}

package retention_test

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/retention"
	"github.com/signalgate/signalgate/service"
	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/store/storetest"
)

var t0 = time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)

func dur(d time.Duration) *time.Duration { return &d }

// fixture ingests one event per case at a time and puts its record in a status.
type fixture struct {
	s   *store.DB
	svc *inbox.Service
	at  time.Time
}

func (f *fixture) add(t *testing.T, name string, at time.Time, status inbox.Status) (eventID, recordID string) {
	t.Helper()
	ctx := context.Background()
	f.at = at
	n := inbox.Notification{Thread: inbox.ThreadKey{Agent: "coder", Resource: "r", Thread: name}, Source: "github", Kind: "comment", Summary: name}
	res, err := f.svc.Ingest(ctx, &inbox.Event{Source: "github", Connector: "acme", DeliveryID: name, Type: "issue_comment"}, []inbox.Notification{n})
	require.NoError(t, err)
	if status != inbox.StatusPending {
		require.NoError(t, store.NewRecords(f.s).SetRecordStatus(ctx, res.Records[0].RecordID, status, at))
	}
	return res.EventID, res.Records[0].RecordID
}

func TestRunOnceKeepsPendingAndRecent(t *testing.T) {
	ctx := context.Background()
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			s := storetest.Open(t, b)
			pol, err := inbox.NewPolicy(inbox.PolicyConfig{})
			require.NoError(t, err)
			f := &fixture{s: s}
			f.svc = inbox.NewService(store.NewInbox(s), pol, inbox.WithClock(func() time.Time { return f.at }))
			old, recent := t0, t0.Add(40*24*time.Hour)
			now := t0.Add(45 * 24 * time.Hour)

			type row struct{ event, record string }
			rows := map[string]row{}
			for _, c := range []struct {
				name   string
				at     time.Time
				status inbox.Status
			}{
				{"old-delivered", old, inbox.StatusDelivered},
				{"old-failed", old, inbox.StatusFailed},
				{"old-dismissed", old, inbox.StatusDismissed},
				{"old-pending", old, inbox.StatusPending},
				{"recent-delivered", recent, inbox.StatusDelivered},
			} {
				ev, rec := f.add(t, c.name, c.at, c.status)
				rows[c.name] = row{ev, rec}
			}

			c := retention.New(retention.Config{}, store.NewRetention(s), service.Base{Logger: storetest.Logger(t), Now: func() time.Time { return now }})
			res, err := c.RunOnce(ctx)
			require.NoError(t, err)
			require.Equal(t, retention.Result{Records: 3, Events: 3}, res)

			for name, r := range rows {
				_, recErr := store.NewAdmin(s).GetRecord(ctx, r.record)
				_, evErr := store.NewExplain(s).GetEvent(ctx, r.event)
				switch name {
				case "old-pending":
					require.NoError(t, recErr, "pending records are never deleted")
					require.NoError(t, evErr, "nor the event a pending record came from")
				case "recent-delivered":
					require.NoError(t, recErr)
					require.NoError(t, evErr)
				default:
					require.ErrorIs(t, recErr, inbox.ErrNotFound, name)
					require.ErrorIs(t, evErr, inbox.ErrNotFound, name)
				}
			}

			res, err = c.RunOnce(ctx)
			require.NoError(t, err)
			require.Equal(t, retention.Result{}, res, "nothing left to delete")
		})
	}
}

func TestZeroAgeKeepsForever(t *testing.T) {
	s := storetest.OpenSQLite(t)
	pol, err := inbox.NewPolicy(inbox.PolicyConfig{})
	require.NoError(t, err)
	f := &fixture{s: s}
	f.svc = inbox.NewService(store.NewInbox(s), pol, inbox.WithClock(func() time.Time { return f.at }))
	f.add(t, "old", t0, inbox.StatusDelivered)
	cfg := retention.Config{Events: dur(0), Records: dur(0)}
	c := retention.New(cfg, store.NewRetention(s), service.Base{Now: func() time.Time { return t0.Add(10 * 365 * 24 * time.Hour) }})
	res, err := c.RunOnce(context.Background())
	require.NoError(t, err)
	require.Equal(t, retention.Result{}, res)
	n, err := store.NewAdmin(s).CountEvents(context.Background())
	require.NoError(t, err)
	require.Equal(t, 1, n)
}

// fakeStore deletes from a counter in batches, recording the cutoffs asked for.
type fakeStore struct {
	mu      sync.Mutex
	events  int64
	cutoffs []time.Time
	err     error
}

func (f *fakeStore) DeleteEventsBefore(_ context.Context, cutoff time.Time, limit int) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cutoffs = append(f.cutoffs, cutoff)
	n := min(f.events, int64(limit))
	f.events -= n
	return n, f.err
}

func (f *fakeStore) DeleteTerminalRecordsBefore(context.Context, time.Time, int) (int64, error) {
	return 0, nil
}

func (f *fakeStore) DeleteNetStatesBefore(context.Context, time.Time, int) (int64, error) {
	return 0, nil
}

func (f *fakeStore) DeleteEndedSilencesBefore(context.Context, time.Time, int) (int64, error) {
	return 0, nil
}

func (f *fakeStore) DeleteEndedWatchesBefore(context.Context, time.Time, int) (int64, error) {
	return 0, nil
}

func (f *fakeStore) DeleteFinishedRepliesBefore(context.Context, time.Time, int) (int64, error) {
	return 0, nil
}

func TestRunOnceDrainsInBatches(t *testing.T) {
	st := &fakeStore{events: 2500}
	c := retention.New(retention.Config{Events: dur(time.Hour)}, st, service.Base{Now: func() time.Time { return t0 }})
	res, err := c.RunOnce(context.Background())
	require.NoError(t, err)
	require.Equal(t, int64(2500), res.Events)
	require.Equal(t, []time.Time{t0.Add(-time.Hour), t0.Add(-time.Hour), t0.Add(-time.Hour)}, st.cutoffs, "1000 + 1000 + 500")

	st.err = errors.New("disk full")
	_, err = c.RunOnce(context.Background())
	require.EqualError(t, err, "retention: disk full")
}

// TestLoop: a pass at start, then one per interval; Stop ends the loop.
func TestLoop(t *testing.T) {
	st := &fakeStore{events: 5}
	waits := make(chan time.Duration, 4)
	tick := make(chan struct{})
	var deleted []string
	c := retention.New(retention.Config{Events: dur(time.Hour), Interval: 2 * time.Hour}, st, service.Base{Now: func() time.Time { return t0 }},
		retention.WithObserver(func(kind string, n int64) { deleted = append(deleted, kind+":"+strconv.FormatInt(n, 10)) }),
		retention.WithWait(func(ctx context.Context, d time.Duration) bool {
			waits <- d
			select {
			case <-ctx.Done():
				return false
			case <-tick:
				return true
			}
		}))
	c.TestSignals.Pass.Init()
	passes := c.TestSignals.Pass.C()
	require.NoError(t, c.Start(context.Background()))
	require.Error(t, c.Start(context.Background()), "started twice")
	require.Equal(t, retention.Pass{Result: retention.Result{Events: 5}}, <-passes)
	require.Equal(t, 2*time.Hour, <-waits)
	st.mu.Lock()
	st.events = 3
	st.mu.Unlock()
	tick <- struct{}{}
	require.Equal(t, retention.Pass{Result: retention.Result{Events: 3}}, <-passes)
	<-waits
	require.NoError(t, c.Stop(context.Background()))
	require.NoError(t, c.Stop(context.Background()), "stopping twice is fine")
	require.Equal(t, []string{"events:5", "events:3"}, deleted)
}

func TestConfig(t *testing.T) {
	cfg := retention.Config{}.WithDefaults()
	require.Equal(t, 720*time.Hour, *cfg.Events)
	require.Equal(t, 720*time.Hour, *cfg.Records)
	require.Equal(t, 168*time.Hour, *cfg.Silences)
	require.Equal(t, 168*time.Hour, *cfg.Watches)
	require.Equal(t, 720*time.Hour, *cfg.Replies)
	require.Equal(t, time.Hour, cfg.Interval)
	require.NoError(t, cfg.Validate())
	bad := retention.Config{Events: dur(-time.Second), Records: dur(-time.Second), Silences: dur(-time.Second),
		Watches: dur(-time.Second), Replies: dur(-time.Second), Interval: time.Millisecond}
	require.EqualError(t, bad.Validate(), "events: must not be negative (0s keeps events forever)\n"+
		"records: must not be negative (0s keeps records forever)\n"+
		"silences: must not be negative (0s keeps silences forever)\n"+
		"watches: must not be negative (0s keeps watches forever)\n"+
		"replies: must not be negative (0s keeps replies forever)\ninterval: must be at least 1s")
}

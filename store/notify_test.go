package store_test

import (
	"context"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/service"
	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/store/storetest"
)

// waitLimit only bounds a broken test; a working one returns as soon as the wake-up arrives.
const waitLimit = 10 * time.Second

// pgReplicas opens n stores on one fresh PostgreSQL schema, as n replicas would.
func pgReplicas(t *testing.T, n int) (store.Config, []*store.DB) {
	t.Helper()
	dsn := os.Getenv(storetest.PostgresEnv)
	if dsn == "" {
		t.Skip(storetest.PostgresEnv + " not set")
	}
	cfg := storetest.PostgresConfig(t, dsn)
	var out []*store.DB
	for i := 0; i < n; i++ {
		out = append(out, storetest.Open(t, storetest.Backend{Name: "postgres", Config: cfg}))
	}
	return cfg, out
}

// withAppName tags a DSN's sessions so the test can find and end them.
func withAppName(t *testing.T, dsn, name string) string {
	u, err := url.Parse(dsn)
	require.NoError(t, err)
	q := u.Query()
	q.Set("application_name", name)
	u.RawQuery = q.Encode()
	return u.String()
}

// terminate ends every session named app, as a network failure or server restart would.
func terminate(t *testing.T, app string) {
	t.Helper()
	db, err := sqlx.Open("pgx", os.Getenv(storetest.PostgresEnv))
	require.NoError(t, err)
	defer db.Close()
	var n int
	require.NoError(t, db.Get(&n, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1`, app))
	require.Positive(t, n, "no session named %s", app)
}

func startBroker(t *testing.T, st *store.DB, dsn string, opts ...store.BrokerOption) *store.PGBroker {
	t.Helper()
	b := store.NewPGBroker(st, dsn, service.Base{Logger: storetest.Logger(t)}, opts...)
	require.NoError(t, b.Start(context.Background()))
	t.Cleanup(func() { _ = b.Stop(context.Background()) })
	return b
}

func woken(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case _, ok := <-ch:
		require.True(t, ok, "%s: channel closed", what)
	case <-time.After(waitLimit):
		t.Fatalf("%s: no wake-up", what)
	}
}

func TestPGBrokerFansOutAcrossReplicas(t *testing.T) {
	cfg, st := pgReplicas(t, 2)
	// A long poll: only NOTIFY can deliver these wake-ups in time.
	a := startBroker(t, st[0], cfg.DSN, store.WithBrokerPoll(time.Hour))
	b := startBroker(t, st[1], cfg.DSN, store.WithBrokerPoll(time.Hour))
	k := inbox.ThreadKey{Agent: "coder", Resource: "acme/api", Thread: "acme/api#7"}
	other := inbox.ThreadKey{Agent: "coder", Resource: "acme/api", Thread: "acme/api#8"}

	onA, unsubA := a.Subscribe(k)
	defer unsubA()
	onB, unsubB := b.Subscribe(k)
	defer unsubB()
	otherB, unsubOther := b.Subscribe(other)
	defer unsubOther()

	a.Publish(k)
	woken(t, onA, "local subscriber")
	woken(t, onB, "subscriber on the other replica")
	b.Publish(k)
	woken(t, onA, "back the other way")
	select {
	case <-otherB:
		t.Fatal("a thread nobody published woke")
	default:
	}
}

// A subscriber taking committed frames in memory gets only its own replica's frames that
// way: another replica's commits reach it as a wake-up to read the log, by NOTIFY or by
// the poll, as any subscriber's.
func TestPGBrokerWakesFrameSubscribersAcrossReplicas(t *testing.T) {
	cfg, st := pgReplicas(t, 2)
	a := startBroker(t, st[0], cfg.DSN, store.WithBrokerPoll(time.Hour))
	b := startBroker(t, st[1], cfg.DSN, store.WithBrokerPoll(50*time.Millisecond))
	k := inbox.ThreadKey{Agent: "coder", Resource: "acme/api", Thread: "acme/api#7"}
	wake, frames, unsub := b.SubscribeFrames(k)
	defer unsub()

	a.PublishFrames(k, []agent.Frame{signalFrame("sig-1", k, time.Now())})
	woken(t, wake, "NOTIFY from the replica that committed")
	select {
	case f := <-frames:
		t.Fatalf("frame %s handed over across replicas", f.ID)
	default:
	}
	// A replica that died between its commit and its NOTIFY: the poll finds the frame.
	_, _, err := store.NewFrames(st[0]).AppendFrame(context.Background(), signalFrame("sig-2", k, time.Now()))
	require.NoError(t, err)
	woken(t, wake, "poll after a silent append")
}

func TestPGBrokerPollCatchesMissedNotifications(t *testing.T) {
	cfg, st := pgReplicas(t, 2)
	b := startBroker(t, st[1], cfg.DSN, store.WithBrokerPoll(50*time.Millisecond))
	k := inbox.ThreadKey{Agent: "coder", Resource: "r", Thread: "t"}
	ch, unsub := b.Subscribe(k)
	defer unsub()
	// A replica that died between its commit and its NOTIFY: the frame is there, no one said so.
	_, _, err := store.NewFrames(st[0]).AppendFrame(context.Background(), signalFrame("sig-1", k, time.Now()))
	require.NoError(t, err)
	woken(t, ch, "poll after a silent append")
}

func TestPGBrokerReconnects(t *testing.T) {
	cfg, st := pgReplicas(t, 2)
	a := startBroker(t, st[0], cfg.DSN, store.WithBrokerPoll(time.Hour))
	app := "sg_broker_" + inbox.NewID()[:8]
	b := startBroker(t, st[1], withAppName(t, cfg.DSN, app), store.WithBrokerPoll(time.Hour))
	k := inbox.ThreadKey{Agent: "coder", Resource: "r", Thread: "t"}
	ch, unsub := b.Subscribe(k)
	defer unsub()

	terminate(t, app)
	// Losing the listener may have lost announcements: every local subscriber rereads.
	woken(t, ch, "wake-all after the connection dropped")
	// After reconnecting, announcements flow again (the reconnect's own wake-all may
	// come first, so publish until one arrives).
	deadline := time.Now().Add(waitLimit)
	for {
		a.Publish(k)
		select {
		case <-ch:
		case <-time.After(100 * time.Millisecond):
			require.True(t, time.Now().Before(deadline), "no announcement after reconnect")
			continue
		}
		break
	}
}

func TestAdvisoryLockOneHolderAndFailover(t *testing.T) {
	cfg, _ := pgReplicas(t, 1)
	ctx := context.Background()
	app := "sg_lock_" + inbox.NewID()[:8]
	first := store.NewAdvisoryLocker(withAppName(t, cfg.DSN, app), storetest.Logger(t))
	second := store.NewAdvisoryLocker(cfg.DSN, storetest.Logger(t))
	const key = "email/support/INBOX"

	release, ok, err := first.TryLock(ctx, key)
	require.NoError(t, err)
	require.True(t, ok)
	_, ok, err = second.TryLock(ctx, key)
	require.NoError(t, err)
	require.False(t, ok, "a held mailbox is not given to a second replica")
	otherRelease, ok, err := second.TryLock(ctx, "email/support/Archive")
	require.NoError(t, err)
	require.True(t, ok, "other mailboxes are independent")
	otherRelease()

	release()
	release() // idempotent
	r2, ok, err := second.TryLock(ctx, key)
	require.NoError(t, err)
	require.True(t, ok, "released locks are taken over")
	r2()

	// The holder's session dies (a crashed replica): the server frees its lock.
	dead, ok, err := first.TryLock(ctx, key)
	require.NoError(t, err)
	require.True(t, ok)
	defer dead()
	terminate(t, app)
	require.Eventually(t, func() bool {
		r, ok, err := second.TryLock(ctx, key)
		if err == nil && ok {
			r()
		}
		return ok
	}, waitLimit, 20*time.Millisecond, "the lock of a dead session is taken over")
}

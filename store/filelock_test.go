package store_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/store/storetest"
)

// holdEnv names the database the helper process (TestHoldDatabaseProcess) holds.
const holdEnv = "SIGNALGATE_TEST_HOLD_DATABASE"

// TestHoldDatabaseProcess is not a test: re-executed by TestSecondProcessRefused, it
// opens the database, says so on stdout and holds it until it is killed.
func TestHoldDatabaseProcess(t *testing.T) {
	path := os.Getenv(holdEnv)
	if path == "" {
		t.Skip("the helper process of TestSecondProcessRefused")
	}
	s, err := store.Open(context.Background(), store.Config{Driver: store.DriverSQLite, DSN: path}, storetest.Logger(t))
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(2)
	}
	defer s.Close()
	fmt.Println("held")
	select {} // until SIGKILL
}

// A second process on a SQLite database another holds is refused, naming the database
// and the holder (its pid, its host and when it started); once the holder is killed
// (SIGKILL: no chance to let go) the next one opens at once.
func TestSecondProcessRefused(t *testing.T) {
	ctx := context.Background()
	cfg := storetest.SQLiteConfig(t)
	holder := exec.Command(os.Args[0], "-test.run=^TestHoldDatabaseProcess$")
	holder.Env = append(os.Environ(), holdEnv+"="+cfg.DSN)
	out, err := holder.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, holder.Start())
	exited := make(chan struct{})
	go func() { _ = holder.Wait(); close(exited) }()
	t.Cleanup(func() { _ = holder.Process.Kill(); <-exited })
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "held\n", line)

	_, err = store.Open(ctx, cfg, storetest.Logger(t))
	var inUse *store.InUseError
	require.ErrorAs(t, err, &inUse)
	require.NotNil(t, inUse.Holder, "the holder said who it is")
	require.Equal(t, holder.Process.Pid, inUse.Holder.PID)
	host, _ := os.Hostname()
	require.Equal(t, host, inUse.Holder.Host)
	require.WithinDuration(t, time.Now(), inUse.Holder.Started, time.Hour)
	msg := err.Error()
	require.Contains(t, msg, "sqlite database "+cfg.DSN+" is in use by process "+fmt.Sprint(holder.Process.Pid)+" on host "+host+", started ")
	require.Contains(t, msg, "lock file "+cfg.DSN+".lock")
	require.Contains(t, msg, "PostgreSQL")
	_, statErr := os.Stat(cfg.DSN)
	require.NoError(t, statErr, "the holder made the database")

	require.NoError(t, holder.Process.Signal(syscall.SIGKILL))
	<-exited
	s, err := store.Open(ctx, cfg, storetest.Logger(t))
	require.NoError(t, err, "the killed holder's lock went with it")
	require.NoError(t, s.Close())
}

// Two opens in one process conflict too (the lock belongs to the open file), and Close
// lets the database go.
func TestSecondOpenRefusedUntilClose(t *testing.T) {
	ctx := context.Background()
	cfg := storetest.SQLiteConfig(t)
	first, err := store.Open(ctx, cfg, storetest.Logger(t))
	require.NoError(t, err)
	_, err = store.Open(ctx, cfg, storetest.Logger(t))
	var inUse *store.InUseError
	require.ErrorAs(t, err, &inUse)
	require.Equal(t, os.Getpid(), inUse.Holder.PID)

	// Another path to the same file (a symbolic link) is the same database.
	link := filepath.Join(t.TempDir(), "link.db")
	require.NoError(t, os.Symlink(cfg.DSN, link))
	_, err = store.Open(ctx, store.Config{Driver: store.DriverSQLite, DSN: link}, storetest.Logger(t))
	require.ErrorAs(t, err, &inUse)

	require.NoError(t, first.Close())
	raw, err := os.ReadFile(cfg.DSN + ".lock")
	require.NoError(t, err)
	require.Empty(t, raw, "a closed store no longer names itself the holder")
	second, err := store.Open(ctx, cfg, storetest.Logger(t))
	require.NoError(t, err)
	require.NoError(t, second.Close())
}

// A holder that has not written who it is (or a lock file someone else holds) is
// refused all the same, saying the holder is unknown.
func TestRefusalWithoutHolderRecord(t *testing.T) {
	cfg := storetest.SQLiteConfig(t)
	f, err := os.OpenFile(cfg.DSN+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB))
	_, err = store.Open(context.Background(), cfg, storetest.Logger(t))
	var inUse *store.InUseError
	require.ErrorAs(t, err, &inUse)
	require.Nil(t, inUse.Holder)
	require.Contains(t, err.Error(), "is in use by another process (it has not recorded its pid in "+cfg.DSN+".lock)")
}

// Read-only commands read beside the process holding the database, and cannot write.
func TestReadAlongside(t *testing.T) {
	ctx := context.Background()
	cfg := storetest.SQLiteConfig(t)
	holder := storetest.Open(t, storetest.Backend{Name: "sqlite", Config: cfg})
	var r *store.DB
	_, _, err := store.NewReplies(holder).CreateReply(ctx, newReply("r1", t0))
	require.NoError(t, err)

	r, err = store.Open(ctx, cfg, storetest.Logger(t), store.ReadAlongside())
	require.NoError(t, err)
	defer r.Close()
	current, err := r.Current(ctx)
	require.NoError(t, err)
	require.True(t, current)
	got, err := store.NewReplies(r).GetReply(ctx, "r1")
	require.NoError(t, err)
	require.Equal(t, "on it", got.Text)

	_, err = r.Migrate(ctx)
	require.ErrorContains(t, err, "migrate: the sqlite database is open to read alongside the gateway, not to write")
	_, err = r.TakeBackLeases(ctx)
	require.ErrorContains(t, err, "not to write")
	_, _, err = store.NewReplies(r).CreateReply(ctx, newReply("r2", t0))
	require.ErrorContains(t, err, "readonly", "its connections are query-only")
}

// An in-memory database has no file to lock: each open is its own database.
func TestInMemoryNotLocked(t *testing.T) {
	ctx := context.Background()
	for range 2 {
		s, err := store.Open(ctx, store.Config{Driver: store.DriverSQLite, DSN: ":memory:"}, storetest.Logger(t))
		require.NoError(t, err)
		defer s.Close()
	}
}

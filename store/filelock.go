package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// SQLite is the single-node store: one process per database file. Open takes an
// exclusive lock on a file beside the database (<database>.lock) and holds it until
// Close; the operating system releases it when the process ends, however it ends, so a
// gateway killed with SIGKILL never keeps the next one out. The lock file says who holds
// it, for the refusal a second process gets. Read-only commands open alongside
// (ReadAlongside) and take no lock.

// lockSuffix names the lock file: the database path plus this.
const lockSuffix = ".lock"

// Holder is what a lock file says of the process holding the database.
type Holder struct {
	PID     int       `json:"pid"`
	Host    string    `json:"host"`
	Started time.Time `json:"started"`
}

// InUseError is Open's refusal of a SQLite database another process holds.
type InUseError struct {
	Database string  // the database file, as configured
	LockFile string  // the lock file beside it
	Holder   *Holder // nil when the holder has not written it (yet), or wrote something else
}

func (e *InUseError) Error() string {
	who := "another process (it has not recorded its pid in " + e.LockFile + ")"
	if h := e.Holder; h != nil {
		who = fmt.Sprintf("process %d on host %s, started %s", h.PID, h.Host, h.Started.UTC().Format(time.RFC3339))
	}
	return fmt.Sprintf("sqlite database %s is in use by %s: SQLite serves one gateway process per database file "+
		"(lock file %s). Stop that process first, or run several replicas on PostgreSQL (storage.driver: postgres)",
		e.Database, who, e.LockFile)
}

// dbLock is a held lock on a database file (see lockDatabase).
type dbLock struct {
	f *os.File
}

// inMemory reports whether a SQLite DSN names an in-memory database: nothing to lock.
func inMemory(path, query string) bool {
	return path == "" || path == ":memory:" || strings.Contains(query, "mode=memory")
}

// lockPath is the lock file of the database at path. Symbolic links are followed, so two
// paths to one file share a lock.
func lockPath(path string) string {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	} else if dir, err := filepath.EvalSymlinks(filepath.Dir(path)); err == nil {
		path = filepath.Join(dir, filepath.Base(path))
	}
	return path + lockSuffix
}

// lockDatabase takes the exclusive lock on the database at path without waiting, and
// records the holder (this process, started at now). Another holder makes it fail with
// *InUseError naming the database and that holder.
func lockDatabase(path string, now time.Time) (*dbLock, error) {
	lp := lockPath(path)
	f, err := os.OpenFile(lp, os.O_RDWR|os.O_CREATE, 0o640)
	if err != nil {
		return nil, fmt.Errorf("open sqlite database %s: open lock file: %w", path, err)
	}
	held, err := tryLock(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("open sqlite database %s: lock %s: %w", path, lp, err)
	}
	if !held {
		f.Close()
		return nil, &InUseError{Database: path, LockFile: lp, Holder: readHolder(lp)}
	}
	host, _ := os.Hostname()
	rec, _ := json.Marshal(Holder{PID: os.Getpid(), Host: host, Started: now.UTC()})
	if err := writeHolder(f, append(rec, '\n')); err != nil {
		_ = unlock(f)
		f.Close()
		return nil, fmt.Errorf("open sqlite database %s: write lock file %s: %w", path, lp, err)
	}
	return &dbLock{f: f}, nil
}

func writeHolder(f *os.File, rec []byte) error {
	if err := f.Truncate(0); err != nil {
		return err
	}
	_, err := f.WriteAt(rec, 0)
	return err
}

// readHolder reads who holds the lock file at lp; nil when it does not say.
func readHolder(lp string) *Holder {
	raw, err := os.ReadFile(lp)
	if err != nil {
		return nil
	}
	var h Holder
	if json.Unmarshal(raw, &h) != nil || h.PID == 0 {
		return nil
	}
	return &h
}

// release empties the lock file (a later refusal must not name this process) and lets
// the lock go. Safe on nil.
func (l *dbLock) release() error {
	if l == nil || l.f == nil {
		return nil
	}
	errs := []error{l.f.Truncate(0), unlock(l.f), l.f.Close()}
	l.f = nil
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("release the database lock: %w", err)
	}
	return nil
}

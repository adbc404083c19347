// Package storetest opens real databases for tests: SQLite in a temp dir always, and
// PostgreSQL when SIGNALGATE_TEST_POSTGRES_DSN is set, each test in its own schema.
package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jmoiron/sqlx"

	"github.com/signalgate/signalgate/store"
)

// PostgresEnv names the variable holding an admin DSN for a throwaway PostgreSQL.
const PostgresEnv = "SIGNALGATE_TEST_POSTGRES_DSN"

// Backend is one database under test.
type Backend struct {
	Name   string
	Config store.Config
}

// Backends lists SQLite (a fresh file) and, when configured, PostgreSQL (a fresh schema).
func Backends(t testing.TB) []Backend {
	t.Helper()
	out := []Backend{{Name: "sqlite", Config: SQLiteConfig(t)}}
	if dsn := os.Getenv(PostgresEnv); dsn != "" {
		out = append(out, Backend{Name: "postgres", Config: PostgresConfig(t, dsn)})
	}
	return out
}

// SQLiteConfig is a config for a new database file in t's temp dir.
func SQLiteConfig(t testing.TB) store.Config {
	return store.Config{Driver: store.DriverSQLite, DSN: filepath.Join(t.TempDir(), "signalgate.db")}
}

// PostgresConfig creates a schema dropped at cleanup and returns a config using it.
func PostgresConfig(t testing.TB, dsn string) store.Config {
	t.Helper()
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	schema := "t_" + hex.EncodeToString(b)
	admin, err := sqlx.Open("pgx", dsn)
	if err != nil {
		t.Fatalf("open postgres: %v", err)
	}
	if _, err := admin.Exec(`CREATE SCHEMA ` + schema); err != nil {
		admin.Close()
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		_, _ = admin.Exec(`DROP SCHEMA ` + schema + ` CASCADE`)
		admin.Close()
	})
	return store.Config{Driver: store.DriverPostgres, DSN: withSearchPath(dsn, schema)}
}

func withSearchPath(dsn, schema string) string {
	if u, err := url.Parse(dsn); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		q := u.Query()
		q.Set("search_path", schema)
		u.RawQuery = q.Encode()
		return u.String()
	}
	return strings.TrimSpace(dsn) + " search_path=" + schema
}

// Open opens and migrates a backend, closing it at cleanup.
func Open(t testing.TB, b Backend, opts ...store.Option) *store.DB {
	t.Helper()
	ctx := context.Background()
	s, err := store.Open(ctx, b.Config, Logger(t), opts...)
	if err != nil {
		t.Fatalf("open %s: %v", b.Name, err)
	}
	t.Cleanup(func() { s.Close() })
	if _, err := s.Migrate(ctx); err != nil {
		t.Fatalf("migrate %s: %v", b.Name, err)
	}
	return s
}

// OpenSQLite is Open on a fresh SQLite database.
func OpenSQLite(t testing.TB, opts ...store.Option) *store.DB {
	return Open(t, Backend{Name: "sqlite", Config: SQLiteConfig(t)}, opts...)
}

// Logger discards output unless -v is given.
func Logger(t testing.TB) *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

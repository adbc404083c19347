package store_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/store/storetest"
)

// dsnCase is a PostgreSQL DSN with a password that must never be printed.
type dsnCase struct {
	name, dsn, password string
	// want is the DSN as printed, rebuilt from pgx's parse; "" when pgx refuses it.
	want string
}

func dsnCases() []dsnCase {
	const rebuilt = "host=db.internal port=5432 dbname=gw user=gw password=[redacted]"
	return []dsnCase{
		{"url hash", "postgres://gw:Pa#ss-SENTINEL@db.internal:5432/gw?sslmode=disable", "Pa#ss-SENTINEL", rebuilt},
		{"url question mark", "postgres://gw:Pa?ss-SENTINEL@db.internal:5432/gw", "Pa?ss-SENTINEL", rebuilt},
		{"url colon", "postgres://gw:Pa:ss-SENTINEL@db.internal:5432/gw", "Pa:ss-SENTINEL", rebuilt},
		{"url percent encoded", "postgres://gw:Pa%2F%40%25ss-SENTINEL@db.internal:5432/gw", "Pa/@%ss-SENTINEL", rebuilt},
		{"url query password", "postgresql://gw@db.internal:5432/gw?password=Query-SENTINEL&search_path=tenant_a", "Query-SENTINEL",
			rebuilt + " search_path=tenant_a"},
		{"key value quoted", "host=db.internal port=5432 user=gw password='p w#SENTINEL' dbname=gw application_name='my gw'", "p w#SENTINEL",
			"host=db.internal port=5432 dbname=gw user=gw password=[redacted] application_name='my gw'"},
		{"key value plain", "host=db.internal port=5432 user=gw password=Plain@SENTINEL dbname=gw", "Plain@SENTINEL", rebuilt},
		{"multi host", "postgres://gw:Multi#SENTINEL@db1:5432,db2:5433/gw", "Multi#SENTINEL",
			"host=db1,db2 port=5432,5433 dbname=gw user=gw password=[redacted]"},
		// Refused by pgx: nothing of them is shown, not even the part before the password.
		{"url raw slash", "postgres://gw:Sl/ash-SENTINEL@db.internal:5432/gw", "Sl/ash-SENTINEL", ""},
		{"url raw percent", "postgres://gw:Pe%zz-SENTINEL@db.internal:5432/gw", "Pe%zz-SENTINEL", ""},
		{"key value unterminated quote", "host=db.internal user=gw password='Unterminated SENTINEL", "Unterminated SENTINEL", ""},
		// pgx reads the tail of a raw '@' password as the host: refused, not shown as host.
		{"url raw at", "postgres://gw:At@Tail-SENTINEL@db.internal:5432/gw", "At@Tail-SENTINEL", ""},
	}
}

// quietPGEnv keeps the environment pgx merges into a DSN out of the expected output.
func quietPGEnv(t *testing.T) {
	for _, k := range []string{"PGHOST", "PGPORT", "PGUSER", "PGDATABASE", "PGPASSWORD", "PGAPPNAME", "PGOPTIONS", "PGTZ", "PGSERVICE", "PGSSLMODE"} {
		t.Setenv(k, "")
	}
	t.Setenv("PGPASSFILE", filepath.Join(t.TempDir(), "none"))
}

func TestRedactedDSNIsRebuiltFromPgxParse(t *testing.T) {
	quietPGEnv(t)
	for _, c := range dsnCases() {
		t.Run(c.name, func(t *testing.T) {
			cfg := store.Config{Driver: store.DriverPostgres, DSN: c.dsn}
			got := cfg.RedactedDSN()
			require.NotContains(t, got, c.password)
			require.NotContains(t, got, "SENTINEL")
			err := cfg.Validate()
			if c.want == "" {
				require.Equal(t, "[DSN not shown: pgx cannot parse it]", got)
				require.ErrorContains(t, err, "dsn: the PostgreSQL driver (pgx) cannot parse it")
				require.NotContains(t, err.Error(), "SENTINEL")
				return
			}
			require.NoError(t, err)
			require.Equal(t, c.want, got)
		})
	}
	require.Equal(t, "data/signalgate.db", store.Config{Driver: store.DriverSQLite, DSN: "data/signalgate.db"}.RedactedDSN())
}

// A PostgreSQL DSN left with the default driver (sqlite) would be taken for a path and
// printed whole: it is refused, and redacted all the same.
func TestPostgresDSNForSQLiteRefused(t *testing.T) {
	quietPGEnv(t)
	for _, dsn := range []string{"postgres://gw:Pa#ss-SENTINEL@db.internal:5432/gw", "host=db.internal user=gw password = Kv-SENTINEL"} {
		cfg := store.Config{DSN: dsn}.WithDefaults()
		err := cfg.Validate()
		require.ErrorContains(t, err, "dsn: storage.dsn is a PostgreSQL DSN but storage.driver is sqlite")
		require.NotContains(t, err.Error(), "SENTINEL")
		require.NotContains(t, cfg.RedactedDSN(), "SENTINEL")
	}
}

// The reverse: driver postgres with a file path (the shipped default DSN when only the
// driver was switched) names both keys instead of pgx's "cannot parse it", which pgx
// may not even say (it reads a bare word as a host name).
func TestSQLitePathForPostgresRefused(t *testing.T) {
	quietPGEnv(t)
	for _, dsn := range []string{"data/signalgate.db", "signalgate", "/var/lib/signalgate/gw.db"} {
		err := store.Config{Driver: store.DriverPostgres, DSN: dsn}.WithDefaults().Validate()
		require.ErrorContains(t, err, "dsn: storage.driver is postgres but storage.dsn looks like a SQLite file path", dsn)
	}
	for _, dsn := range []string{"postgres://gw@db/gw", "postgresql://gw@db/gw", "host=db user=gw dbname=gw"} {
		require.NoError(t, store.Config{Driver: store.DriverPostgres, DSN: dsn}.WithDefaults().Validate(), dsn)
	}
}

func TestOpenErrorNamesDSNWithoutPassword(t *testing.T) {
	quietPGEnv(t)
	for _, dsn := range []string{
		"postgres://gw:Pa#ss-SENTINEL@127.0.0.1:1/gw?connect_timeout=1",
		"host=127.0.0.1 port=1 user=gw password='p w#SENTINEL' dbname=gw connect_timeout=1",
		"postgres://gw:Sl/ash-SENTINEL@127.0.0.1:1/gw", // refused before connecting
	} {
		_, err := store.Open(context.Background(), store.Config{Driver: store.DriverPostgres, DSN: dsn}, storetest.Logger(t))
		require.Error(t, err)
		require.NotContains(t, err.Error(), "SENTINEL")
		require.NotContains(t, err.Error(), "Sl/")
	}
	_, err := store.Open(context.Background(), store.Config{Driver: store.DriverPostgres, DSN: "postgres://gw:Pa#ss-SENTINEL@127.0.0.1:1/gw?connect_timeout=1"}, storetest.Logger(t))
	require.ErrorContains(t, err, "open postgres database host=127.0.0.1 port=1 dbname=gw user=gw password=[redacted]: ")
}

package store_test

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strings"
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
			"host=db.internal port=5432 dbname=gw user=gw password=[redacted] application_name=[redacted]"},
		// Settings sent to the server show their values only when known to hold none
		// worth hiding: options and application_name are where people put tokens.
		{"url settings", "postgresql://gw:Pw-SENTINEL@db.internal:5432/gw?options=-c%20app.token%3DOpt-SENTINEL&application_name=App-SENTINEL" +
			"&search_path=tenant_a&statement_timeout=5s&TimeZone=UTC&custom.key=Custom-SENTINEL", "Pw-SENTINEL",
			rebuilt + " TimeZone=UTC application_name=[redacted] custom.key=[redacted] options=[redacted] search_path=tenant_a statement_timeout=5s"},
		{"key value options", "host=db.internal port=5432 user=gw password=Pw-SENTINEL dbname=gw options='-c app.token=Opt-SENTINEL'", "Pw-SENTINEL",
			rebuilt + " options=[redacted]"},
		// A key that is no setting's name may be a value written where a key goes.
		{"url odd key", "postgres://gw:Pw-SENTINEL@db.internal:5432/gw?Key-SENTINEL=x", "Pw-SENTINEL", rebuilt + " [redacted]=[redacted]"},
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

// What the environment adds to a DSN (PGOPTIONS, PGAPPNAME) is redacted like the DSN's own.
func TestRedactedDSNSettingsFromEnvironment(t *testing.T) {
	quietPGEnv(t)
	t.Setenv("PGOPTIONS", "-c app.token=Env-SENTINEL")
	t.Setenv("PGAPPNAME", "App-SENTINEL")
	got := store.Config{Driver: store.DriverPostgres, DSN: "host=db.internal port=5432 user=gw dbname=gw"}.RedactedDSN()
	require.Equal(t, "host=db.internal port=5432 dbname=gw user=gw application_name=[redacted] options=[redacted]", got)
}

// A server that refuses a setting quotes its value in the error: the value is scrubbed
// like the password when redacted in the DSN.
func TestOpenErrorScrubsRedactedSettings(t *testing.T) {
	dsn := os.Getenv(storetest.PostgresEnv)
	if dsn == "" {
		t.Skip(storetest.PostgresEnv + " is not set")
	}
	for _, c := range []struct{ options, quoted string }{
		{"-c statement_timeout=Opt-SENTINEL", `invalid value for parameter "statement_timeout": "[redacted]"`},
		{"--Opt-SENTINEL", "FATAL: [redacted] requires a value"},
	} {
		_, err := store.Open(context.Background(), store.Config{Driver: store.DriverPostgres, DSN: withSetting(dsn, "options", c.options)},
			storetest.Logger(t))
		require.Error(t, err)
		require.NotContains(t, err.Error(), "SENTINEL")
		require.ErrorContains(t, err, c.quoted)
		require.ErrorContains(t, err, " options=[redacted]: ")
	}
}

// withSetting adds key=value to a URL or key=value DSN.
func withSetting(dsn, key, value string) string {
	if u, err := url.Parse(dsn); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		q := u.Query()
		q.Set(key, value)
		u.RawQuery = strings.ReplaceAll(q.Encode(), "+", "%20") // pgx reads + as itself
		return u.String()
	}
	return dsn + " " + key + "='" + strings.ReplaceAll(value, "'", `\'`) + "'"
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

package store

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

// errDSNUnparsable says a PostgreSQL DSN was refused without quoting any of it: where
// the parse fails is exactly where a password with a reserved character sits.
var errDSNUnparsable = errors.New("the PostgreSQL driver (pgx) cannot parse it; it is not shown, as it may hold " +
	"the password: in URL form, percent-encode reserved characters of the user and password (/ as %2F, % as %25, " +
	"@ as %40, : as %3A), or use the key=value form; files it names (sslrootcert, sslcert, sslkey, service) must be readable")

// RedactedDSN is the DSN fit to print: a SQLite path as it is, a PostgreSQL DSN
// rebuilt from what pgx's own parser read of it, without the password (also one
// mistakenly given for SQLite, which Validate refuses).
func (c Config) RedactedDSN() string {
	if c.Driver != DriverPostgres && !looksPostgres(c.DSN) {
		return c.DSN
	}
	return redactPostgresDSN(c.DSN)
}

// redactPostgresDSN rebuilds dsn in key=value form from pgx's parse: no text of the
// DSN is printed except as the value pgx took it for, whatever its form or escaping,
// and the password never is. It shows what pgx will connect to, so the environment
// (PGHOST, PGUSER, …) and defaults pgx merges in show too.
func redactPostgresDSN(dsn string) string {
	pc, err := parsePostgresDSN(dsn)
	if err != nil {
		return "[DSN not shown: pgx cannot parse it]"
	}
	// sslmode=prefer or allow makes a second attempt per host; show each host once.
	var hosts, ports []string
	seen := map[string]bool{}
	addHost := func(host string, port uint16) {
		if k := host + "\x00" + strconv.Itoa(int(port)); !seen[k] {
			seen[k] = true
			hosts, ports = append(hosts, host), append(ports, strconv.Itoa(int(port)))
		}
	}
	addHost(pc.Host, pc.Port)
	for _, f := range pc.Fallbacks {
		addHost(f.Host, f.Port)
	}
	kv := []string{
		"host=" + quoteDSNValue(strings.Join(hosts, ",")),
		"port=" + strings.Join(ports, ","),
		"dbname=" + quoteDSNValue(pc.Database),
		"user=" + quoteDSNValue(pc.User),
	}
	if pc.Password != "" {
		kv = append(kv, "password=[redacted]")
	}
	for _, k := range slices.Sorted(maps.Keys(pc.RuntimeParams)) {
		kv = append(kv, quoteDSNValue(k)+"="+quoteDSNValue(pc.RuntimeParams[k]))
	}
	return strings.Join(kv, " ")
}

// quoteDSNValue quotes a key=value DSN value as libpq reads it back.
func quoteDSNValue(v string) string {
	if v != "" && !strings.ContainsAny(v, " \t\n\r\v\f'\\") {
		return v
	}
	r := strings.NewReplacer(`\`, `\\`, `'`, `\'`)
	return "'" + r.Replace(v) + "'"
}

// parsePostgresDSN is pgx's parse of dsn, refused with a message that quotes none of
// it. A host with an '@' is refused too: no host name has one, and it is what pgx makes
// of a URL whose password holds a raw '@' (the password's tail would be shown as host).
func parsePostgresDSN(dsn string) (*pgx.ConnConfig, error) {
	pc, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, errDSNUnparsable
	}
	hosts := []string{pc.Host}
	for _, f := range pc.Fallbacks {
		hosts = append(hosts, f.Host)
	}
	if slices.ContainsFunc(hosts, func(h string) bool { return strings.Contains(h, "@") }) {
		return nil, errDSNUnparsable
	}
	return pc, nil
}

// validatePostgresDSN refuses a DSN pgx cannot parse, without quoting it.
func validatePostgresDSN(dsn string) error {
	if _, err := parsePostgresDSN(dsn); err != nil {
		return fmt.Errorf("dsn: %w", err)
	}
	return nil
}

// postgresPassword is the password pgx reads from dsn ("" when there is none or
// the DSN does not parse).
func postgresPassword(dsn string) string {
	pc, err := pgx.ParseConfig(dsn)
	if err != nil {
		return ""
	}
	return pc.Password
}

// scrub removes a password from a driver error: pgx's own messages leave it out, but
// one quoting the server's or a library's text might not.
func scrub(err error, password string) error {
	if err == nil || password == "" || !strings.Contains(err.Error(), password) {
		return err
	}
	return errors.New(strings.ReplaceAll(err.Error(), password, "[redacted]"))
}

// password is the password pgx reads from a PostgreSQL DSN.
func (c Config) password() string {
	if c.Driver != DriverPostgres {
		return ""
	}
	return postgresPassword(c.DSN)
}

// looksPostgres reports a PostgreSQL DSN given where a SQLite path is expected (driver
// unset defaults to sqlite): it would be printed as a path, password and all.
func looksPostgres(dsn string) bool {
	lower := strings.ToLower(dsn)
	return strings.HasPrefix(lower, "postgres://") || strings.HasPrefix(lower, "postgresql://") ||
		strings.Contains(strings.ReplaceAll(lower, " ", ""), "password=")
}

// looksSQLite reports a DSN given to the postgres driver that is neither a URL nor
// key=value: a file path, such as the shipped config's SQLite default.
func looksSQLite(dsn string) bool {
	return !strings.Contains(dsn, "://") && !strings.Contains(dsn, "=")
}

// splitSQLiteDSN is a SQLite DSN's file path and its query (the driver's options).
func splitSQLiteDSN(dsn string) (path, query string) {
	path, query, _ = strings.Cut(strings.TrimPrefix(dsn, "file:"), "?")
	return path, query
}

// Exists reports whether the database is there to be read without creating anything: a
// SQLite file that exists (or an in-memory one); PostgreSQL always, as opening it creates
// nothing. Read-only commands (explain) check it before Open, which would create the
// SQLite file and its directory.
func (c Config) Exists() (bool, error) {
	if c.Driver == DriverPostgres {
		return true, nil
	}
	path, _ := splitSQLiteDSN(c.DSN)
	if path == ":memory:" {
		return true, nil
	}
	switch _, err := os.Stat(path); {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	default:
		return false, fmt.Errorf("sqlite database %s: %w", path, err)
	}
}

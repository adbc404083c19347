package store

import (
	"cmp"
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
// (PGHOST, PGUSER, PGOPTIONS, …) and defaults pgx merges in show too. Of the settings
// sent to the server, only those shownSetting knows keep their values.
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
		kv = append(kv, "password="+redacted)
	}
	for _, k := range slices.Sorted(maps.Keys(pc.RuntimeParams)) {
		switch {
		case shownSetting(k):
			kv = append(kv, k+"="+quoteDSNValue(pc.RuntimeParams[k]))
		case settingName(k):
			kv = append(kv, k+"="+redacted)
		default:
			kv = append(kv, redacted+"="+redacted)
		}
	}
	return strings.Join(kv, " ")
}

const redacted = "[redacted]"

// shownSetting reports a server setting whose value a DSN shows: one that takes a
// schema name, a number, a duration or a mode. Any other, application_name and options
// (which carries any setting) among them, may hold what someone put there to keep out
// of sight (a token, a customer's name) and shows redacted.
func shownSetting(key string) bool {
	switch strings.ToLower(key) {
	case "search_path", "timezone", "client_encoding", "datestyle", "intervalstyle", "extra_float_digits",
		"statement_timeout", "lock_timeout", "idle_in_transaction_session_timeout", "idle_session_timeout",
		"transaction_timeout", "default_transaction_isolation", "default_transaction_read_only",
		"default_transaction_deferrable":
		return true
	}
	return false
}

// settingName reports key has the shape of a setting's name (an extension's include a
// dot), so it is shown: anything else may be a value written where a key goes.
func settingName(key string) bool {
	if key == "" || len(key) > 63 {
		return false
	}
	for i, r := range key {
		switch {
		case r == '_' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z':
		case i > 0 && (r == '.' || '0' <= r && r <= '9'):
		default:
			return false
		}
	}
	return true
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

// minScrubbed is the shortest text of a redacted setting scrubbed from errors: a
// shorter one is no secret, and replacing it would garble the message.
const minScrubbed = 4

// postgresSecrets is what an error must not show of dsn: the password pgx reads from
// it, and the values of the settings redactPostgresDSN redacts, whole and word by word
// (the server quotes one word of `options`, or what follows its `=`, when it refuses
// it). Nothing when the DSN does not parse.
func postgresSecrets(dsn string) []string {
	pc, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil
	}
	var out []string
	if pc.Password != "" {
		out = append(out, pc.Password)
	}
	for k, v := range pc.RuntimeParams {
		if shownSetting(k) {
			continue
		}
		if !settingName(k) {
			out = append(out, k)
		}
		out = append(out, v)
		for _, w := range strings.Fields(v) {
			_, after, _ := strings.Cut(w, "=")
			out = append(out, w, after)
		}
	}
	out = slices.DeleteFunc(out, func(s string) bool { return s == "" || len(s) < minScrubbed && s != pc.Password })
	// The longest first, so a value is not left in part by one of its words.
	slices.SortFunc(out, func(a, b string) int { return cmp.Or(len(b)-len(a), strings.Compare(a, b)) })
	return slices.Compact(out)
}

// scrub removes secrets from a driver error: pgx's own messages leave the password
// out, but one quoting the server's or a library's text might not.
func scrub(err error, secrets []string) error {
	if err == nil {
		return err
	}
	msg := err.Error()
	for _, s := range secrets {
		msg = strings.ReplaceAll(msg, s, redacted)
	}
	if msg == err.Error() {
		return err
	}
	return errors.New(msg)
}

// secrets is what an error must not show of a PostgreSQL DSN (postgresSecrets).
func (c Config) secrets() []string {
	if c.Driver != DriverPostgres {
		return nil
	}
	return postgresSecrets(c.DSN)
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

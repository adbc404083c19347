// Package store is the gateway's database: SQLite embedded by default, PostgreSQL for
// scale-out, one implementation over sqlx with `?` placeholders rebound per dialect. Open
// returns the DB; each persistence interface a domain package declares is implemented by
// a port over it (ports.go).
package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
	"github.com/jmoiron/sqlx"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

//go:embed migrations
var migrations embed.FS

// Drivers.
const (
	DriverSQLite   = "sqlite"
	DriverPostgres = "postgres"
)

// Config is the `storage:` section of config.yaml.
type Config struct {
	Driver string `yaml:"driver"`
	DSN    string `yaml:"dsn"`
	// MaxOpenConns bounds the read pool (SQLite) or the whole pool (PostgreSQL).
	MaxOpenConns int `yaml:"max_open_conns"`
}

// WithDefaults fills unset fields.
func (c Config) WithDefaults() Config {
	if c.Driver == "" {
		c.Driver = DriverSQLite
	}
	if c.DSN == "" && c.Driver == DriverSQLite {
		c.DSN = "data/signalgate.db"
	}
	if c.MaxOpenConns == 0 {
		c.MaxOpenConns = 8
		if c.Driver == DriverPostgres {
			c.MaxOpenConns = 16
		}
	}
	return c
}

// Validate reports problems with key paths relative to `storage`.
func (c Config) Validate() error {
	var errs []error
	switch c.Driver {
	case "", DriverSQLite, DriverPostgres:
	default:
		errs = append(errs, fmt.Errorf("driver: unknown %q (want sqlite or postgres)", c.Driver))
	}
	switch {
	case c.Driver == DriverPostgres && c.DSN == "":
		errs = append(errs, errors.New("dsn: required for driver postgres"))
	case c.Driver == DriverPostgres && looksSQLite(c.DSN):
		// Checked before pgx parses it: pgx would read a path as a host name.
		errs = append(errs, errors.New("dsn: storage.driver is postgres but storage.dsn looks like a SQLite file path: "+
			"give a PostgreSQL DSN (postgres://user:pass@host/db or key=value), or set storage.driver: sqlite"))
	case c.Driver == DriverPostgres:
		errs = append(errs, validatePostgresDSN(c.DSN))
	case looksPostgres(c.DSN):
		errs = append(errs, errors.New("dsn: storage.dsn is a PostgreSQL DSN but storage.driver is sqlite (which takes a file path): "+
			"set storage.driver: postgres"))
	}
	if c.MaxOpenConns < 0 {
		errs = append(errs, errors.New("max_open_conns: must not be negative"))
	}
	return errors.Join(errs...)
}

// DB is an open database: the handle every port shares (NewInbox, NewQueue, NewRuns, …).
// It owns the write and read pools, the dialect, transactions and SQLite's group commit,
// the clock, tracing, migrations and SQLite's process lock.
type DB struct{ *core }

// core is what every port reads and writes through. Ports embed it; its methods are the
// shared internals: transactions, rebinding, and the writes one port's transaction makes
// in another's tables (a dispatch pass and a run's close both log frames and promote a
// queued wake; ingest ends watches and moves a connector's cursor).
type core struct {
	driver string
	w      *sqlx.DB                              // writes (SQLite: one connection, immediate transactions)
	r      *sqlx.DB                              // reads (SQLite: a separate pool; PostgreSQL: the same pool)
	hot    atomic.Pointer[map[string]*sqlx.Stmt] // SQLite: prepared ingest statements
	gc     *committer                            // SQLite: group commit of write transactions
	ckpt   *checkpointer                         // SQLite: WAL checkpoints off the committer's path, on their own connection
	log    *slog.Logger
	now    func() time.Time
	tracer trace.Tracer // nil: tracing off
	// dbAttrs name the database on its spans.
	dbAttrs []attribute.KeyValue
	body    *bodyCodec // events.body compressed in, restored out
	// bodyLimit bounds a stored body once decompressed (WithBodyLimit).
	bodyLimit int64
	// lock is the SQLite database's process lock (filelock.go); nil on PostgreSQL, in
	// memory and when reading alongside.
	lock *dbLock
	// alongside: opened to read beside the process holding the SQLite database
	// (ReadAlongside); it writes nothing.
	alongside bool
	// keptBy are the target kinds whose runtime keeps the signals it accepted
	// (WithRecoveryRules), sorted.
	keptBy []string
}

// Option configures a DB.
type Option func(*DB)

// WithBodyLimit bounds what a stored body may decompress to: the request body limit,
// so that no row can make a read allocate more than any request could have.
func WithBodyLimit(n int64) Option {
	return func(s *DB) {
		if n > 0 {
			s.bodyLimit = n
		}
	}
}

// ReadAlongside opens a SQLite database to read it beside the gateway serving it, without
// its lock: read-only commands (explain, check) use it. Such a store writes nothing: its
// connections are query-only, and Migrate and TakeBackLeases refuse. PostgreSQL ignores it.
func ReadAlongside() Option { return func(s *DB) { s.alongside = true } }

// WithClock injects the clock used for presence checks and bookkeeping.
func WithClock(now func() time.Time) Option { return func(s *DB) { s.now = now } }

// Open connects and pings. It does not migrate; call Migrate.
func Open(ctx context.Context, cfg Config, log *slog.Logger, opts ...Option) (*DB, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &DB{&core{driver: cfg.Driver, log: log.With("component", "store"), now: time.Now, dbAttrs: dbAttrs(cfg), bodyLimit: DefaultBodyLimit}}
	for _, o := range opts {
		o(s)
	}
	var err error
	if s.body, err = newBodyCodec(s.bodyLimit); err != nil {
		return nil, err
	}
	switch cfg.Driver {
	case DriverSQLite:
		err = s.openSQLite(cfg)
	case DriverPostgres:
		err = s.openPostgres(cfg)
	}
	if err != nil {
		s.Close()
		return nil, err
	}
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := s.w.PingContext(pctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("open %s database %s: %w", cfg.Driver, cfg.RedactedDSN(), scrub(err, cfg.secrets()))
	}
	return s, nil
}

func (s *core) openSQLite(cfg Config) error {
	path, query := splitSQLiteDSN(cfg.DSN)
	if dir := filepath.Dir(path); dir != "." && path != ":memory:" {
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return fmt.Errorf("open sqlite database %s: create directory: %w", path, err)
		}
	}
	if !s.alongside && !inMemory(path, query) {
		// Taken before the first connection: a refused process never touches the file.
		l, err := lockDatabase(path, s.now())
		if err != nil {
			return err
		}
		s.lock = l
	}
	pragmas := "_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)"
	if query != "" {
		pragmas = query + "&" + pragmas
	}
	writer := "&_pragma=synchronous(FULL)&_pragma=temp_store(2)&_pragma=wal_autocheckpoint(0)&_txlock=immediate"
	if s.alongside {
		writer += "&_pragma=query_only(1)"
	}
	base := "file:" + path + "?" + pragmas
	// synchronous=FULL: every commit fsyncs the WAL before it returns, so a 2xx survives
	// an OS crash or power cut (NORMAL only survives a process crash). Group commit
	// shares that fsync between concurrent callers. Readers never commit.
	// temp_store=MEMORY keeps each caller's savepoint journal in memory: past 64 KiB
	// SQLite spills it to a temporary file, a write syscall per page. Checkpoints run
	// on their own connection (checkpoint.go), not inside the committer's commits.
	w, err := sqlx.Open("sqlite", base+writer)
	if err != nil {
		return fmt.Errorf("open sqlite database %s: %w", path, err)
	}
	// One writer: SQLite serialises writes anyway, and immediate transactions on one
	// connection never hit SQLITE_BUSY lock upgrades.
	w.SetMaxOpenConns(1)
	w.SetConnMaxIdleTime(0)
	r, err := sqlx.Open("sqlite", base+"&_pragma=query_only(1)")
	if err != nil {
		w.Close()
		return fmt.Errorf("open sqlite database %s: %w", path, err)
	}
	r.SetMaxOpenConns(cfg.MaxOpenConns)
	r.SetMaxIdleConns(cfg.MaxOpenConns)
	// synchronous=FULL: the checkpoint fsyncs the database file before the WAL it
	// copied can be reused.
	cp, err := sqlx.Open("sqlite", base+"&_pragma=synchronous(FULL)")
	if err != nil {
		w.Close()
		r.Close()
		return fmt.Errorf("open sqlite database %s: %w", path, err)
	}
	cp.SetMaxOpenConns(1)
	cp.SetConnMaxIdleTime(0)
	s.w, s.r = w, r
	s.ckpt = newCheckpointer(cp, s.log)
	s.gc = newCommitter(w, s.ckpt.wrote)
	return nil
}

func (s *core) openPostgres(cfg Config) error {
	// "pgx" (not "pgx/v5") is the name sqlx knows to rebind ? to $n.
	db, err := sqlx.Open("pgx", cfg.DSN)
	if err != nil {
		return fmt.Errorf("open postgres database %s: %w", cfg.RedactedDSN(), scrub(err, cfg.secrets()))
	}
	db.SetMaxOpenConns(cfg.MaxOpenConns)
	db.SetMaxIdleConns(cfg.MaxOpenConns)
	db.SetConnMaxLifetime(30 * time.Minute)
	s.w, s.r = db, db
	return nil
}

// Driver names the backend: sqlite or postgres.
func (s *DB) Driver() string { return s.driver }

// Close closes both pools, then lets the database's process lock go.
func (s *DB) Close() error {
	if s.body != nil {
		s.body.close()
	}
	if s.gc != nil {
		s.gc.close()
	}
	errs := []error{s.closeHot()}
	if s.ckpt != nil {
		errs = append(errs, s.ckpt.close())
	}
	if s.r != nil && s.r != s.w {
		errs = append(errs, s.r.Close())
	}
	if s.w != nil {
		errs = append(errs, s.w.Close())
	}
	errs = append(errs, s.lock.release())
	s.lock = nil
	return errors.Join(errs...)
}

func (s *core) provider() (*goose.Provider, error) {
	sub, err := s.migrations()
	if err != nil {
		return nil, err
	}
	return s.providerOver(sub)
}

// migrations are this driver's migration files.
func (s *core) migrations() (fs.FS, error) {
	if s.driver == DriverPostgres {
		return fs.Sub(migrations, "migrations/postgres")
	}
	return fs.Sub(migrations, "migrations/sqlite")
}

// providerOver is the migration provider over the migration files in sub.
func (s *core) providerOver(sub fs.FS) (*goose.Provider, error) {
	dialect := goose.DialectSQLite3
	var opts []goose.ProviderOption
	if s.driver == DriverPostgres {
		dialect = goose.DialectPostgres
		// Replicas starting together must not run migrations twice.
		l, err := lock.NewPostgresSessionLocker()
		if err != nil {
			return nil, err
		}
		opts = append(opts, goose.WithSessionLocker(l))
	}
	return goose.NewProvider(dialect, s.w.DB, sub, opts...)
}

// Migrate applies pending migrations and returns the schema version.
func (s *DB) Migrate(ctx context.Context) (int64, error) {
	if err := s.writable("migrate"); err != nil {
		return 0, err
	}
	p, err := s.provider()
	if err != nil {
		return 0, fmt.Errorf("prepare migrations: %w", err)
	}
	results, err := p.Up(ctx)
	if err != nil {
		return 0, fmt.Errorf("apply migrations: %w", err)
	}
	for _, r := range results {
		s.log.Info("migration applied", "version", r.Source.Version, "file", r.Source.Path, "duration_ms", r.Duration.Milliseconds())
	}
	if err := s.prepareHot(ctx); err != nil {
		return 0, err
	}
	return p.GetDBVersion(ctx)
}

// writable refuses what would write through a store reading alongside another process.
func (s *core) writable(what string) error {
	if s.alongside && s.driver == DriverSQLite {
		return fmt.Errorf("%s: the sqlite database is open to read alongside the gateway, not to write", what)
	}
	return nil
}

// Ready reports nil when the database answers and no migration is pending.
func (s *DB) Ready(ctx context.Context) error {
	if err := s.w.PingContext(ctx); err != nil {
		return fmt.Errorf("database unreachable: %w", err)
	}
	p, err := s.provider()
	if err != nil {
		return err
	}
	pending, err := p.HasPending(ctx)
	if err != nil {
		return fmt.Errorf("check migrations: %w", err)
	}
	if pending {
		return errors.New("migrations pending: run `gateway migrate`")
	}
	return nil
}

// inTx runs fn in a write transaction and returns once it is committed (nil) or rolled
// back. On SQLite it joins the group commit: fn must use the ctx it is given, which
// outlives the caller's.
func (s *core) inTx(ctx context.Context, fn txFunc) error { return s.writeTxn(ctx, false, false, fn) }

// inIngestTx is inTx for ingest: on SQLite its callers queue behind everyone else's.
func (s *core) inIngestTx(ctx context.Context, fn txFunc) error {
	return s.writeTxn(ctx, true, false, fn)
}

// inRecordTx is inTx for a write that records what already happened outside the database
// (a pass's deliveries): on SQLite, once queued it runs however long the batches ahead of
// it take. Dropped for lateness, the pass would be repeated, and when every pass is that
// slow (a starved machine) nothing would ever be recorded while targets got it again.
func (s *core) inRecordTx(ctx context.Context, fn txFunc) error {
	return s.writeTxn(ctx, false, true, fn)
}

func (s *core) writeTxn(ctx context.Context, bulk, keep bool, fn txFunc) error {
	if s.gc != nil {
		return s.gc.run(ctx, bulk, keep, fn)
	}
	tx, err := s.w.BeginTxx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin transaction: %w", err)
	}
	if err := fn(ctx, tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// q rebinds a `?` query for the dialect.
func (s *core) q(query string) string {
	if s.driver == DriverPostgres {
		return sqlx.Rebind(sqlx.DOLLAR, query)
	}
	return query
}

// micros converts a time to the stored representation.
func micros(t time.Time) int64 { return t.UnixMicro() }

func nullMicros(t *time.Time) sql.NullInt64 {
	if t == nil {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: t.UnixMicro(), Valid: true}
}

func fromMicros(v int64) time.Time { return time.UnixMicro(v).UTC() }

func fromNullMicros(v sql.NullInt64) *time.Time {
	if !v.Valid {
		return nil
	}
	t := fromMicros(v.Int64)
	return &t
}

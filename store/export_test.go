package store

import (
	"context"
	"io/fs"
	"testing/fstest"

	"github.com/jmoiron/sqlx"
	"github.com/pressly/goose/v3"
)

// Reader lets the external tests look at what a table holds.
func (s *DB) Reader() *sqlx.DB { return s.r }

// MigrateOnly applies the migrations keep admits (the schema of a past release).
func (s *DB) MigrateOnly(ctx context.Context, keep func(version int64) bool) error {
	all, err := s.migrations()
	if err != nil {
		return err
	}
	names, err := fs.Glob(all, "*.sql")
	if err != nil {
		return err
	}
	some := fstest.MapFS{}
	for _, name := range names {
		v, err := goose.NumericComponent(name)
		if err != nil {
			return err
		}
		if keep(v) {
			b, err := fs.ReadFile(all, name)
			if err != nil {
				return err
			}
			some[name] = &fstest.MapFile{Data: b}
		}
	}
	p, err := s.providerOver(some)
	if err != nil {
		return err
	}
	_, err = p.Up(ctx)
	return err
}

// Writer lets the external tests write rows of a past schema.
func (s *DB) Writer() *sqlx.DB { return s.w }

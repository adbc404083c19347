package store

import "github.com/jmoiron/sqlx"

// Reader lets the external tests look at what a table holds.
func (s *Store) Reader() *sqlx.DB { return s.r }

//go:build !unix

package store

import "os"

// tryLock does not lock where flock is not available: one process per database file is
// then the operator's to keep.
func tryLock(*os.File) (bool, error) { return true, nil }

func unlock(*os.File) error { return nil }

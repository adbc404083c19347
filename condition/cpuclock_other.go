//go:build !linux

package condition

import "time"

// threadCPU falls back to the wall clock where there is no per-thread CPU clock.
func threadCPU() time.Time { return time.Now() }

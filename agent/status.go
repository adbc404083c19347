package agent

import (
	"context"
	"sync/atomic"
)

type statusKey struct{}

// WithStatusReport returns a context in which a target can report the HTTP status its
// receiver answered with (ReportStatus), and a function reading the last one (0: none).
// The dispatcher logs it with every attempt: a success returns no error to carry it.
func WithStatusReport(ctx context.Context) (context.Context, func() int) {
	var code atomic.Int64
	return context.WithValue(ctx, statusKey{}, &code), func() int { return int(code.Load()) }
}

// ReportStatus records code for the attempt log; a no-op outside WithStatusReport.
func ReportStatus(ctx context.Context, code int) {
	if c, ok := ctx.Value(statusKey{}).(*atomic.Int64); ok {
		c.Store(int64(code))
	}
}

package gateway

import (
	"io"
	"log/slog"
	"os"

	"github.com/signalgate/signalgate/telemetry"
)

// NewLogger builds the slog logger: JSON unless stderr is a terminal (auto). A line
// logged with a context in a span carries trace_id and span_id.
func NewLogger(cfg LogConfig, w io.Writer) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(cfg.Level))
	opts := &slog.HandlerOptions{Level: level}
	text := cfg.Format == "text"
	if cfg.Format == "auto" {
		if f, ok := w.(*os.File); ok {
			if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
				text = true
			}
		}
	}
	var h slog.Handler = slog.NewJSONHandler(w, opts)
	if text {
		h = slog.NewTextHandler(w, opts)
	}
	return slog.New(telemetry.LogHandler(h))
}

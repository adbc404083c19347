package telemetry

import (
	"net/url"
	"strings"
)

// TraceURLPlaceholder is the part of a trace URL template replaced by a trace id.
const TraceURLPlaceholder = "{trace_id}"

// TraceURL renders the operator's trace URL template (telemetry.trace_url) for one
// trace id: every {trace_id} becomes the path-escaped id. Empty when either is empty,
// so callers show a link only when both a backend and a trace exist.
func TraceURL(template, traceID string) string {
	if template == "" || traceID == "" {
		return ""
	}
	return strings.ReplaceAll(template, TraceURLPlaceholder, url.PathEscape(traceID))
}

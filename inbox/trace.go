package inbox

import "slices"

// MaxTraceLinks bounds the traceparents a record keeps of the events merged into it:
// a record coalescing thousands of events links to the first ones, and its count says
// how many there were.
const MaxTraceLinks = 32

// LinkTrace remembers tp, the traceparent of an event merged into r. Empty (tracing
// off), r's own and already linked values are not repeated.
func (r *Record) LinkTrace(tp string) {
	if tp == "" || tp == r.TraceParent || len(r.TraceLinks) >= MaxTraceLinks || slices.Contains(r.TraceLinks, tp) {
		return
	}
	r.TraceLinks = append(r.TraceLinks, tp)
}

// TraceID is the trace id in r's traceparent ("00-<trace id>-<span id>-<flags>"),
// empty when the record has none.
func (r *Record) TraceID() string { return TraceIDOf(r.TraceParent) }

// TraceIDOf reads the trace id out of a W3C traceparent; empty when tp is not one.
func TraceIDOf(tp string) string {
	if len(tp) != 55 || tp[2] != '-' || tp[35] != '-' {
		return ""
	}
	return tp[3:35]
}

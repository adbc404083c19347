package connectors

import (
	"net/http"
	"strings"
)

// NotMapped is what a connector's parse step returns for an event it stores without
// items: a type it does not map, a filtered envelope. Replay stores such an event as
// ignored with Reason; any other parse error makes it invalid.
type NotMapped struct {
	Reason string
}

func (e *NotMapped) Error() string { return e.Reason }

// KeepHeaders picks the named request headers an event stores (never signatures),
// under their canonical names.
func KeepHeaders(h http.Header, names ...string) map[string]string {
	out := map[string]string{}
	for _, k := range names {
		if v := h.Get(k); v != "" {
			out[http.CanonicalHeaderKey(k)] = v
		}
	}
	return out
}

// Header reads a stored event header whatever its case: stored events keep canonical
// names, sample events (explain) carry what a user typed.
func Header(h map[string]string, name string) string {
	if v, ok := h[name]; ok {
		return v
	}
	for k, v := range h {
		if strings.EqualFold(k, name) {
			return v
		}
	}
	return ""
}

package connectors

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/signalgate/signalgate/server"
)

// Reason is why a delivery was not authentic, from a fixed vocabulary: the sender gets
// a bare 401, the operator reads the reason in the connector's refusals. A verifier
// returns one (wrapped or not); whatever else it returns is recorded as
// ReasonNotVerified, so nothing a sender sent and nothing of a secret can reach a
// refusal through a verifier's error text.
type Reason string

func (r Reason) Error() string { return string(r) }

// The reasons a delivery is refused for. docs/troubleshooting.md quotes each one.
const (
	ReasonSignatureMissing   Reason = "missing signature header"
	ReasonSignatureMismatch  Reason = "signature does not match"
	ReasonNoV1Signature      Reason = "no matching v1 signature"
	ReasonHeadersMissing     Reason = "missing webhook-id, webhook-timestamp or webhook-signature header"
	ReasonTimestampMissing   Reason = "missing timestamp header"
	ReasonTimestampMalformed Reason = "timestamp is not a unix time"
	ReasonTimestampWindow    Reason = "timestamp outside the tolerance window"
	ReasonNoSecret           Reason = "no secret configured"
	ReasonNotVerified        Reason = "signature not verified"
	ReasonTooLarge           Reason = "body larger than server.body_limit"
	ReasonTooSlow            Reason = "body not received within server.body_timeout"
	ReasonUnreadable         Reason = "could not read the request body"
)

// Reasons is the whole vocabulary, in the order the documentation lists it.
func Reasons() []Reason {
	return []Reason{ReasonSignatureMissing, ReasonSignatureMismatch, ReasonNoV1Signature, ReasonHeadersMissing,
		ReasonTimestampMissing, ReasonTimestampMalformed, ReasonTimestampWindow, ReasonNoSecret, ReasonNotVerified,
		ReasonTooLarge, ReasonTooSlow, ReasonUnreadable}
}

// ReasonOf is the vocabulary's reason err carries, ReasonNotVerified when it carries none.
func ReasonOf(err error) Reason {
	var r Reason
	if errors.As(err, &r) {
		return r
	}
	return ReasonNotVerified
}

// Bounds of what the refusals keep.
const (
	// DefaultRefusalsKept is how many refusals each connector keeps, newest first.
	DefaultRefusalsKept = 20
	// MaxRefusalReason and MaxRefusalAddr bound an entry's text, in characters.
	MaxRefusalReason = 200
	MaxRefusalAddr   = 64
)

// Refusal is one request a connector answered with a 4xx before accepting it. It holds
// no body, no header value and nothing of a secret.
type Refusal struct {
	At         time.Time `json:"at"`
	RemoteAddr string    `json:"remoteAddr"` // the client address as the server sees it (server.trust_proxy honoured)
	Status     int       `json:"status"`
	Reason     string    `json:"reason"`
}

// RefusalLog is one connector's refusals: how many since Since, the newest first.
type RefusalLog struct {
	// Total counts every refusal since Since, beyond the ones kept.
	Total  int64     `json:"total"`
	Since  time.Time `json:"since"`
	Recent []Refusal `json:"recent"`
}

// Refusals keeps each HTTP connector's last refusals, in this process's memory: they
// reset on restart and each replica keeps its own. Only configured connectors have a
// log (Keep), so what a stranger posts to any path cannot grow it: a connector keeps
// at most its bound of entries, each of bounded size.
type Refusals struct {
	mu   sync.Mutex
	kept int
	now  func() time.Time
	logs map[string]*ring // by "source/name"
}

type ring struct {
	entries []Refusal // oldest overwritten first; next is where the next one goes
	next    int
	total   int64
	since   time.Time
}

// NewRefusals keeps kept refusals per connector (DefaultRefusalsKept when ≤ 0).
func NewRefusals(kept int, now func() time.Time) *Refusals {
	if kept <= 0 {
		kept = DefaultRefusalsKept
	}
	if now == nil {
		now = time.Now
	}
	return &Refusals{kept: kept, now: now, logs: map[string]*ring{}}
}

// RefusalKey names a connector's log: "source/name".
func RefusalKey(source, name string) string { return source + "/" + name }

// Keep sets the connectors that have a log ("source/name"): a new one starts empty,
// one no longer configured is forgotten, the others keep theirs (a reload keeps them).
func (r *Refusals) Keep(keys []string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	want := make(map[string]bool, len(keys))
	for _, k := range keys {
		want[k] = true
		if r.logs[k] == nil {
			r.logs[k] = &ring{since: r.now().UTC()}
		}
	}
	for k := range r.logs {
		if !want[k] {
			delete(r.logs, k)
		}
	}
}

// Log is the connector's refusals, newest first; false when it has no log (not a
// configured HTTP connector).
func (r *Refusals) Log(source, name string) (RefusalLog, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	g := r.logs[RefusalKey(source, name)]
	if g == nil {
		return RefusalLog{}, false
	}
	out := RefusalLog{Total: g.total, Since: g.since, Recent: make([]Refusal, 0, len(g.entries))}
	for i := range g.entries {
		out.Recent = append(out.Recent, g.entries[(g.next-1-i+2*len(g.entries))%len(g.entries)])
	}
	return out, true
}

// add records a refusal of key's connector; nothing when it has no log.
func (r *Refusals) add(key string, f Refusal) {
	f.RemoteAddr = Truncate(f.RemoteAddr, MaxRefusalAddr)
	f.Reason = Truncate(f.Reason, MaxRefusalReason)
	r.mu.Lock()
	defer r.mu.Unlock()
	g := r.logs[key]
	if g == nil {
		return
	}
	g.total++
	if len(g.entries) < r.kept {
		g.entries = append(g.entries, f)
		g.next = len(g.entries) % r.kept
		return
	}
	g.entries[g.next] = f
	g.next = (g.next + 1) % r.kept
}

// refusalReasonKey is where an opening leaves why it refused, for Middleware.
const refusalReasonKey = "signalgate.refusal_reason"

// markRefused leaves the reason of a refusal on the request for Middleware to record.
func markRefused(c echo.Context, reason string) { c.Set(refusalReasonKey, reason) }

// Middleware records every 4xx answered on a connector's ingest route (server.WebhookPrefix
// + "{source}/:connector…") of a configured connector: with the reason the connector's
// opening gave, else one named by the status (a body over the limit or too slow is
// refused before any handler runs). It runs as a server observer, outside the body
// limits, so it sees those answers too.
func (r *Refusals) Middleware() echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			err := next(c)
			status := c.Response().Status
			if err != nil {
				status = server.StatusOf(err)
			}
			if status < http.StatusBadRequest || status >= http.StatusInternalServerError {
				return err
			}
			source, ok := webhookSource(c.Path())
			if !ok {
				return err
			}
			reason, _ := c.Get(refusalReasonKey).(string)
			if reason == "" {
				reason = statusReason(status)
			}
			r.add(RefusalKey(source, c.Param("connector")), Refusal{At: r.now().UTC(), RemoteAddr: c.RealIP(), Status: status, Reason: reason})
			return err
		}
	}
}

// webhookSource is the source of an ingest route template ("/webhooks/github/:connector").
func webhookSource(route string) (string, bool) {
	rest, ok := strings.CutPrefix(route, server.WebhookPrefix)
	if !ok {
		return "", false
	}
	source, tail, _ := strings.Cut(rest, "/")
	return source, source != "" && strings.HasPrefix(tail, ":connector")
}

// statusReason names a refusal no opening explained.
func statusReason(status int) string {
	switch status {
	case http.StatusRequestEntityTooLarge:
		return string(ReasonTooLarge)
	case http.StatusRequestTimeout:
		return string(ReasonTooSlow)
	}
	return fmt.Sprintf("refused with HTTP %d (%s)", status, http.StatusText(status))
}

package admin

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/labstack/echo/v4"

	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/server"
)

// maxTextLen bounds ids and filter values.
const maxTextLen = 512

// params reads query parameters, keeping the first problem as a 400 naming the
// parameter. Unknown and repeated parameters are rejected: a typo in a filter must not
// silently widen a bulk replay or redelivery to everything.
type params struct {
	vals map[string]string
	err  error
}

func readParams(q url.Values, allowed ...string) *params {
	p := &params{vals: map[string]string{}}
	names := make([]string, 0, len(q))
	for name := range q {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		switch {
		case !slices.Contains(allowed, name) && len(allowed) == 0:
			p.fail("unknown query parameter %q (this endpoint takes none)", name)
		case !slices.Contains(allowed, name):
			p.fail("unknown query parameter %q (want %s)", name, strings.Join(allowed, ", "))
		case len(q[name]) > 1:
			p.fail("%s: given %d times, want once", name, len(q[name]))
		default:
			p.vals[name] = q[name][0]
		}
	}
	return p
}

func (p *params) fail(format string, args ...any) {
	if p.err == nil {
		p.err = server.BadRequest(format, args...)
	}
}

// text is a free-text filter: compared for equality or as a literal substring.
func (p *params) text(name string) string {
	v := p.vals[name]
	if err := checkText(v); err != nil {
		p.fail("%s: %v", name, err)
		return ""
	}
	return v
}

func checkText(v string) error { return inbox.CheckText(v, maxTextLen) }

func (p *params) limit() int {
	raw, ok := p.vals["limit"]
	if !ok {
		return 0
	}
	n, err := strconv.Atoi(raw)
	if err != nil || n < 1 || n > inbox.MaxPageSize {
		p.fail("limit: want 1 to %d, got %q", inbox.MaxPageSize, raw)
		return 0
	}
	return n
}

func (p *params) cursor() string {
	raw := p.vals["cursor"]
	if _, err := inbox.ParseCursor(raw); err != nil {
		p.fail("cursor: not a cursor this API returned")
		return ""
	}
	return raw
}

func (p *params) time(name string) time.Time {
	raw, ok := p.vals[name]
	if !ok {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, raw)
	if err != nil {
		p.fail("%s: want an RFC 3339 time like 2026-11-02T09:00:00Z, got %q", name, raw)
	}
	return t.UTC()
}

func (p *params) boolean(name string) *bool {
	raw, ok := p.vals[name]
	if !ok {
		return nil
	}
	b, err := strconv.ParseBool(raw)
	if err != nil {
		p.fail("%s: want true or false, got %q", name, raw)
		return nil
	}
	return &b
}

func (p *params) priority(name string) inbox.Priority {
	raw := p.vals[name]
	if raw == "" {
		return ""
	}
	pr := inbox.Priority(raw)
	if !pr.Valid() {
		p.fail("%s: unknown %q (want low, medium, high or urgent)", name, raw)
	}
	return pr
}

func (p *params) statuses(name string) []inbox.Status {
	return statusList(p, name, inbox.Status.Valid, "pending, delivered, seen, dismissed, archived, discarded, failed, superseded, snoozed")
}

// statusList reads name as a comma list of statuses that valid accepts; want names them
// for the error.
func statusList[S ~string](p *params, name string, valid func(S) bool, want string) []S {
	raw := p.vals[name]
	if raw == "" {
		return nil
	}
	var out []S
	for _, s := range strings.Split(raw, ",") {
		st := S(strings.TrimSpace(s))
		if !valid(st) {
			p.fail("%s: unknown %q (want a comma list of %s)", name, st, want)
			return nil
		}
		out = append(out, st)
	}
	return out
}

func (p *params) eventStatus(name string) inbox.EventStatus {
	raw := p.vals[name]
	switch st := inbox.EventStatus(raw); st {
	case "", inbox.EventRouted, inbox.EventUnrouted, inbox.EventIgnored, inbox.EventInvalid:
		return st
	}
	p.fail("%s: unknown %q (want routed, unrouted, ignored or invalid)", name, raw)
	return ""
}

// pathID reads an id path parameter; echo leaves parameters escaped when the URL held
// escapes it would not produce itself.
func pathID(c echo.Context, name string) (string, error) {
	v, err := pathValue(c, name)
	if err != nil {
		return "", err
	}
	return checkID(name, v)
}

// pathValue reads a path parameter unescaped.
func pathValue(c echo.Context, name string) (string, error) {
	v := c.Param(name)
	if c.Request().URL.RawPath != "" {
		u, err := url.PathUnescape(v)
		if err != nil {
			return "", server.BadRequest("%s: invalid URL escape in %q", name, v)
		}
		v = u
	}
	return v, nil
}

// checkID checks an event or record id.
func checkID(name, v string) (string, error) {
	if v == "" {
		return "", server.BadRequest("%s: must not be empty", name)
	}
	if err := checkText(v); err != nil {
		return "", server.BadRequest("%s: %v", name, err)
	}
	// Event and record ids are UUIDs the inbox generates; anything else is malformed
	// (400), not merely unknown (404).
	if _, err := uuid.Parse(v); err != nil {
		return "", server.BadRequest("%s: %q is not a valid id (want a UUID)", name, v)
	}
	return v, nil
}

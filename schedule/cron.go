package schedule

import (
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// cronFields is what a cron expression holds: five fields, or six with seconds first.
// Descriptors (@every, @daily) are refused: @every counts from whenever it is asked,
// which would give each replica its own fire times.
const cronFields = cron.SecondOptional | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow

// cronError is a parse error of one field of a Spec (cron or timezone).
type cronError struct{ field, msg string }

func (e *cronError) Error() string { return e.field + ": " + e.msg }

// Cron is a parsed cron expression in its time zone.
type Cron struct {
	sched cron.Schedule
	loc   *time.Location
	// fixedHour: the hour field names hours (no *), so a wall time the clock shows twice
	// when it is turned back fires once.
	fixedHour bool
}

// ParseCron parses expr (five fields, or six with seconds first) in the IANA zone tz
// ("" is UTC).
func ParseCron(expr, tz string) (Cron, error) {
	if tz == "" {
		tz = DefaultTimezone
	}
	loc, err := time.LoadLocation(tz)
	if err != nil || tz == "Local" {
		return Cron{}, &cronError{"timezone", fmt.Sprintf("unknown %q (want an IANA zone such as Europe/Berlin)", tz)}
	}
	fields := strings.Fields(expr)
	if len(fields) > 0 && (strings.HasPrefix(fields[0], "TZ=") || strings.HasPrefix(fields[0], "CRON_TZ=")) {
		return Cron{}, &cronError{"cron", "give the zone in timezone, not in the expression"}
	}
	if len(fields) != 5 && len(fields) != 6 {
		return Cron{}, &cronError{"cron", fmt.Sprintf("%q has %d fields (want five, or six with seconds first)", expr, len(fields))}
	}
	sched, err := cron.NewParser(cronFields).Parse(expr)
	if err != nil {
		return Cron{}, &cronError{"cron", fmt.Sprintf("%q: %v", expr, err)}
	}
	hour := fields[len(fields)-4]
	c := Cron{sched: sched, loc: loc, fixedHour: !strings.Contains(hour, "*")}
	// Whether an expression ever fires does not depend on the day asked (five years
	// are searched, a leap day included).
	if c.Next(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)).IsZero() {
		return Cron{}, &cronError{"cron", fmt.Sprintf("%q never fires", expr)}
	}
	return c, nil
}

// Next is the first fire after t (UTC, whole seconds), or zero when there is none in the
// next five years. A wall time in the hour a spring-forward skips does not exist that
// day and does not fire; one the clock shows twice at a fall-back fires once, the first
// time, unless the hour field is a wildcard (then fires go on in real time through both).
func (c Cron) Next(t time.Time) time.Time {
	for range 4 {
		n := c.sched.Next(t.In(c.loc))
		if n.IsZero() {
			return time.Time{}
		}
		if !c.fixedHour || !c.repeated(n) {
			return n.UTC()
		}
		t = n
	}
	return time.Time{}
}

// repeated reports whether n's wall time was shown before, in the hour a fall-back
// repeats (the shifts in use are 30 minutes, an hour and two).
func (c Cron) repeated(n time.Time) bool {
	l := n.In(c.loc)
	for _, d := range []time.Duration{30 * time.Minute, time.Hour, 2 * time.Hour} {
		e := l.Add(-d)
		if e.Hour() == l.Hour() && e.Minute() == l.Minute() && e.Second() == l.Second() && e.Day() == l.Day() {
			return true
		}
	}
	return false
}

// Latest is the last fire at or before now, given from, a fire at or before now (zero
// when there is none). It searches by halves over seconds, so a gateway down for years
// costs a few dozen steps.
func (c Cron) Latest(from, now time.Time) time.Time {
	lo, hi := from.Unix()-1, now.Unix() // fires are whole seconds: Next(hi) is after now
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if n := c.Next(time.Unix(mid, 0)); !n.IsZero() && !n.After(now) {
			lo = mid
		} else {
			hi = mid
		}
	}
	n := c.Next(time.Unix(lo, 0))
	if n.IsZero() || n.After(now) {
		return time.Time{}
	}
	return n
}

// Package quiet holds named time intervals in Alertmanager's syntax (times, weekdays,
// days of month, months, years, location) and answers whether one contains a moment
// and when that occurrence of it ends. Policy rules refer to them by name as
// active_time_intervals and mute_time_intervals.
package quiet

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/prometheus/alertmanager/timeinterval"
	"go.yaml.in/yaml/v3"
)

// Interval is one entry of the `time_intervals:` config section, as Alertmanager's:
// a name and the intervals it is the union of.
type Interval struct {
	Name          string         `yaml:"name" json:"name"`
	TimeIntervals []TimeInterval `yaml:"time_intervals" json:"time_intervals"`
}

// TimeInterval is Alertmanager's timeinterval.TimeInterval, field for field, read by
// its own decoders. Each field's value is wrapped so that a bad one is reported as a
// YAML type error at its line: the config loader then names its key and goes on
// collecting problems, where Alertmanager's plain error would stop the whole decode.
type TimeInterval struct {
	Times       []value[timeinterval.TimeRange]       `yaml:"times" json:"times,omitempty"`
	Weekdays    []value[timeinterval.WeekdayRange]    `yaml:"weekdays" json:"weekdays,omitempty"`
	DaysOfMonth []value[timeinterval.DayOfMonthRange] `yaml:"days_of_month" json:"days_of_month,omitempty"`
	Months      []value[timeinterval.MonthRange]      `yaml:"months" json:"months,omitempty"`
	Years       []value[timeinterval.YearRange]       `yaml:"years" json:"years,omitempty"`
	Location    *value[timeinterval.Location]         `yaml:"location" json:"location,omitempty"`
}

// value is one Alertmanager value decoded by its own UnmarshalYAML.
type value[T any] struct{ v T }

// UnmarshalYAML decodes the value, reporting an error as a type error at its line.
func (x *value[T]) UnmarshalYAML(n *yaml.Node) error {
	if err := n.Decode(&x.v); err != nil {
		if te := (*yaml.TypeError)(nil); errors.As(err, &te) {
			return err
		}
		return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: %v", n.Line, err)}}
	}
	return nil
}

// MarshalJSON writes the value as Alertmanager does.
func (x value[T]) MarshalJSON() ([]byte, error) { return json.Marshal(x.v) }

// MarshalYAML writes the value as Alertmanager does.
func (x value[T]) MarshalYAML() (any, error) { return x.v, nil }

func unwrap[T any](xs []value[T]) []T {
	if xs == nil {
		return nil // unset: no limit, as in Alertmanager
	}
	out := make([]T, len(xs))
	for i, x := range xs {
		out[i] = x.v
	}
	return out
}

// alertmanager is t as Alertmanager's type.
func (t TimeInterval) alertmanager() timeinterval.TimeInterval {
	out := timeinterval.TimeInterval{Times: unwrap(t.Times), Weekdays: unwrap(t.Weekdays), DaysOfMonth: unwrap(t.DaysOfMonth),
		Months: unwrap(t.Months), Years: unwrap(t.Years)}
	if t.Location != nil {
		out.Location = &t.Location.v
	}
	return out
}

// Search bounds for End. An occurrence that lasts longer, or changes more often, than
// these is cut there: the hold ends at the last boundary reached (still inside the
// interval), and the record, decided again then, is held again for the rest.
const (
	// MaxSearch is how far past the asked moment End looks for the occurrence's end.
	MaxSearch = 366 * 24 * time.Hour
	// MaxSteps is how many candidate boundaries End tries.
	MaxSteps = 10000
)

// Set is the configured intervals by name. The zero Set and a nil *Set hold none.
type Set struct {
	byName map[string][]timeinterval.TimeInterval
}

// NewSet checks the entries (a name each, no name twice) and builds the set. Errors
// name the entry as `[i].name`, relative to `time_intervals`.
func NewSet(entries []Interval) (*Set, error) {
	s := &Set{byName: make(map[string][]timeinterval.TimeInterval, len(entries))}
	var errs []error
	for i, e := range entries {
		switch _, dup := s.byName[e.Name]; {
		case e.Name == "":
			errs = append(errs, fmt.Errorf("[%d].name: required", i))
		case dup:
			errs = append(errs, fmt.Errorf("[%d].name: duplicate time interval %q", i, e.Name))
		default:
			tis := make([]timeinterval.TimeInterval, len(e.TimeIntervals))
			for j, ti := range e.TimeIntervals {
				tis[j] = ti.alertmanager()
			}
			s.byName[e.Name] = tis
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return s, nil
}

// Has reports whether name is a configured interval.
func (s *Set) Has(name string) bool {
	if s == nil {
		return false
	}
	_, ok := s.byName[name]
	return ok
}

// Contains reports whether the named interval contains t (false for an unknown name).
// As in Alertmanager, an interval without a location is read in UTC.
func (s *Set) Contains(name string, t time.Time) bool {
	if s == nil {
		return false
	}
	return containsAny(s.byName[name], t)
}

// End is the end of the occurrence of the named interval that contains t: the first
// instant after t it no longer contains. It tries only the instants where containment
// can change (a times boundary or midnight in the interval's zone, a change of the
// zone's offset), never minute by minute. capped reports that the search stopped at
// MaxSearch or MaxSteps first; end is then the last boundary reached, still inside.
// When the interval does not contain t, end is t.
func (s *Set) End(name string, t time.Time) (end time.Time, capped bool) {
	if s == nil {
		return t, false
	}
	tis := s.byName[name]
	if !containsAny(tis, t) {
		return t, false
	}
	limit := t.Add(MaxSearch)
	cur := t
	for range MaxSteps {
		next := nextChange(tis, cur)
		if next.After(limit) {
			return next, true
		}
		if !containsAny(tis, next) {
			return next, false
		}
		cur = next
	}
	return cur, true
}

func containsAny(tis []timeinterval.TimeInterval, t time.Time) bool {
	for _, ti := range tis {
		if ti.ContainsTime(t.UTC()) {
			return true
		}
	}
	return false
}

// nextChange is the earliest instant after cur at which one of tis may start or stop
// containing the time.
func nextChange(tis []timeinterval.TimeInterval, cur time.Time) time.Time {
	var next time.Time
	for _, ti := range tis {
		if c := nextBoundary(ti, cur); next.IsZero() || c.Before(next) {
			next = c
		}
	}
	return next
}

// nextBoundary is the earliest instant after cur at which ti's answer may change.
// ContainsTime reads the wall clock in ti's zone (minute of the day, date, weekday),
// which changes its answer only at a times boundary, at midnight, or where the zone's
// offset changes. Between offset changes the wall clock is the instant plus a fixed
// offset, so a wall boundary maps to exactly one instant: a wall time skipped or shown
// twice by a daylight-saving change needs no guess.
func nextBoundary(ti timeinterval.TimeInterval, cur time.Time) time.Time {
	loc := time.UTC
	if ti.Location != nil && ti.Location.Location != nil {
		loc = ti.Location.Location
	}
	local := cur.In(loc)
	_, offset := local.Zone()
	_, zoneEnd := local.ZoneBounds()
	// The wall clock as a UTC time, so day arithmetic has no zone in it.
	wall := time.Date(local.Year(), local.Month(), local.Day(), local.Hour(), local.Minute(), local.Second(), local.Nanosecond(), time.UTC)
	midnight := time.Date(local.Year(), local.Month(), local.Day(), 0, 0, 0, 0, time.UTC)
	next := midnight.AddDate(0, 0, 1)
	for _, tr := range ti.Times {
		for _, m := range [2]int{tr.StartMinute, tr.EndMinute} {
			if b := midnight.Add(time.Duration(m) * time.Minute); b.After(wall) && b.Before(next) {
				next = b
			}
		}
	}
	at := next.Add(-time.Duration(offset) * time.Second).In(cur.Location())
	if !zoneEnd.IsZero() && zoneEnd.Before(at) {
		at = zoneEnd.In(cur.Location())
	}
	return at
}

package inbox

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/signalgate/signalgate/quiet"
)

// WithTimeIntervals gives the policy the configured time intervals (config
// `time_intervals:`) its rules name as active_time_intervals and mute_time_intervals.
// They live in the policy so that a new policy carries the intervals it was checked
// against.
func WithTimeIntervals(s *quiet.Set) PolicyOption {
	return func(p *Policy) { p.intervals = s }
}

// CheckTimeIntervals reports every rule naming an interval s does not have, with its
// key path relative to `policy`.
func (c *PolicyConfig) CheckTimeIntervals(s *quiet.Set) error {
	var errs []error
	for i, r := range c.Rules {
		for _, f := range []struct {
			key   string
			names StringList
		}{{"active_time_intervals", r.ActiveTimeIntervals}, {"mute_time_intervals", r.MuteTimeIntervals}} {
			for _, name := range f.names {
				if !s.Has(name) {
					errs = append(errs, fmt.Errorf("rules[%d].%s: unknown time interval %q (not in time_intervals)", i, f.key, name))
				}
			}
		}
	}
	return errors.Join(errs...)
}

// mutes reports whether a rule names a muting interval.
func (p *Policy) mutes() bool {
	return slices.ContainsFunc(p.cfg.Rules, func(r Rule) bool { return len(r.MuteTimeIntervals) > 0 })
}

// muteOnly: a rule with mute intervals and no action (nor after or at) only holds what
// the layers after it decide, while muted.
func (r Rule) muteOnly() bool {
	return len(r.MuteTimeIntervals) > 0 && r.ActionSpec == ActionSpec{}
}

// inIntervals reports whether r applies at now as far as its active_time_intervals go.
func (p *Policy) inIntervals(r Rule, now time.Time) bool {
	if len(r.ActiveTimeIntervals) == 0 {
		return true
	}
	for _, name := range r.ActiveTimeIntervals {
		if p.intervals.Contains(name, now) {
			return true
		}
	}
	return false
}

// muted is the hold rule i puts on what it decides at now: by the first of its mute
// intervals that is active, until that occurrence ends. Nil when none is active.
func (p *Policy) muted(i int, r Rule, now time.Time) *Hold {
	for _, name := range r.MuteTimeIntervals {
		if p.intervals.Contains(name, now) {
			// Past quiet.MaxSearch the end is cut short: the record is decided again
			// then and, still muted, held again.
			end, _ := p.intervals.End(name, now)
			return &Hold{By: "mute:" + name, Until: end.UTC(), Reason: fmt.Sprintf("muted by interval %s (rule[%d])", name, i)}
		}
	}
	return nil
}

// held puts h on d when d would send something: a discarded or persisted record is
// never sent, so there is nothing to hold.
func held(d Decision, h *Hold) Decision {
	if h == nil || !d.Sends() {
		return d
	}
	// The reason names the occurrence's end; the hold keeps the interval's name only.
	withEnd := *h
	withEnd.Reason += " until " + h.Until.Format(time.RFC3339)
	d = HeldDecision(d, withEnd)
	d.Hold = h
	return d
}

// Held reports the hold a mute puts on s at now, so the policy serves as a Holder: a
// record decided before its rule's interval began (deferred into the night, say) is
// held when it falls due. The rules see s as it is given (no payload unless set) and an
// idle thread, so a rule whose `when` needs more does not match here.
func (p *Policy) Held(s Subject, now time.Time) (Hold, bool) {
	if !p.mutes() {
		return Hold{}, false // no rule mutes: nothing to decide again
	}
	if d := p.Decide(s, PresenceIdle, now); d.Hold != nil {
		return *d.Hold, true
	}
	return Hold{}, false
}

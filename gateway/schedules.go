package gateway

import (
	"errors"
	"fmt"

	"github.com/signalgate/signalgate/schedule"
)

// validateSchedules checks schedules[]: each problem names its key as config.yaml spells
// it (schedules[0].if_idle.behavior), and an id is used once.
func (c *Config) validateSchedules() error {
	known := map[string]bool{}
	for _, a := range c.Agents {
		known[a.ID] = true
	}
	seen := map[string]bool{}
	var errs []error
	for i, s := range c.Schedules {
		p := fmt.Sprintf("schedules[%d].", i)
		var inv *schedule.InvalidError
		if err := s.WithDefaults().Check(func(a string) bool { return known[a] }); errors.As(err, &inv) {
			for _, f := range inv.Fields {
				errs = append(errs, fmt.Errorf("%s%s: %s", p, schedule.SnakeCase(f.Field), f.Msg))
			}
		}
		if s.ID != "" && seen[s.ID] {
			errs = append(errs, fmt.Errorf("%sid: duplicate schedule %q", p, s.ID))
		}
		seen[s.ID] = true
	}
	return errors.Join(errs...)
}

package gateway

import (
	"fmt"

	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/quiet"
)

// newPolicy builds the policy with the time intervals its rules name.
func (c *Config) newPolicy() (*inbox.Policy, error) {
	set, err := quiet.NewSet(c.TimeIntervals)
	if err != nil {
		return nil, fmt.Errorf("time_intervals: %w", err)
	}
	policy, err := inbox.NewPolicy(c.Policy, inbox.WithTimeIntervals(set))
	if err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	return policy, nil
}

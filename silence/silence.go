// Package silence holds silences: runtime rules, made and expired through the admin API
// and the console, that hold matching inbox records (never drop them) while they are
// active, as Alertmanager's silences hold alerts. What a silence held is released
// through the policy when it ends.
package silence

import (
	"fmt"
	"time"
)

// State is a silence's state at a moment, as Alertmanager names them.
type State string

const (
	StatePending State = "pending" // startsAt is ahead
	StateActive  State = "active"
	StateExpired State = "expired" // endsAt passed, or expired early
)

// Matcher is Alertmanager's API matcher: Name equals (IsEqual) or does not equal Value,
// or, with IsRegex, matches the fully anchored regular expression Value. Names are
// agent, resource, thread, source, kind, route and priority; any other name is a record
// attribute's.
type Matcher struct {
	Name    string `json:"name"`
	Value   string `json:"value"`
	IsRegex bool   `json:"isRegex"`
	// IsEqual defaults to true when a request leaves it out, as in Alertmanager.
	IsEqual *bool `json:"isEqual,omitempty"`
}

// Input is what creates a silence (POST /admin/v1/silences).
type Input struct {
	Matchers []Matcher `json:"matchers"`
	// When is an expression as in policy rules' `when`, over the record and its event.
	When          string    `json:"when,omitempty"`
	StartsAt      time.Time `json:"startsAt"` // zero: now
	EndsAt        time.Time `json:"endsAt"`
	CreatedBy     string    `json:"createdBy"`
	Comment       string    `json:"comment"`
	IncludeUrgent bool      `json:"includeUrgent,omitempty"`
}

// Silence is one stored silence.
type Silence struct {
	ID string `json:"id"`
	Input
	Status    Status    `json:"status"`
	UpdatedAt time.Time `json:"updatedAt"`
	// ExpiredBy is who expired it early, if anyone did.
	ExpiredBy string `json:"expiredBy,omitempty"`
}

// Status is Alertmanager's silence status object.
type Status struct {
	State State `json:"state"`
}

// Config is the `silences:` section of config.yaml.
type Config struct {
	// MaxDuration bounds endsAt − startsAt; a longer silence is refused.
	MaxDuration time.Duration `yaml:"max_duration"`
}

// DefaultMaxDuration is silences.max_duration's default.
const DefaultMaxDuration = 7 * 24 * time.Hour

// Validate checks the section: a negative max_duration is refused (zero is the default).
func (c Config) Validate() error {
	if c.MaxDuration < 0 {
		return fmt.Errorf("max_duration: %s is negative", c.MaxDuration)
	}
	return nil
}

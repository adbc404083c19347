// Package schedule runs agents on cron schedules: each fire sends one signal to a thread,
// as POST …/signals does, with the id schedule:{id}:{fireTime}, so a fire reaches the
// thread once however many replicas race for it and however often a crashed one is
// retried. Schedules come from config.yaml (schedules[]) and from the admin API; both are
// database rows, read by every replica's scheduler.
package schedule

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/inbox"
)

// Where a schedule was defined.
const (
	OriginConfig = "config"
	OriginAPI    = "api"
)

// Status is a schedule's lifecycle state, as Mastra names it.
type Status string

// Statuses.
const (
	StatusActive Status = "active"
	StatusPaused Status = "paused"
)

// CatchUp says what a schedule does about fires missed while no gateway ran.
type CatchUp string

// Catch-up modes: none skips missed fires; last fires the latest missed one once.
const (
	CatchUpNone CatchUp = "none"
	CatchUpLast CatchUp = "last"
)

// Defaults of a schedule's signal.
const (
	DefaultSignalType = string(agent.TypeNotification)
	DefaultTagName    = "schedule"
	DefaultTimezone   = "UTC"
)

// Spec defines a schedule: a schedules[] entry of config.yaml (snake_case keys) and the
// admin API's body (camelCase fields, Mastra's names).
type Spec struct {
	ID         string         `json:"id" yaml:"id"`
	Agent      string         `json:"agent" yaml:"agent"`
	ResourceID string         `json:"resourceId" yaml:"resource_id"`
	ThreadID   string         `json:"threadId" yaml:"thread_id"`
	Cron       string         `json:"cron" yaml:"cron"`
	Timezone   string         `json:"timezone" yaml:"timezone"`
	Contents   string         `json:"contents" yaml:"contents"`
	SignalType string         `json:"signalType" yaml:"signal_type"`
	TagName    string         `json:"tagName" yaml:"tag_name"`
	Attributes map[string]any `json:"attributes,omitempty" yaml:"attributes"`
	IfActive   IfActive       `json:"ifActive" yaml:"if_active"`
	IfIdle     IfIdle         `json:"ifIdle" yaml:"if_idle"`
	CatchUp    CatchUp        `json:"catchUp" yaml:"catch_up"`
}

// IfActive is what a fire does when the thread's agent is running (Mastra's ifActive).
type IfActive struct {
	Behavior agent.Behavior `json:"behavior,omitempty" yaml:"behavior"` // deliver (default), persist or discard
}

// IfIdle is what a fire does when the thread is idle (Mastra's ifIdle).
type IfIdle struct {
	Behavior      agent.Behavior `json:"behavior,omitempty" yaml:"behavior"` // wake (default), persist or discard
	StreamOptions map[string]any `json:"streamOptions,omitempty" yaml:"stream_options"`
}

// Schedule is a stored schedule: its Spec and its state.
type Schedule struct {
	Spec
	Origin     string     `json:"origin"`
	Status     Status     `json:"status"`
	NextFireAt *time.Time `json:"nextFireAt,omitempty"`
	LastFireAt *time.Time `json:"lastFireAt,omitempty"`
	LastError  string     `json:"lastError,omitempty"`
	CreatedAt  time.Time  `json:"createdAt"`
	UpdatedAt  time.Time  `json:"updatedAt"`
	// ClaimFireAt and ClaimUntil are a replica's claim on a fire it is sending: others
	// leave the schedule alone until ClaimUntil, then send that fire again (same id).
	ClaimFireAt *time.Time `json:"-"`
	ClaimUntil  *time.Time `json:"-"`
}

// Thread is the thread a schedule's fires go to.
func (s Spec) Thread() inbox.ThreadKey {
	return inbox.ThreadKey{Agent: s.Agent, Resource: s.ResourceID, Thread: s.ThreadID}
}

// WithDefaults fills the defaults of the optional fields.
func (s Spec) WithDefaults() Spec {
	if s.SignalType == "" {
		s.SignalType = DefaultSignalType
	}
	if s.TagName == "" {
		s.TagName = DefaultTagName
	}
	if s.Timezone == "" {
		s.Timezone = DefaultTimezone
	}
	if s.CatchUp == "" {
		s.CatchUp = CatchUpNone
	}
	return s
}

// FireID is the signal id of schedule id's fire at fire: one per fire, so the thread's
// log keeps it once.
func FireID(id string, fire time.Time) string {
	return "schedule:" + id + ":" + fire.UTC().Format(time.RFC3339)
}

// FieldError is one invalid field of a Spec, named as the admin API names it
// (ifIdle.behavior); SnakeCase names it as config.yaml does.
type FieldError struct {
	Field string
	Msg   string
}

func (e FieldError) Error() string { return e.Field + ": " + e.Msg }

// InvalidError lists a Spec's invalid fields.
type InvalidError struct{ Fields []FieldError }

func (e *InvalidError) Error() string {
	parts := make([]string, len(e.Fields))
	for i, f := range e.Fields {
		parts[i] = f.Error()
	}
	return strings.Join(parts, "; ")
}

// ErrInvalid matches every InvalidError.
var ErrInvalid = errors.New("invalid schedule")

// Is lets errors.Is(err, ErrInvalid) match.
func (e *InvalidError) Is(target error) bool { return target == ErrInvalid }

var upper = regexp.MustCompile(`[A-Z]`)

// SnakeCase names an API field as config.yaml does (ifIdle.streamOptions:
// if_idle.stream_options).
func SnakeCase(field string) string {
	return upper.ReplaceAllStringFunc(field, func(s string) string { return "_" + strings.ToLower(s) })
}

var idPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// CheckID refuses what is not a schedule id.
func CheckID(id string) error {
	if !idPattern.MatchString(id) {
		return fmt.Errorf("%q is not a schedule id (letters, digits, '.', '_' and '-', at most 128, starting with a letter or digit)", id)
	}
	return nil
}

// Check validates s (defaults filled) for the agents known says exist; nil when valid.
func (s Spec) Check(known func(agent string) bool) error {
	var errs []FieldError
	bad := func(field, format string, args ...any) {
		errs = append(errs, FieldError{Field: field, Msg: fmt.Sprintf(format, args...)})
	}
	if err := CheckID(s.ID); err != nil {
		bad("id", "%v", err)
	}
	switch {
	case s.Agent == "":
		bad("agent", "required")
	case !known(s.Agent):
		bad("agent", "unknown agent %q", s.Agent)
	}
	for _, f := range []struct{ name, v string }{{"resourceId", s.ResourceID}, {"threadId", s.ThreadID}} {
		if err := inbox.CheckID(f.v); err != nil {
			bad(f.name, "%v (a schedule's fires go to one thread)", err)
		}
	}
	if s.Cron == "" {
		bad("cron", "required (five fields, or six with seconds first)")
	} else if _, err := ParseCron(s.Cron, s.Timezone); err != nil {
		var ce *cronError
		if errors.As(err, &ce) {
			bad(ce.field, "%s", ce.msg)
		} else {
			bad("cron", "%v", err)
		}
	}
	if strings.TrimSpace(s.Contents) == "" {
		bad("contents", "required (the text the agent gets at each fire)")
	} else if len(s.Contents) > agent.DefaultMaxContents {
		bad("contents", "%d bytes, over the limit of %d", len(s.Contents), agent.DefaultMaxContents)
	}
	if t, _, err := agent.ParseType(s.SignalType); err != nil {
		bad("signalType", "unknown %q (want notification, user or reactive)", s.SignalType)
	} else if t == agent.TypeState {
		bad("signalType", "state is not for schedules: a state signal's id names its lane, a schedule's names each fire")
	}
	if !agent.ValidName(s.TagName) {
		bad("tagName", "invalid %q: names must match %s", s.TagName, agent.NamePattern)
	}
	if _, err := agent.NormalizeAttributes(attributes(s.Attributes)); err != nil {
		bad("attributes", "%v", err)
	}
	switch s.IfActive.Behavior {
	case "", agent.BehaviorDeliver, agent.BehaviorPersist, agent.BehaviorDiscard:
	default:
		bad("ifActive.behavior", "unknown %q (want deliver, persist or discard)", s.IfActive.Behavior)
	}
	switch s.IfIdle.Behavior {
	case "", agent.BehaviorWake, agent.BehaviorPersist, agent.BehaviorDiscard:
	default:
		bad("ifIdle.behavior", "unknown %q (want wake, persist or discard)", s.IfIdle.Behavior)
	}
	switch s.CatchUp {
	case CatchUpNone, CatchUpLast:
	default:
		bad("catchUp", "unknown %q (want none or last)", s.CatchUp)
	}
	if len(errs) > 0 {
		return &InvalidError{Fields: errs}
	}
	return nil
}

// attributes orders a map of attributes by name, so every fire carries them alike.
func attributes(m map[string]any) inbox.Attributes {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out inbox.Attributes
	for _, k := range keys {
		out = out.Set(k, m[k])
	}
	return out
}

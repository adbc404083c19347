package inbox

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/signalgate/signalgate/condition"
	"github.com/signalgate/signalgate/quiet"
)

// Action is what the policy decides for a record.
type Action string

// Actions, as Mastra names them. deliver and defer send the full notification (defer:
// later); queue sends it as the thread's next-turn input (after the active run, waking
// an idle thread); summarize lists the record in a notification-summary; log writes it
// to the thread without waking or interrupting; persist keeps it in the inbox only
// (pending, never sent), as Mastra's persist; discard drops it.
const (
	ActionDeliver   Action = "deliver"
	ActionQueue     Action = "queue"
	ActionSummarize Action = "summarize"
	ActionDefer     Action = "defer"
	ActionLog       Action = "log"
	ActionPersist   Action = "persist"
	ActionDiscard   Action = "discard"
)

// Valid reports whether a is a known action.
func (a Action) Valid() bool { return a.Strength() > 0 || a == ActionDiscard }

// Strength orders actions by how much of a record reaches the agent: discard (nothing)
// < persist (the inbox only) < log (written to the thread, never wakes) < summarize (a
// line, details in the inbox) < defer (in full, at a time) < queue (in full, after the
// active run) < deliver (in full, now). A merge keeps the stronger outcome.
func (a Action) Strength() int {
	switch a {
	case ActionPersist:
		return 1
	case ActionLog:
		return 2
	case ActionSummarize:
		return 3
	case ActionDefer:
		return 4
	case ActionQueue:
		return 5
	case ActionDeliver:
		return 6
	}
	return 0
}

// Decision is the policy's verdict for one record, with the reason stored on it.
type Decision struct {
	Action       Action     `json:"action"`
	DeliverAt    *time.Time `json:"deliverAt,omitempty"`
	SummaryAt    *time.Time `json:"summaryAt,omitempty"`
	FullWhenIdle bool       `json:"fullWhenIdle,omitempty"` // deliver in full once the thread turns idle
	Reason       string     `json:"reason"`
	// Code is the reason as a code: Mastra's for the built-in table (urgent,
	// idle-high, active-high-summary-then-full, idle-medium, active-batch-summary,
	// idle-low-summary), and message, rule, source, priority or default for the layers
	// Mastra leaves to a custom decide function.
	Code string `json:"code"`
	// Hold, when set, holds the record (a silence or a muting interval): nothing is
	// scheduled until it ends, and Reason starts with Hold.Reason.
	Hold *Hold `json:"hold,omitempty"`
}

// Decision codes.
const (
	CodeUrgent         = "urgent"
	CodeIdleHigh       = "idle-high"
	CodeActiveHighThen = "active-high-summary-then-full"
	CodeIdleMedium     = "idle-medium"
	CodeActiveBatch    = "active-batch-summary"
	CodeIdleLowSummary = "idle-low-summary"
	CodeMessage        = "message"
	CodeRule           = "rule"
	CodeSource         = "source"
	CodePriority       = "priority"
	CodeDefault        = "default"
)

// ActionSpec is a configured action with an optional delay (after) or clock time (at, "HH:MM").
type ActionSpec struct {
	Action Action        `yaml:"action" json:"action"`
	After  time.Duration `yaml:"after" json:"after,omitempty"`
	At     string        `yaml:"at" json:"at,omitempty"`
}

// RuleMatch selects records for a policy rule. Empty fields match anything;
// list fields match any of their values; attributes must all be equal.
type RuleMatch struct {
	Source     StringList        `yaml:"source" json:"source,omitempty"`
	Kind       StringList        `yaml:"kind" json:"kind,omitempty"`
	Priority   StringList        `yaml:"priority" json:"priority,omitempty"`
	Route      StringList        `yaml:"route" json:"route,omitempty"`
	Attributes map[string]string `yaml:"attributes" json:"attributes,omitempty"`
}

// Rule is a match plus the action it forces. When, if set, is an expression
// (package condition) that must also hold. StreamOptions, if set, go with the wakes of
// the records it matches (Mastra's ifIdle.streamOptions; see Policy.StreamOptions).
// ActiveTimeIntervals and MuteTimeIntervals name time intervals (see
// WithTimeIntervals): the rule applies only while one of the first is active, and
// while one of the second is, what it decides is held until that occurrence ends. A
// rule with mute intervals and no action only holds: when not muted it does not apply.
type Rule struct {
	Match               RuleMatch      `yaml:"match" json:"match"`
	When                string         `yaml:"when" json:"when,omitempty"`
	StreamOptions       map[string]any `yaml:"stream_options" json:"streamOptions,omitempty"`
	ActiveTimeIntervals StringList     `yaml:"active_time_intervals" json:"activeTimeIntervals,omitempty"`
	MuteTimeIntervals   StringList     `yaml:"mute_time_intervals" json:"muteTimeIntervals,omitempty"`
	ActionSpec          `yaml:",inline"`
}

// CheckStreamOptions reports whether configured stream options can be passed through
// as the JSON object a Mastra server takes.
func CheckStreamOptions(m map[string]any) error {
	if m == nil {
		return nil
	}
	if _, err := json.Marshal(m); err != nil {
		return fmt.Errorf("not a JSON object (%v)", err)
	}
	return nil
}

// PolicyConfig is the `policy:` section of config.yaml.
type PolicyConfig struct {
	SummaryInterval time.Duration `yaml:"summary_interval" json:"summaryInterval"`
	// SummaryFormat is mastra (counts per source, as Mastra renders) or detailed
	// (kinds and the most important item per source).
	SummaryFormat string                  `yaml:"summary_format" json:"summaryFormat,omitempty"`
	Timezone      string                  `yaml:"timezone" json:"timezone,omitempty"`
	Rules         []Rule                  `yaml:"rules" json:"rules,omitempty"`
	Sources       map[string]ActionSpec   `yaml:"sources" json:"sources,omitempty"`
	Priorities    map[Priority]ActionSpec `yaml:"priorities" json:"priorities,omitempty"`
	Default       *ActionSpec             `yaml:"default" json:"default,omitempty"`
}

// Summary formats (policy.summary_format).
const (
	SummaryFormatMastra   = "mastra"
	SummaryFormatDetailed = "detailed"
)

// DefaultSummaryInterval paces the summaries of a thread, active or idle.
const DefaultSummaryInterval = 10 * time.Second

// Validate reports every problem with its key path relative to `policy`.
func (c *PolicyConfig) Validate() error {
	var errs []error
	if c.SummaryInterval < 0 {
		errs = append(errs, errors.New("summary_interval: must not be negative"))
	}
	switch c.SummaryFormat {
	case "", SummaryFormatMastra, SummaryFormatDetailed:
	default:
		errs = append(errs, fmt.Errorf("summary_format: unknown %q (want mastra or detailed)", c.SummaryFormat))
	}
	if c.Timezone != "" {
		if _, err := time.LoadLocation(c.Timezone); err != nil {
			errs = append(errs, fmt.Errorf("timezone: unknown time zone %q", c.Timezone))
		}
	}
	for i, r := range c.Rules {
		p := fmt.Sprintf("rules[%d]", i)
		if !r.muteOnly() {
			errs = append(errs, r.ActionSpec.validate(p)...)
		}
		if err := CheckStreamOptions(r.StreamOptions); err != nil {
			errs = append(errs, fmt.Errorf("%s.stream_options: %w", p, err))
		}
		if r.When != "" {
			if _, err := condition.Compile(r.When, condition.PolicyEnv{}); err != nil {
				errs = append(errs, fmt.Errorf("%s.when: %w", p, err))
			}
		}
		for _, pr := range r.Match.Priority {
			if !Priority(pr).Valid() {
				errs = append(errs, fmt.Errorf("%s.match.priority: unknown priority %q", p, pr))
			}
		}
	}
	for _, name := range sortedKeys(c.Sources) {
		spec := c.Sources[name]
		errs = append(errs, spec.validate("sources."+name)...)
	}
	for _, pr := range sortedKeys(c.Priorities) {
		if !pr.Valid() {
			errs = append(errs, fmt.Errorf("priorities.%s: unknown priority", pr))
		}
		spec := c.Priorities[pr]
		errs = append(errs, spec.validate("priorities."+string(pr))...)
	}
	if c.Default != nil {
		errs = append(errs, c.Default.validate("default")...)
	}
	return errors.Join(errs...)
}

// PersistUses lists the key paths (relative to `policy`) whose action is persist: the
// action once wrote the notification to the thread (now log) and keeps it in the inbox
// only since it follows Mastra's persist, so a config written before may mean log.
func (c *PolicyConfig) PersistUses() []string {
	var out []string
	for i, r := range c.Rules {
		if r.Action == ActionPersist {
			out = append(out, fmt.Sprintf("rules[%d]", i))
		}
	}
	for _, name := range sortedKeys(c.Sources) {
		if c.Sources[name].Action == ActionPersist {
			out = append(out, "sources."+name)
		}
	}
	for _, pr := range sortedKeys(c.Priorities) {
		if c.Priorities[pr].Action == ActionPersist {
			out = append(out, "priorities."+string(pr))
		}
	}
	if c.Default != nil && c.Default.Action == ActionPersist {
		out = append(out, "default")
	}
	return out
}

func (s *ActionSpec) validate(path string) []error {
	var errs []error
	if !s.Action.Valid() {
		errs = append(errs, fmt.Errorf("%s.action: unknown action %q (want deliver, queue, summarize, defer, log, persist or discard)", path, s.Action))
	}
	if (s.Action == ActionPersist || s.Action == ActionQueue) && (s.After != 0 || s.At != "") {
		// persist never sends, and queue sends when the active run ends: neither has a time.
		errs = append(errs, fmt.Errorf("%s: %s takes no after or at (a timed delivery is defer; a timed write to the thread is log)", path, s.Action))
	}
	if s.After < 0 {
		errs = append(errs, fmt.Errorf("%s.after: must not be negative", path))
	}
	if s.At != "" {
		if _, _, err := parseClock(s.At); err != nil {
			errs = append(errs, fmt.Errorf("%s.at: %v", path, err))
		}
		if s.After != 0 {
			errs = append(errs, fmt.Errorf("%s: set after or at, not both", path))
		}
	}
	if s.Action == ActionDefer && s.After == 0 && s.At == "" {
		errs = append(errs, fmt.Errorf("%s: defer needs after or at", path))
	}
	return errs
}

// Policy decides what happens to records. It is pure: the clock is passed in.
type Policy struct {
	cfg       PolicyConfig
	loc       *time.Location
	when      []*condition.Condition // per rule, nil when the rule has none
	limits    condition.Limits       // what one event's `when`s may spend
	intervals *quiet.Set             // the time intervals rules name
}

// PolicyOption configures a Policy.
type PolicyOption func(*Policy)

// WithExpressionLimits sets what the rules' `when`s may spend on one event
// (condition.DefaultLimits otherwise).
func WithExpressionLimits(l condition.Limits) PolicyOption {
	return func(p *Policy) { p.limits = l }
}

// NewPolicy validates cfg and builds a Policy.
func NewPolicy(cfg PolicyConfig, opts ...PolicyOption) (*Policy, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.SummaryInterval == 0 {
		cfg.SummaryInterval = DefaultSummaryInterval
	}
	loc := time.UTC
	if cfg.Timezone != "" {
		loc, _ = time.LoadLocation(cfg.Timezone)
	}
	p := &Policy{cfg: cfg, loc: loc, when: make([]*condition.Condition, len(cfg.Rules)), limits: condition.DefaultLimits()}
	for _, o := range opts {
		o(p)
	}
	if err := cfg.CheckTimeIntervals(p.intervals); err != nil {
		return nil, err
	}
	for i, r := range cfg.Rules {
		if r.When != "" {
			p.when[i], _ = condition.Compile(r.When, condition.PolicyEnv{}) // Validate compiled it
		}
	}
	return p, nil
}

// SummaryFormat is mastra or detailed.
func (p *Policy) SummaryFormat() string { return cmp.Or(p.cfg.SummaryFormat, SummaryFormatMastra) }

// SummaryInterval is the pacing of a thread's summaries.
func (p *Policy) SummaryInterval() time.Duration { return p.cfg.SummaryInterval }

// Subject is what the policy looks at.
type Subject struct {
	Source     string
	Kind       string
	Priority   Priority
	Route      string
	Attributes Attributes
	DeliverAs  string
	Metadata   map[string]any
	Thread     ThreadKey
	// Payload is the event's body decoded (condition.DecodePayload), for `when`.
	Payload any
	// Budget is the event's, shared by its subjects (NewBudget); nil gives this
	// decision a budget of its own.
	Budget *condition.Budget
}

// NewBudget starts the budget one event's decisions share.
func (p *Policy) NewBudget() *condition.Budget { return condition.NewBudget(p.limits) }

// UsesExpressions reports whether any rule has a `when`, so callers decode the
// event body only then.
func (p *Policy) UsesExpressions() bool {
	return slices.ContainsFunc(p.when, func(c *condition.Condition) bool { return c != nil })
}

// Decide applies the layers first-match: rules, sources, priorities, default, then
// the built-in priority × presence table. A rule whose `when` ran out of the event's
// expression budget does not match, and the reason says so.
func (p *Policy) Decide(s Subject, presence Presence, now time.Time) Decision {
	if s.Budget == nil {
		s.Budget = p.NewBudget()
	}
	var over []string
	d := p.decide(s, presence, now, &over)
	if len(over) > 0 {
		d.Reason += " (" + strings.Join(over, "; ") + ")"
	}
	return d
}

func (p *Policy) decide(s Subject, presence Presence, now time.Time, over *[]string) Decision {
	if s.Priority == "" {
		s.Priority = PriorityMedium
	}
	if s.DeliverAs != DeliverAsNotification {
		return Decision{Action: ActionDeliver, DeliverAt: ptr(now), Reason: "message: delivered as user input, never summarised", Code: CodeMessage}
	}
	var env *condition.PolicyEnv
	var mute *Hold // a muted mute-only rule's hold, for what the layers after it decide
	for i, r := range p.cfg.Rules {
		if !r.Match.matches(s) || !p.inIntervals(r, now) {
			continue
		}
		why := fmt.Sprintf("rule[%d] %s", i, r.Match.describe())
		if c := p.when[i]; c != nil {
			if env == nil {
				env = policyEnv(s, presence, now)
			}
			ok, err := c.Match(env, s.Budget)
			if errors.Is(err, condition.ErrBudgetExceeded) {
				*over = append(*over, fmt.Sprintf("rule[%d] not matched: %v", i, err))
			}
			if !ok {
				continue
			}
			why = fmt.Sprintf("rule[%d] when %s", i, c)
			if d := r.Match.describe(); d != "(any)" {
				why += " and " + d
			}
		}
		h := p.muted(i, r, now)
		if r.muteOnly() {
			if mute == nil {
				mute = h
			}
			continue
		}
		if mute != nil {
			h = mute
		}
		return held(p.apply(r.ActionSpec, now, why, CodeRule), h)
	}
	if spec, ok := p.cfg.Sources[s.Source]; ok {
		return held(p.apply(spec, now, "source "+s.Source, CodeSource), mute)
	}
	if spec, ok := p.cfg.Priorities[s.Priority]; ok {
		return held(p.apply(spec, now, "priority "+string(s.Priority), CodePriority), mute)
	}
	if p.cfg.Default != nil {
		return held(p.apply(*p.cfg.Default, now, "policy default", CodeDefault), mute)
	}
	return held(defaultTable(s.Priority, presence, now), mute)
}

// StreamOptions are, when a signal for r is sent, the stream_options of the first rule
// that has them and matches r (its `when` seeing the record, its payload, the thread's
// presence then and now), as Mastra runs its policy again at delivery time for them.
// Nil when no such rule matches.
func (p *Policy) StreamOptions(r Record, presence Presence, now time.Time) map[string]any {
	var s *Subject
	var env *condition.PolicyEnv
	var budget *condition.Budget
	for i, rule := range p.cfg.Rules {
		if rule.StreamOptions == nil || !p.inIntervals(rule, now) {
			continue
		}
		if s == nil {
			s = &Subject{Source: r.Source, Kind: r.Kind, Priority: r.Priority, Route: r.Route, Attributes: r.Attributes,
				DeliverAs: r.DeliverAs, Metadata: r.Metadata, Thread: r.Thread}
		}
		if !rule.Match.matches(*s) {
			continue
		}
		if c := p.when[i]; c != nil {
			if env == nil {
				s.Payload = condition.DecodePayload(r.Payload)
				env, budget = policyEnv(*s, presence, now), p.NewBudget()
			}
			if ok, _ := c.Match(env, budget); !ok {
				continue // over budget does not match, as in Decide
			}
		}
		return rule.StreamOptions
	}
	return nil
}

func policyEnv(s Subject, presence Presence, now time.Time) *condition.PolicyEnv {
	attrs := make(map[string]any, len(s.Attributes))
	for _, kv := range s.Attributes {
		attrs[kv.Key] = kv.Value
	}
	pres := string(presence)
	if pres == "" {
		pres = string(PresenceIdle)
	}
	return &condition.PolicyEnv{
		Record: condition.Record{Source: s.Source, Kind: s.Kind, Priority: string(s.Priority), Route: s.Route,
			Attributes: attrs, Metadata: s.Metadata, Payload: s.Payload},
		Presence: pres,
		Thread:   condition.Thread{Agent: s.Thread.Agent, Resource: s.Thread.Resource, ID: s.Thread.Thread},
		Now:      now,
	}
}

func (p *Policy) apply(spec ActionSpec, now time.Time, why, code string) Decision {
	at := now
	switch {
	case spec.After > 0:
		at = now.Add(spec.After)
	case spec.At != "":
		at = nextClock(now, spec.At, p.loc)
	}
	d := Decision{Action: spec.Action, Code: code}
	switch spec.Action {
	case ActionDeliver, ActionDefer, ActionLog:
		d.DeliverAt = ptr(at)
	case ActionQueue:
		// Due now: an idle thread is woken at once; an active one holds it until idle.
		d.DeliverAt, d.FullWhenIdle = ptr(at), true
	case ActionSummarize:
		d.SummaryAt = ptr(at)
	}
	// persist and discard schedule nothing: the record stays in the inbox untold.
	d.Reason = why + " → " + string(spec.Action)
	if !at.Equal(now) {
		d.Reason += " at " + at.UTC().Format(time.RFC3339)
	}
	return d
}

// defaultTable is the design's priority × presence table.
func defaultTable(pr Priority, presence Presence, now time.Time) Decision {
	active := presence == PresenceActive
	state := "idle"
	if active {
		state = "active"
	}
	why := fmt.Sprintf("default: %s priority, thread %s → ", pr, state)
	switch {
	case pr == PriorityUrgent && active:
		return Decision{Action: ActionDeliver, DeliverAt: ptr(now), Reason: why + "deliver now", Code: CodeUrgent}
	case pr == PriorityUrgent:
		return Decision{Action: ActionDeliver, DeliverAt: ptr(now), Reason: why + "deliver now (wakes)", Code: CodeUrgent}
	case pr == PriorityHigh && active:
		return Decision{Action: ActionSummarize, SummaryAt: ptr(now), FullWhenIdle: true, Reason: why + "summary now, full notification when idle",
			Code: CodeActiveHighThen}
	case pr == PriorityMedium && active:
		return Decision{Action: ActionSummarize, SummaryAt: ptr(now), Reason: why + "summary now, details stay in the inbox", Code: CodeActiveBatch}
	case pr == PriorityLow && active:
		return Decision{Action: ActionSummarize, SummaryAt: ptr(now), Reason: why + "held for a summary, never wakes", Code: CodeActiveBatch}
	case pr == PriorityLow:
		return Decision{Action: ActionSummarize, SummaryAt: ptr(now), Reason: why + "held for a summary, never wakes", Code: CodeIdleLowSummary}
	case pr == PriorityHigh:
		return Decision{Action: ActionDeliver, DeliverAt: ptr(now), Reason: why + "deliver now (wakes)", Code: CodeIdleHigh}
	default: // medium, idle
		return Decision{Action: ActionDeliver, DeliverAt: ptr(now), Reason: why + "deliver now (wakes)", Code: CodeIdleMedium}
	}
}

func (m RuleMatch) matches(s Subject) bool {
	if !m.Source.allows(s.Source) || !m.Kind.allows(s.Kind) || !m.Priority.allows(string(s.Priority)) || !m.Route.allows(s.Route) {
		return false
	}
	for k, want := range m.Attributes {
		if s.Attributes.String(k) != want {
			return false
		}
	}
	return true
}

func (m RuleMatch) describe() string {
	var parts []string
	add := func(name string, l StringList) {
		if len(l) > 0 {
			parts = append(parts, name+"="+strings.Join(l, "|"))
		}
	}
	add("source", m.Source)
	add("kind", m.Kind)
	add("priority", m.Priority)
	add("route", m.Route)
	for _, k := range sortedKeys(m.Attributes) {
		parts = append(parts, k+"="+m.Attributes[k])
	}
	if len(parts) == 0 {
		return "(any)"
	}
	return strings.Join(parts, " ")
}

// StringList is a YAML value that may be one string or a list of strings.
type StringList []string

func (l StringList) allows(v string) bool { return len(l) == 0 || slices.Contains(l, v) }

// Contains reports whether v is in the list (an empty list contains nothing).
func (l StringList) Contains(v string) bool { return slices.Contains(l, v) }

func parseClock(s string) (h, m int, err error) {
	hh, mm, ok := strings.Cut(s, ":")
	if ok {
		h, err = strconv.Atoi(hh)
		if err == nil {
			m, err = strconv.Atoi(mm)
		}
	}
	if !ok || err != nil || h < 0 || h > 23 || m < 0 || m > 59 || len(mm) != 2 {
		return 0, 0, fmt.Errorf("want a clock time HH:MM, got %q", s)
	}
	return h, m, nil
}

// nextClock is the next occurrence of HH:MM in loc strictly after now.
func nextClock(now time.Time, clock string, loc *time.Location) time.Time {
	h, m, _ := parseClock(clock)
	l := now.In(loc)
	t := time.Date(l.Year(), l.Month(), l.Day(), h, m, 0, 0, loc)
	if !t.After(now) {
		t = time.Date(l.Year(), l.Month(), l.Day()+1, h, m, 0, 0, loc)
	}
	return t.UTC()
}

func ptr[T any](v T) *T { return &v }

func sortedKeys[K ~string, V any](m map[K]V) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	return keys
}

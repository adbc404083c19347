package schedule

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/service"
)

// ErrExists is Create's answer for an id a schedule has already.
var ErrExists = errors.New("a schedule has this id already")

// ErrFromConfig is Patch's answer for a schedule config.yaml defines: the file is where
// it changes (a start puts the file's version back).
var ErrFromConfig = errors.New("the schedule is defined in config.yaml: change it there")

// Store keeps schedules (the store package). Update, Delete and the fire steps are
// compare-and-set where replicas race: each answers false when the row was not as read.
type Store interface {
	CreateSchedule(ctx context.Context, s Schedule) error // ErrExists when the id is taken
	Schedule(ctx context.Context, id string) (Schedule, error)
	ListSchedules(ctx context.Context) ([]Schedule, error)
	// UpdateSchedule replaces the row's spec, origin, status and next fire, dropping any
	// claim.
	UpdateSchedule(ctx context.Context, s Schedule) error
	DeleteSchedule(ctx context.Context, id string) error
	// DueSchedules lists active schedules whose next fire is at or before now and that no
	// replica holds a claim on (or whose claim lapsed).
	DueSchedules(ctx context.Context, now time.Time, limit int) ([]Schedule, error)
	// ClaimFire claims fire of schedule s as read (its next fire and claim unchanged,
	// still active) until until.
	ClaimFire(ctx context.Context, s Schedule, fire, until time.Time) (bool, error)
	// FinishFire ends the claim on fire: next becomes the next fire, fire the last, and
	// errMsg the last error ("" when it went).
	FinishFire(ctx context.Context, id string, fire, next time.Time, errMsg string) (bool, error)
	// SkipFires moves schedule s as read to next without firing (missed fires).
	SkipFires(ctx context.Context, s Schedule, next time.Time) (bool, error)
}

// Sender sends a signal as POST …/signals does (agent.Service).
type Sender interface {
	SendSignal(ctx context.Context, k inbox.ThreadKey, req agent.SignalRequest) (agent.SignalResult, error)
}

// Service creates, changes and fires schedules for the admin API and the scheduler.
type Service struct {
	store  Store
	send   Sender
	agents map[string]bool
	base   service.Base
}

// NewService builds the service for the agents named.
func NewService(st Store, send Sender, agents []string, base service.Base) *Service {
	known := make(map[string]bool, len(agents))
	for _, a := range agents {
		known[a] = true
	}
	return &Service{store: st, send: send, agents: known, base: base.Component("schedules")}
}

func (s *Service) known(a string) bool { return s.agents[a] }

// check fills spec's defaults and validates it.
func (s *Service) check(spec Spec) (Spec, Cron, error) {
	spec = spec.WithDefaults()
	if err := spec.Check(s.known); err != nil {
		return spec, Cron{}, err
	}
	c, err := ParseCron(spec.Cron, spec.Timezone)
	return spec, c, err
}

// Create stores a schedule made through the API; its first fire is the cron's next.
func (s *Service) Create(ctx context.Context, spec Spec) (Schedule, error) {
	spec, c, err := s.check(spec)
	if err != nil {
		return Schedule{}, err
	}
	now := s.base.Now().UTC()
	next := c.Next(now)
	sc := Schedule{Spec: spec, Origin: OriginAPI, Status: StatusActive, NextFireAt: &next, CreatedAt: now, UpdatedAt: now}
	if err := s.store.CreateSchedule(ctx, sc); err != nil {
		return Schedule{}, fmt.Errorf("create schedule %s: %w", spec.ID, err)
	}
	s.base.Logger.InfoContext(ctx, "schedule created", "schedule", spec.ID, "agent", spec.Agent, "next_fire_at", next)
	return sc, nil
}

// Get reads one schedule (inbox.ErrNotFound when there is none).
func (s *Service) Get(ctx context.Context, id string) (Schedule, error) {
	if err := CheckID(id); err != nil {
		return Schedule{}, &InvalidError{Fields: []FieldError{{"id", err.Error()}}}
	}
	return s.store.Schedule(ctx, id)
}

// List lists every schedule by id.
func (s *Service) List(ctx context.Context) ([]Schedule, error) { return s.store.ListSchedules(ctx) }

// Patch changes the fields patch names (a JSON merge patch over the API's shape) of a
// schedule made through the API. A new cron or timezone starts again from now.
func (s *Service) Patch(ctx context.Context, id string, patch json.RawMessage) (Schedule, error) {
	cur, err := s.Get(ctx, id)
	if err != nil {
		return Schedule{}, err
	}
	if cur.Origin == OriginConfig {
		return Schedule{}, ErrFromConfig
	}
	spec, err := mergeSpec(cur.Spec, patch)
	if err != nil {
		return Schedule{}, err
	}
	if spec.ID != cur.ID {
		return Schedule{}, &InvalidError{Fields: []FieldError{{"id", "cannot change (delete the schedule and create another)"}}}
	}
	spec, c, err := s.check(spec)
	if err != nil {
		return Schedule{}, err
	}
	now := s.base.Now().UTC()
	if spec.Cron != cur.Cron || spec.Timezone != cur.Timezone || cur.NextFireAt == nil {
		next := c.Next(now)
		cur.NextFireAt = &next
	}
	cur.Spec, cur.UpdatedAt = spec, now
	if err := s.store.UpdateSchedule(ctx, cur); err != nil {
		return Schedule{}, fmt.Errorf("update schedule %s: %w", id, err)
	}
	return cur, nil
}

// mergeSpec applies a JSON merge patch (RFC 7386) to spec; a field the API does not know
// is refused.
func mergeSpec(spec Spec, patch json.RawMessage) (Spec, error) {
	var p map[string]any
	if err := json.Unmarshal(patch, &p); err != nil || p == nil {
		return Spec{}, &InvalidError{Fields: []FieldError{{"body", "want a JSON object of the fields to change"}}}
	}
	raw, err := json.Marshal(spec)
	if err != nil {
		return Spec{}, fmt.Errorf("encode schedule: %w", err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return Spec{}, fmt.Errorf("decode schedule: %w", err)
	}
	merged, err := json.Marshal(mergePatch(doc, p))
	if err != nil {
		return Spec{}, fmt.Errorf("encode patched schedule: %w", err)
	}
	var out Spec
	dec := json.NewDecoder(bytes.NewReader(merged))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&out); err != nil {
		return Spec{}, &InvalidError{Fields: []FieldError{{"body", err.Error()}}}
	}
	return out, nil
}

func mergePatch(doc, patch map[string]any) map[string]any {
	for k, v := range patch {
		switch pv := v.(type) {
		case nil:
			delete(doc, k)
		case map[string]any:
			sub, _ := doc[k].(map[string]any)
			if sub == nil {
				sub = map[string]any{}
			}
			doc[k] = mergePatch(sub, pv)
		default:
			doc[k] = v
		}
	}
	return doc
}

// Delete removes a schedule: no replica fires it again. One config.yaml defines comes
// back at the next start, as Mastra's file-defined schedules do; pause it to keep it
// quiet across starts, or remove it from the file.
func (s *Service) Delete(ctx context.Context, id string) (Schedule, error) {
	cur, err := s.Get(ctx, id)
	if err != nil {
		return Schedule{}, err
	}
	if err := s.store.DeleteSchedule(ctx, id); err != nil {
		return Schedule{}, fmt.Errorf("delete schedule %s: %w", id, err)
	}
	s.base.Logger.InfoContext(ctx, "schedule deleted", "schedule", id, "origin", cur.Origin)
	return cur, nil
}

// Pause stops a schedule's fires until Resume; the pause outlasts restarts, config
// schedules' included.
func (s *Service) Pause(ctx context.Context, id string) (Schedule, error) {
	return s.setStatus(ctx, id, StatusPaused)
}

// Resume restarts a paused schedule from now: the fires it missed while paused are not
// sent.
func (s *Service) Resume(ctx context.Context, id string) (Schedule, error) {
	return s.setStatus(ctx, id, StatusActive)
}

func (s *Service) setStatus(ctx context.Context, id string, st Status) (Schedule, error) {
	cur, err := s.Get(ctx, id)
	if err != nil {
		return Schedule{}, err
	}
	if cur.Status == st {
		return cur, nil
	}
	now := s.base.Now().UTC()
	cur.Status, cur.UpdatedAt = st, now
	if st == StatusActive {
		c, err := ParseCron(cur.Cron, cur.Timezone)
		if err != nil {
			return Schedule{}, err
		}
		next := c.Next(now)
		cur.NextFireAt = &next
	}
	if err := s.store.UpdateSchedule(ctx, cur); err != nil {
		return Schedule{}, fmt.Errorf("%s schedule %s: %w", st, id, err)
	}
	s.base.Logger.InfoContext(ctx, "schedule "+string(st), "schedule", id)
	return cur, nil
}

// Run fires a schedule now, paused or not, outside its cron (Mastra's run): the signal's
// id is schedule:{id}:{now}, so a repeat within the second is the same fire.
func (s *Service) Run(ctx context.Context, id string) (agent.SignalResult, error) {
	cur, err := s.Get(ctx, id)
	if err != nil {
		return agent.SignalResult{}, err
	}
	return s.Fire(ctx, cur.Spec, s.base.Now().UTC().Truncate(time.Second))
}

// Fire sends spec's signal for fire, as POST …/signals would.
func (s *Service) Fire(ctx context.Context, spec Spec, fire time.Time) (agent.SignalResult, error) {
	contents, err := json.Marshal(spec.Contents)
	if err != nil {
		return agent.SignalResult{}, fmt.Errorf("encode contents: %w", err)
	}
	at := fire.UTC()
	req := agent.SignalRequest{
		Signal: &agent.SignalBody{
			SignalInput: agent.SignalInput{ID: FireID(spec.ID, fire), Type: spec.SignalType, TagName: spec.TagName,
				Attributes: attributes(spec.Attributes), CreatedAt: &at,
				Metadata: map[string]any{"schedule": map[string]any{"id": spec.ID, "fireTime": at.Format(time.RFC3339)}}},
			Contents: contents,
		},
		ResourceID: spec.ResourceID, ThreadID: spec.ThreadID,
		Options: agent.Options{IfActive: agent.IfActive{Behavior: spec.IfActive.Behavior},
			IfIdle: agent.IfIdle{Behavior: spec.IfIdle.Behavior, StreamOptions: spec.IfIdle.StreamOptions}},
	}
	return s.send.SendSignal(ctx, spec.Thread(), req)
}

// SyncConfig makes the config's schedules rows, as the file has them: new ones start
// from now, changed ones keep their state (paused stays paused) and start again from
// now only when their cron or timezone changed, and config schedules the file no longer
// has are deleted. A schedule made through the API under an id the file now uses
// becomes the file's.
func (s *Service) SyncConfig(ctx context.Context, specs []Spec) error {
	rows, err := s.store.ListSchedules(ctx)
	if err != nil {
		return fmt.Errorf("read schedules: %w", err)
	}
	have := make(map[string]Schedule, len(rows))
	for _, r := range rows {
		have[r.ID] = r
	}
	now := s.base.Now().UTC()
	want := make(map[string]bool, len(specs))
	var errs []error
	for _, spec := range specs {
		spec, c, err := s.check(spec)
		if err != nil {
			errs = append(errs, fmt.Errorf("schedule %s: %w", spec.ID, err))
			continue
		}
		want[spec.ID] = true
		cur, ok := have[spec.ID]
		if !ok {
			next := c.Next(now)
			err := s.store.CreateSchedule(ctx, Schedule{Spec: spec, Origin: OriginConfig, Status: StatusActive,
				NextFireAt: &next, CreatedAt: now, UpdatedAt: now})
			if err != nil && !errors.Is(err, ErrExists) { // ErrExists: another replica starting
				errs = append(errs, fmt.Errorf("create schedule %s: %w", spec.ID, err))
			}
			continue
		}
		if cur.Origin == OriginConfig && specJSON(cur.Spec) == specJSON(spec) {
			continue
		}
		if cur.Origin != OriginConfig {
			s.base.Logger.WarnContext(ctx, "config.yaml takes over a schedule made through the API", "schedule", spec.ID)
		}
		if spec.Cron != cur.Cron || spec.Timezone != cur.Timezone || cur.NextFireAt == nil {
			next := c.Next(now)
			cur.NextFireAt = &next
		}
		cur.Spec, cur.Origin, cur.UpdatedAt = spec, OriginConfig, now
		if err := s.store.UpdateSchedule(ctx, cur); err != nil {
			errs = append(errs, fmt.Errorf("update schedule %s: %w", spec.ID, err))
		}
	}
	for _, r := range rows {
		if r.Origin == OriginConfig && !want[r.ID] {
			if err := s.store.DeleteSchedule(ctx, r.ID); err != nil && !errors.Is(err, inbox.ErrNotFound) {
				errs = append(errs, fmt.Errorf("delete schedule %s: %w", r.ID, err))
			}
		}
	}
	return errors.Join(errs...)
}

func specJSON(s Spec) string {
	raw, _ := json.Marshal(s)
	var back any
	_ = json.Unmarshal(raw, &back)
	raw, _ = json.Marshal(back)
	return string(raw)
}

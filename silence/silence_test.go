package silence

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/service"
)

var t0 = time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)

func eq(name, value string) Matcher { return Matcher{Name: name, Value: value} }

func valid() Input {
	return Input{Matchers: []Matcher{eq("agent", "coder")}, EndsAt: t0.Add(2 * time.Hour), CreatedBy: "ops", Comment: "deploy"}
}

// Every bad field is refused with an error naming it; nothing panics.
func TestValidateNamesTheField(t *testing.T) {
	long := strings.Repeat("x", MaxValueBytes+1)
	f := false
	for _, tc := range []struct {
		name string
		edit func(*Input)
		want string
	}{
		{"no matchers", func(in *Input) { in.Matchers = nil }, "matchers: at least one is required"},
		{"too many", func(in *Input) { in.Matchers = make([]Matcher, MaxMatchers+1) }, "matchers: 33, at most 32"},
		{"bad name", func(in *Input) { in.Matchers[0].Name = "a b" }, `matchers[0].name: "a b" is not a name`},
		{"empty name", func(in *Input) { in.Matchers[0].Name = "" }, `matchers[0].name`},
		{"long value", func(in *Input) { in.Matchers[0].Value = long }, "matchers[0].value: 1025 bytes, at most 1024"},
		{"bad regex", func(in *Input) { in.Matchers[0].Value, in.Matchers[0].IsRegex = "(", true }, "matchers[0].value: not a regular expression"},
		{"matches everything", func(in *Input) { in.Matchers[0].Value, in.Matchers[0].IsRegex = ".*", true }, "matchers: every one matches an empty value"},
		{"not equal to something matches empty", func(in *Input) { in.Matchers[0].IsEqual = &f }, "matchers: every one matches an empty value"},
		{"bad when", func(in *Input) { in.When = "presnce == 1" }, "when: "},
		{"no end", func(in *Input) { in.EndsAt = time.Time{} }, "endsAt: required"},
		{"end before start", func(in *Input) { in.EndsAt = t0.Add(-time.Hour) }, "endsAt: 2026-11-02T08:00:00Z is not after startsAt 2026-11-02T09:00:00Z"},
		{"too long", func(in *Input) { in.EndsAt = t0.Add(169 * time.Hour) }, "endsAt: more than silences.max_duration (168h) after startsAt"},
		{"too long from a later start", func(in *Input) {
			in.StartsAt, in.EndsAt = t0.Add(24*time.Hour), t0.Add(24*time.Hour+DefaultMaxDuration+time.Second)
		}, "endsAt: more than silences.max_duration (168h)"},
		{"no author", func(in *Input) { in.CreatedBy = " " }, "createdBy: required"},
		{"no comment", func(in *Input) { in.Comment = "" }, "comment: required"},
		{"long comment", func(in *Input) { in.Comment = strings.Repeat("c", MaxCommentBytes+1) }, "comment: 4097 bytes, at most 4096"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := valid()
			tc.edit(&in)
			err := Validate(&in, t0, DefaultMaxDuration)
			var ve *ValidationError
			require.True(t, errors.As(err, &ve), "%v", err)
			require.Contains(t, err.Error(), tc.want)
		})
	}
	in := valid()
	in.StartsAt = t0.Add(-time.Hour)
	require.NoError(t, Validate(&in, t0, DefaultMaxDuration))
	require.Equal(t, t0, in.StartsAt, "a past start is now, as in Alertmanager")
	require.True(t, *in.Matchers[0].IsEqual, "isEqual defaults to true")
}

// memStore is a Store in memory.
type memStore struct{ rows map[string]Silence }

func (m *memStore) CreateSilence(_ context.Context, s Silence) error { m.rows[s.ID] = s; return nil }
func (m *memStore) Silence(_ context.Context, id string) (Silence, error) {
	s, ok := m.rows[id]
	if !ok {
		return Silence{}, inbox.ErrNotFound
	}
	return s, nil
}
func (m *memStore) ListSilences(context.Context, State, time.Time, int) ([]Silence, error) {
	return nil, nil
}
func (m *memStore) ExpireSilence(_ context.Context, id, by string, now time.Time) (Silence, error) {
	s, ok := m.rows[id]
	if !ok {
		return Silence{}, inbox.ErrNotFound
	}
	if s.EndsAt.After(now) {
		s.EndsAt, s.ExpiredBy = now, by
		m.rows[id] = s
	}
	return s, nil
}
func (m *memStore) LiveSilences(_ context.Context, now time.Time) ([]Silence, error) {
	var out []Silence
	for _, s := range m.rows {
		if s.EndsAt.After(now) {
			out = append(out, s)
		}
	}
	return out, nil
}

func newService(_ testing.TB, clock *time.Time) *Service {
	n := 0
	return NewService(&memStore{rows: map[string]Silence{}}, Config{}, service.Base{Now: func() time.Time { return *clock }},
		WithIDs(func() string { n++; return "s" + string(rune('0'+n)) }))
}

func subject(priority inbox.Priority) inbox.Subject {
	return inbox.Subject{Source: "github", Kind: "check_run", Priority: priority, Route: "ci",
		Thread:     inbox.ThreadKey{Agent: "coder", Resource: "acme/api", Thread: "pr-7"},
		Attributes: inbox.Attributes{{Key: "repo", Value: "acme/api"}, {Key: "number", Value: 7}}}
}

// A silence holds what all its matchers (and its when) match while active, by the
// silence ending last; urgent passes unless includeUrgent; a regex is anchored whole.
func TestHeld(t *testing.T) {
	ctx := context.Background()
	clock := t0
	s := newService(t, &clock)
	_, err := s.Create(ctx, Input{Matchers: []Matcher{eq("agent", "coder"), {Name: "kind", Value: "check_.*", IsRegex: true}},
		EndsAt: t0.Add(time.Hour), CreatedBy: "ops", Comment: "ci flaky"})
	require.NoError(t, err)

	h, ok := s.Held(subject(inbox.PriorityHigh), t0)
	require.True(t, ok)
	require.Equal(t, inbox.Hold{By: "silence:s1", Until: t0.Add(time.Hour), Reason: "silenced by s1"}, h)
	_, ok = s.Held(subject(inbox.PriorityUrgent), t0)
	require.False(t, ok, "urgent passes")
	other := subject(inbox.PriorityHigh)
	other.Kind = "xcheck_run"
	_, ok = s.Held(other, t0)
	require.False(t, ok, "the regex is anchored at the start")
	_, ok = s.Held(subject(inbox.PriorityHigh), t0.Add(time.Hour))
	require.False(t, ok, "ended")

	_, err = s.Create(ctx, Input{Matchers: []Matcher{eq("number", "7")}, When: `payload.action == "completed"`,
		StartsAt: t0.Add(10 * time.Minute), EndsAt: t0.Add(3 * time.Hour), CreatedBy: "ops", Comment: "c", IncludeUrgent: true})
	require.NoError(t, err)
	require.True(t, s.UsesPayload())
	urgent := subject(inbox.PriorityUrgent)
	urgent.Payload = map[string]any{"action": "completed"}
	_, ok = s.Held(urgent, t0)
	require.False(t, ok, "pending until its start")
	h, ok = s.Held(urgent, t0.Add(10*time.Minute))
	require.True(t, ok, "includeUrgent, attribute and when all match")
	require.Equal(t, "silence:s2", h.By)
	urgent.Payload = map[string]any{"action": "created"}
	_, ok = s.Held(urgent, t0.Add(10*time.Minute))
	require.False(t, ok, "when does not match")
	high := subject(inbox.PriorityHigh)
	high.Payload = map[string]any{"action": "completed"}
	h, _ = s.Held(high, t0.Add(10*time.Minute))
	require.Equal(t, "silence:s2", h.By, "of two, the one ending last")

	got, err := s.Expire(ctx, "s2", "ops")
	require.NoError(t, err)
	require.Equal(t, StateExpired, got.Status.State)
	h, _ = s.Held(high, t0.Add(10*time.Minute))
	require.Equal(t, "silence:s1", h.By, "an expire applies here at once")
	_, err = s.Expire(ctx, "nope", "ops")
	require.ErrorIs(t, err, inbox.ErrNotFound)
}

// Every DefaultRefresh the loop reads the live silences again: one made on another
// replica holds here from the next refresh.
func TestRefreshLoop(t *testing.T) {
	ctx := context.Background()
	clock := t0
	st := &memStore{rows: map[string]Silence{}}
	tick := make(chan struct{})
	waited := make(chan time.Duration, 4)
	s := NewService(st, Config{}, service.Base{Now: func() time.Time { return clock }},
		WithWait(func(ctx context.Context, d time.Duration) bool {
			select {
			case waited <- d:
			default:
			}
			select {
			case <-tick:
				return true
			case <-ctx.Done():
				return false
			}
		}))
	s.TestSignals.Refresh.Init()
	require.NoError(t, s.Start(ctx))
	t.Cleanup(func() { require.NoError(t, s.Stop(context.Background())) })
	_, held := s.Held(subject(inbox.PriorityHigh), t0)
	require.False(t, held)

	in := valid() // made by another replica: a row only
	require.NoError(t, Validate(&in, t0, DefaultMaxDuration))
	require.NoError(t, st.CreateSilence(ctx, Silence{ID: "elsewhere", Input: in}))
	tick <- struct{}{}
	require.NoError(t, <-s.TestSignals.Refresh.C())
	h, held := s.Held(subject(inbox.PriorityHigh), t0)
	require.True(t, held)
	require.Equal(t, "silence:elsewhere", h.By)
	require.Equal(t, DefaultRefresh, <-waited)
}

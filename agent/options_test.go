package agent

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/inbox"
)

func TestResolve(t *testing.T) {
	act := attrs("when", "active", "shared", "a")
	idle := attrs("when", "idle", "shared", "i")
	tests := []struct {
		name      string
		opts      Options
		presence  inbox.Presence
		want      Behavior
		wantAttrs inbox.Attributes
	}{
		{"defaults active", Options{}, inbox.PresenceActive, BehaviorDeliver, nil},
		{"defaults idle", Options{}, inbox.PresenceIdle, BehaviorWake, nil},
		{"unknown presence is idle", Options{}, "", BehaviorWake, nil},
		{"active deliver", Options{IfActive: IfActive{Behavior: BehaviorDeliver, Attributes: act}, IfIdle: IfIdle{Attributes: idle}}, inbox.PresenceActive, BehaviorDeliver, act},
		{"active persist", Options{IfActive: IfActive{Behavior: BehaviorPersist, Attributes: act}}, inbox.PresenceActive, BehaviorPersist, act},
		{"active discard", Options{IfActive: IfActive{Behavior: BehaviorDiscard, Attributes: act}}, inbox.PresenceActive, BehaviorDiscard, nil},
		{"idle wake", Options{IfActive: IfActive{Attributes: act}, IfIdle: IfIdle{Behavior: BehaviorWake, Attributes: idle}}, inbox.PresenceIdle, BehaviorWake, idle},
		{"idle persist", Options{IfIdle: IfIdle{Behavior: BehaviorPersist, Attributes: idle}}, inbox.PresenceIdle, BehaviorPersist, idle},
		{"idle discard", Options{IfIdle: IfIdle{Behavior: BehaviorDiscard, Attributes: idle}}, inbox.PresenceIdle, BehaviorDiscard, nil},
		{"idle options ignored when active", Options{IfIdle: IfIdle{Behavior: BehaviorDiscard, Attributes: idle}}, inbox.PresenceActive, BehaviorDeliver, nil},
		{"active options ignored when idle", Options{IfActive: IfActive{Behavior: BehaviorDiscard, Attributes: act}}, inbox.PresenceIdle, BehaviorWake, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.NoError(t, tt.opts.Validate())
			got, extra := Resolve(tt.opts, tt.presence)
			require.Equal(t, tt.want, got)
			require.Equal(t, tt.wantAttrs, extra)
		})
	}
}

func TestResolveMergeOptionWins(t *testing.T) {
	s, err := NormalizeSignal(SignalInput{Type: "reactive", TagName: "ci", Contents: "red", Attributes: attrs("repo", "api", "urgency", "low")}, 0)
	require.NoError(t, err)
	opts := Options{
		IfActive: IfActive{Attributes: attrs("urgency", "now", "interrupting", true)},
		IfIdle:   IfIdle{Attributes: attrs("woke", true)},
	}
	_, extra := Resolve(opts, inbox.PresenceActive)
	require.Equal(t, `<ci repo="api" urgency="now" interrupting="true">red</ci>`, Accept(s, extra, s.CreatedAt).XML())
	_, extra = Resolve(opts, inbox.PresenceIdle)
	require.Equal(t, `<ci repo="api" urgency="low" woke="true">red</ci>`, Accept(s, extra, s.CreatedAt).XML())
}

func TestOptionsValidate(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		msg  string
	}{
		{"wake is not an active behavior", Options{IfActive: IfActive{Behavior: BehaviorWake}},
			`ifActive.behavior: unknown "wake" (want deliver, persist or discard)`},
		{"deliver is not an idle behavior", Options{IfIdle: IfIdle{Behavior: BehaviorDeliver}},
			`ifIdle.behavior: unknown "deliver" (want wake, persist or discard)`},
		{"unknown", Options{IfActive: IfActive{Behavior: "interrupt"}},
			`ifActive.behavior: unknown "interrupt" (want deliver, persist or discard)`},
		{"bad attribute name", Options{IfIdle: IfIdle{Attributes: attrs("a b", "1")}},
			`ifIdle.attributes: invalid attribute name "a b": names must match ^[A-Za-z_][A-Za-z0-9_.-]*$`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.opts.Validate()
			require.EqualError(t, err, tt.msg)
			require.ErrorIs(t, err, ErrInvalidOptions)
			require.ErrorIs(t, err, ErrInvalid)
		})
	}
}

func TestOptionsJSON(t *testing.T) {
	var o Options
	require.NoError(t, json.Unmarshal([]byte(`{"ifActive":{"behavior":"persist","attributes":{"z":1,"a":"x"}},"ifIdle":{"behavior":"discard","runOptions":{"maxSteps":3}}}`), &o))
	require.NoError(t, o.Validate())
	require.Equal(t, BehaviorPersist, o.IfActive.Behavior)
	require.Equal(t, attrs("z", int64(1), "a", "x"), o.IfActive.Attributes)
	require.Equal(t, BehaviorDiscard, o.IfIdle.Behavior)
	require.Equal(t, map[string]any{"maxSteps": float64(3)}, o.IfIdle.Stream(), "runOptions: the deprecated name")

	o = Options{}
	require.NoError(t, json.Unmarshal([]byte(`{"ifIdle":{"streamOptions":{"requestContext":{"model":"m"}}}}`), &o))
	require.NoError(t, o.Validate())
	require.Equal(t, map[string]any{"requestContext": map[string]any{"model": "m"}}, o.IfIdle.Stream(), "streamOptions: Mastra's name")
	o = Options{}
	require.NoError(t, json.Unmarshal([]byte(`{"ifIdle":{"streamOptions":{},"runOptions":{}}}`), &o))
	require.ErrorIs(t, o.Validate(), ErrInvalidOptions, "both names at once")

	d := Options{}.WithDefaults()
	require.Equal(t, BehaviorDeliver, d.IfActive.Behavior)
	require.Equal(t, BehaviorWake, d.IfIdle.Behavior)
}

package agent

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/inbox"
)

func TestNormalizeSignalTypes(t *testing.T) {
	tests := []struct {
		typ, tag         string
		wantType         SignalType
		wantTag, wantXML string
	}{
		{"user", "", TypeUser, "user", "hi"},
		{"state", "", TypeState, "state", "<state>hi</state>"},
		{"notification", "", TypeNotification, "notification", "<notification>hi</notification>"},
		{"reactive", "", TypeReactive, "system-reminder", "<system-reminder>hi</system-reminder>"},
		{"reactive", "alert", TypeReactive, "alert", "<alert>hi</alert>"},
		{"user-message", "", TypeUser, "user", "hi"},
		{"system-reminder", "", TypeReactive, "system-reminder", "<system-reminder>hi</system-reminder>"},
		{"system-reminder", "nudge", TypeReactive, "nudge", "<nudge>hi</nudge>"},
	}
	for _, tt := range tests {
		t.Run(tt.typ+"/"+tt.tag, func(t *testing.T) {
			s, err := NormalizeSignal(SignalInput{Type: tt.typ, TagName: tt.tag, Contents: "hi"}, 0)
			require.NoError(t, err)
			require.Equal(t, tt.wantType, s.Type)
			require.Equal(t, tt.wantTag, s.TagName)
			require.Equal(t, tt.wantXML, s.XML())
			require.NotNil(t, s.Metadata)
		})
	}
}

func TestNormalizeSignalErrors(t *testing.T) {
	tests := []struct {
		name string
		in   SignalInput
		max  int
		kind error
		msg  string
	}{
		{"unknown type", SignalInput{Type: "alert"}, 0, ErrUnknownType,
			`unknown signal type "alert": use type "reactive" with tagName "alert"`},
		{"missing type", SignalInput{}, 0, ErrUnknownType,
			`type: required (user, state, reactive or notification)`},
		{"type is case-sensitive", SignalInput{Type: "User"}, 0, ErrUnknownType,
			`unknown signal type "User": use type "reactive" with tagName "User"`},
		{"bad tag", SignalInput{Type: "reactive", TagName: "1alert"}, 0, ErrInvalidName,
			`invalid tagName "1alert": names must match ^[A-Za-z_][A-Za-z0-9_.-]*$`},
		{"tag with colon", SignalInput{Type: "reactive", TagName: "a:b"}, 0, ErrInvalidName,
			`invalid tagName "a:b": names must match ^[A-Za-z_][A-Za-z0-9_.-]*$`},
		{"bad attribute name", SignalInput{Type: "user", Attributes: attrs("ok", "1", "bad name", "2")}, 0, ErrInvalidName,
			`invalid attribute name "bad name": names must match ^[A-Za-z_][A-Za-z0-9_.-]*$`},
		{"empty attribute name", SignalInput{Type: "user", Attributes: attrs("", "2")}, 0, ErrInvalidName,
			`invalid attribute name "": names must match ^[A-Za-z_][A-Za-z0-9_.-]*$`},
		{"nested attribute value", SignalInput{Type: "user", Attributes: attrs("a", map[string]any{})}, 0, ErrAttributeValue,
			`attribute "a": got map[string]interface {}: values must be strings, numbers or booleans`},
		{"NaN attribute value", SignalInput{Type: "user", Attributes: attrs("a", math.NaN())}, 0, ErrAttributeValue,
			`attribute "a": numbers must be finite`},
		{"contents over limit", SignalInput{Type: "user", Contents: "hello"}, 4, ErrContentsTooLarge,
			`contents is 5 bytes, over the limit of 4 bytes`},
		{"contents over default limit", SignalInput{Type: "user", Contents: strings.Repeat("x", DefaultMaxContents+1)}, 0, ErrContentsTooLarge,
			`contents is 262145 bytes, over the limit of 262144 bytes`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NormalizeSignal(tt.in, tt.max)
			require.EqualError(t, err, tt.msg)
			require.ErrorIs(t, err, tt.kind)
			require.ErrorIs(t, err, ErrInvalid)
			var ve *ValidationError
			require.True(t, errors.As(err, &ve))
		})
	}
}

func TestNormalizeSignalContentsAtLimit(t *testing.T) {
	_, err := NormalizeSignal(SignalInput{Type: "user", Contents: "hell"}, 4)
	require.NoError(t, err)
}

func TestNormalizeSignalAttributes(t *testing.T) {
	created := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	s, err := NormalizeSignal(SignalInput{
		ID: "sig_1", Type: "reactive", TagName: "ci", Contents: "red",
		Attributes: attrs("b", "1", "gone", nil, "a", true, "b", "2"),
		Metadata:   map[string]any{"k": "v"},
		CreatedAt:  &created,
	}, 0)
	require.NoError(t, err)
	require.Equal(t, attrs("b", "2", "a", true), s.Attributes)
	require.Equal(t, `<ci b="2" a="true">red</ci>`, s.XML())
	require.Equal(t, "sig_1", s.ID)
	require.Equal(t, created, s.CreatedAt)
	require.Equal(t, map[string]any{"k": "v"}, s.Metadata)
}

func TestSignalInputJSON(t *testing.T) {
	var in SignalInput
	require.NoError(t, json.Unmarshal([]byte(`{"type":"user-message","contents":"hi","attributes":{"name":"Ann","n":2,"x":null,"from":"slack"}}`), &in))
	s, err := NormalizeSignal(in, 0)
	require.NoError(t, err)
	require.Equal(t, `<user name="Ann" n="2" from="slack">hi</user>`, s.XML())

	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	s = Accept(s, nil, now)
	out, err := json.Marshal(s)
	require.NoError(t, err)
	require.JSONEq(t, `{"id":"","type":"user","tagName":"user","contents":"hi",
		"attributes":{"name":"Ann","n":2,"from":"slack"},"metadata":{},
		"createdAt":"2025-01-02T03:04:05Z","acceptedAt":"2025-01-02T03:04:05Z"}`, string(out))
	require.Contains(t, string(out), `"attributes":{"name":"Ann","n":2,"from":"slack"}`)

	var back Signal
	require.NoError(t, json.Unmarshal(out, &back))
	require.Equal(t, s.XML(), back.XML())
}

func TestSignalJSONEmptyAttributes(t *testing.T) {
	out, err := json.Marshal(Signal{Type: TypeUser})
	require.NoError(t, err)
	require.Contains(t, string(out), `"attributes":{}`)
}

func TestAccept(t *testing.T) {
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	earlier := now.Add(-time.Minute)
	s := Signal{Type: TypeReactive, TagName: "t", Contents: "c", Attributes: attrs("a", "1", "b", "2"), CreatedAt: earlier}
	got := Accept(s, attrs("b", "opt", "c", int64(3)), now)
	require.Equal(t, `<t a="1" b="opt" c="3">c</t>`, got.XML())
	require.Equal(t, earlier, got.CreatedAt)
	require.Equal(t, now, got.AcceptedAt)
	require.Equal(t, attrs("a", "1", "b", "2"), s.Attributes, "input untouched")

	got = Accept(Signal{Type: TypeUser, Contents: "hi"}, nil, now)
	require.Equal(t, now, got.CreatedAt)
	require.Equal(t, inbox.Attributes{}, got.Attributes)
}

func TestValidName(t *testing.T) {
	for _, ok := range []string{"a", "_", "A1", "a.b", "a-b", "a_b", "x.y-z_9"} {
		require.True(t, ValidName(ok), ok)
	}
	for _, bad := range []string{"", "1a", "-a", ".a", "a b", "a:b", "a>b", "é", "a\n"} {
		require.False(t, ValidName(bad), bad)
	}
}

package reply_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/reply"
	"github.com/signalgate/signalgate/store/storetest"
)

// roomPlace is a place of a kind these tests make up: a room and the message answered.
type roomPlace struct {
	Room    string   `json:"room,omitempty" doc:"The room."`
	Message int64    `json:"message,omitempty"`
	Tags    []string `json:"tags,omitempty"`
}

func (p roomPlace) Key() string                   { return p.Room }
func (p roomPlace) Describe() string              { return "room " + p.Room }
func (p roomPlace) WatchResource() (string, bool) { return p.Room, p.Room != "" }

// deskPlace is another kind's: it shares room with roomPlace.
type deskPlace struct {
	Room string `json:"room,omitempty"`
	Desk string `json:"desk,omitempty"`
}

func (p deskPlace) Key() string                   { return p.Room + "/" + p.Desk }
func (p deskPlace) Describe() string              { return p.Desk }
func (p deskPlace) WatchResource() (string, bool) { return "", false }

var madeUp = reply.Places{{Source: "rooms", Codec: reply.Codec[roomPlace]{}}, {Source: "desks", Codec: reply.Codec[deskPlace]{}}}

// A To is flat on the wire, as docs/replies.md shows it: source, connector and the
// place's fields; it reads back equal however its fields were ordered.
func TestToIsFlatOnTheWire(t *testing.T) {
	to := reply.NewTo("rooms", "main", roomPlace{Room: "R1", Message: 1 << 60, Tags: []string{"a"}})
	raw, err := json.Marshal(to)
	require.NoError(t, err)
	require.JSONEq(t, `{"source":"rooms","connector":"main","room":"R1","message":1152921504606846976,"tags":["a"]}`, string(raw))
	require.Equal(t, `{"source":"rooms","connector":"main",`, string(raw[:len(`{"source":"rooms","connector":"main",`)]))

	var back reply.To
	require.NoError(t, json.Unmarshal([]byte(`{"tags": [ "a" ], "room":"R1", "connector":"main", "message":1152921504606846976, "source":"rooms"}`), &back))
	require.Equal(t, to, back, "the same place, whatever the order; a large id keeps its digits")
	p, err := reply.PlaceOf[roomPlace](back)
	require.NoError(t, err)
	require.Equal(t, roomPlace{Room: "R1", Message: 1 << 60, Tags: []string{"a"}}, p)

	var bare reply.To
	require.NoError(t, json.Unmarshal([]byte(`{"source":"rooms","connector":"main"}`), &bare))
	raw, err = json.Marshal(bare)
	require.NoError(t, err)
	require.Equal(t, `{"source":"rooms","connector":"main"}`, string(raw))
	require.Error(t, json.Unmarshal([]byte(`{"source":7}`), &bare))

	// As metadata holds it (a decoded object) or as a connector put it.
	got, ok := reply.FromMetadata(map[string]any{reply.MetadataKey: map[string]any{"source": "rooms", "connector": "main", "room": "R1",
		"message": json.Number("1152921504606846976"), "tags": []any{"a"}}})
	require.True(t, ok)
	require.Equal(t, to, got)
	_, ok = reply.Parse(map[string]any{"source": "rooms", "room": "R1"})
	require.False(t, ok, "no connector")
}

// The table's places read, compare, describe and document each kind's places; a place
// of a source no kind answers for names none.
func TestPlacesReadEachKindsPlaces(t *testing.T) {
	to := reply.NewTo("rooms", "main", roomPlace{Room: "R1"})
	p, err := madeUp.Place(to)
	require.NoError(t, err)
	require.Equal(t, roomPlace{Room: "R1"}, p)
	require.Equal(t, "rooms main room R1", madeUp.Describe(to))
	resource, ok := madeUp.WatchResource(to)
	require.True(t, ok)
	require.Equal(t, "R1", resource)
	_, err = madeUp.Place(reply.To{Source: "halls", Connector: "main"})
	require.ErrorIs(t, err, reply.ErrUnknownPlace)
	require.Equal(t, "halls main", madeUp.Describe(reply.To{Source: "halls", Connector: "main"}))
	require.Equal(t, []string{"rooms", "desks"}, madeUp.Sources())

	// What a kind does not have is dropped from what the outbox keeps.
	var loose reply.To
	require.NoError(t, json.Unmarshal([]byte(`{"source":"rooms","connector":"main","room":"R1","desk":"D1"}`), &loose))
	require.Equal(t, to, madeUp.Normal(loose))

	fields, err := madeUp.Fields()
	require.NoError(t, err)
	var names []string
	for _, f := range fields {
		names = append(names, f.Name+":"+f.Type+f.Items)
	}
	require.Equal(t, []string{"room:string", "message:integer", "tags:arraystring", "desk:string"}, names, "room once")
	require.Equal(t, "The room.", fields[0].Doc)

	_, err = append(madeUp, reply.PlaceKind{Source: "numbers", Codec: reply.Codec[roomNumber]{}}).Fields()
	require.ErrorContains(t, err, "field room is of JSON type integer, another kind's of string")
}

// roomNumber types room otherwise than roomPlace.
type roomNumber struct {
	Room int `json:"room"`
}

func (roomNumber) Key() string                   { return "" }
func (roomNumber) Describe() string              { return "" }
func (roomNumber) WatchResource() (string, bool) { return "", false }

// An agent's replyTo holds only fields some kind's places have, of their types: anything
// else is refused naming the field (the agent API refused it while decoding the body);
// another kind's field is no part of the place.
func TestAskedReplyToIsChecked(t *testing.T) {
	f := setup(t, storetest.Backend{Name: "sqlite", Config: storetest.SQLiteConfig(t)}, nil)
	ctx := context.Background()
	f.notify(t, thread, "d1", dm)
	for raw, want := range map[string]string{
		`{"source":"slack","connector":"acme","team":"T1","channel":"D1","chanel":"D1"}`: `replyTo: unknown field "chanel"`,
		`{"source":"slack","connector":"acme","team":"T1","channel":"D1","number":"7"}`:  `replyTo: number: want an integer, got JSON string`,
		`{"source":"slack","connector":"acme","team":"T1","channel":["D1"]}`:             `replyTo: channel: want a string, got JSON array`,
	} {
		var to reply.To
		require.NoError(t, json.Unmarshal([]byte(raw), &to))
		_, err := f.svc.Queue(ctx, thread, reply.Request{ID: "r1", Text: "hi", ReplyTo: &to})
		require.ErrorIs(t, err, reply.ErrInvalid, raw)
		require.ErrorContains(t, err, want)
		code, _ := reply.Code(err)
		require.Equal(t, "invalid_request", code)
	}
	var to reply.To
	require.NoError(t, json.Unmarshal([]byte(`{"source":"slack","connector":"acme","team":"T1","channel":"D1","repo":"acme/api"}`), &to))
	r, err := f.svc.Queue(ctx, thread, reply.Request{ID: "r2", Text: "hi", ReplyTo: &to})
	require.NoError(t, err, "a GitHub field on a Slack place is none of the place")
	require.Equal(t, dm, r.To)
}

package agentapi_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/deliverytest"
)

// Messages created through the agent API say who wrote them, like a route's: from is
// the notification's source, name the metadata's author or else the agent; attributes
// the caller gives win.
func TestAPIMessageNameAndFrom(t *testing.T) {
	cases := []struct {
		name string
		body map[string]any
		xml  string
	}{
		{"defaults", map[string]any{"kind": "message", "summary": "can you look?", "deliverAs": "message"},
			`<user name="coder" from="agent-api">can you look?</user>`},
		{"author and source", map[string]any{"source": "chat", "kind": "message", "summary": "ship it", "deliverAs": "queued-message",
			"metadata": map[string]any{"author": "Jane"}}, `<user name="Jane" from="chat">ship it</user>`},
		{"non-string author", map[string]any{"source": "chat", "kind": "message", "summary": "hi", "deliverAs": "message",
			"metadata": map[string]any{"author": map[string]any{"login": "jane"}}}, `<user name="coder" from="chat">hi</user>`},
		{"explicit attributes win", map[string]any{"source": "chat", "kind": "message", "summary": "x & y", "deliverAs": "message",
			"metadata": map[string]any{"author": "Jane"}, "attributes": map[string]any{"from": "web", "name": "Bob", "team": "infra"}},
			`<user name="Bob" from="web" team="infra">x &amp; y</user>`},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			e := deliverytest.New(t, deliverytest.Config{})
			k := coderThread
			newNote(t, e, k, tt.body)
			e.Pass()
			var sigs []agent.Frame
			for _, f := range e.Log(k) {
				if f.Event == agent.EventSignal {
					sigs = append(sigs, f)
				}
			}
			require.Len(t, sigs, 1)
			require.Equal(t, agent.TypeUser, sigs[0].Signal.Type)
			require.Equal(t, tt.xml, sigs[0].XML)
		})
	}
}

// Records created through the agent API carry their provenance: the agent's token
// verified them and the agent wrote them. Body metadata adds keys but cannot forge
// verified_by.
func TestAPINotificationProvenance(t *testing.T) {
	e := deliverytest.New(t, deliverytest.Config{})
	k := coderThread
	plain := newNote(t, e, k, map[string]any{"kind": "note", "summary": "a"})
	forged := newNote(t, e, k, map[string]any{"kind": "note", "summary": "b",
		"metadata": map[string]any{"verified_by": "hmac-github", "ticket": "OPS-7"}})
	relayed := newNote(t, e, k, map[string]any{"kind": "note", "summary": "c", "metadata": map[string]any{"author": "Jane"}})

	require.Equal(t, map[string]any{"verified_by": "agent-token", "author": "coder"}, e.Record(plain).Metadata)
	require.Equal(t, map[string]any{"verified_by": "agent-token", "author": "coder", "ticket": "OPS-7"}, e.Record(forged).Metadata)
	require.Equal(t, map[string]any{"verified_by": "agent-token", "author": "Jane"}, e.Record(relayed).Metadata)
}

package langgraph

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A run's answer is the thread's last message when it is the AI's: its text, or its
// text blocks joined; the API's form and LangChain's serialised form both read. A run
// that left its input last (it failed, or answered nothing) has no answer, and an
// earlier answer is not taken for it.
func TestFinalAnswer(t *testing.T) {
	msgs := func(raw ...string) []json.RawMessage {
		var out []json.RawMessage
		for _, r := range raw {
			out = append(out, json.RawMessage(r))
		}
		return out
	}
	for _, tc := range []struct {
		name string
		in   []json.RawMessage
		want string
		ok   bool
	}{
		{"text", msgs(`{"type":"human","content":"hi"}`, `{"type":"ai","content":"echo: hi"}`), "echo: hi", true},
		{"blocks", msgs(`{"type":"ai","content":[{"type":"text","text":"a"},{"type":"tool_use","id":"x"},{"type":"text","text":"b"}]}`), "ab", true},
		{"serialised", msgs(`{"lc":1,"type":"constructor","id":["langchain_core","messages","AIMessage"],"kwargs":{"content":"done"}}`), "done", true},
		{"input last", msgs(`{"type":"ai","content":"old answer"}`, `{"type":"human","content":"new"}`), "", false},
		{"tool last", msgs(`{"type":"ai","content":"x"}`, `{"type":"tool","content":"result"}`), "", false},
		{"empty", nil, "", false},
	} {
		got, ok := finalAnswer(tc.in)
		require.Equal(t, tc.ok, ok, tc.name)
		require.Equal(t, tc.want, got, tc.name)
	}
}

// The webhook's fields are read from its start: a body whose state (values) is cut off
// still names the run and its status.
func TestWebhookFieldsFromItsStart(t *testing.T) {
	body := `{"run_id":"r1","thread_id":"t","status":"success","values":{"messages":[` + strings.Repeat(`{"content":"x"},`, 1000)
	got := topLevel([]byte(body), "run_id", "status")
	require.JSONEq(t, `"r1"`, string(got["run_id"]))
	require.JSONEq(t, `"success"`, string(got["status"]))
}

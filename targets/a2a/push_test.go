package a2a_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/targets/a2a"
)

// An attacker who knows the push endpoint, a context id (they are derived from thread
// names) and even a task id cannot end a task: a notification needs the token the
// gateway registered with that very task, and names that task. Each forgery is refused
// with its own status and changes nothing; the agent's own notification then ends the
// task.
func TestPushRefusesForgedNotifications(t *testing.T) {
	e := newEnv(t, envOpts{path: "hold", poll: a2a.DefaultPushedPollInterval})
	k := inbox.ThreadKey{Agent: "support", Resource: "acme/api", Thread: "forged"}
	e.note(k, inbox.PriorityUrgent, "CI failed on main")
	woke := e.waitSignals(k, 1)[0]
	working := e.state(k, a2a.StateWorking)
	cid := a2a.ContextID(k)
	raw, ok, err := store.NewConnectorState(e.Store).ConnectorState(context.Background(), "a2a/support", cid)
	require.NoError(t, err)
	require.True(t, ok)
	var rec struct{ Token, TaskID string }
	require.NoError(t, json.Unmarshal([]byte(raw), &rec))
	require.Equal(t, working.TaskID, rec.TaskID)

	completed := func(taskID, contextID string) string {
		b, err := json.Marshal(map[string]any{"statusUpdate": map[string]any{"taskId": taskID, "contextId": contextID,
			"status": map[string]any{"state": "TASK_STATE_COMPLETED", "message": map[string]any{"messageId": "m1", "role": "ROLE_AGENT",
				"parts": []any{map[string]any{"text": "forged answer"}}}}}})
		require.NoError(t, err)
		return string(b)
	}
	post := func(token, body string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, e.push.URL+a2a.PushPath("support"), strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/a2a+json")
		if token != "" {
			req.Header.Set(a2a.HeaderToken, token)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(out)
	}
	flip := func(s string) string { b := []byte(s); b[0] ^= 1; return string(b) }
	for _, tc := range []struct {
		name, token, body string
		want              int
		says              string
	}{
		{"no token", "", completed(rec.TaskID, cid), http.StatusUnauthorized, "invalid credentials"},
		{"a wrong token", flip(rec.Token), completed(rec.TaskID, cid), http.StatusUnauthorized, "invalid credentials"},
		{"a token of its own length", strings.Repeat("0", len(rec.Token)), completed(rec.TaskID, cid), http.StatusUnauthorized, "invalid credentials"},
		{"a context with no task", rec.Token, completed(rec.TaskID, a2a.ContextID(inbox.ThreadKey{Agent: "support", Resource: "x", Thread: "y"})), http.StatusUnauthorized, "invalid credentials"},
		{"another task of the context", rec.Token, completed("some-other-task", cid), http.StatusNotFound, "some-other-task"},
		{"no JSON", rec.Token, "{", http.StatusBadRequest, "unreadable body"},
		{"no context", rec.Token, completed(rec.TaskID, ""), http.StatusBadRequest, "contextId: required"},
		{"no task event", rec.Token, `{"hello":"world"}`, http.StatusBadRequest, "not an A2A task event"},
		{"over 4 MiB", rec.Token, `{"task":{"id":"` + strings.Repeat("x", 4<<20) + `"}}`, http.StatusRequestEntityTooLarge, "4 MiB"},
	} {
		code, body := post(tc.token, tc.body)
		require.Equal(t, tc.want, code, "%s: %s", tc.name, body)
		require.Contains(t, body, tc.says, tc.name)
	}
	live, err := e.Runs.Live(context.Background(), k)
	require.NoError(t, err)
	require.NotNil(t, live, "no forgery ended the task's run")
	require.Equal(t, woke.RunID, live.ID)

	// The agent's own notification (the harness pushes with the registered token) ends it.
	require.NoError(t, e.h.Release(cid))
	done := e.state(k, a2a.StateCompleted)
	require.Equal(t, "push", done.From)
	require.Equal(t, agent.RunFinished, e.waitRunClosed(k, woke.RunID))
}

package skills_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/deliverytest"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/store/storetest"
)

// httpHook is one entry of Claude Code's hook settings (type http).
type httpHook struct {
	Type           string            `json:"type"`
	URL            string            `json:"url"`
	Headers        map[string]string `json:"headers"`
	AllowedEnvVars []string          `json:"allowedEnvVars"`
}

// shippedHooks reads claude-code-channel/settings.json: the http hook of each event.
func shippedHooks(t *testing.T) map[string]httpHook {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("claude-code-channel", "settings.json"))
	require.NoError(t, err)
	var s struct {
		Hooks map[string][]struct {
			Hooks []httpHook `json:"hooks"`
		} `json:"hooks"`
	}
	require.NoError(t, json.Unmarshal(raw, &s))
	out := map[string]httpHook{}
	for event, groups := range s.Hooks {
		require.Len(t, groups, 1, event)
		require.Len(t, groups[0].Hooks, 1, event)
		out[event] = groups[0].Hooks[0]
	}
	return out
}

var envRef = regexp.MustCompile(`\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?`)

// post sends what Claude Code sends for hook h: its input JSON to the hook's URL (on
// the test's gateway instead of 127.0.0.1:8080), headers interpolated as Claude Code
// does (only allowedEnvVars; others become empty).
func post(t *testing.T, base string, h httpHook, env map[string]string, input map[string]any) (int, string) {
	t.Helper()
	require.Equal(t, "http", h.Type)
	const shipped = "http://127.0.0.1:8080"
	require.True(t, strings.HasPrefix(h.URL, shipped), h.URL)
	body, err := json.Marshal(input)
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPost, base+strings.TrimPrefix(h.URL, shipped), bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	for k, v := range h.Headers {
		req.Header.Set(k, envRef.ReplaceAllStringFunc(v, func(ref string) string {
			name := envRef.FindStringSubmatch(ref)[1]
			if !slices.Contains(h.AllowedEnvVars, name) {
				return ""
			}
			return env[name]
		}))
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(raw)
}

// TestClaudeCodeHooks posts what the shipped hooks post, as Claude Code would (its hook
// input bodies, the token from the environment), and sees the thread turn active at a
// turn's start, stay active through tool calls and turn idle at its end.
func TestClaudeCodeHooks(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			e := deliverytest.New(t, deliverytest.Config{Backend: &b})
			k := inbox.ThreadKey{Agent: "coder", Resource: "acme/api", Thread: "acme/api#7"}
			hooks := shippedHooks(t)
			for _, event := range []string{"UserPromptSubmit", "PostToolUse", "Stop", "StopFailure", "SessionEnd"} {
				require.Contains(t, hooks, event)
			}
			env := map[string]string{"SIGNALGATE_AGENT_TOKEN": deliverytest.CoderToken}
			common := map[string]any{"session_id": "9f6c-session", "transcript_path": "/home/dev/.claude/projects/x/9f6c.jsonl",
				"cwd": "/home/dev/api", "permission_mode": "default"}
			input := func(event string, extra map[string]any) map[string]any {
				in := map[string]any{"hook_event_name": event}
				for k, v := range common {
					in[k] = v
				}
				for k, v := range extra {
					in[k] = v
				}
				return in
			}
			live := func() bool {
				run, err := e.Runs.Live(t.Context(), k)
				require.NoError(t, err)
				return run != nil
			}

			require.False(t, live())
			code, body := post(t, e.Server.URL, hooks["UserPromptSubmit"], env, input("UserPromptSubmit",
				map[string]any{"prompt": "<channel source=\"signalgate\">…</channel>", "source": "system"}))
			require.Equal(t, http.StatusOK, code, body)
			require.JSONEq(t, `{}`, body, "Claude Code reads a hook's JSON answer as instructions: none")
			require.True(t, live(), "a turn started: the thread is active")
			run, err := e.Runs.Live(t.Context(), k)
			require.NoError(t, err)

			e.Clock.Advance(4 * time.Minute) // within the 5-minute lease
			code, body = post(t, e.Server.URL, hooks["PostToolUse"], env, input("PostToolUse",
				map[string]any{"tool_name": "Bash", "tool_input": map[string]any{"command": "go test ./..."}, "tool_response": map[string]any{}}))
			require.Equal(t, http.StatusOK, code, body)
			e.Clock.Advance(4 * time.Minute) // past the first lease: the tool call renewed it
			again, err := e.Runs.Live(t.Context(), k)
			require.NoError(t, err)
			require.NotNil(t, again, "a long turn keeps its run")
			require.Equal(t, run.ID, again.ID)

			code, body = post(t, e.Server.URL, hooks["Stop"], env, input("Stop", map[string]any{"stop_hook_active": false, "last_assistant_message": "Done."}))
			require.Equal(t, http.StatusOK, code, body)
			require.False(t, live(), "the turn ended: the thread is idle")
			code, body = post(t, e.Server.URL, hooks["Stop"], env, input("Stop", map[string]any{"stop_hook_active": false}))
			require.Equal(t, http.StatusOK, code, "a second Stop finds the thread idle: %s", body)

			for _, event := range []string{"StopFailure", "SessionEnd"} {
				code, body = post(t, e.Server.URL, hooks["UserPromptSubmit"], env, input("UserPromptSubmit", map[string]any{"prompt": "hi", "source": "user"}))
				require.Equal(t, http.StatusOK, code, body)
				require.True(t, live())
				code, body = post(t, e.Server.URL, hooks[event], env, input(event, map[string]any{"error": "overloaded", "reason": "other"}))
				require.Equal(t, http.StatusOK, code, body)
				require.False(t, live(), event)
			}

			// Without the token in the environment Claude Code sends "Bearer ": refused.
			code, _ = post(t, e.Server.URL, hooks["UserPromptSubmit"], map[string]string{}, input("UserPromptSubmit", nil))
			require.Equal(t, http.StatusUnauthorized, code)
			require.False(t, live())
			// An event that is not a presence hook is a 400 naming it.
			code, body = post(t, e.Server.URL, hooks["Stop"], env, input("PreCompact", nil))
			require.Equal(t, http.StatusBadRequest, code)
			require.Contains(t, body, "PreCompact")
			code, body = post(t, e.Server.URL, hooks["Stop"], env, map[string]any{"session_id": "x"})
			require.Equal(t, http.StatusBadRequest, code)
			require.Contains(t, body, "hook_event_name")
		})
	}
}

package gateway

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/connectors/slack"
	"github.com/signalgate/signalgate/connectors/slack/webapitest"
	"github.com/signalgate/signalgate/inbox"
	"github.com/stretchr/testify/require"
)

// What the end-to-end tests against real agent runtimes (LangGraph, A2A) share: GitHub's
// failed check run, a thread's stream, Slack's events and Web API calls.

// checkRunFailure is octokit's example of a failed check run, renamed (another check is
// another lane, so another record).
func checkRunFailure(t *testing.T, name string) []byte {
	t.Helper()
	for _, raw := range octokitExamples(t, "check_run") {
		m := map[string]any{}
		require.NoError(t, json.Unmarshal(raw, &m))
		cr, _ := m["check_run"].(map[string]any)
		if m["action"] == "completed" && cr["conclusion"] == "failure" {
			if name != "" {
				cr["name"] = name
				cr["id"] = float64(len(name)) * 1e6
			}
			return jsonOf(t, m)
		}
	}
	t.Fatal("the octokit examples have no failed check run")
	return nil
}

// postSlackEvent signs an Events API envelope of event for connector acme with signing
// and posts it to the gateway at base; it returns the answer's status.
func postSlackEvent(t *testing.T, base, signing string, event map[string]any, eventID string) int {
	t.Helper()
	body := jsonOf(t, map[string]any{"token": "XXYYZZ", "team_id": "T0001", "api_app_id": "A0KRD7HC3", "type": "event_callback",
		"event_id": eventID, "event_time": time.Now().Unix(), "event": event,
		"authorizations": []any{map[string]any{"team_id": "T0001", "user_id": "U0BOT", "is_bot": true}}})
	req, err := http.NewRequest(http.MethodPost, base+"/webhooks/slack/acme", bytes.NewReader(body))
	require.NoError(t, err)
	now := time.Now().Unix()
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(slack.HeaderTimestamp, fmt.Sprint(now))
	req.Header.Set(slack.HeaderSignature, webapitest.Sign(signing, now, body))
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	return resp.StatusCode
}

// slackReply posts user's threaded reply in channel under threadTS (signed for acme with
// approvalSigning); the gateway stores it (202 when no route takes the channel's
// messages) and approvals read it as an answer.
func slackReply(t *testing.T, gw, channel, threadTS, ts, user, text string) {
	t.Helper()
	require.Contains(t, []int{http.StatusOK, http.StatusAccepted}, postSlackEvent(t, gw, approvalSigning, map[string]any{"type": "message", "user": user,
		"text": text, "ts": ts, "thread_ts": threadTS, "team": "T0001", "channel": channel, "event_ts": ts, "channel_type": "channel"},
		"Ev"+strings.ReplaceAll(ts, ".", "")))
}

// nextSlackCall waits for the fake Slack's next Web API call of method.
func nextSlackCall(t *testing.T, api *webapitest.Server, method string) webapitest.Call {
	t.Helper()
	deadline := time.After(procWait) // only bounds a broken test
	for {
		select {
		case c := <-api.Calls:
			if c.Method == method {
				return c
			}
		case <-deadline:
			t.Fatalf("no %s call", method)
		}
	}
}

// threadFrame is one frame of a thread's stream.
type threadFrame struct {
	Event   string
	Signal  string `json:"id"`
	Action  string `json:"action"`
	RunID   string `json:"runId"`
	Status  string `json:"status"`
	TagName string `json:"tagName"`
	XML     string `json:"xml"`
}

// threadFrames follows a thread's stream (signal and run frames, in order).
type threadFrames struct {
	ch     chan threadFrame
	cancel func()
}

// followThread follows k's stream at gw with the agent's token (the whole log, then live)
// until the test ends or the gateway goes away.
func followThread(t *testing.T, gw, token string, k inbox.ThreadKey) *threadFrames {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, gw+"/v1/agents/"+k.Agent+"/threads/"+url.PathEscape(k.Resource)+"/"+url.PathEscape(k.Thread)+"/stream", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	f := &threadFrames{ch: make(chan threadFrame, 64)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		event := ""
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				event = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				fr := threadFrame{Event: event}
				if json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &fr) == nil {
					f.ch <- fr
				}
			}
		}
	}()
	f.cancel = func() { cancel(); resp.Body.Close(); <-done }
	t.Cleanup(f.cancel)
	return f
}

func (f *threadFrames) close() { f.cancel() }

func (f *threadFrames) next(t *testing.T) threadFrame {
	t.Helper()
	select {
	case fr := <-f.ch:
		return fr
	case <-time.After(procWait): // only bounds a broken test
		t.Fatal("no frame on the stream")
		return threadFrame{}
	}
}

// signal is the next signal frame (run frames before it are skipped).
func (f *threadFrames) signal(t *testing.T) threadFrame {
	t.Helper()
	for {
		if fr := f.next(t); fr.Event == agent.EventSignal {
			return fr
		}
	}
}

// runClosed waits for run runID's closing frame and returns its status; signal frames
// before it are not expected.
func (f *threadFrames) runClosed(t *testing.T, runID string) string {
	t.Helper()
	for {
		fr := f.next(t)
		require.NotEqual(t, agent.EventSignal, fr.Event, "a signal before run %s closed: %+v", runID, fr)
		if fr.RunID == runID && fr.Status != agent.RunOpen {
			return fr.Status
		}
	}
}

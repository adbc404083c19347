package sessiontest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/stdwebhooks"
)

// Vendors the fake speaks for.
const (
	OpenAI    = "openai"
	Anthropic = "anthropic"
)

// Message is one user message a fake session took.
type Message struct {
	Session string
	Text    string
	Key     string // its Idempotency-Key ("" for none)
}

// Answer is one answer to an action a fake session took.
type Answer struct {
	Session string
	CallID  string
	Allow   bool
}

// Fake is a stateful fake of one vendor's session API: sessions are created, take
// messages (a message makes a session busy), wait on actions and go idle as the test
// says, and the test sends their webhooks, signed, to the gateway.
type Fake struct {
	*httptest.Server
	Vendor   string
	Messages chan Message
	Answers  chan Answer

	mu       sync.Mutex
	sessions map[string]*fakeSession
	order    []string
	keys     map[string]bool
	failNext int
	events   int
	posts    int
}

type fakeSession struct {
	id       string
	status   string // openai: idle, in_progress, requires_action, failed; anthropic: idle, running, terminated
	metadata map[string]string
	actions  []map[string]any // openai required_actions
	events   []map[string]any // anthropic, oldest first
	reply    string
}

// NewFake starts a fake of vendor's API; it closes with the test.
func NewFake(t *testing.T, vendor string) *Fake {
	f := &Fake{Vendor: vendor, Messages: make(chan Message, 64), Answers: make(chan Answer, 16),
		sessions: map[string]*fakeSession{}, keys: map[string]bool{}}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

// BaseURL is the base_url a target of the fake takes.
func (f *Fake) BaseURL() string {
	if f.Vendor == OpenAI {
		return f.URL + "/v1"
	}
	return f.URL
}

// FailNext makes the next n message posts fail with a 500 after the message was taken
// (an answer lost on its way back).
func (f *Fake) FailNext(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failNext = n
}

// MessagePosts counts the requests that posted a message, taken or not (a retry a
// key deduplicated counts).
func (f *Fake) MessagePosts() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.posts
}

// Sessions are the ids of the sessions created, in order, with their metadata.
func (f *Fake) Sessions() ([]string, []map[string]string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var metas []map[string]string
	for _, id := range f.order {
		metas = append(metas, f.sessions[id].metadata)
	}
	return append([]string(nil), f.order...), metas
}

func (f *Fake) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	defer f.mu.Unlock()
	path := r.URL.Path
	if f.Vendor == OpenAI {
		if r.Header.Get("OpenAI-Beta") != "agents=v1" || !strings.HasPrefix(path, "/v1/agents/") {
			http.Error(w, `{"error":"bad request"}`, http.StatusBadRequest)
			return
		}
		path = strings.TrimPrefix(path, "/v1/agents")
	} else {
		if r.Header.Get("anthropic-version") == "" || r.Header.Get("anthropic-beta") == "" {
			http.Error(w, `{"error":"bad request"}`, http.StatusBadRequest)
			return
		}
		path = strings.TrimPrefix(path, "/v1")
	}
	if !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ") {
		http.Error(w, `{"error":"unauthorized"}`, http.StatusUnauthorized)
		return
	}
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case r.Method == http.MethodPost && len(parts) == 1 && parts[0] == "sessions":
		var req struct {
			Metadata map[string]string `json:"metadata"`
		}
		_ = json.Unmarshal(body, &req)
		prefix := "sess_"
		if f.Vendor == Anthropic {
			prefix = "sesn_"
		}
		s := &fakeSession{id: fmt.Sprintf("%s%d", prefix, len(f.order)+1), status: "idle", metadata: req.Metadata}
		f.sessions[s.id], f.order = s, append(f.order, s.id)
		writeJSON(w, http.StatusOK, map[string]any{"id": s.id, "status": s.status, "metadata": s.metadata})
	case len(parts) >= 2 && parts[0] == "sessions":
		s, ok := f.sessions[parts[1]]
		if !ok {
			http.Error(w, `{"error":"not found"}`, http.StatusNotFound)
			return
		}
		switch {
		case r.Method == http.MethodGet && len(parts) == 2:
			writeJSON(w, http.StatusOK, map[string]any{"id": s.id, "status": s.status, "required_actions": orEmpty(s.actions)})
		case r.Method == http.MethodGet && len(parts) == 3 && parts[2] == "items":
			items := []any{}
			if s.reply != "" {
				items = append(items, map[string]any{"type": "message", "role": "assistant",
					"content": []any{map[string]any{"type": "output_text", "text": s.reply}}})
			}
			writeJSON(w, http.StatusOK, map[string]any{"data": items})
		case r.Method == http.MethodGet && len(parts) == 3 && parts[2] == "events":
			desc := []any{}
			for i := len(s.events) - 1; i >= 0; i-- {
				desc = append(desc, s.events[i])
			}
			writeJSON(w, http.StatusOK, map[string]any{"data": desc})
		case r.Method == http.MethodPost && len(parts) == 3 && parts[2] == "events":
			f.takeEvents(w, r, s, body)
		default:
			http.Error(w, `{"error":"not found"}`, http.StatusNotFound)
		}
	default:
		http.Error(w, `{"error":"not found"}`, http.StatusNotFound)
	}
}

// takeEvents applies posted events. Called with f.mu held.
func (f *Fake) takeEvents(w http.ResponseWriter, r *http.Request, s *fakeSession, body []byte) {
	var req struct {
		Events []map[string]any `json:"events"`
	}
	if err := json.Unmarshal(body, &req); err != nil || len(req.Events) == 0 {
		http.Error(w, `{"error":"events required"}`, http.StatusBadRequest)
		return
	}
	key := r.Header.Get("Idempotency-Key")
	for _, e := range req.Events {
		if t, _ := e["type"].(string); t == "agent.session.input.message" || t == "user.message" {
			f.posts++
			break
		}
	}
	if key != "" && f.keys[s.id+"/"+key] {
		w.WriteHeader(http.StatusAccepted) // the API's idempotency: taken once
		return
	}
	message := false
	for _, e := range req.Events {
		typ, _ := e["type"].(string)
		switch typ {
		case "agent.session.input.message":
			message = true
			in := e["input"].([]any)[0].(map[string]any)["content"].([]any)[0].(map[string]any)
			f.Messages <- Message{Session: s.id, Text: in["text"].(string), Key: key}
			s.status = "in_progress"
		case "user.message":
			message = true
			f.events++
			e["id"] = fmt.Sprintf("sevt_%d", f.events)
			s.events = append(s.events, e)
			f.Messages <- Message{Session: s.id, Text: e["content"].([]any)[0].(map[string]any)["text"].(string)}
			s.status = "running"
		case "agent.session.input.computer_use_approval_request_result":
			resp, _ := e["response"].(map[string]any)
			f.Answers <- Answer{Session: s.id, CallID: e["request_id"].(string), Allow: resp["decision"] == "approve"}
			s.actions, s.status = nil, "in_progress"
		case "user.tool_confirmation":
			f.Answers <- Answer{Session: s.id, CallID: e["tool_use_id"].(string), Allow: e["result"] == "allow"}
			s.status = "running"
		case "agent.session.input.cancel", "user.interrupt":
			s.status = "idle"
		}
	}
	if key != "" {
		f.keys[s.id+"/"+key] = true
	}
	if message && f.failNext > 0 {
		f.failNext--
		w.Header().Set("Retry-After", "0")
		http.Error(w, `{"error":"lost"}`, http.StatusInternalServerError)
		return
	}
	if f.Vendor == OpenAI {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": req.Events})
}

// RequireAction makes session id wait on an approval of callID (OpenAI: a browser
// origin's access; Anthropic: a bash tool use).
func (f *Fake) RequireAction(id, callID string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.sessions[id]
	if f.Vendor == OpenAI {
		s.status = "requires_action"
		s.actions = []map[string]any{{"type": "computer_use_approval_request", "request_id": callID, "turn_id": "turn_1",
			"request": map[string]any{"type": "browser_origin_access", "origin": "https://deploy.example", "reason": "deploy"}}}
		return
	}
	s.status = "idle"
	s.events = append(s.events, map[string]any{"id": callID, "type": "agent.tool_use", "name": "bash", "input": map[string]any{"command": "make deploy"}},
		map[string]any{"id": callID + "_idle", "type": "session.status_idle", "stop_reason": map[string]any{"type": "requires_action", "event_ids": []string{callID}}})
}

// Finish ends session id's turn with reply as the agent's last message.
func (f *Fake) Finish(id, reply string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.sessions[id]
	s.status, s.reply = "idle", reply
	if f.Vendor == Anthropic {
		f.events++
		s.events = append(s.events, map[string]any{"id": fmt.Sprintf("sevt_%d", f.events), "type": "agent.message",
			"content": []any{map[string]any{"type": "text", "text": reply}}},
			map[string]any{"id": fmt.Sprintf("sevt_%d_idle", f.events), "type": "session.status_idle", "stop_reason": map[string]any{"type": "end_turn"}})
	}
}

// Fail ends session id's turn in failure (OpenAI: failed; Anthropic: terminated).
func (f *Fake) Fail(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.Vendor == OpenAI {
		f.sessions[id].status = "failed"
	} else {
		f.sessions[id].status = "terminated"
	}
}

// Webhook event states, in the gateway's words; Webhook sends the vendor's type.
const (
	HookBusy   = "busy"
	HookIdle   = "idle"
	HookAction = "action"
	HookFailed = "failed"
)

// WebhookBody is the body of the vendor's session webhook of state for session id.
func (f *Fake) WebhookBody(state, id string) []byte {
	types := map[string][2]string{HookBusy: {"agent.session.in_progress", "session.status_run_started"},
		HookIdle: {"agent.session.idle", "session.status_idled"}, HookAction: {"agent.session.action_required", "session.requires_action"},
		HookFailed: {"agent.session.failed", "session.status_terminated"}}[state]
	var v any
	if f.Vendor == OpenAI {
		v = map[string]any{"id": "evt_" + id + state, "object": "event", "created_at": time.Now().Unix(), "type": types[0],
			"data": map[string]any{"id": id, "environment_type": "openai_hosted"}}
	} else {
		v = map[string]any{"id": "wevt_" + id + state, "type": "event", "created_at": time.Now().UTC().Format(time.RFC3339),
			"data": map[string]any{"id": id, "type": types[1], "organization_id": "org_1", "workspace_id": "wrkspc_1"}}
	}
	raw, _ := json.Marshal(v)
	return raw
}

// Webhook signs the session webhook of state for session id with secret (whsec_…) at
// now, as the platform does, posts it to url and returns the answer's status.
func (f *Fake) Webhook(t *testing.T, url, secret, state, id string) int {
	t.Helper()
	body := f.WebhookBody(state, id)
	key, err := stdwebhooks.ParseSecret(secret)
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	require.NoError(t, err)
	now := time.Now()
	msgID := fmt.Sprintf("msg_%d", now.UnixNano())
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(stdwebhooks.HeaderID, msgID)
	req.Header.Set(stdwebhooks.HeaderTimestamp, fmt.Sprint(now.Unix()))
	req.Header.Set(stdwebhooks.HeaderSignature, stdwebhooks.Sign(key, msgID, now, body))
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	return resp.StatusCode
}

func orEmpty(s []map[string]any) []map[string]any {
	if s == nil {
		return []map[string]any{}
	}
	return s
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

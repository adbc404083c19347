package a2a

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Task states, as v0.3 names them (v1.0's TASK_STATE_* read the same: see normState).
const (
	StateSubmitted     = "submitted"
	StateWorking       = "working"
	StateCompleted     = "completed"
	StateFailed        = "failed"
	StateCanceled      = "canceled"
	StateRejected      = "rejected"
	StateInputRequired = "input-required"
	StateAuthRequired  = "auth-required"
	// stateGone is a task the agent no longer knows (it restarted, its tasks in memory).
	stateGone = "gone"
)

// terminal reports a state no message changes any more.
func terminal(state string) bool {
	switch state {
	case StateCompleted, StateFailed, StateCanceled, StateRejected, stateGone:
		return true
	}
	return false
}

// asks reports a state that waits for people.
func asks(state string) bool { return state == StateInputRequired || state == StateAuthRequired }

// normState reads a v1.0 (TASK_STATE_INPUT_REQUIRED) or v0.3 (input-required) state as
// the v0.3 name.
func normState(s string) string {
	s = strings.TrimPrefix(strings.TrimSpace(s), "TASK_STATE_")
	return strings.ReplaceAll(strings.ToLower(s), "_", "-")
}

// JSON-RPC methods, by protocol version.
type methods struct{ send, get, list string }

var (
	methodsV1  = methods{send: "SendMessage", get: "GetTask", list: "ListTasks"}
	methodsV03 = methods{send: "message/send", get: "tasks/get"}
)

// JSON-RPC error codes the gateway reads (A2A's, shared by v0.3 and v1.0).
const (
	codeTaskNotFound         = -32001
	codeUnsupportedOperation = -32004 // the SDK's answer to a message for a task that ended
	codeInternal             = -32603
)

// rpcError is a JSON-RPC error answer (every A2A answer is HTTP 200).
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *rpcError) Error() string { return fmt.Sprintf("JSON-RPC error %d: %s", e.Code, e.Message) }

// part is a message or artifact part in either version: v1.0 has one-of keys (text,
// data), v0.3 a kind beside them.
type part struct {
	Kind string          `json:"kind"`
	Text *string         `json:"text"`
	Data json.RawMessage `json:"data"`
}

// message is an A2A message as the gateway reads it.
type message struct {
	MessageID string `json:"messageId"`
	ContextID string `json:"contextId"`
	TaskID    string `json:"taskId"`
	Role      string `json:"role"`
	Parts     []part `json:"parts"`
}

// text is the message's text parts, one per line.
func (m *message) text() string {
	if m == nil {
		return ""
	}
	return partsText(m.Parts)
}

func partsText(ps []part) string {
	var lines []string
	for _, p := range ps {
		if p.Text != nil && (p.Kind == "" || p.Kind == "text") {
			lines = append(lines, *p.Text)
		}
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

// status is a task's status.
type status struct {
	State     string    `json:"state"`
	Message   *message  `json:"message"`
	Timestamp time.Time `json:"timestamp"`
}

// artifact is a task's output.
type artifact struct {
	ArtifactID string `json:"artifactId"`
	Name       string `json:"name"`
	Parts      []part `json:"parts"`
}

// task is an A2A task as the gateway reads it (v1.0 and v0.3 share the fields).
type task struct {
	Kind      string     `json:"kind"`
	ID        string     `json:"id"`
	ContextID string     `json:"contextId"`
	Status    status     `json:"status"`
	Artifacts []artifact `json:"artifacts"`
	History   []message  `json:"history"`
}

// snapshot is what the gateway knows of a task at one moment: from an answer, a push
// notification or a poll.
type snapshot struct {
	TaskID    string
	ContextID string
	State     string // normState; "" for an event that says nothing of the state
	// Text is the status message's text (the question of input-required, the answer of
	// completed); Artifacts the artifacts' text (nil: not in this snapshot).
	Text      string
	MessageID string // the status message's id: what tells one question from the next
	At        time.Time
	Artifacts []string
	// Complete: the snapshot is the whole task (its artifacts are all there).
	Complete bool
}

func (t task) snapshot() snapshot {
	s := snapshot{TaskID: t.ID, ContextID: t.ContextID, State: normState(t.Status.State), At: t.Status.Timestamp, Complete: true}
	if t.Status.Message != nil {
		s.Text, s.MessageID = t.Status.Message.text(), t.Status.Message.MessageID
	}
	for _, a := range t.Artifacts {
		if txt := partsText(a.Parts); txt != "" {
			s.Artifacts = append(s.Artifacts, txt)
		}
	}
	return s
}

// answer is the text a completed task answers with: its final status message, else its
// artifacts' text.
func (s snapshot) answer() string {
	if s.Text != "" {
		return s.Text
	}
	return strings.TrimSpace(strings.Join(s.Artifacts, "\n"))
}

// transition names one state of a task, the same on every replica that sees it: the
// status message's id, else its time.
func (s snapshot) transition() string {
	switch {
	case s.MessageID != "":
		return s.MessageID
	case !s.At.IsZero():
		return s.At.UTC().Format(time.RFC3339Nano)
	}
	return s.State
}

// sendResult reads a message send's answer: a task, or a message (the agent answered at
// once, opening no task). v1.0 wraps either ({"task": …}); v0.3 gives it bare, with a
// kind.
func sendResult(raw json.RawMessage, v1 bool) (*task, *message, error) {
	if v1 {
		var r struct {
			Task    *task    `json:"task"`
			Message *message `json:"message"`
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			return nil, nil, fmt.Errorf("unreadable answer: %w", err)
		}
		switch {
		case r.Task != nil && r.Task.ID != "":
			return r.Task, nil, nil
		case r.Message != nil:
			return nil, r.Message, nil
		}
		return nil, nil, errors.New("the answer holds neither a task nor a message")
	}
	var head struct {
		Kind string `json:"kind"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return nil, nil, fmt.Errorf("unreadable answer: %w", err)
	}
	if head.Kind == "message" {
		var m message
		if err := json.Unmarshal(raw, &m); err != nil {
			return nil, nil, fmt.Errorf("unreadable answer: %w", err)
		}
		return nil, &m, nil
	}
	var t task
	if err := json.Unmarshal(raw, &t); err != nil {
		return nil, nil, fmt.Errorf("unreadable answer: %w", err)
	}
	if t.ID == "" {
		return nil, nil, errors.New("the answer holds neither a task nor a message")
	}
	return &t, nil, nil
}

// pushEvent reads a push notification's body: v1.0 posts a stream event
// ({"statusUpdate"|"artifactUpdate"|"task"|"message": …}), v0.3 the whole task after each
// event (or, from other servers, a status-update event).
func pushEvent(raw []byte) (snapshot, error) {
	var v1 struct {
		StatusUpdate *struct {
			TaskID    string `json:"taskId"`
			ContextID string `json:"contextId"`
			Status    status `json:"status"`
		} `json:"statusUpdate"`
		ArtifactUpdate *struct {
			TaskID    string   `json:"taskId"`
			ContextID string   `json:"contextId"`
			Artifact  artifact `json:"artifact"`
		} `json:"artifactUpdate"`
		Task    *task    `json:"task"`
		Message *message `json:"message"`
		// v0.3: a task or a status-update event, flat.
		Kind      string `json:"kind"`
		ID        string `json:"id"`
		TaskID    string `json:"taskId"`
		ContextID string `json:"contextId"`
		Status    status `json:"status"`
	}
	if err := json.Unmarshal(raw, &v1); err != nil {
		return snapshot{}, fmt.Errorf("unreadable body: %w", err)
	}
	var s snapshot
	switch {
	case v1.StatusUpdate != nil:
		u := v1.StatusUpdate
		s = snapshot{TaskID: u.TaskID, ContextID: u.ContextID, State: normState(u.Status.State), At: u.Status.Timestamp}
		if u.Status.Message != nil {
			s.Text, s.MessageID = u.Status.Message.text(), u.Status.Message.MessageID
		}
	case v1.ArtifactUpdate != nil:
		s = snapshot{TaskID: v1.ArtifactUpdate.TaskID, ContextID: v1.ArtifactUpdate.ContextID}
	case v1.Task != nil:
		s = v1.Task.snapshot()
	case v1.Message != nil:
		s = snapshot{TaskID: v1.Message.TaskID, ContextID: v1.Message.ContextID}
	case v1.Kind == "status-update":
		s = snapshot{TaskID: v1.TaskID, ContextID: v1.ContextID, State: normState(v1.Status.State), At: v1.Status.Timestamp}
		if v1.Status.Message != nil {
			s.Text, s.MessageID = v1.Status.Message.text(), v1.Status.Message.MessageID
		}
	case v1.ID != "" && v1.Status.State != "":
		var t task
		if err := json.Unmarshal(raw, &t); err != nil {
			return snapshot{}, fmt.Errorf("unreadable body: %w", err)
		}
		s = t.snapshot()
	default:
		return snapshot{}, errors.New("not an A2A task event (statusUpdate, artifactUpdate, task or message)")
	}
	if s.TaskID == "" {
		return snapshot{}, errors.New("taskId: required")
	}
	if s.ContextID == "" {
		return snapshot{}, errors.New("contextId: required")
	}
	return s, nil
}

// outMessage is a user message the gateway sends.
type outMessage struct {
	MessageID string
	ContextID string
	TaskID    string // "" opens a task
	Text      string
	// Data, when set, goes as a data part after the text (application/json).
	Data     any
	Metadata map[string]any
}

// pushConfig registers the gateway's endpoint for a task's notifications.
type pushConfig struct {
	URL   string `json:"url"`
	Token string `json:"token"`
}

// sendParams builds a message send's params in the endpoint's version. The send never
// blocks on the task (v1.0 returnImmediately; v0.3 blocking false, always explicit: a v0.3
// configuration without it blocks or not depending on the server).
func sendParams(m outMessage, v1 bool, tenant string, push *pushConfig) map[string]any {
	if v1 {
		parts := []any{map[string]any{"text": m.Text, "mediaType": "text/plain"}}
		if m.Data != nil {
			parts = append(parts, map[string]any{"data": m.Data, "mediaType": "application/json"})
		}
		msg := map[string]any{"messageId": m.MessageID, "role": "ROLE_USER", "contextId": m.ContextID, "parts": parts}
		if m.TaskID != "" {
			msg["taskId"] = m.TaskID
		}
		if len(m.Metadata) > 0 {
			msg["metadata"] = m.Metadata
		}
		conf := map[string]any{"returnImmediately": true}
		if push != nil {
			conf["taskPushNotificationConfig"] = push
		}
		p := map[string]any{"message": msg, "configuration": conf}
		if tenant != "" {
			p["tenant"] = tenant
		}
		return p
	}
	parts := []any{map[string]any{"kind": "text", "text": m.Text}}
	if m.Data != nil {
		parts = append(parts, map[string]any{"kind": "data", "data": m.Data})
	}
	msg := map[string]any{"kind": "message", "messageId": m.MessageID, "role": "user", "contextId": m.ContextID, "parts": parts}
	if m.TaskID != "" {
		msg["taskId"] = m.TaskID
	}
	if len(m.Metadata) > 0 {
		msg["metadata"] = m.Metadata
	}
	conf := map[string]any{"blocking": false}
	if push != nil {
		conf["pushNotificationConfig"] = push
	}
	return map[string]any{"message": msg, "configuration": conf}
}

// getParams builds tasks/get's (GetTask's) params: the task, without its history.
func getParams(taskID string, v1 bool, tenant string) map[string]any {
	p := map[string]any{"id": taskID}
	if v1 && tenant != "" {
		p["tenant"] = tenant
	}
	return p
}

package a2a

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/signalgate/signalgate/inbox"
)

// StateStore keeps small durable values by owner and key, shared by every replica: the
// store's connector state table (the owner here is "a2a/<agent>").
type StateStore interface {
	ConnectorState(ctx context.Context, connector, key string) (value string, ok bool, err error)
	SetConnectorState(ctx context.Context, connector, key, value string) error
}

// contextNamespace names the UUIDs of thread contexts.
func contextNamespace() uuid.UUID { return uuid.MustParse("1c0f2c8e-5b4a-5d51-9a3e-a2a0c0de7e11") }

// ContextID is the A2A contextId of gateway thread k: derived from its agent, resource
// and thread, so it is the same on every replica and after every restart.
func ContextID(k inbox.ThreadKey) string {
	return uuid.NewSHA1(contextNamespace(), []byte(k.Agent+"\x00"+k.Resource+"\x00"+k.Thread)).String()
}

// taskRecord is what the gateway keeps of a context's current task, written by the
// delivery that opens it (one at a time per thread: the dispatcher leases the thread):
// which gateway run it belongs to, the task's id once the agent named it, and the token
// its push notifications must carry.
type taskRecord struct {
	Resource string `json:"resource"`
	Thread   string `json:"thread"`
	RunID    string `json:"runId"`
	TaskID   string `json:"taskId,omitempty"`
	Token    string `json:"token"`
	// Sending is the message id of the send that opens the task while its answer is not
	// read yet: a crash (or a lost answer) leaves it set.
	Sending string `json:"sending,omitempty"`
	// Woken: the run is one a wake opened; target.reply: auto answers only those, at
	// ReplyTo (the waking notification's place; null: the thread's latest).
	Woken    bool            `json:"woken,omitempty"`
	ReplyTo  json.RawMessage `json:"replyTo,omitempty"`
	OpenedAt time.Time       `json:"openedAt"`
}

// observed is the last state of a context's task seen by any replica, for the console.
type observed struct {
	TaskID string    `json:"taskId"`
	State  string    `json:"state"`
	Text   string    `json:"text,omitempty"`
	At     time.Time `json:"at"`
}

// states reads and writes one agent's task records.
type states struct {
	st    StateStore
	owner string
}

func newStates(st StateStore, agentID string) states {
	return states{st: st, owner: Kind + "/" + agentID}
}

func (s states) load(ctx context.Context, contextID string) (taskRecord, bool, error) {
	raw, ok, err := s.st.ConnectorState(ctx, s.owner, contextID)
	if err != nil || !ok || raw == "" {
		return taskRecord{}, false, err
	}
	var r taskRecord
	if err := json.Unmarshal([]byte(raw), &r); err != nil {
		return taskRecord{}, false, fmt.Errorf("read the task record of context %s: %w", contextID, err)
	}
	return r, true, nil
}

func (s states) save(ctx context.Context, contextID string, r taskRecord) error {
	raw, err := json.Marshal(r)
	if err != nil {
		return err
	}
	if err := s.st.SetConnectorState(ctx, s.owner, contextID, string(raw)); err != nil {
		return fmt.Errorf("save the task record of context %s: %w", contextID, err)
	}
	return nil
}

// observedKey is where a context's last seen state is kept, apart from its record: the
// record is written only by the delivery that owns the thread.
func observedKey(contextID string) string { return contextID + "#state" }

func (s states) loadObserved(ctx context.Context, contextID string) (observed, bool, error) {
	raw, ok, err := s.st.ConnectorState(ctx, s.owner, observedKey(contextID))
	if err != nil || !ok || raw == "" {
		return observed{}, false, err
	}
	var o observed
	if err := json.Unmarshal([]byte(raw), &o); err != nil {
		return observed{}, false, fmt.Errorf("read the task state of context %s: %w", contextID, err)
	}
	return o, true, nil
}

func (s states) saveObserved(ctx context.Context, contextID string, o observed) error {
	raw, err := json.Marshal(o)
	if err != nil {
		return err
	}
	return s.st.SetConnectorState(ctx, s.owner, observedKey(contextID), string(raw))
}

// newToken is a push notification token: 32 random bytes, hex.
func newToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("make a push token: %w", err)
	}
	return hex.EncodeToString(b), nil
}

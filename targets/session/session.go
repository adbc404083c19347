// Package session is what the hosted agent session targets (openai-agents,
// claude-agents) share: a gateway thread is one session of the runtime, created on the
// thread's first signal and remembered (Store), each signal a message event posted to
// it; presence comes from the session's webhooks (verified as Standard Webhooks), each
// one a hint to read the session and set the thread's run to match (busy: a run open,
// idle: closed, an action required: an approval in Slack, answered through the
// session's events; failed: the run aborted as crashed). A poll of the threads with
// open runs renews their leases and catches a lost webhook.
//
// A kind brings its API (how sessions are created, written to and read) and its
// webhook dialect; everything else is here.
package session

import (
	"context"
	"encoding/json"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/reply"
	"github.com/signalgate/signalgate/store"
)

// Metadata keys a session is created with: the gateway's ids of its thread.
const (
	MetaAgent    = "signalgate_agent"
	MetaResource = "signalgate_resource"
	MetaThread   = "signalgate_thread"
)

// MaxMetadataValue is the longest metadata value both APIs take; longer ids are cut
// (the session row, not the metadata, leads back to the thread).
const MaxMetadataValue = 512

// Metadata is k as a session's metadata.
func Metadata(k inbox.ThreadKey) map[string]string {
	cut := func(s string) string {
		if len(s) > MaxMetadataValue {
			return s[:MaxMetadataValue]
		}
		return s
	}
	return map[string]string{MetaAgent: cut(k.Agent), MetaResource: cut(k.Resource), MetaThread: cut(k.Thread)}
}

// State is what a session is doing, in the gateway's words.
type State string

const (
	Busy    State = "busy"    // a turn runs
	Idle    State = "idle"    // no turn runs; a message starts one
	Waiting State = "waiting" // the turn waits on an action (an approval) from people
	Failed  State = "failed"  // the turn failed; Snapshot.Ended says whether the session can go on
)

// Snapshot is one read of a session.
type Snapshot struct {
	State  State
	Status string // the runtime's own word for it
	// Ended: the session takes no more input (the next signal creates another).
	Ended   bool
	Actions []Action // what it waits on, when Waiting
}

// Action is one thing a waiting session asks of people.
type Action struct {
	ID   string // the call id the answer names (request, call or tool use id)
	Tool string // what it would do, for the approval
	Args json.RawMessage
	// Unanswerable: no approval can answer it (a login form, a lost environment): it is
	// logged and left to the runtime's own console.
	Unanswerable string
}

// API is one kind's calls to its runtime. Errors are *agent.DeliveryError where the
// runtime answered (httptarget's classification).
type API interface {
	// Create creates k's session with k's ids in its metadata and returns its id.
	Create(ctx context.Context, k inbox.ThreadKey) (string, error)
	// Send posts the signal of d to session id as one message event.
	Send(ctx context.Context, id string, d agent.Handoff) (agent.Result, error)
	Read(ctx context.Context, id string) (Snapshot, error)
	// Answer answers action callID of session id: approved or not.
	Answer(ctx context.Context, id, callID string, approved bool) error
	// Interrupt stops the session's turn.
	Interrupt(ctx context.Context, id string) error
	// LastMessage is the text of the agent's last message in the session ("" for none).
	LastMessage(ctx context.Context, id string) (string, error)
}

// Store keeps each thread's session (store.Sessions).
type Store interface {
	TargetSession(ctx context.Context, k inbox.ThreadKey) (store.TargetSession, bool, error)
	SessionThread(ctx context.Context, agentID, id string) (store.TargetSession, bool, error)
	SaveTargetSession(ctx context.Context, ts store.TargetSession) (store.TargetSession, bool, error)
	ForgetTargetSession(ctx context.Context, k inbox.ThreadKey, id string) error
}

// Presence is what the target changes: *agent.Runs.
type Presence interface {
	LiveThreads(ctx context.Context, agentID string) ([]inbox.ThreadKey, error)
	Live(ctx context.Context, k inbox.ThreadKey) (*agent.Run, error)
	Open(ctx context.Context, k inbox.ThreadKey, origin string) (agent.Run, bool, error)
	Heartbeat(ctx context.Context, k inbox.ThreadKey, id string) (agent.Run, error)
	Close(ctx context.Context, k inbox.ThreadKey, id, status, cause string) (agent.Run, bool, error)
}

// Approvals asks people about the actions sessions wait on (approval.Relay).
type Approvals interface {
	Approval(ctx context.Context, origin string, k inbox.ThreadKey, runID, callID, tool string, args json.RawMessage)
	ToolAnswered(ctx context.Context, k inbox.ThreadKey, callID string)
	RunEnded(ctx context.Context, k inbox.ThreadKey, runID string)
}

// Replier queues a reply (reply.Service).
type Replier interface {
	Queue(ctx context.Context, k inbox.ThreadKey, req reply.Request) (reply.Reply, error)
}

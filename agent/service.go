package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/signalgate/signalgate/bearer"
	"github.com/signalgate/signalgate/inbox"
)

// Ingester is the inbox entry point connectors use (inbox.Service).
type Ingester interface {
	Ingest(ctx context.Context, ev *inbox.Event, ns []inbox.Notification) (inbox.IngestResult, error)
}

// RecordStore is the agents' view of their inbox.
type RecordStore interface {
	ListThreadRecords(ctx context.Context, q RecordQuery) ([]inbox.Record, error)
	ThreadRecordsByID(ctx context.Context, k inbox.ThreadKey, ids []string) ([]inbox.Record, error)
	MarkSeen(ctx context.Context, ids []string, now time.Time) error
	TransitionRecord(ctx context.Context, k inbox.ThreadKey, id string, to inbox.Status, from []inbox.Status, now time.Time) (inbox.Record, bool, error)
	// SnoozeRecord hides pending record id until `until` (inbox.ErrNotSnoozable, with
	// the record as it is, when it is not pending or is a net-state lane's).
	SnoozeRecord(ctx context.Context, k inbox.ThreadKey, id string, until, now time.Time) (inbox.Record, error)
	// CancelMessages dismisses the thread's message records not yet handed over that ids
	// name (record or signal ids) and returns those ids.
	CancelMessages(ctx context.Context, k inbox.ThreadKey, ids []string, now time.Time) ([]string, error)
}

// StateStore keeps state signal lanes.
type StateStore interface {
	AdvanceStateLane(ctx context.Context, k inbox.ThreadKey, lane, cacheKey, mode string, now time.Time) (StateLane, *StateLane, bool, error)
	RestoreStateLane(ctx context.Context, k inbox.ThreadKey, lane string, prev *StateLane, version int) error
}

// Deliverer hands a signal to the thread's target (the dispatcher routes by agent).
type Deliverer interface {
	Deliver(ctx context.Context, d Handoff) (Result, error)
}

// Deps are what the agent operations work with.
type Deps struct {
	// Frames reads thread logs; a resend of a logged signal id is recognised when it
	// can also look a frame up by id (the store).
	Frames    FrameReader
	Runs      *Runs
	Inbox     Ingester
	Records   RecordStore
	States    StateStore
	Deliverer Deliverer
	// Notify is told of presence changes (runs finished) so waiting records go out at
	// once; the dispatcher's Notify.
	Notify func([]inbox.ThreadKey)
	// Approvals takes approval requests; nil: approvals are not configured.
	Approvals Approvals
	// Aborter aborts the runtime's own run of an agent whose runtime reports its runs
	// (PresenceRuntime) when its gateway run is finished as aborted; nil: runs are closed
	// in the gateway only.
	Aborter ThreadAborter
	Log     *slog.Logger
}

// ThreadAborter aborts the active run a runtime holds on a thread (Mastra's
// POST /agents/:agentId/threads/abort). A runtime that holds no run of its own answers nil.
type ThreadAborter interface {
	AbortThread(ctx context.Context, k inbox.ThreadKey, clearPendingSignals bool) error
}

// RuntimeRun is what a runtime that reports its runs says of a thread right now (the
// console shows it beside the gateway's run): a LangGraph thread and its run, an A2A
// context and its task.
type RuntimeRun struct {
	Kind      string    // the target kind
	Thread    string    // the runtime's own id of the thread (LangGraph's thread, A2A's context)
	Status    string    // the runtime's word for the thread's state
	Term      string    // the runtime's word for a run: "run", "task" ("" reads run)
	Run       string    // the run (or task) it runs, "" for none
	RunStatus string    // that run's status
	Since     time.Time // when RunStatus was seen; zero: read just now
	Waiting   []string  // what it waits on people for (interrupt ids, a task's question)
	// Unit is the runtime's word for Thread ("" reads thread; a hosted runtime's: session).
	Unit string
}

// RuntimeRuns reads a thread from its runtime; ok is false for an agent whose runtime
// cannot say.
type RuntimeRuns interface {
	RuntimeRun(ctx context.Context, k inbox.ThreadKey) (run RuntimeRun, ok bool, err error)
}

// Service is what agents may do on their threads, whatever the front (the agent API,
// MCP): authenticate, read and move their inbox, create notifications, send signals,
// open and finish runs, ask for approvals.
//
// Authorization: a caller is the agent whose token it presents. An agent id that is not
// configured is not found; another configured agent's threads are forbidden. Threads
// need no creation: any (resourceId, threadId) of the agent is valid.
type Service struct {
	agents map[string]Config
	tokens bearer.Table[string]
	Deps
	log   *slog.Logger
	now   func() time.Time
	newID func() string
}

// ServiceOption configures the Service.
type ServiceOption func(*Service)

// WithServiceClock injects the clock.
func WithServiceClock(now func() time.Time) ServiceOption { return func(s *Service) { s.now = now } }

// WithServiceIDs injects the id generator for signals.
func WithServiceIDs(newID func() string) ServiceOption { return func(s *Service) { s.newID = newID } }

// NewService builds the agent operations for the configured agents.
func NewService(cfgs []Config, deps Deps, opts ...ServiceOption) (*Service, error) {
	s := &Service{agents: map[string]Config{}, Deps: deps, now: time.Now, newID: inbox.NewID}
	for _, c := range cfgs {
		c = c.WithDefaults()
		if err := c.Validate(); err != nil {
			return nil, fmt.Errorf("agent %q: %w", c.ID, err)
		}
		if _, dup := s.agents[c.ID]; dup {
			return nil, fmt.Errorf("agent %q configured twice", c.ID)
		}
		s.agents[c.ID] = c
		// No token, no API access: the table never matches an empty one.
		s.tokens.Add(c.Token.Reveal(), c.ID)
	}
	for _, o := range opts {
		o(s)
	}
	if s.Deps.Log == nil {
		s.Deps.Log = slog.Default()
	}
	s.log = s.Deps.Log.With("component", "agent_api")
	if s.Notify == nil {
		s.Notify = func([]inbox.ThreadKey) {}
	}
	return s, nil
}

// Agent is the configuration of agent id (defaults filled), if configured.
func (s *Service) Agent(id string) (Config, bool) {
	c, ok := s.agents[id]
	return c, ok
}

// Caller is the agent whose token an Authorization header presents, or the
// unauthenticated error. Every front to the agent inbox authenticates through it.
func (s *Service) Caller(header string) (string, error) {
	caller, ok := s.tokens.FromHeader(header)
	if !ok {
		return "", Unauthenticated()
	}
	return caller, nil
}

// Authorize decides whether the caller may address agent's threads: an agent id that
// is not configured is not found, another configured agent's threads forbidden.
func (s *Service) Authorize(caller, agent string) error {
	if agent == caller {
		return nil
	}
	if _, known := s.agents[agent]; !known {
		return notFoundf("unknown agent %q", agent)
	}
	return NewError(KindForbidden, "forbidden", "the token of agent %q cannot access agent %q's threads", caller, agent)
}

// Thread is the thread the caller addresses, once authorized and its ids checked
// (invalid naming resourceId or threadId).
func (s *Service) Thread(caller, agent, resource, thread string) (inbox.ThreadKey, error) {
	if err := s.Authorize(caller, agent); err != nil {
		return inbox.ThreadKey{}, err
	}
	if err := checkID(resource); err != nil {
		return inbox.ThreadKey{}, invalidf("resourceId: %v", err)
	}
	if err := checkID(thread); err != nil {
		return inbox.ThreadKey{}, invalidf("threadId: %v", err)
	}
	return inbox.ThreadKey{Agent: agent, Resource: resource, Thread: thread}, nil
}

// checkID is the id rule routing applies too (inbox.CheckID).
func checkID(v string) error { return inbox.CheckID(v) }

// DecodeJSON reads a JSON request body into v, refusing unknown fields. An empty body
// is allowed only when optional. Errors name the problem: where the JSON is malformed,
// which field has the wrong type.
func DecodeJSON(body []byte, v any, optional bool) error {
	if len(bytes.TrimSpace(body)) == 0 {
		if optional {
			return nil
		}
		return invalidf("request body: want a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	// A misspelt option must not silently disappear.
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return invalidf("%s", describeJSONError(err))
	}
	if dec.More() {
		return invalidf("request body: unexpected data after the JSON object")
	}
	return nil
}

func describeJSONError(err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return fmt.Sprintf("malformed JSON at byte %d: %v", syn.Offset, syn)
	case errors.As(err, &typ):
		field := jsonPath(typ.Field)
		if field == "" {
			return fmt.Sprintf("request body: want a JSON %s, got %s", typ.Type, typ.Value)
		}
		return fmt.Sprintf("field %s: want %s, got JSON %s", field, jsonKind(typ.Type.String()), typ.Value)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "malformed JSON: unexpected end of input"
	}
	// encoding/json reports an unknown field only by this message.
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return "unknown field " + name + " in the request body"
	}
	return "invalid request body: " + err.Error()
}

// jsonPath drops the Go names of embedded structs from a decoder field path: request
// fields are lowerCamel, Go type names are not.
func jsonPath(field string) string {
	parts := strings.Split(field, ".")
	out := parts[:0]
	for _, p := range parts {
		if r, _ := utf8.DecodeRuneInString(p); !unicode.IsUpper(r) {
			out = append(out, p)
		}
	}
	return strings.Join(out, ".")
}

func jsonKind(goType string) string {
	switch {
	case goType == "string" || strings.HasSuffix(goType, "Status") || strings.HasSuffix(goType, "Action"):
		return "a string"
	case strings.HasPrefix(goType, "map["), strings.HasPrefix(goType, "agent."), strings.HasPrefix(goType, "inbox."):
		return "an object"
	case strings.HasPrefix(goType, "[]"):
		return "an array"
	case strings.HasPrefix(goType, "int"), strings.HasPrefix(goType, "float"):
		return "a number"
	case goType == "bool":
		return "a boolean"
	}
	return goType
}

// validationError refuses an invalid signal; oversized contents are too large.
func validationError(err error) error {
	if errors.Is(err, ErrContentsTooLarge) {
		return tooLargef("%s", err.Error())
	}
	return invalidf("%s", err.Error())
}

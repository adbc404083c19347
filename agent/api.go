package agent

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/server"
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
}

// StateStore keeps state signal lanes.
type StateStore interface {
	AdvanceStateLane(ctx context.Context, k inbox.ThreadKey, lane, cacheKey, mode string, now time.Time) (StateLane, *StateLane, bool, error)
	RestoreStateLane(ctx context.Context, k inbox.ThreadKey, lane string, prev *StateLane, version int) error
}

// Deliverer hands a signal to the thread's target (the dispatcher routes by agent).
type Deliverer interface {
	Deliver(ctx context.Context, d Delivery) (Result, error)
}

// Deps are what the agent API works with.
type Deps struct {
	Frames    FrameReader
	Broker    Subscriber
	Runs      *Runs
	Inbox     Ingester
	Records   RecordStore
	States    StateStore
	Deliverer Deliverer
	// Notify is told of presence changes (runs finished) so waiting records go out at
	// once; the dispatcher's Notify.
	Notify func([]inbox.ThreadKey)
	// Approvals takes POST …/approvals; nil: approvals are not configured.
	Approvals Approvals
	Log       *slog.Logger
}

// API serves the agent API under /v1/agents/{agent}/threads/{resourceId}/{threadId}.
//
// Authentication: every request carries `Authorization: Bearer <token>` of a configured
// agent. No or an unknown token is 401, whatever the path. An authenticated agent asking
// for an agent id that is not configured gets 404; for another configured agent's threads
// 403. Threads need no creation: any (resourceId, threadId) of the agent is valid.
type API struct {
	agents map[string]Config
	tokens []tokenHash
	Deps
	log       *slog.Logger
	now       func() time.Time
	newID     func() string
	keepAlive time.Duration
	done      <-chan struct{}
	// subscribers is told +1 when a stream opens and -1 when it closes (a gauge).
	subscribers func(delta int)
	// streamLimit caps the open streams of both pools together (WithStreamLimit).
	streamLimit int
	streams     *streamCaps
	// viewerStreams counts ServeStream's streams (the console's) apart from the agents'
	// per agent and thread, and within a share of streamLimit.
	viewerStreams *streamCaps
}

type tokenHash struct {
	agent string
	sum   [sha256.Size]byte
}

// APIOption configures the API.
type APIOption func(*API)

// WithAPIClock injects the clock.
func WithAPIClock(now func() time.Time) APIOption { return func(a *API) { a.now = now } }

// WithAPIIDs injects the id generator for signals.
func WithAPIIDs(newID func() string) APIOption { return func(a *API) { a.newID = newID } }

// WithKeepAlive sets the interval of `: keep-alive` comments on streams.
func WithKeepAlive(d time.Duration) APIOption { return func(a *API) { a.keepAlive = d } }

// WithShutdown ends open streams when done closes (server.Server.Done): http.Server's
// Shutdown waits for handlers but never cancels their contexts.
func WithShutdown(done <-chan struct{}) APIOption { return func(a *API) { a.done = done } }

// WithStreamLimit caps the open streams of all agents and console viewers together
// (server.Config's MaxStreams); a limit below 1 keeps the default.
func WithStreamLimit(n int) APIOption {
	return func(a *API) {
		if n > 0 {
			a.streamLimit = n
		}
	}
}

// WithSubscriberGauge reports streams opening (+1) and closing (-1).
func WithSubscriberGauge(fn func(delta int)) APIOption { return func(a *API) { a.subscribers = fn } }

// NewAPI builds the agent API for the configured agents.
func NewAPI(cfgs []Config, deps Deps, opts ...APIOption) (*API, error) {
	a := &API{agents: map[string]Config{}, Deps: deps, now: time.Now, newID: inbox.NewID, keepAlive: DefaultKeepAlive, subscribers: func(int) {},
		streamLimit: server.Config{}.WithDefaults().MaxStreams()}
	for _, c := range cfgs {
		c = c.WithDefaults()
		if err := c.Validate(); err != nil {
			return nil, fmt.Errorf("agent %q: %w", c.ID, err)
		}
		if _, dup := a.agents[c.ID]; dup {
			return nil, fmt.Errorf("agent %q configured twice", c.ID)
		}
		a.agents[c.ID] = c
		if c.Token == "" {
			continue // no token, no API access: nothing a caller presents may match it
		}
		a.tokens = append(a.tokens, tokenHash{agent: c.ID, sum: sha256.Sum256([]byte(c.Token))})
	}
	for _, o := range opts {
		o(a)
	}
	if a.Deps.Log == nil {
		a.Deps.Log = slog.Default()
	}
	a.log = a.Deps.Log.With("component", "agent_api")
	if a.Notify == nil {
		a.Notify = func([]inbox.ThreadKey) {}
	}
	if a.keepAlive <= 0 {
		a.keepAlive = DefaultKeepAlive
	}
	budget := &streamBudget{limit: a.streamLimit}
	a.streams = newStreamCaps(budget, a.streamLimit, "agents")
	a.viewerStreams = newStreamCaps(budget, viewerShare(a.streamLimit), "console viewers")
	return a, nil
}

// ThreadPath is the route prefix of a thread.
const ThreadPath = "/v1/agents/:agent/threads/:resourceId/:threadId"

// Mount registers the routes on e.
func (a *API) Mount(e *echo.Echo) {
	g := e.Group(ThreadPath, a.authenticate)
	g.GET("/stream", a.thread(a.serveStream))
	g.POST("/runs", a.thread(a.openRun))
	g.POST("/runs/:runId/heartbeat", a.thread(a.heartbeat))
	g.POST("/runs/:runId/finish", a.thread(a.finishRun))
	g.POST("/signals", a.thread(a.sendSignal))
	g.POST("/notifications", a.thread(a.createNotification))
	g.GET("/notifications", a.thread(a.listNotifications))
	g.POST("/notifications/read", a.thread(a.readNotifications))
	g.GET("/notifications/:id", a.thread(a.getNotification))
	g.POST("/notifications/:id/:action", a.thread(a.actOnNotification))
	g.POST("/approvals", a.thread(a.requestApproval))
}

const threadKeyCtx = "signalgate.thread"

// authenticate runs before routing's 404 for the group, so an unknown token never learns
// which paths exist.
func (a *API) authenticate(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		caller, err := a.Caller(c.Request().Header.Get(echo.HeaderAuthorization))
		if err != nil {
			c.Response().Header().Set(echo.HeaderWWWAuthenticate, `Bearer realm="signalgate"`)
			return err
		}
		var name, resource, thread string
		if name, err = pathParam(c, "agent"); err != nil {
			return err
		}
		if err := a.Authorize(caller, name); err != nil {
			return err
		}
		if resource, err = pathParam(c, "resourceId"); err != nil {
			return err
		}
		if thread, err = pathParam(c, "threadId"); err != nil {
			return err
		}
		k, err := a.Thread(caller, name, resource, thread)
		if err != nil {
			return err
		}
		c.Set(threadKeyCtx, k)
		return next(c)
	}
}

// Caller is the agent whose token an Authorization header presents, or the 401 error.
// Every other front to the agent inbox (the MCP server) authenticates through it.
func (a *API) Caller(header string) (string, error) {
	caller, ok := a.caller(header)
	if !ok {
		return "", server.Unauthorized()
	}
	return caller, nil
}

// Authorize decides whether the caller may address agent's threads: an agent id that
// is not configured is 404, another configured agent's threads 403.
func (a *API) Authorize(caller, agent string) error {
	if agent == caller {
		return nil
	}
	if _, known := a.agents[agent]; !known {
		return server.NotFound("unknown agent %q", agent)
	}
	return server.Forbidden("the token of agent %q cannot access agent %q's threads", caller, agent)
}

// Thread is the thread the caller addresses, once authorized and its ids checked
// (400 naming resourceId or threadId).
func (a *API) Thread(caller, agent, resource, thread string) (inbox.ThreadKey, error) {
	if err := a.Authorize(caller, agent); err != nil {
		return inbox.ThreadKey{}, err
	}
	if err := checkID(resource); err != nil {
		return inbox.ThreadKey{}, server.BadRequest("resourceId: %v", err)
	}
	if err := checkID(thread); err != nil {
		return inbox.ThreadKey{}, server.BadRequest("threadId: %v", err)
	}
	return inbox.ThreadKey{Agent: agent, Resource: resource, Thread: thread}, nil
}

// caller finds the agent whose token is presented. Every token is compared, in constant
// time over fixed-length digests, so timing reveals neither which agent nor how close.
func (a *API) caller(header string) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(header), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
		return "", false
	}
	sum := sha256.Sum256([]byte(strings.TrimSpace(token)))
	found := ""
	for _, t := range a.tokens {
		if subtle.ConstantTimeCompare(sum[:], t.sum[:]) == 1 {
			found = t.agent
		}
	}
	return found, found != ""
}

// thread adapts a handler that needs the authenticated thread.
func (a *API) thread(h func(echo.Context, inbox.ThreadKey) error) echo.HandlerFunc {
	return func(c echo.Context) error {
		k, ok := c.Get(threadKeyCtx).(inbox.ThreadKey)
		if !ok {
			return server.Unauthorized()
		}
		return h(c, k)
	}
}

// pathParam returns a path parameter unescaped. echo matches on the raw path when the URL
// has escapes Go would not produce itself (e.g. %2F inside a segment) and then leaves
// parameters escaped; otherwise it matches on the decoded path.
func pathParam(c echo.Context, name string) (string, error) {
	v := c.Param(name)
	if c.Request().URL.RawPath == "" {
		return v, nil
	}
	u, err := url.PathUnescape(v)
	if err != nil {
		return "", server.BadRequest("%s: invalid URL escape in %q", name, v)
	}
	return u, nil
}

func pathID(c echo.Context, name string) (string, error) {
	v, err := pathParam(c, name)
	if err != nil {
		return "", err
	}
	if err := checkID(v); err != nil {
		return "", server.BadRequest("%s: %v", name, err)
	}
	return v, nil
}

// checkID is the id rule routing applies too (inbox.CheckID).
func checkID(v string) error { return inbox.CheckID(v) }

// decodeBody reads a JSON body into v. An empty body is allowed only when optional.
// Errors name the problem: where the JSON is malformed, which field has the wrong type.
func decodeBody(c echo.Context, v any, optional bool) error {
	body, err := io.ReadAll(c.Request().Body)
	if err != nil {
		return err // the body limit's 413 passes through
	}
	return decodeJSON(body, v, optional)
}

func decodeJSON(body []byte, v any, optional bool) error {
	if len(bytes.TrimSpace(body)) == 0 {
		if optional {
			return nil
		}
		return server.BadRequest("request body: want a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	// A misspelt option must not silently disappear.
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return server.BadRequest("%s", describeJSONError(err))
	}
	if dec.More() {
		return server.BadRequest("request body: unexpected data after the JSON object")
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

// validationError maps signal validation to 400, or 413 for oversized contents.
func validationError(err error) error {
	if errors.Is(err, ErrContentsTooLarge) {
		return server.NewError(http.StatusRequestEntityTooLarge, "payload_too_large", "%s", err.Error())
	}
	return server.BadRequest("%s", err.Error())
}

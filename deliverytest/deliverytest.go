// Package deliverytest wires the whole agent-facing half for tests: a store, presence,
// the in-process broker, the stream target, the dispatcher, the inbox and the agent API
// served over loopback HTTP, on a fake clock, plus an SSE client.
package deliverytest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/agentapi"
	"github.com/signalgate/signalgate/delivery"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/server"
	"github.com/signalgate/signalgate/service"
	"github.com/signalgate/signalgate/silence"
	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/store/storetest"
)

// Start is the fake clock's initial time.
func Start() time.Time { return time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC) }

// Clock is a fake clock safe for concurrent use.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock starts at t.
func NewClock(t time.Time) *Clock { return &Clock{t: t} }

// Now returns the current fake time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// Tokens of the agents every Env configures.
const (
	CoderToken   = "coder-token-0123456789"
	SupportToken = "support-token-0123456789"
)

// Config tunes an Env.
type Config struct {
	Backend *storetest.Backend // default: a fresh SQLite file
	// Recovery are the target kinds' rules for a crashed run's in-flight signals, as
	// the gateway's target table gives them to the store (default: every kind redelivers).
	Recovery  map[string]delivery.RecoveryRule
	Policy    inbox.PolicyConfig
	Agents    []agent.Config // default: stream agents coder and support
	RealClock bool
	Routes    func(stream delivery.Target) map[string]delivery.Route // default: StreamRoutes
	// EnvRoutes, when set, replaces Routes and sees the Env (Runs, the clock); a target
	// that reports idle transitions calls e.Dispatcher.Notify, which is set right after.
	EnvRoutes func(e *Env) map[string]delivery.Route
	Queue     func(*store.DB) delivery.Queue // wraps the store's queue
	// Frames wraps the log reader the agent API's streams read.
	Frames   func(agent.FrameReader) agent.FrameReader
	Dispatch []delivery.Option
	// Logger is the dispatcher's logger; nil logs to the test.
	Logger *slog.Logger
	API    []agentapi.Option
	Runs   []agent.RunsOption
	// Aborter is the agent operations' (mastra.Client); nil: none.
	Aborter agent.ThreadAborter
	// PolicyOptions build the policy with, e.g., its time intervals.
	PolicyOptions []inbox.PolicyOption
	// Silences wires a silence service (e.Silences) that holds records at ingest and at
	// dispatch, released by the dispatcher's passes.
	Silences bool
}

// Env is one wired gateway half.
type Env struct {
	T          testing.TB
	Store      *store.DB
	Clock      *Clock
	Now        func() time.Time
	Broker     *agent.LocalBroker
	Runs       *agent.Runs
	Stream     *agent.StreamTarget
	Dispatcher *delivery.Dispatcher
	Inbox      *inbox.Service
	Silences   *silence.Service // with Config.Silences
	Agents     *agent.Service   // the agent operations
	API        *agentapi.API
	Server     *httptest.Server
	Shutdown   chan struct{} // closing it ends open streams, like server shutdown
}

// New wires an Env; everything is closed at cleanup.
func New(t testing.TB, cfg Config) *Env {
	t.Helper()
	e := &Env{T: t, Clock: NewClock(Start()), Shutdown: make(chan struct{})}
	e.Now = e.Clock.Now
	if cfg.RealClock {
		e.Now = func() time.Time { return time.Now().UTC() }
	}
	b := storetest.Backend{Name: "sqlite", Config: storetest.SQLiteConfig(t)}
	if cfg.Backend != nil {
		b = *cfg.Backend
	}
	e.Store = storetest.Open(t, b, store.WithClock(e.Now), store.WithRecoveryRules(cfg.Recovery))
	if cfg.Agents == nil {
		cfg.Agents = []agent.Config{
			{ID: "coder", Token: CoderToken, Target: agent.TargetConfig{Kind: agent.TargetStream}},
			{ID: "support", Token: SupportToken, Target: agent.TargetConfig{Kind: agent.TargetStream}},
		}
	}
	pol, err := inbox.NewPolicy(cfg.Policy, cfg.PolicyOptions...)
	require.NoError(t, err)
	e.Broker = agent.NewLocalBroker()
	e.Runs = agent.NewRuns(store.NewRuns(e.Store), e.Broker, cfg.Agents, append([]agent.RunsOption{agent.WithRunsClock(e.Now),
		agent.WithRunsLogger(storetest.Logger(t))}, cfg.Runs...)...)
	e.Stream = agent.NewStreamTarget()
	routes := delivery.StreamRoutes(cfg.Agents, e.Stream)
	if cfg.Routes != nil {
		routes = cfg.Routes(e.Stream)
	}
	if cfg.EnvRoutes != nil {
		routes = cfg.EnvRoutes(e)
	}
	var q delivery.Queue = store.NewQueue(e.Store)
	if cfg.Queue != nil {
		q = cfg.Queue(e.Store)
	}
	log := cfg.Logger
	if log == nil {
		log = storetest.Logger(t)
	}
	opts := append([]delivery.Option{
		delivery.WithSummaryInterval(pol.SummaryInterval()), delivery.WithDetailedSummaries(pol.SummaryFormat() == inbox.SummaryFormatDetailed),
		delivery.WithRandom(func() float64 { return 0.5 }),
		delivery.WithHealth(store.NewTargets(e.Store)), delivery.WithRecovery(e.Runs), delivery.WithStreamOptions(pol)}, cfg.Dispatch...)
	// The inbox releases snoozes at the start of every pass, and tells the dispatcher of
	// what changed: each needs the other.
	inboxOpts := []inbox.ServiceOption{inbox.WithClock(e.Now), inbox.WithSnoozes(store.NewInbox(e.Store)),
		inbox.WithChangeHook(func(ks []inbox.ThreadKey) { e.Dispatcher.Notify(ks) })}
	// Held records (a policy's muting intervals, silences) are stored and released;
	// the dispatcher asks the silences, then the policy's mutes, when a record falls due.
	inboxOpts = append(inboxOpts, inbox.WithHeldRecords(store.NewInbox(e.Store)))
	holders := inbox.Holders{pol}
	if cfg.Silences {
		e.Silences = silence.NewService(store.NewSilences(e.Store), silence.Config{}, service.Base{Logger: log, Now: e.Now})
		inboxOpts = append(inboxOpts, inbox.WithHolds(e.Silences))
		holders = inbox.Holders{e.Silences, pol}
	}
	e.Inbox = inbox.NewService(store.NewInbox(e.Store), pol, inboxOpts...)
	opts = append(opts, delivery.WithSnoozes(e.Inbox), delivery.WithHolds(e.Inbox, holders))
	e.Dispatcher = delivery.New(q, e.Runs, e.Broker, routes, service.Base{Logger: log, Now: e.Now}, opts...)
	e.Agents, err = agent.NewService(cfg.Agents, agent.Deps{
		Frames: store.NewFrames(e.Store), Runs: e.Runs, Inbox: e.Inbox, Records: store.NewRecords(e.Store), States: store.NewStates(e.Store),
		Deliverer: e.Dispatcher, Notify: e.Dispatcher.Notify, Log: storetest.Logger(t), Aborter: cfg.Aborter,
	}, agent.WithServiceClock(e.Now))
	require.NoError(t, err)
	apiOpts := append([]agentapi.Option{agentapi.WithShutdown(e.Shutdown), agentapi.WithLogger(storetest.Logger(t))}, cfg.API...)
	var frames agent.FrameReader = store.NewFrames(e.Store)
	if cfg.Frames != nil {
		frames = cfg.Frames(frames)
	}
	e.API = agentapi.New(e.Agents, frames, e.Broker, apiOpts...)
	srv := server.New(server.Config{}, storetest.Logger(t))
	e.API.Mount(srv.Echo())
	e.Server = httptest.NewServer(srv.Echo())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = e.Dispatcher.Stop(ctx)
		_ = e.Broker.Stop(ctx)
		e.Server.CloseClientConnections()
		e.Server.Close()
	})
	return e
}

// Notify tells the dispatcher of changed threads (for targets built before it).
func (e *Env) Notify(ks []inbox.ThreadKey) { e.Dispatcher.Notify(ks) }

// Pass runs dispatcher passes until one claims nothing.
func (e *Env) Pass() {
	e.T.Helper()
	for range 100 {
		n, err := e.Dispatcher.RunOnce(context.Background())
		require.NoError(e.T, err)
		if n == 0 {
			return
		}
	}
	e.T.Fatal("dispatcher never settled")
}

// Ingest stores one notification as a connector would and returns its record id.
func (e *Env) Ingest(n inbox.Notification) string {
	e.T.Helper()
	res, err := e.Inbox.Ingest(context.Background(), &inbox.Event{Source: n.Source, Connector: "test", Type: "test"}, []inbox.Notification{n})
	require.NoError(e.T, err)
	require.Len(e.T, res.Records, 1)
	return res.Records[0].RecordID
}

// Record reads a record.
func (e *Env) Record(id string) inbox.Record {
	e.T.Helper()
	r, err := store.NewAdmin(e.Store).GetRecord(context.Background(), id)
	require.NoError(e.T, err)
	return r
}

// Log reads a thread's whole log.
func (e *Env) Log(k inbox.ThreadKey) []agent.Frame {
	e.T.Helper()
	frames, err := store.NewFrames(e.Store).FramesAfter(context.Background(), k, 0, 100000)
	require.NoError(e.T, err)
	return frames
}

// ThreadURL is the API URL of a thread path suffix, ids escaped.
func (e *Env) ThreadURL(k inbox.ThreadKey, suffix string) string {
	return e.Server.URL + "/v1/agents/" + url.PathEscape(k.Agent) + "/threads/" + url.PathEscape(k.Resource) + "/" +
		url.PathEscape(k.Thread) + suffix
}

// Do sends a request with the token and decodes a JSON answer into out (when not nil).
func (e *Env) Do(method, u, token string, body any, out any) int {
	e.T.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = bytes.NewBufferString(b)
	default:
		raw, err := json.Marshal(b)
		require.NoError(e.T, err)
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, u, rd)
	require.NoError(e.T, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(e.T, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(e.T, err)
	if out != nil && len(raw) > 0 {
		require.NoError(e.T, json.Unmarshal(raw, out), "body: %s", raw)
	}
	return resp.StatusCode
}

// OpenRun opens a run through the API and returns it.
func (e *Env) OpenRun(k inbox.ThreadKey) agent.Run {
	e.T.Helper()
	var run agent.Run
	status := e.Do(http.MethodPost, e.ThreadURL(k, "/runs"), e.token(k), nil, &run)
	require.Contains(e.T, []int{http.StatusOK, http.StatusCreated}, status)
	return run
}

// FinishRun finishes a run through the API.
func (e *Env) FinishRun(k inbox.ThreadKey, id string) {
	e.T.Helper()
	require.Equal(e.T, http.StatusOK, e.Do(http.MethodPost, e.ThreadURL(k, "/runs/"+url.PathEscape(id)+"/finish"), e.token(k), nil, nil))
}

func (e *Env) token(k inbox.ThreadKey) string {
	if k.Agent == "support" {
		return SupportToken
	}
	return CoderToken
}

// Token is the bearer token of k's agent.
func (e *Env) Token(k inbox.ThreadKey) string { return e.token(k) }

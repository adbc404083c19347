// Package claudeagents reaches agents run as Anthropic managed agent sessions
// (agents[].target.kind: claude-agents): a gateway thread is one session of an agent,
// each signal a user.message event, presence the session webhooks
// (session.status_run_started, status_idled, requires_action, status_terminated). The
// API takes no idempotency key, so a retried signal is first looked for among the
// session's newest events (a user.message whose text is the signal's) and sent only
// when it is not there. The shared machinery is package session.
package claudeagents

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/approval"
	"github.com/signalgate/signalgate/delivery"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/service"
	"github.com/signalgate/signalgate/targets/httptarget"
	"github.com/signalgate/signalgate/targets/session"
)

// Kind is the target kind.
const Kind = "claude-agents"

// PresenceSource: the session webhooks say when a session runs.
const PresenceSource = agent.PresenceRuntime

// Recovery: a message the API accepted is in the session.
const Recovery = delivery.RuntimeKeepsAccepted

// Defaults, as @anthropic-ai/sdk 1.10 sends them.
const (
	DefaultBaseURL = "https://api.anthropic.com"
	DefaultBeta    = "managed-agents-2026-04-01"
	Version        = "2026-10-21"
)

// RecentEvents is how many of a session's newest events a retried signal is looked for
// in, and an action's tool use.
const RecentEvents = 50

// Config is a claude-agents target's keys under agents[].target.
type Config struct {
	session.Common `yaml:",inline"`
	// Beta is the anthropic-beta header.
	Beta string `yaml:"beta"`
}

// WithDefaults fills base_url, beta and poll_interval.
func (c Config) WithDefaults() Config {
	c.Common = c.Common.WithDefaults(DefaultBaseURL)
	if c.Beta == "" {
		c.Beta = DefaultBeta
	}
	return c
}

// Validate reports problems by key, relative to agents[].target.
func (c Config) Validate() error {
	errs := []error{c.Common.Validate(Kind, true)}
	if strings.ContainsAny(c.Beta, "\r\n") {
		errs = append(errs, errors.New("beta: one header value, no line breaks"))
	}
	return errors.Join(errs...)
}

// Describe is check's summary of the target, without secrets.
func (c Config) Describe() string {
	c = c.WithDefaults()
	return httptarget.SafeURL(c.BaseURL) + " agent " + c.AgentID + ", environment " + c.EnvironmentID
}

// Agent is a claude-agents agent's config for code that builds one (tests, tools).
func Agent(id string, c Config) agent.Config {
	return agent.Config{ID: id, Target: agent.TargetConfig{Kind: Kind, Presence: PresenceSource, Settings: c}}
}

// Target is one agent's target: session.Hosted with Anthropic's API and webhooks.
type Target struct{ *session.Hosted }

// New builds a's target.
func New(a agent.Config, c Config, hc *http.Client, deps session.Deps, base service.Base) (*Target, error) {
	c = c.WithDefaults()
	deps.API = NewAPI(c, hc, a.WithDefaults().Target.Timeout)
	h, err := session.New(session.Spec{Kind: Kind, Agent: a, Origin: approval.OriginClaudeAgents, Dialect: session.StandardDialect, Common: c.Common}, deps, base)
	if err != nil {
		return nil, err
	}
	return &Target{h}, nil
}

// Mount serves POST /targets/claude-agents/{agent}/webhook.
func (t *Target) Mount(e *echo.Echo) { t.Hosted.Mount(e, ParseEvent) }

// ParseEvent reads a session webhook: {id, type: event, created_at, data: {id, type}};
// the event's type is data.type.
func ParseEvent(body []byte) (string, bool, error) {
	var e struct {
		Data struct {
			ID   string `json:"id"`
			Type string `json:"type"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &e); err != nil {
		return "", false, errors.New("not a JSON event")
	}
	switch e.Data.Type {
	case "session.status_run_started", "session.status_idled", "session.requires_action", "session.status_terminated",
		"session.running", "session.idled":
		if e.Data.ID == "" {
			return "", false, errors.New("data.id: the session id is missing")
		}
		return e.Data.ID, true, nil
	}
	return "", false, nil
}

// API is the managed agents API as @anthropic-ai/sdk (1.10) calls it.
type API struct {
	c   Config
	cli session.Client
}

var _ session.API = (*API)(nil)

// NewAPI is c's API client; hc carries every request (nil: a default one).
func NewAPI(c Config, hc *http.Client, timeout time.Duration) *API {
	c = c.WithDefaults()
	if hc == nil {
		hc = &http.Client{}
	}
	return &API{c: c, cli: session.Client{HTTP: hc, Base: strings.TrimRight(c.BaseURL, "/"), Timeout: timeout, Now: time.Now,
		Headers: func() map[string]string {
			return map[string]string{"Authorization": "Bearer " + c.APIKey.Reveal(), "anthropic-version": Version,
				"anthropic-beta": c.Beta, "Accept": "application/json"}
		}}}
}

func sessionPath(id string) string { return "/v1/sessions/" + url.PathEscape(id) }

// Create is POST /v1/sessions {agent, environment_id, metadata}.
func (a *API) Create(ctx context.Context, k inbox.ThreadKey) (string, error) {
	var s struct {
		ID string `json:"id"`
	}
	err := a.cli.Post(ctx, "/v1/sessions", nil, map[string]any{"agent": a.c.AgentID, "environment_id": a.c.EnvironmentID,
		"metadata": session.Metadata(k)}, &s)
	if err == nil && s.ID == "" {
		err = errors.New("the created session has no id")
	}
	return s.ID, err
}

func (a *API) send(ctx context.Context, id string, events ...map[string]any) error {
	return a.cli.Post(ctx, sessionPath(id)+"/events", nil, map[string]any{"events": events}, nil)
}

// event is one session event as events.list returns it.
type event struct {
	ID      string          `json:"id"`
	Type    string          `json:"type"`
	Name    string          `json:"name"`
	Input   json.RawMessage `json:"input"`
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	StopReason *struct {
		Type     string   `json:"type"`
		EventIDs []string `json:"event_ids"`
	} `json:"stop_reason"`
}

func (e event) text() string {
	var parts []string
	for _, c := range e.Content {
		if c.Type == "text" {
			parts = append(parts, c.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// recent is the session's newest events, newest first.
func (a *API) recent(ctx context.Context, id string) ([]event, error) {
	var page struct {
		Data []event `json:"data"`
	}
	err := a.cli.Get(ctx, fmt.Sprintf("%s/events?order=desc&limit=%d", sessionPath(id), RecentEvents), &page)
	return page.Data, err
}

// Send posts one user.message whose text is the signal's XML. A retry (attempt 2 on)
// first looks for the signal among the session's newest user messages (the same
// text: a retry renders the same signal): one whose first try was taken though its
// answer was lost is not sent again.
func (a *API) Send(ctx context.Context, id string, d agent.Handoff) (agent.Result, error) {
	if d.Attempt > 1 {
		evs, err := a.recent(ctx, id)
		if err != nil {
			return agent.Result{}, err
		}
		text := d.Signal.XML()
		for _, e := range evs {
			if e.Type == "user.message" && e.text() == text {
				return agent.Result{Status: http.StatusOK}, nil
			}
		}
	}
	err := a.send(ctx, id, map[string]any{"type": "user.message", "content": []any{map[string]any{"type": "text", "text": d.Signal.XML()}}})
	if err != nil {
		return agent.Result{}, err
	}
	return agent.Result{Status: http.StatusOK}, nil
}

// Read is GET /v1/sessions/{id}; an idle session's newest status_idle event says
// whether it stopped for an action (stop_reason requires_action), and which.
func (a *API) Read(ctx context.Context, id string) (session.Snapshot, error) {
	var s struct {
		Status string `json:"status"`
	}
	if err := a.cli.Get(ctx, sessionPath(id), &s); err != nil {
		return session.Snapshot{}, err
	}
	out := session.Snapshot{Status: s.Status}
	switch s.Status {
	case "running", "rescheduling":
		out.State = session.Busy
		return out, nil
	case "terminated":
		out.State, out.Ended = session.Failed, true
		return out, nil
	}
	out.State = session.Idle
	evs, err := a.recent(ctx, id)
	if err != nil {
		return session.Snapshot{}, err
	}
	byID := map[string]event{}
	for _, e := range evs {
		byID[e.ID] = e
	}
	for _, e := range evs {
		if e.Type != "session.status_idle" {
			continue
		}
		if e.StopReason != nil && e.StopReason.Type == "requires_action" {
			out.State, out.Status = session.Waiting, "requires_action"
			for _, tid := range e.StopReason.EventIDs {
				use := byID[tid]
				act := session.Action{ID: tid, Tool: use.Name, Args: use.Input}
				if use.Type == "agent.custom_tool_use" {
					act.Unanswerable = "custom tool " + use.Name
				}
				out.Actions = append(out.Actions, act)
			}
		}
		break
	}
	return out, nil
}

// Answer posts user.tool_confirmation for tool use callID: allow, or deny with a message.
func (a *API) Answer(ctx context.Context, id, callID string, approved bool) error {
	ev := map[string]any{"type": "user.tool_confirmation", "tool_use_id": callID, "result": "allow"}
	if !approved {
		ev["result"], ev["deny_message"] = "deny", "denied in Slack"
	}
	return a.send(ctx, id, ev)
}

// Interrupt posts user.interrupt.
func (a *API) Interrupt(ctx context.Context, id string) error {
	return a.send(ctx, id, map[string]any{"type": "user.interrupt"})
}

// LastMessage is the newest agent.message's text.
func (a *API) LastMessage(ctx context.Context, id string) (string, error) {
	evs, err := a.recent(ctx, id)
	if err != nil {
		return "", err
	}
	for _, e := range evs {
		if e.Type == "agent.message" {
			return e.text(), nil
		}
	}
	return "", nil
}

// Probe is check --connect's try: GET /v1/agents/{agent_id} answers 200.
func Probe(ctx context.Context, hc *http.Client, c Config, timeout time.Duration, key string) (string, error) {
	a := NewAPI(c, hc, timeout)
	shown := httptarget.SafeURL(a.c.BaseURL)
	err := a.cli.Get(ctx, "/v1/agents/"+url.PathEscape(c.AgentID), nil)
	switch status := agent.DeliveryFailure(err).Status; {
	case err == nil:
		return fmt.Sprintf("agent %s answers at %s", c.AgentID, shown), nil
	case status == 0:
		return "", fmt.Errorf("%w: check %s.base_url", err, key)
	case status == http.StatusNotFound:
		return "", fmt.Errorf("%s has no agent %q (GET /v1/agents/%s: 404): check %s.agent_id", shown, c.AgentID, c.AgentID, key)
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return "", fmt.Errorf("%s refused the API key (HTTP %d): check %s.api_key", shown, status, key)
	default:
		return "", fmt.Errorf("GET %s/v1/agents/%s answered HTTP %d: check %s.base_url", shown, c.AgentID, status, key)
	}
}

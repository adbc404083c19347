// Package openaiagents reaches agents run as OpenAI Agents API sessions
// (agents[].target.kind: openai-agents): a gateway thread is one session of a saved
// agent, each signal an agent.session.input.message event (its Idempotency-Key the
// signal's id, so a retry after a timeout never adds the message twice), presence the
// session webhooks (agent.session.in_progress, idle, action_required, failed). The
// shared machinery is package session.
package openaiagents

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
const Kind = "openai-agents"

// PresenceSource: the session webhooks say when a session runs.
const PresenceSource = agent.PresenceRuntime

// Recovery: a message the API accepted is in the session, so a crashed run's accepted
// signals are not sent again.
const Recovery = delivery.RuntimeKeepsAccepted

// DefaultBaseURL is OpenAI's API.
const DefaultBaseURL = "https://api.openai.com/v1"

// Beta is the OpenAI-Beta header every Agents API call carries.
const Beta = "agents=v1"

// Config is an openai-agents target's keys under agents[].target.
type Config struct {
	session.Common `yaml:",inline"`
	// Environment is the session's environment as the API takes it (passed through),
	// for what environment_id (a prewarmed openai_hosted environment) cannot say.
	Environment map[string]any `yaml:"environment"`
}

// WithDefaults fills base_url and poll_interval.
func (c Config) WithDefaults() Config {
	c.Common = c.Common.WithDefaults(DefaultBaseURL)
	return c
}

// Validate reports problems by key, relative to agents[].target.
func (c Config) Validate() error {
	errs := []error{c.Common.Validate(Kind, false)}
	switch {
	case c.EnvironmentID == "" && c.Environment == nil:
		errs = append(errs, errors.New("environment_id: required for kind openai-agents, or environment (sessions are created in an environment)"))
	case c.EnvironmentID != "" && c.Environment != nil:
		errs = append(errs, errors.New("environment: set environment_id or environment, not both"))
	case c.Environment != nil:
		typ, _ := c.Environment["type"].(string)
		switch typ {
		case "openai_hosted", "self_hosted":
		case "none":
			errs = append(errs, errors.New("environment.type: none needs the first input at creation; use an openai_hosted or self_hosted environment"))
		default:
			errs = append(errs, errors.New("environment.type: want openai_hosted or self_hosted"))
		}
	}
	return errors.Join(errs...)
}

// environment is the session's environment as sent.
func (c Config) environment() map[string]any {
	if c.Environment != nil {
		return c.Environment
	}
	return map[string]any{"type": "openai_hosted", "environment_id": c.EnvironmentID}
}

// Describe is check's summary of the target, without secrets.
func (c Config) Describe() string {
	c = c.WithDefaults()
	env := c.EnvironmentID
	if env == "" {
		env, _ = c.Environment["type"].(string)
	}
	return httptarget.SafeURL(c.BaseURL) + " agent " + c.AgentID + ", environment " + env
}

// Agent is an openai-agents agent's config for code that builds one (tests, tools).
func Agent(id string, c Config) agent.Config {
	return agent.Config{ID: id, Target: agent.TargetConfig{Kind: Kind, Presence: PresenceSource, Settings: c}}
}

// Target is one agent's target: session.Hosted with OpenAI's API and webhooks.
type Target struct{ *session.Hosted }

// New builds a's target.
func New(a agent.Config, c Config, hc *http.Client, deps session.Deps, base service.Base) (*Target, error) {
	c = c.WithDefaults()
	deps.API = NewAPI(c, hc, a.WithDefaults().Target.Timeout)
	h, err := session.New(session.Spec{Kind: Kind, Agent: a, Origin: approval.OriginOpenAIAgents, Dialect: session.OpenAIDialect, Common: c.Common}, deps, base)
	if err != nil {
		return nil, err
	}
	return &Target{h}, nil
}

// Mount serves POST /targets/openai-agents/{agent}/webhook.
func (t *Target) Mount(e *echo.Echo) { t.Hosted.Mount(e, ParseEvent) }

// Webhook event types the gateway reads.
const (
	EventInProgress     = "agent.session.in_progress"
	EventIdle           = "agent.session.idle"
	EventActionRequired = "agent.session.action_required"
	EventFailed         = "agent.session.failed"
)

// ParseEvent reads a session webhook: {id, object: event, created_at, type, data: {id}}.
func ParseEvent(body []byte) (string, bool, error) {
	var e struct {
		Type string `json:"type"`
		Data struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &e); err != nil {
		return "", false, errors.New("not a JSON event")
	}
	switch e.Type {
	case EventInProgress, EventIdle, EventActionRequired, EventFailed:
		if e.Data.ID == "" {
			return "", false, errors.New("data.id: the session id is missing")
		}
		return e.Data.ID, true, nil
	}
	return "", false, nil
}

// API is the Agents API as the openai library (7.55) calls it.
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
			return map[string]string{"Authorization": "Bearer " + c.APIKey.Reveal(), "OpenAI-Beta": Beta, "Accept": "application/json"}
		}}}
}

func sessionPath(id string) string { return "/agents/sessions/" + url.PathEscape(id) }

// Create is POST /agents/sessions {agent_id, environment, metadata}.
func (a *API) Create(ctx context.Context, k inbox.ThreadKey) (string, error) {
	var s struct {
		ID string `json:"id"`
	}
	err := a.cli.Post(ctx, "/agents/sessions", nil, map[string]any{"agent_id": a.c.AgentID, "environment": a.c.environment(),
		"metadata": session.Metadata(k)}, &s)
	if err == nil && s.ID == "" {
		err = errors.New("the created session has no id")
	}
	return s.ID, err
}

// events posts events to session id; key, if set, is the Idempotency-Key.
func (a *API) events(ctx context.Context, id, key string, events ...map[string]any) error {
	extra := map[string]string{"Accept": "*/*"}
	if key != "" {
		extra["Idempotency-Key"] = key
	}
	return a.cli.Post(ctx, sessionPath(id)+"/events", extra, map[string]any{"events": events}, nil)
}

// Send posts one agent.session.input.message whose text is the signal's XML, keyed by
// the signal's id: the API adds a retried message once.
func (a *API) Send(ctx context.Context, id string, d agent.Handoff) (agent.Result, error) {
	err := a.events(ctx, id, d.Signal.ID, map[string]any{"type": "agent.session.input.message",
		"input": []any{map[string]any{"role": "user", "content": []any{map[string]any{"type": "input_text", "text": d.Signal.XML()}}}}})
	if err != nil {
		return agent.Result{}, err
	}
	return agent.Result{Status: http.StatusAccepted}, nil
}

type sessionBody struct {
	Status          string           `json:"status"`
	RequiredActions []requiredAction `json:"required_actions"`
}

type requiredAction struct {
	Type      string          `json:"type"`
	RequestID string          `json:"request_id"`
	Request   json.RawMessage `json:"request"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// Read is GET /agents/sessions/{id}: its status and required_actions.
func (a *API) Read(ctx context.Context, id string) (session.Snapshot, error) {
	var s sessionBody
	if err := a.cli.Get(ctx, sessionPath(id), &s); err != nil {
		return session.Snapshot{}, err
	}
	out := session.Snapshot{Status: s.Status}
	switch s.Status {
	case "in_progress":
		out.State = session.Busy
	case "requires_action":
		out.State = session.Waiting
	case "failed":
		out.State = session.Failed
	default:
		out.State = session.Idle
	}
	for _, r := range s.RequiredActions {
		out.Actions = append(out.Actions, action(r))
	}
	return out, nil
}

// action is what people are asked of r: a browser origin's access is approved or
// denied; a login form, a function call (the client runs it) and a lost environment
// are not for an approval.
func action(r requiredAction) session.Action {
	switch r.Type {
	case "computer_use_approval_request":
		var req struct {
			Type string `json:"type"`
		}
		_ = json.Unmarshal(r.Request, &req)
		if req.Type == "browser_origin_access" {
			return session.Action{ID: r.RequestID, Tool: req.Type, Args: r.Request}
		}
		return session.Action{ID: r.RequestID, Unanswerable: "computer_use_approval_request " + req.Type}
	case "function_call":
		return session.Action{ID: r.CallID, Unanswerable: "function_call " + r.Name}
	}
	return session.Action{Unanswerable: r.Type}
}

// Answer answers browser origin request callID: approve or deny.
func (a *API) Answer(ctx context.Context, id, callID string, approved bool) error {
	decision := "deny"
	if approved {
		decision = "approve"
	}
	return a.events(ctx, id, "approval_"+callID, map[string]any{"type": "agent.session.input.computer_use_approval_request_result",
		"request_id": callID, "response": map[string]any{"type": "browser_origin_access", "decision": decision}})
}

// Interrupt posts agent.session.input.cancel.
func (a *API) Interrupt(ctx context.Context, id string) error {
	return a.events(ctx, id, "", map[string]any{"type": "agent.session.input.cancel"})
}

// LastMessage is the newest assistant message's text (GET …/items?order=desc).
func (a *API) LastMessage(ctx context.Context, id string) (string, error) {
	var page struct {
		Data []struct {
			Type    string `json:"type"`
			Role    string `json:"role"`
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		} `json:"data"`
	}
	if err := a.cli.Get(ctx, sessionPath(id)+"/items?order=desc&limit=20", &page); err != nil {
		return "", err
	}
	for _, it := range page.Data {
		if it.Type != "message" || it.Role != "assistant" {
			continue
		}
		var parts []string
		for _, c := range it.Content {
			if c.Type == "output_text" {
				parts = append(parts, c.Text)
			}
		}
		return strings.Join(parts, "\n"), nil
	}
	return "", nil
}

// Probe is check --connect's try: GET /agents/{agent_id} answers 200.
func Probe(ctx context.Context, hc *http.Client, c Config, timeout time.Duration, key string) (string, error) {
	a := NewAPI(c, hc, timeout)
	shown := httptarget.SafeURL(a.c.BaseURL)
	err := a.cli.Get(ctx, "/agents/"+url.PathEscape(c.AgentID), nil)
	switch status := agent.DeliveryFailure(err).Status; {
	case err == nil:
		return fmt.Sprintf("agent %s answers at %s", c.AgentID, shown), nil
	case status == 0:
		return "", fmt.Errorf("%w: check %s.base_url", err, key)
	case status == http.StatusNotFound:
		return "", fmt.Errorf("%s has no agent %q (GET /agents/%s: 404): check %s.agent_id", shown, c.AgentID, c.AgentID, key)
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return "", fmt.Errorf("%s refused the API key (HTTP %d): check %s.api_key", shown, status, key)
	default:
		return "", fmt.Errorf("GET %s/agents/%s answered HTTP %d: check %s.base_url", shown, c.AgentID, status, key)
	}
}

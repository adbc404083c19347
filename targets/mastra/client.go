package mastra

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/secret"
	"github.com/signalgate/signalgate/targets/httptarget"
)

// Client calls the agent routes of Mastra servers (tool approvals, thread aborts,
// suspended runs) for every configured mastra agent.
type Client struct {
	agents map[string]server
	client *http.Client
	now    func() time.Time
}

var _ agent.ThreadAborter = (*Client)(nil)

// NewClient builds the client for the configured mastra agents (others are skipped).
func NewClient(cfgs []agent.Config, client *http.Client) *Client {
	c := &Client{agents: map[string]server{}, client: client, now: time.Now}
	if c.client == nil {
		c.client = &http.Client{}
	}
	for _, cfg := range cfgs {
		if srv, err := serverOf(cfg); err == nil {
			c.agents[cfg.ID] = srv
		}
	}
	return c
}

func (c *Client) target(agentID string) (server, error) {
	cfg, ok := c.agents[agentID]
	if !ok {
		return server{}, fmt.Errorf("agent %q is not a mastra agent", agentID)
	}
	return cfg, nil
}

// post sends body to one of agentID's routes.
func (c *Client) post(ctx context.Context, agentID, route string, body any) ([]byte, error) {
	cfg, err := c.target(agentID)
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	out, _, err := httptarget.Post(ctx, c.client, agentBase(cfg.Config)+route, secret.RevealMap(cfg.Headers), raw, cfg.Timeout, c.now)
	return out, err
}

// AbortThread aborts Mastra's active run of k (POST /agents/:agentId/threads/abort).
// clearPendingSignals is Mastra's option of the same name; a Mastra server whose route
// does not read it (@mastra/server up to at least 1.67 keeps only resourceId and
// threadId) aborts keeping the pending signals.
func (c *Client) AbortThread(ctx context.Context, k inbox.ThreadKey, clearPendingSignals bool) error {
	body := map[string]any{"resourceId": k.Resource, "threadId": k.Thread}
	if clearPendingSignals {
		body["clearPendingSignals"] = true
	}
	if _, err := c.post(ctx, k.Agent, "/threads/abort", body); err != nil {
		return fmt.Errorf("abort the Mastra run of %s: %w", k, err)
	}
	return nil
}

// SuspendedRun is a Mastra run waiting on tool calls (GET /agents/:agentId/suspended-runs).
type SuspendedRun struct {
	RunID      string              `json:"runId"`
	ThreadID   string              `json:"threadId"`
	ResourceID string              `json:"resourceId"`
	ToolCalls  []SuspendedToolCall `json:"toolCalls"`
}

// SuspendedToolCall is one call a suspended run waits on: an approval
// (RequiresApproval) or a tool that suspended (ask_user; SuspendPayload holds its
// question).
type SuspendedToolCall struct {
	ToolCallID       string          `json:"toolCallId"`
	ToolName         string          `json:"toolName"`
	Args             json.RawMessage `json:"args"`
	RequiresApproval bool            `json:"requiresApproval"`
	SuspendPayload   json.RawMessage `json:"suspendPayload"`
}

// suspendedPage bounds one page of suspended runs; suspendedPages bounds the pages read.
const (
	suspendedPage  = 100
	suspendedPages = 50
)

// SuspendedRuns lists agentID's suspended runs, every page.
func (c *Client) SuspendedRuns(ctx context.Context, agentID string) ([]SuspendedRun, error) {
	cfg, err := c.target(agentID)
	if err != nil {
		return nil, err
	}
	var out []SuspendedRun
	for page := 0; page < suspendedPages; page++ {
		q := url.Values{"perPage": {fmt.Sprint(suspendedPage)}, "page": {fmt.Sprint(page)}}
		raw, _, err := httptarget.Get(ctx, c.client, agentBase(cfg.Config)+"/suspended-runs?"+q.Encode(), secret.RevealMap(cfg.Headers), cfg.Timeout, c.now)
		if err != nil {
			return nil, fmt.Errorf("list suspended runs of %s: %w", agentID, err)
		}
		var body struct {
			Runs  []SuspendedRun `json:"runs"`
			Total int            `json:"total"`
		}
		if err := json.Unmarshal(raw, &body); err != nil {
			return nil, fmt.Errorf("list suspended runs of %s: unreadable answer: %w", agentID, err)
		}
		out = append(out, body.Runs...)
		if len(body.Runs) < suspendedPage || len(out) >= body.Total {
			return out, nil
		}
	}
	return out, nil
}

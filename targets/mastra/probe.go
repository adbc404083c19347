package mastra

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/signalgate/signalgate/secret"
	"github.com/signalgate/signalgate/targets/httptarget"
)

// Probe is `check --connect`'s try of a mastra target: GET /api/agents/{agent_id} on its
// server, answered 200 when the agent is there. key is the target's config path, named
// in what to fix.
func Probe(ctx context.Context, hc *http.Client, c Config, timeout time.Duration, key string) (string, error) {
	u := agentBase(c)
	status, err := httptarget.Ask(ctx, hc, http.MethodGet, u, secret.RevealMap(c.Headers), timeout)
	shown := httptarget.SafeURL(c.URL)
	switch {
	case err != nil:
		return "", fmt.Errorf("%w: check %s.url and that the Mastra server is running", err, key)
	case status == http.StatusOK:
		return fmt.Sprintf("agent %s answers at %s", c.AgentID, shown), nil
	case status == http.StatusNotFound:
		return "", fmt.Errorf("%s has no agent %q (GET /api/agents/%s: 404): check %s.agent_id", shown, c.AgentID, c.AgentID, key)
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return "", fmt.Errorf("%s refused GET /api/agents/%s (HTTP %d): check %s.headers", shown, c.AgentID, status, key)
	}
	return "", fmt.Errorf("GET %s/api/agents/%s answered HTTP %d: check %s.url", shown, c.AgentID, status, key)
}

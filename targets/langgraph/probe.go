package langgraph

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/secret"
	"github.com/signalgate/signalgate/targets/httptarget"
)

// Probe is `check --connect`'s try of a langgraph target: GET /assistants/{assistant_id}
// on its server, answered 200 when the assistant (or graph) is there. key is the
// target's config path, named in what to fix.
func Probe(ctx context.Context, hc *http.Client, c Config, timeout time.Duration, key string) (string, error) {
	shown := httptarget.SafeURL(c.URL)
	u := strings.TrimRight(c.URL, "/") + "/assistants/" + url.PathEscape(c.AssistantID)
	raw, _, err := httptarget.Get(ctx, hc, u, secret.RevealMap(c.Headers), timeout, time.Now)
	if err == nil {
		var a struct {
			GraphID string `json:"graph_id"`
		}
		_ = json.Unmarshal(raw, &a)
		return fmt.Sprintf("assistant %s (graph %s) answers at %s", c.AssistantID, a.GraphID, shown), nil
	}
	switch status := agent.DeliveryFailure(err).Status; {
	case status == 0:
		return "", fmt.Errorf("%w: check %s.url and that the LangGraph server is running", err, key)
	case status == http.StatusNotFound:
		return "", fmt.Errorf("%s has no assistant or graph %q (GET /assistants/%s: 404): check %s.assistant_id", shown, c.AssistantID, c.AssistantID, key)
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return "", fmt.Errorf("%s refused GET /assistants/%s (HTTP %d): check %s.headers (x-api-key)", shown, c.AssistantID, status, key)
	default:
		return "", fmt.Errorf("GET %s/assistants/%s answered HTTP %d: check %s.url", shown, c.AssistantID, status, key)
	}
}

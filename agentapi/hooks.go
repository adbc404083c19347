package agentapi

import (
	"encoding/json"
	"io"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/inbox"
)

// claudeCodeHook is POST …/hooks/claude-code: Claude Code's HTTP hooks make the
// thread's presence follow the session's turns exactly. The body is the hook's input
// as Claude Code posts it (only hook_event_name is read; the rest is Claude Code's and
// may grow):
//
//   - UserPromptSubmit (a turn starts, a channel notification's included) and
//     PostToolUse (a turn goes on) make the thread active: the live run is renewed, or
//     one opened;
//   - Stop ends the live run as finished; StopFailure (the turn ended on an error) and
//     SessionEnd (the session closed mid-turn) as aborted, so the signals it had are
//     delivered again in the next run.
//
// The answer is {} (Claude Code reads a hook's answer as its instructions: this one
// has none); any other event is a 400 naming it.
func (a *API) claudeCodeHook(c echo.Context, k inbox.ThreadKey) error {
	body, err := io.ReadAll(c.Request().Body)
	if err != nil {
		return err // the body limit's 413 passes through
	}
	var in struct {
		Event string `json:"hook_event_name"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return agent.NewError(agent.KindInvalid, "bad_request", "request body: want Claude Code's hook input, a JSON object with hook_event_name")
	}
	ctx := c.Request().Context()
	switch in.Event {
	case "UserPromptSubmit", "PostToolUse":
		_, err = a.svc.TurnBusy(ctx, k)
	case "Stop":
		_, err = a.svc.TurnIdle(ctx, k, agent.RunFinished)
	case "StopFailure", "SessionEnd":
		_, err = a.svc.TurnIdle(ctx, k, agent.RunAborted)
	case "":
		return agent.NewError(agent.KindInvalid, "bad_request", "hook_event_name: required (UserPromptSubmit, PostToolUse, Stop, StopFailure or SessionEnd)")
	default:
		return agent.NewError(agent.KindInvalid, "bad_request", "hook_event_name: %q is not a presence hook (want UserPromptSubmit, PostToolUse, Stop, StopFailure or SessionEnd)", in.Event)
	}
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, struct{}{})
}

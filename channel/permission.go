package channel

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"unicode/utf8"
)

// The agent API's bounds of an approval request (POST …/approvals).
const (
	maxTool        = 200
	maxArguments   = 8 << 10
	maxDescription = 2000
)

// relay turns each permission prompt into a Slack approval, one at a time, until ctx
// ends. The decision arrives later on the stream (verdictOf); an approval that was
// decided already (a prompt asked again) is answered at once.
func (s *Server) relay(ctx context.Context, requests <-chan permissionRequest) {
	for {
		select {
		case <-ctx.Done():
			return
		case r := <-requests:
			if !s.permissions {
				continue
			}
			status, err := s.askApproval(ctx, r)
			if err != nil {
				// Claude Code's own prompt stays up: the session's user can still answer it.
				s.log.Warn("could not relay a permission prompt to Slack", "request_id", r.RequestID, "tool", r.ToolName, "error", err.Error())
				continue
			}
			s.log.Info("permission prompt relayed to Slack", "request_id", r.RequestID, "tool", r.ToolName)
			if b := behavior(status); b != "" {
				if err := s.tap.notify(ctx, MethodPermission, permissionVerdict{RequestID: r.RequestID, Behavior: b}); err != nil {
					s.log.Warn("could not answer a permission prompt", "request_id", r.RequestID, "error", err.Error())
				}
			}
		}
	}
}

// askApproval posts r as an approval of the thread and returns its status.
func (s *Server) askApproval(ctx context.Context, r permissionRequest) (string, error) {
	body := map[string]any{
		"id":          approvalPrefix + s.instance + "/" + r.RequestID,
		"tool":        cut(r.ToolName, maxTool),
		"description": cut(r.Description, maxDescription),
	}
	if r.ToolName == "" {
		body["tool"] = "unknown tool"
	}
	if args := arguments(r.InputPreview); args != nil {
		body["arguments"] = args
	}
	req, err := s.request(ctx, http.MethodPost, s.threadPath+"/approvals", body)
	if err != nil {
		return "", err
	}
	resp, err := s.http.Do(req)
	if err != nil {
		return "", fmt.Errorf("post the approval: %w", err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusCreated {
		return "", fmt.Errorf("post the approval: %s", apiError(resp.StatusCode, raw))
	}
	var a struct {
		Status string `json:"status"`
	}
	_ = json.Unmarshal(raw, &a)
	return a.Status, nil
}

// arguments is the prompt's input preview as the approval's arguments: the JSON it is,
// or else the text as a JSON string, cut to the bound.
func arguments(preview string) json.RawMessage {
	if preview == "" {
		return nil
	}
	if len(preview) <= maxArguments && json.Valid([]byte(preview)) {
		return json.RawMessage(preview)
	}
	for n := maxArguments; ; n /= 2 {
		raw, _ := json.Marshal(cut(preview, n))
		if len(raw) <= maxArguments {
			return raw // escaping may have made the text longer than n
		}
	}
}

// cut shortens v to at most n bytes on a rune boundary, ending in … when cut.
func cut(v string, n int) string {
	if len(v) <= n {
		return v
	}
	end := n - len("…")
	for end > 0 && !utf8.RuneStart(v[end]) {
		end--
	}
	return v[:end] + "…"
}

package channel

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// frame is the data of a signal frame of the thread's stream (the agent API's signal
// frame), the parts the channel reads.
type frame struct {
	ID       string         `json:"id"`
	Seq      int64          `json:"seq"`
	RunID    *string        `json:"runId"`
	Action   string         `json:"action"` // wake, deliver or persist
	TagName  string         `json:"tagName"`
	XML      string         `json:"xml"`
	Metadata map[string]any `json:"metadata"`
}

// Frame actions: a signal that woke the thread or joined its run, or one written
// without waking.
const (
	actionPersist = "persist"
)

// channelParams is a notifications/claude/channel notification's params: content, and
// meta whose values Claude Code requires to be strings.
type channelParams struct {
	Content string            `json:"content"`
	Meta    map[string]string `json:"meta,omitempty"`
}

// metaKey is what Claude Code keeps of meta: keys of another shape are dropped.
var metaKey = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)

// Meta keys. Claude Code renders meta as attributes of its <channel source="<server>">
// tag, so the signal's own source is signal_source: a second source attribute would
// be read as the server's name.
const (
	MetaSignalID = "signal_id"
	MetaPriority = "priority"
	MetaSource   = "signal_source"
	MetaKind     = "kind"
	MetaReplyTo  = "replyTo"
	MetaRunID    = "run_id"
)

// notification is the channel notification of a signal frame: content the signal's XML
// as the model sees it, meta the signal id, its priority, source and kind where it
// carries them (notifications and summaries), its replyTo as compact JSON (the reply
// tool's replyTo argument) and the run it woke or joined.
func notification(f frame) channelParams {
	meta := map[string]string{}
	set := func(k, v string) {
		if v != "" && metaKey.MatchString(k) {
			meta[k] = v
		}
	}
	set(MetaSignalID, f.ID)
	if f.RunID != nil {
		set(MetaRunID, *f.RunID)
	}
	if n, ok := f.Metadata["notification"].(map[string]any); ok {
		set(MetaPriority, str(n["priority"]))
		set(MetaSource, str(n["source"]))
		set(MetaKind, str(n["kind"]))
	}
	if to, ok := f.Metadata["replyTo"].(map[string]any); ok {
		if raw, err := json.Marshal(to); err == nil {
			set(MetaReplyTo, string(raw))
		}
	}
	if len(meta) == 0 {
		meta = nil
	}
	return channelParams{Content: f.XML, Meta: meta}
}

func str(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case nil:
		return ""
	default:
		return fmt.Sprint(v)
	}
}

// approvalPrefix starts the approval id of a permission prompt the channel relayed
// (claude-code/<channel instance>/<request_id>): the decision signal carries it back
// as its approval's toolCallId.
const approvalPrefix = "claude-code/"

// verdictOf is the answer a decision signal gives a relayed permission prompt; ok is
// false for every other signal. Approved allows; declined and expired deny: a prompt
// nobody answered in time does not run its tool.
func verdictOf(f frame) (permissionVerdict, bool) {
	if f.TagName != "approval" {
		return permissionVerdict{}, false
	}
	a, ok := f.Metadata["approval"].(map[string]any)
	if !ok {
		return permissionVerdict{}, false
	}
	id := str(a["toolCallId"])
	if !strings.HasPrefix(id, approvalPrefix) {
		return permissionVerdict{}, false
	}
	rid := id[strings.LastIndexByte(id, '/')+1:]
	if rid == "" {
		return permissionVerdict{}, false
	}
	return permissionVerdict{RequestID: rid, Behavior: behavior(str(a["decision"]))}, true
}

// behavior maps an approval's status onto Claude Code's verdict ("" while undecided).
func behavior(status string) string {
	switch status {
	case "approved":
		return "allow"
	case "declined", "expired":
		return "deny"
	}
	return ""
}

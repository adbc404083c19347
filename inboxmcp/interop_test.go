package inboxmcp_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/deliverytest"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/reply"
	"github.com/signalgate/signalgate/store"
)

// TestTypeScriptClient runs the TypeScript MCP SDK's client (interop/mcp, installed by
// .ci/mcp-interop.sh) against /mcp: a second, independent implementation of the protocol
// lists the tools and calls each. Skipped unless the harness's node_modules exist or
// SIGNALGATE_MCP_INTEROP names its folder.
func TestTypeScriptClient(t *testing.T) {
	dir := os.Getenv("SIGNALGATE_MCP_INTEROP")
	if dir == "" {
		_, file, _, _ := runtime.Caller(0)
		dir = filepath.Join(filepath.Dir(file), "..", "interop", "mcp")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk")); err != nil {
		t.Skip("MCP interop harness not installed (run .ci/mcp-interop.sh)")
	}
	node, lerr := exec.LookPath("node")
	if lerr != nil {
		t.Skip("node not found")
	}
	e := replyEnv(t, nil)
	k := coderThread
	slack := slackNote(e, k, "Jane: can you look?", dmTo)
	_, err := e.Agents.ActOn(t.Context(), k, slack, "seen") // out of the way of notification-inbox read
	require.NoError(t, err)
	cmd := exec.CommandContext(t.Context(), node, "client.mjs", e.URL, deliverytest.CoderToken, k.Resource, k.Thread, "support")
	cmd.Dir = dir
	cmd.Stderr = os.Stderr
	raw, err := cmd.Output()
	require.NoError(t, err, "client output: %s", raw)

	type result struct {
		IsError bool            `json:"isError"`
		Text    string          `json:"text"`
		Result  json.RawMessage `json:"result"`
	}
	var out struct {
		WrongToken string `json:"wrongToken"`
		Server     struct{ Name string }
		Tools      []struct {
			Name     string   `json:"name"`
			ReadOnly bool     `json:"readOnly"`
			Required []string `json:"required"`
		} `json:"tools"`
		Notify, List, Search, Read, Archive, Dismiss, OtherAgent, Invalid                                  result
		MastraNotify, MastraList, MastraSearch, MastraNotify2, MastraRead, MastraNoQuery, MastraOtherAgent result
		ReplyList, Reply, ReplyAgain, ReplyConflict, ReplyForeign, ReplyStatus                             result
	}
	require.NoError(t, json.Unmarshal(raw, &out), "%s", raw)

	require.Contains(t, out.WrongToken, "invalid token: missing or invalid credentials", "a 401 before any session")
	require.Equal(t, "signalgate", out.Server.Name)
	var names []string
	for _, tool := range out.Tools {
		names = append(names, tool.Name)
	}
	require.ElementsMatch(t, []string{"inbox_archive", "inbox_dismiss", "inbox_list", "inbox_read", "inbox_search", "inbox_snooze",
		"notification-inbox", "notify", "reply", "reply_status"}, names)
	for _, tool := range out.Tools {
		require.Subset(t, tool.Required, []string{"resourceId", "threadId"}, tool.Name)
		require.Equal(t, tool.Name == "inbox_list" || tool.Name == "inbox_search" || tool.Name == "reply_status", tool.ReadOnly, tool.Name)
	}

	for name, r := range map[string]result{"notify": out.Notify, "inbox_list": out.List, "inbox_search": out.Search, "inbox_read": out.Read, "inbox_archive": out.Archive} {
		require.False(t, r.IsError, "%s: %s", name, r.Text)
	}
	var created struct {
		RecordID string `json:"recordId"`
	}
	require.NoError(t, json.Unmarshal(out.Notify.Result, &created))
	var list, search, read struct {
		Notifications []struct {
			ID      string          `json:"id"`
			Payload json.RawMessage `json:"payload"`
			XML     string          `json:"xml"`
		} `json:"notifications"`
	}
	require.NoError(t, json.Unmarshal(out.List.Result, &list))
	require.NoError(t, json.Unmarshal(out.Search.Result, &search))
	require.NoError(t, json.Unmarshal(out.Read.Result, &read))
	require.Len(t, list.Notifications, 1)
	require.Equal(t, created.RecordID, list.Notifications[0].ID)
	require.Len(t, search.Notifications, 1)
	require.Equal(t, created.RecordID, search.Notifications[0].ID)
	require.Len(t, read.Notifications, 1)
	require.JSONEq(t, `{"test": "TestFlaky"}`, string(read.Notifications[0].Payload))
	require.Contains(t, read.Notifications[0].XML, `>Pick up the flaky test on main</notification>`)

	require.True(t, out.Dismiss.IsError, "an archived record cannot be dismissed")
	require.Equal(t, `conflict: notification "`+created.RecordID+`" is archived and cannot be marked dismissed`, out.Dismiss.Text)
	require.True(t, out.OtherAgent.IsError)
	require.Equal(t, `forbidden: the token of agent "coder" cannot access agent "support"'s threads`, out.OtherAgent.Text)
	require.True(t, out.Invalid.IsError, "schema validation is a tool error")
	require.Contains(t, out.Invalid.Text, "validating")

	// notification-inbox, Mastra's tool: list and search mark seen, read hands the unread
	// one to the thread.
	var mastra struct {
		RecordID string `json:"recordId"`
	}
	require.NoError(t, json.Unmarshal(out.MastraNotify.Result, &mastra))
	var page struct {
		Notifications []map[string]any `json:"notifications"`
		HasMore       bool             `json:"hasMore"`
		MarkedSeen    int              `json:"markedSeen"`
	}
	require.False(t, out.MastraList.IsError, out.MastraList.Text)
	require.NoError(t, json.Unmarshal(out.MastraList.Result, &page))
	require.Len(t, page.Notifications, 1)
	require.Equal(t, mastra.RecordID, page.Notifications[0]["id"])
	require.Equal(t, "seen", page.Notifications[0]["status"])
	require.NotContains(t, page.Notifications[0], "payload")
	require.Equal(t, 1, page.MarkedSeen)
	require.False(t, page.HasMore)
	require.NoError(t, json.Unmarshal(out.MastraSearch.Result, &page))
	require.Len(t, page.Notifications, 1, "search finds the seen one")
	require.Zero(t, page.MarkedSeen)
	require.False(t, out.MastraRead.IsError, out.MastraRead.Text)
	require.JSONEq(t, `{"message":"1 notification will now be delivered.","delivered":1,"markedSeen":0,"unavailable":0,"alreadyRead":0}`, string(out.MastraRead.Result))
	var second struct {
		RecordID string `json:"recordId"`
	}
	require.NoError(t, json.Unmarshal(out.MastraNotify2.Result, &second))
	require.Equal(t, inbox.StatusSeen, e.Record(second.RecordID).Status)
	last := e.Log(k)[len(e.Log(k))-1]
	require.Contains(t, last.XML, `>Jane: ping</notification>`)
	require.True(t, out.MastraNoQuery.IsError)
	require.Equal(t, "bad_request: notification-inbox search requires query", out.MastraNoQuery.Text)
	require.True(t, out.MastraOtherAgent.IsError)
	require.Equal(t, out.OtherAgent.Text, out.MastraOtherAgent.Text)

	// reply: the thread's Slack notification shows where an answer goes; the reply is
	// queued there, the same id again is the same reply, other text under it a conflict.
	var replyList struct {
		Notifications []struct {
			ID      string   `json:"id"`
			ReplyTo reply.To `json:"replyTo"`
		} `json:"notifications"`
	}
	require.NoError(t, json.Unmarshal(out.ReplyList.Result, &replyList))
	require.Len(t, replyList.Notifications, 1)
	require.Equal(t, slack, replyList.Notifications[0].ID)
	require.Equal(t, dmTo, replyList.Notifications[0].ReplyTo)
	for name, r := range map[string]result{"reply": out.Reply, "reply again": out.ReplyAgain, "reply_status": out.ReplyStatus} {
		require.False(t, r.IsError, "%s: %s", name, r.Text)
		var got reply.Reply
		require.NoError(t, json.Unmarshal(r.Result, &got))
		require.Equal(t, "ts-reply-1", got.ID, name)
		require.Equal(t, reply.StatusQueued, got.Status, name)
		require.Equal(t, dmTo, got.To, name)
	}
	require.True(t, out.ReplyConflict.IsError)
	require.Equal(t, `conflict: reply "ts-reply-1": reply id already used for another reply`, out.ReplyConflict.Text)
	require.True(t, out.ReplyForeign.IsError)
	require.Equal(t, "unknown_reply_to: unknown reply destination: replyTo names no place a notification of this thread came from", out.ReplyForeign.Text)
	stored, err := store.NewReplies(e.Store).GetReply(t.Context(), "ts-reply-1")
	require.NoError(t, err)
	require.Equal(t, "On it.", stored.Text)

	rec := e.Record(created.RecordID)
	require.Equal(t, inbox.StatusArchived, rec.Status)
	require.Equal(t, "ts-client", rec.Source)
}

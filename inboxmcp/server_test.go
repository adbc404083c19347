package inboxmcp_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/connectors/kindstest"
	"github.com/signalgate/signalgate/deliverytest"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/inboxmcp"
	"github.com/signalgate/signalgate/server"
	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/store/storetest"
)

var (
	coderThread   = inbox.ThreadKey{Agent: "coder", Resource: "acme/api", Thread: "acme/api#7"}
	supportThread = inbox.ThreadKey{Agent: "support", Resource: "slack:T1", Thread: "dm:U1"}
)

// env is the agent half of the gateway (real store, inbox, dispatcher, agent API) with
// the MCP endpoint mounted as package gateway mounts it.
type env struct {
	*deliverytest.Env
	URL string // of /mcp
}

func newEnv(t *testing.T) *env { t.Helper(); return newEnvWith(t, deliverytest.Config{}) }

// newEnvWith builds the env; each of more adds an MCP option built over the env.
func newEnvWith(t *testing.T, cfg deliverytest.Config, more ...func(*deliverytest.Env) inboxmcp.Option) *env {
	t.Helper()
	e := deliverytest.New(t, cfg)
	srv := server.New(server.Config{}, storetest.Logger(t))
	opts := []inboxmcp.Option{inboxmcp.WithLogger(storetest.Logger(t)), inboxmcp.WithPlaces(kindstest.Places())}
	for _, m := range more {
		opts = append(opts, m(e))
	}
	inboxmcp.New(e.Agents, opts...).Mount(srv.Echo())
	ts := httptest.NewServer(srv.Echo())
	t.Cleanup(ts.Close)
	return &env{Env: e, URL: ts.URL + inboxmcp.Path}
}

type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b.token != "" {
		r.Header.Set("Authorization", "Bearer "+b.token)
	}
	return b.next.RoundTrip(r)
}

// connect opens a session with the SDK's own client over HTTP.
func connect(t *testing.T, url, token string) (*mcp.ClientSession, error) {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "signalgate-test", Version: "1"}, nil)
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url,
		HTTPClient: &http.Client{Transport: bearer{token, http.DefaultTransport}}, MaxRetries: -1}, nil)
	if err == nil {
		t.Cleanup(func() { _ = cs.Close() })
	}
	return cs, err
}

func session(t *testing.T, e *env, token string) *mcp.ClientSession {
	t.Helper()
	cs, err := connect(t, e.URL, token)
	require.NoError(t, err)
	return cs
}

func args(k inbox.ThreadKey, extra map[string]any) map[string]any {
	out := map[string]any{"resourceId": k.Resource, "threadId": k.Thread}
	for key, v := range extra {
		out[key] = v
	}
	return out
}

// call calls a tool that must succeed and decodes its structured result into out.
func call(t *testing.T, cs *mcp.ClientSession, tool string, in map[string]any, out any) {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: in})
	require.NoError(t, err)
	require.False(t, res.IsError, "%s: %s", tool, text(res))
	if out != nil {
		raw, err := json.Marshal(res.StructuredContent)
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(raw, out))
		require.JSONEq(t, string(raw), text(res), "the text content carries the same JSON")
	}
}

// toolError calls a tool that must fail as a tool (not a transport or protocol) error
// and returns the message a model reads.
func toolError(t *testing.T, cs *mcp.ClientSession, tool string, in map[string]any) string {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: in})
	require.NoError(t, err, "a tool error, never a transport error")
	require.True(t, res.IsError, "%s should fail: %s", tool, text(res))
	return text(res)
}

func text(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

type listedNote struct {
	ID      string       `json:"id"`
	Source  string       `json:"source"`
	Kind    string       `json:"kind"`
	Status  inbox.Status `json:"status"`
	Summary string       `json:"summary"`
	Payload any          `json:"payload"`
}

type pageOut struct {
	Notifications []listedNote `json:"notifications"`
	NextCursor    string       `json:"nextCursor"`
}

func ids(ns []listedNote) []string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = n.ID
	}
	return out
}

func TestListTools(t *testing.T) {
	e := newEnv(t)
	cs := session(t, e, deliverytest.CoderToken)
	res, err := cs.ListTools(t.Context(), nil)
	require.NoError(t, err)
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		require.NotEmpty(t, tool.Description, tool.Name)
		raw, err := json.Marshal(tool.InputSchema)
		require.NoError(t, err)
		var sc struct {
			Required   []string       `json:"required"`
			Properties map[string]any `json:"properties"`
			Additional *bool          `json:"additionalProperties"`
		}
		require.NoError(t, json.Unmarshal(raw, &sc))
		require.Subset(t, sc.Required, []string{"resourceId", "threadId"}, tool.Name)
		require.Contains(t, sc.Properties, "agentId", tool.Name)
		require.NotNil(t, sc.Additional, tool.Name)
		require.False(t, *sc.Additional, "%s: unknown arguments are refused", tool.Name)
		readOnly := tool.Name == "inbox_list" || tool.Name == "inbox_search"
		require.Equal(t, readOnly, tool.Annotations.ReadOnlyHint, tool.Name)
	}
	sort.Strings(names)
	require.Equal(t, inboxmcp.ToolNames, names)
}

// TestCallEachTool goes through every tool against the real inbox, and checks that the
// MCP answers are the agent API's.
func TestCallEachTool(t *testing.T) {
	e := newEnv(t)
	cs := session(t, e, deliverytest.CoderToken)
	k := coderThread

	// notify: the agent API's create path (an event whose connector is the agent).
	var created struct {
		EventID  string `json:"eventId"`
		RecordID string `json:"recordId"`
		Merged   bool   `json:"merged"`
	}
	call(t, cs, "notify", args(k, map[string]any{"kind": "ci-failure", "source": "github", "summary": "CI failed on main",
		"priority": "low", "payload": map[string]any{"run": 42}, "attributes": map[string]any{"repo": "acme/api"}}), &created)
	a := created.RecordID
	require.NotEmpty(t, a)
	ev, err := store.NewExplain(e.Store).GetEvent(t.Context(), created.EventID)
	require.NoError(t, err)
	require.Equal(t, "coder", ev.Connector)
	require.JSONEq(t, `{"summary":"CI failed on main","kind":"ci-failure","source":"github","priority":"low","payload":{"run":42},"attributes":{"repo":"acme/api"}}`, string(ev.Body))
	e.Clock.Advance(1e9)
	call(t, cs, "notify", args(k, map[string]any{"kind": "mention", "source": "slack", "summary": "Jane: can you look?", "priority": "low"}), &created)
	b := created.RecordID
	e.Clock.Advance(1e9)
	call(t, cs, "notify", args(k, map[string]any{"kind": "mention", "source": "slack", "summary": "Jane: ping", "priority": "low", "deliveryId": "once"}), &created)
	c := created.RecordID
	call(t, cs, "notify", args(k, map[string]any{"kind": "mention", "source": "slack", "summary": "Jane: ping", "priority": "low", "deliveryId": "once"}), &created)
	require.Equal(t, c, created.RecordID, "a retried notify is a no-op")
	notifyBatch(t, e.Env, cs, inbox.ThreadKey{Agent: k.Agent, Resource: k.Resource, Thread: "batch"})

	// inbox_list: newest first, filters, cursor, no payload; the same page as the API.
	var list pageOut
	call(t, cs, "inbox_list", args(k, nil), &list)
	require.Equal(t, []string{c, b, a}, ids(list.Notifications))
	require.Nil(t, list.Notifications[2].Payload, "listings leave the payload to inbox_read")
	var api struct {
		Notifications []inbox.Record `json:"notifications"`
	}
	require.Equal(t, http.StatusOK, e.Do(http.MethodGet, e.ThreadURL(k, "/notifications"), e.Token(k), nil, &api))
	require.Len(t, api.Notifications, 3)
	for i, r := range api.Notifications {
		require.Equal(t, r.ID, list.Notifications[i].ID)
		require.Equal(t, r.Summary, list.Notifications[i].Summary)
	}
	call(t, cs, "inbox_list", args(k, map[string]any{"source": []string{"slack"}, "limit": 1}), &list)
	require.Equal(t, []string{c}, ids(list.Notifications))
	require.NotEmpty(t, list.NextCursor)
	call(t, cs, "inbox_list", args(k, map[string]any{"source": []string{"slack"}, "limit": 1, "cursor": list.NextCursor}), &list)
	require.Equal(t, []string{b}, ids(list.Notifications))
	call(t, cs, "inbox_list", args(k, map[string]any{"kind": []string{"ci-failure"}}), &list)
	require.Equal(t, []string{a}, ids(list.Notifications))

	// inbox_search.
	call(t, cs, "inbox_search", args(k, map[string]any{"query": "JANE"}), &list)
	require.Equal(t, []string{c, b}, ids(list.Notifications))
	call(t, cs, "inbox_search", args(k, map[string]any{"query": "ci-fail"}), &list)
	require.Equal(t, []string{a}, ids(list.Notifications), "kind matches")

	// Listing and searching changed nothing.
	for _, id := range []string{a, b, c} {
		require.Equal(t, inbox.StatusPending, e.Record(id).Status)
	}

	// inbox_read: full records with payload and XML, marked seen.
	var read struct {
		Notifications []struct {
			ID      string          `json:"id"`
			Payload json.RawMessage `json:"payload"`
			XML     string          `json:"xml"`
		} `json:"notifications"`
	}
	call(t, cs, "inbox_read", args(k, map[string]any{"ids": []string{a}}), &read)
	require.Len(t, read.Notifications, 1)
	require.JSONEq(t, `{"run": 42}`, string(read.Notifications[0].Payload))
	require.Equal(t, `<notification repo="acme/api" id="`+a+`" source="github" type="ci-failure" kind="ci-failure" priority="low" status="delivered" verified_by="agent-token">CI failed on main</notification>`,
		read.Notifications[0].XML)
	require.Equal(t, inbox.StatusSeen, e.Record(a).Status)
	call(t, cs, "inbox_read", args(k, nil), &read)
	require.Len(t, read.Notifications, 2, "the unread ones")
	require.Equal(t, b, read.Notifications[0].ID, "oldest first")
	call(t, cs, "inbox_read", args(k, nil), &read)
	require.Empty(t, read.Notifications)

	// inbox_dismiss, inbox_archive.
	var moved listedNote
	call(t, cs, "inbox_dismiss", args(k, map[string]any{"id": b}), &moved)
	require.Equal(t, inbox.StatusDismissed, moved.Status)
	call(t, cs, "inbox_dismiss", args(k, map[string]any{"id": b}), &moved)
	require.Equal(t, inbox.StatusDismissed, e.Record(b).Status, "repeating is fine")
	call(t, cs, "inbox_archive", args(k, map[string]any{"id": c}), &moved)
	require.Equal(t, inbox.StatusArchived, e.Record(c).Status)
	call(t, cs, "inbox_list", args(k, map[string]any{"status": []string{"archived"}}), &list)
	require.Equal(t, []string{c}, ids(list.Notifications))
}

// TestToolErrors: refusals the agent API gives come back as tool errors with its message.
func TestToolErrors(t *testing.T) {
	e := newEnv(t)
	cs := session(t, e, deliverytest.CoderToken)
	k := coderThread
	var created struct {
		RecordID string `json:"recordId"`
	}
	call(t, cs, "notify", args(k, map[string]any{"kind": "note", "summary": "x"}), &created)
	other := inbox.ThreadKey{Agent: "coder", Resource: k.Resource, Thread: "elsewhere"}

	msg := toolError(t, cs, "inbox_dismiss", args(other, map[string]any{"id": created.RecordID}))
	require.Equal(t, `not_found: notification "`+created.RecordID+`" not found on this thread`, msg, "a record of another thread")
	call(t, cs, "inbox_archive", args(k, map[string]any{"id": created.RecordID}), nil)
	msg = toolError(t, cs, "inbox_dismiss", args(k, map[string]any{"id": created.RecordID}))
	require.Equal(t, `conflict: notification "`+created.RecordID+`" is archived and cannot be marked dismissed`, msg)
	msg = toolError(t, cs, "inbox_read", args(k, map[string]any{"ids": []string{"nope"}}))
	require.Equal(t, `not_found: notifications not found on this thread: "nope"`, msg)
	msg = toolError(t, cs, "inbox_list", args(k, map[string]any{"status": []string{"bogus"}}))
	require.Contains(t, msg, `bad_request: status: unknown "bogus"`)
	msg = toolError(t, cs, "inbox_list", args(k, map[string]any{"cursor": "garbage!"}))
	require.Equal(t, "bad_request: cursor: not a cursor this API returned", msg)

	// Input schemas: checked before anything runs.
	for name, in := range map[string]map[string]any{
		"missing threadId":   {"resourceId": "r"},
		"empty resourceId":   args(inbox.ThreadKey{Thread: "t"}, nil),
		"unknown argument":   args(k, map[string]any{"markSeen": true}),
		"limit out of range": args(k, map[string]any{"limit": 1000}),
		"wrong type":         args(k, map[string]any{"source": "github"}),
		"too many filters":   args(k, map[string]any{"kind": strings.Split(strings.Repeat("x,", 20)+"x", ",")}),
		"id too long":        args(inbox.ThreadKey{Resource: "r", Thread: strings.Repeat("t", 513)}, nil),
	} {
		msg := toolError(t, cs, "inbox_list", in)
		require.Contains(t, msg, "validating", name)
	}
	require.Contains(t, toolError(t, cs, "notify", args(k, map[string]any{"kind": "note"})), "summary", "summary is required")
	require.Contains(t, toolError(t, cs, "notify", args(k, map[string]any{"kind": "note", "summary": "x", "priority": "asap"})), "priority")
	require.Contains(t, toolError(t, cs, "inbox_search", args(k, map[string]any{"query": ""})), "validating")
	require.Contains(t, toolError(t, cs, "inbox_read", args(k, map[string]any{"ids": make([]string, 101)})), "validating")

	// An unknown tool is the protocol's error, not a crash.
	_, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "inbox_delete_everything", Arguments: map[string]any{}})
	require.ErrorContains(t, err, "unknown tool")
}

// TestAuth: the agent's bearer token is required, and another agent's threads are
// refused exactly as the agent API refuses them.
func TestAuth(t *testing.T) {
	e := newEnv(t)
	for name, token := range map[string]string{"no token": "", "wrong token": "not-a-token-0123456789"} {
		_, err := connect(t, e.URL, token)
		require.ErrorContains(t, err, "Unauthorized", name)

		req, err := http.NewRequest(http.MethodPost, e.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode, name)
		require.Equal(t, `Bearer realm="signalgate"`, resp.Header.Get("WWW-Authenticate"), name)
	}

	cs := session(t, e, deliverytest.CoderToken)
	support := supportThread
	var apiErr struct {
		Error struct{ Message string } `json:"error"`
	}
	require.Equal(t, http.StatusForbidden, e.Do(http.MethodGet, e.ThreadURL(support, "/notifications"), deliverytest.CoderToken, nil, &apiErr))
	for _, tool := range inboxmcp.ToolNames {
		in := inboxmcp.MinimalArgs(tool, support.Resource, support.Thread)
		in["agentId"] = "support"
		msg := toolError(t, cs, tool, in)
		require.Equal(t, "forbidden: "+apiErr.Error.Message, msg, tool)
	}
	recs, err := store.NewRecords(e.Store).ThreadRecords(t.Context(), support)
	require.NoError(t, err)
	require.Empty(t, recs, "nothing was written to the other agent's thread")

	require.Equal(t, http.StatusNotFound, e.Do(http.MethodGet, "http://"+strings.TrimPrefix(e.Server.URL, "http://")+
		"/v1/agents/nobody/threads/r/t/notifications", deliverytest.CoderToken, nil, &apiErr))
	msg := toolError(t, cs, "inbox_list", args(inbox.ThreadKey{Resource: "r", Thread: "t"}, map[string]any{"agentId": "nobody"}))
	require.Equal(t, "not_found: "+apiErr.Error.Message, msg)

	// The support agent's own token reaches its threads, and only those.
	css := session(t, e, deliverytest.SupportToken)
	call(t, css, "inbox_list", args(support, nil), nil)
	require.Contains(t, toolError(t, css, "inbox_list", args(coderThread, map[string]any{"agentId": "coder"})), "forbidden")
}

// notifyBatch: notify takes sourceId and Mastra's array form (notifications), answering
// results in input order; both forms at once are refused.
func notifyBatch(t *testing.T, e *deliverytest.Env, cs *mcp.ClientSession, k inbox.ThreadKey) {
	t.Helper()
	var batch struct {
		Results []struct {
			Accepted bool   `json:"accepted"`
			RecordID string `json:"recordId"`
			Record   struct {
				SourceID string `json:"sourceId"`
				Summary  string `json:"summary"`
			} `json:"record"`
		} `json:"results"`
	}
	call(t, cs, "notify", args(k, map[string]any{"notifications": []any{
		map[string]any{"kind": "note", "summary": "batch one", "sourceId": "42", "priority": "low"},
		map[string]any{"kind": "note", "summary": "batch two", "priority": "low"},
	}}), &batch)
	require.Len(t, batch.Results, 2)
	require.Equal(t, "batch one", batch.Results[0].Record.Summary)
	require.Equal(t, "42", batch.Results[0].Record.SourceID)
	require.Equal(t, "batch two", batch.Results[1].Record.Summary)
	require.Contains(t, toolError(t, cs, "notify", args(k, map[string]any{"kind": "note", "summary": "x",
		"notifications": []any{map[string]any{"kind": "note", "summary": "y"}}})), "not both")
	for _, r := range batch.Results {
		_, err := store.NewRecords(e.Store).ThreadRecordsByID(t.Context(), k, []string{r.RecordID})
		require.NoError(t, err)
	}
}

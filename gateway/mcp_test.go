package gateway

import (
	"net/http"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

type bearerTransport string

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

// TestMCPServed: the gateway serves /mcp as docs/mcp.md says, with the agent's token,
// behind the server's shared middleware.
func TestMCPServed(t *testing.T) {
	m := startMain(t, "")
	url := "http://" + m.Addr().String() + "/mcp"
	c := mcp.NewClient(&mcp.Implementation{Name: "gateway-test", Version: "1"}, nil)
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url,
		HTTPClient: &http.Client{Transport: bearerTransport("dev-only-coder-token")}, MaxRetries: -1}, nil)
	require.NoError(t, err)
	defer cs.Close()
	require.Equal(t, "signalgate", cs.InitializeResult().ServerInfo.Name)
	tools, err := cs.ListTools(t.Context(), nil)
	require.NoError(t, err)
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	// The inbox_* tools, notify, notification-inbox and the watch tools (no replies: no
	// connector here sends them).
	require.ElementsMatch(t, []string{"inbox_list", "inbox_read", "inbox_search", "inbox_dismiss", "inbox_archive", "inbox_snooze",
		"notify", "notification-inbox", "watch", "unwatch", "watches"}, names)
	thread := map[string]any{"resourceId": "acme/api", "threadId": "acme/api#1"}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "notify",
		Arguments: map[string]any{"resourceId": "acme/api", "threadId": "acme/api#1", "kind": "note", "summary": "hello"}})
	require.NoError(t, err)
	require.False(t, res.IsError)
	res, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "inbox_list", Arguments: thread})
	require.NoError(t, err)
	require.False(t, res.IsError)
	require.Contains(t, res.StructuredContent, "notifications")

	for _, method := range []string{http.MethodGet, http.MethodDelete} {
		req, err := http.NewRequest(method, url, nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer dev-only-coder-token")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode, method)
	}
}

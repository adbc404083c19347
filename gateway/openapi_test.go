package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/admin"
	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/store/storetest"
)

// TestOpenAPIMatchesMain builds the whole gateway with every kind of connector and
// checks its registered routes against the served document, both ways: a route the
// document lacks fails, and so does a documented path nothing serves.
func TestOpenAPIMatchesMain(t *testing.T) {
	// Runtimes that report their runs mount their kinds' endpoints: a langgraph agent's
	// run webhooks, an a2a agent's push notifications, the hosted session kinds' session
	// webhooks.
	path := writeConfig(t, t.TempDir(), `
admin: { tokens: [ { name: ops, token: "ops-token-0123456789", scopes: [read, write] } ] }
connectors:
  github: [ { name: acme, secret: "gh-secret-0123456789" } ]
  slack: [ { name: acme, signing_secret: "slack-secret-0123456" } ]
  generic: [ { name: billing, secret: "`+billingSecret+`" } ]
`)
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	raw = bytes.Replace(raw, []byte("agents: [ { id: coder, token: dev-only-coder-token } ]"), []byte(`agents:
  - { id: coder, token: dev-only-coder-token }
  - id: graph
    target: { kind: langgraph, url: "http://127.0.0.1:9", assistant_id: a, callback_url: "http://127.0.0.1:8080", callback_token: "callback-token-0123456789" }
  - { id: helper, target: { kind: a2a, url: "http://127.0.0.1:1/helper", callback_url: "http://127.0.0.1:2" } }
  - id: oai
    target: { kind: openai-agents, api_key: k, base_url: "http://127.0.0.1:9/v1", agent_id: a, environment_id: e, webhook_secret: "`+hostedWebhookSecret+`" }
  - id: claude
    target: { kind: claude-agents, api_key: k, base_url: "http://127.0.0.1:9", agent_id: a, environment_id: e, webhook_secret: "`+hostedWebhookSecret+`" }`), 1)
	require.NoError(t, os.WriteFile(path, raw, 0o600))
	cfg, err := LoadConfig(path, noEnv)
	require.NoError(t, err)
	m := New(cfg, storetest.Logger(t))
	require.NoError(t, m.Open(context.Background()))
	t.Cleanup(func() { require.NoError(t, m.Close()) })
	routes := m.Server.Echo().Routes()
	missing, err := admin.MissingFromOpenAPI(routes)
	require.NoError(t, err)
	require.Empty(t, missing, "routes the OpenAPI document does not describe")

	raw, err = admin.OpenAPI(admin.Kinds{})
	require.NoError(t, err)
	var doc struct {
		Paths map[string]map[string]any `json:"paths"`
	}
	require.NoError(t, json.Unmarshal(raw, &doc))
	served := map[string]bool{}
	for _, r := range routes {
		if r.Method == echo.RouteNotFound {
			continue
		}
		parts := strings.Split(r.Path, "/")
		for i, p := range parts {
			if strings.HasPrefix(p, ":") {
				parts[i] = "{" + p[1:] + "}"
			}
		}
		served[strings.ToLower(r.Method)+" "+strings.Join(parts, "/")] = true
	}
	for path, ops := range doc.Paths {
		for method := range ops {
			require.True(t, served[method+" "+path], "documented but not served: %s %s", method, path)
		}
	}
}

// An approval's origin is the agent API or a target kind whose runtime reports its runs,
// as the target table says: every runtime kind is listed, and no kind that cannot ask.
func TestApprovalOriginsAreTheRuntimeKinds(t *testing.T) {
	m := startMain(t, "")
	doc := get(t, "http://"+m.Addr().String()+"/openapi.json", "")
	want := []any{"api"}
	for _, k := range builtinTargets() {
		if k.presence() == agent.PresenceRuntime {
			want = append(want, k.kind())
		}
	}
	require.Equal(t, want, schemaEnum(t, doc, "Approval", "origin"))
	require.Contains(t, want, "langgraph")
	require.NotContains(t, want, "webhook")
}

package gateway

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/admin"
)

// TestOpenAPIMatchesMain builds the whole gateway with every kind of connector and
// checks its registered routes against the served document, both ways: a route the
// document lacks fails, and so does a documented path nothing serves.
func TestOpenAPIMatchesMain(t *testing.T) {
	m := startMain(t, `
admin: { tokens: [ { name: ops, token: "ops-token-0123456789", scopes: [read, write] } ] }
connectors:
  github: [ { name: acme, secret: "gh-secret-0123456789" } ]
  slack: [ { name: acme, signing_secret: "slack-secret-0123456" } ]
  generic: [ { name: billing, secret: "`+billingSecret+`" } ]
`)
	routes := m.Server.Echo().Routes()
	missing, err := admin.MissingFromOpenAPI(routes)
	require.NoError(t, err)
	require.Empty(t, missing, "routes the OpenAPI document does not describe")

	raw, err := admin.OpenAPI(admin.Kinds{})
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

package admin_test

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/admin"
	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/agentapi"
	"github.com/signalgate/signalgate/connectors/generic"
	"github.com/signalgate/signalgate/connectors/github"
	"github.com/signalgate/signalgate/connectors/slack"
)

// TestOpenAPICoversAdminAndAgentRoutes mounts the admin and agent APIs as they are
// and checks every registered route against the document.
func TestOpenAPICoversAdminAndAgentRoutes(t *testing.T) {
	en := newEnv(t, envOpts{})
	e := echo.New()
	en.api.Mount(e)
	svc, err := agent.NewService([]agent.Config{{ID: "coder", Token: "coder-token-0123456789"}}, agent.Deps{})
	require.NoError(t, err)
	agentapi.New(svc, nil, nil).Mount(e)
	for _, p := range []string{github.RoutePath, slack.RoutePath, slack.InteractionsPath, generic.RoutePath} {
		e.POST(p, func(echo.Context) error { return nil })
	}
	missing, err := admin.MissingFromOpenAPI(e.Routes())
	require.NoError(t, err)
	require.Empty(t, missing)

	// And the check does catch a route the document lacks.
	e.GET(admin.Prefix+"/undocumented", func(echo.Context) error { return nil })
	missing, err = admin.MissingFromOpenAPI(e.Routes())
	require.NoError(t, err)
	require.Equal(t, []string{"GET /admin/v1/undocumented"}, missing)
}

// TestOpenAPIDocumentIsConsistent: 3.1, every $ref resolves, every path template's
// parameters are declared, every operation has an id and responses.
func TestOpenAPIDocumentIsConsistent(t *testing.T) {
	raw, err := admin.OpenAPI(admin.Enums{Sources: []string{"github", "slack", "email", "generic"}})
	require.NoError(t, err)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(raw, &doc))
	require.Equal(t, "3.1.0", doc["openapi"])

	var refs []string
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if r, ok := x["$ref"].(string); ok {
				refs = append(refs, r)
			}
			for _, c := range x {
				walk(c)
			}
		case []any:
			for _, c := range x {
				walk(c)
			}
		}
	}
	walk(doc)
	require.NotEmpty(t, refs)
	for _, r := range refs {
		parts := strings.Split(strings.TrimPrefix(r, "#/"), "/")
		var cur any = doc
		for _, p := range parts {
			m, ok := cur.(map[string]any)
			require.True(t, ok, "ref %s", r)
			cur, ok = m[p]
			require.True(t, ok, "ref %s does not resolve", r)
		}
	}

	ids := map[string]bool{}
	tmpl := regexp.MustCompile(`\{([^}]+)\}`)
	for path, item := range doc["paths"].(map[string]any) {
		for method, op := range item.(map[string]any) {
			o := op.(map[string]any)
			id, _ := o["operationId"].(string)
			require.NotEmpty(t, id, "%s %s", method, path)
			require.False(t, ids[id], "duplicate operationId %s", id)
			ids[id] = true
			require.NotEmpty(t, o["responses"], id)
			declared := map[string]bool{}
			params, _ := o["parameters"].([]any)
			for _, p := range params {
				pm := p.(map[string]any)
				if pm["in"] == "path" {
					declared[pm["name"].(string)] = true
					require.Equal(t, true, pm["required"], "%s: path parameters are required", id)
				}
			}
			for _, m := range tmpl.FindAllStringSubmatch(path, -1) {
				require.True(t, declared[m[1]], "%s: path parameter %s not declared", id, m[1])
				delete(declared, m[1])
			}
			require.Empty(t, declared, "%s declares path parameters its path lacks", id)
			if strings.HasPrefix(path, admin.Prefix) {
				require.Equal(t, []any{map[string]any{"adminToken": []any{}}}, o["security"], id)
			}
		}
	}
}

func TestOpenAPIServed(t *testing.T) {
	en := newEnv(t, envOpts{})
	code, raw := en.do(http.MethodGet, "/openapi.json", "", nil)
	require.Equal(t, http.StatusOK, code, "the document needs no token")
	want, err := admin.OpenAPI(admin.Enums{Sources: []string{"github", "slack", "email", "generic"}})
	require.NoError(t, err)
	require.Equal(t, string(want), string(raw))
}

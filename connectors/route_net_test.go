package connectors

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRouteNetStateTemplates(t *testing.T) {
	routes := decodeRoutes(t, `
routes:
  - name: invoices
    match: { source: generic, kind: invoice-status }
    thread: { agent: coder, resource: billing, thread: "{{.Extra.customer}}" }
    net_key: "invoice:{{.Extra.invoice}}"
    state: "{{.Extra.status}}"
    rest_state: paid
  - name: ci
    match: { source: github }
    thread: { agent: coder, resource: "{{.Repo}}", thread: "{{.Repo}}#{{.Number}}" }
  - name: renamed
    match: { source: github }
    thread: { agent: support, resource: "{{.Repo}}", thread: "all" }
    net_key: "{{.Repo}}:ci"
`)
	r, err := NewRouter(routes, []string{"coder", "support"})
	require.NoError(t, err)

	inv := Item{Kind: "invoice-status", Summary: "Invoice 12 is overdue",
		Fields: Fields{Source: "generic", Extra: map[string]string{"customer": "acme", "invoice": "12", "status": "overdue"}}}
	ns, errs := r.Route([]Item{inv})
	require.Empty(t, errs)
	require.Len(t, ns, 1)
	require.Equal(t, "invoice:12", ns[0].NetKey)
	require.Equal(t, "overdue", ns[0].State)
	require.Equal(t, "paid", ns[0].RestState)

	gh := Item{Kind: "ci-failure", Summary: "lint failed", NetKey: "github:acme/api#7:ci:check_run:lint", State: "failure",
		RestState: "success", Fields: Fields{Source: "github", Repo: "acme/api", Number: 7}}
	ns, errs = r.Route([]Item{gh})
	require.Empty(t, errs)
	require.Len(t, ns, 2)
	require.Equal(t, gh.NetKey, ns[0].NetKey, "a route without templates keeps the connector's lane")
	require.Equal(t, "failure", ns[0].State)
	require.Equal(t, "acme/api:ci", ns[1].NetKey, "a template replaces only its own value")
	require.Equal(t, "failure", ns[1].State)
	require.Equal(t, "success", ns[1].RestState)

	// A template that renders empty leaves the lane out, and a state without a lane goes.
	noInvoice := inv
	noInvoice.Fields.Extra = map[string]string{"customer": "acme", "status": "overdue"}
	noInvoice.Fields.Extra["invoice"] = ""
	r2, err := NewRouter(decodeRoutes(t, `
routes:
  - name: invoices
    match: { source: generic }
    thread: { agent: coder, resource: billing, thread: "{{.Extra.customer}}" }
    net_key: "{{.Extra.invoice}}"
    state: "{{.Extra.status}}"
`), []string{"coder"})
	require.NoError(t, err)
	ns, _ = r2.Route([]Item{noInvoice})
	require.Len(t, ns, 1)
	require.Empty(t, ns[0].NetKey)
	require.Empty(t, ns[0].State)
	require.NoError(t, ns[0].Validate())
}

func TestRouteNetStateTemplateErrors(t *testing.T) {
	_, err := NewRouter(decodeRoutes(t, `
routes:
  - name: bad
    match: { source: generic }
    thread: { agent: coder, resource: billing, thread: t }
    net_key: "{{.Invoice}}"
    state: "{{.Extra.status"
`), []string{"coder"})
	require.Error(t, err)
	require.Contains(t, err.Error(), "routes[0].net_key: ")
	require.Contains(t, err.Error(), "routes[0].state: ")
}

package connectors

import (
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/signalgate/signalgate/inbox"
)

const routesYAML = `
routes:
  - name: ci
    match: { source: github, kind: [ci-failure, ci-recovered] }
    thread: { agent: coder, resource: "{{.Repo}}", thread: "{{.Repo}}#{{.Number}}" }
  - name: dms
    match: { source: slack, channel_type: im }
    thread: { agent: support, resource: "slack:{{.Team}}", thread: "dm:{{.User}}" }
    priority: urgent
  - name: triage
    match: { source: github, repo: "acme/*", labels: [bug, p1], number: 7 }
    thread: { agent: coder, resource: "{{.Repo}}", thread: "triage" }
    attributes: { team: platform, sla: 4, paged: true }
  - name: billing
    match: { source: generic, extra: { customer: [acme, globex] } }
    thread: { agent: support, resource: "billing", thread: "{{.Extra.customer}}" }
    deliver_as: queued-message
`

func decodeRoutes(t *testing.T, src string) []RouteConfig {
	t.Helper()
	var doc struct {
		Routes []RouteConfig `yaml:"routes"`
	}
	dec := yaml.NewDecoder(strings.NewReader(src))
	dec.KnownFields(true)
	require.NoError(t, dec.Decode(&doc))
	return doc.Routes
}

func TestRoutesFromYAML(t *testing.T) {
	routes := decodeRoutes(t, routesYAML)
	require.Len(t, routes, 4)
	assert.Equal(t, inbox.StringList{"ci-failure", "ci-recovered"}, routes[0].Match.Kind)
	assert.Equal(t, inbox.StringList{"im"}, routes[1].Match.ChannelType)
	assert.Equal(t, inbox.PriorityUrgent, routes[1].Priority)
	assert.Equal(t, inbox.StringList{"7"}, routes[2].Match.Number)
	assert.Equal(t, RouteAttributes{{Key: "team", Value: "platform"}, {Key: "sla", Value: int64(4)}, {Key: "paged", Value: true}}, routes[2].Attributes)
	assert.Equal(t, inbox.StringList{"acme", "globex"}, routes[3].Match.Extra["customer"])
	_, err := NewRouter(routes, []string{"coder", "support"})
	require.NoError(t, err)
}

func TestRouteValidation(t *testing.T) {
	routes := []RouteConfig{
		{Name: "ok", Thread: ThreadConfig{Agent: "coder", Resource: "r", Thread: "t"}},
		{Name: "bad-agent", Thread: ThreadConfig{Agent: "codr", Resource: "{{.Repo}}", Thread: "t"}},
		{Name: "", Match: RouteMatch{Source: inbox.StringList{"gihub"}, Kind: inbox.StringList{""}},
			Thread: ThreadConfig{Agent: "coder", Resource: "{{.Repo", Thread: "{{.Rpo}}"}},
		{Name: "opts", Thread: ThreadConfig{Agent: "coder", Resource: "r"}, Priority: "asap", DeliverAs: "email",
			Match: RouteMatch{Repo: inbox.StringList{"acme/[x"}}},
		{Name: "ok", Thread: ThreadConfig{Agent: "coder", Resource: "r", Thread: "t"}},
	}
	_, err := NewRouter(routes, []string{"coder"}, WithSources("github", "slack", "email", "generic"))
	require.Error(t, err)
	msg := err.Error()
	for _, want := range []string{
		`routes[1].thread.agent: unknown agent "codr"`,
		`routes[2].name: required`,
		`routes[2].match.source[0]: unknown source "gihub" (want github, slack, email, generic)`,
		`routes[2].match.kind[0]: empty value`,
		`routes[2].thread.resource: template: resource:1: unclosed action`,
		`routes[2].thread.thread: template: thread:1:2: executing "thread" at <.Rpo>: can't evaluate field Rpo`,
		`routes[3].thread.thread: required`,
		`routes[3].priority: unknown "asap"`,
		`routes[3].deliver_as: unknown "email"`,
		`routes[3].match.repo[0]: bad pattern "acme/[x"`,
		`routes[4].name: duplicate route name "ok" (also routes[0])`,
	} {
		assert.Contains(t, msg, want)
	}
	assert.Len(t, strings.Split(msg, "\n"), 11, msg)
}

func githubItem() Item {
	return Item{
		Kind: "comment", Priority: inbox.PriorityMedium, Summary: "alice commented on acme/api#7",
		DedupeKey: "github:acme/api#7:comment:1", CoalesceKey: "github:acme/api#7:comment",
		Attributes: inbox.Attributes{}.Set("repo", "acme/api").Set("number", 7).Set("author", "alice"),
		Metadata:   map[string]any{MetaVerifiedBy: "hmac-github", MetaAuthor: "alice"},
		Fields: Fields{Source: "github", Connector: "acme", Kind: "comment", Repo: "acme/api", Number: 7,
			Author: "alice", Labels: []string{"P1", "backend"}},
		Message: &Message{Name: "alice", From: "github", Text: "please rebase"},
	}
}

func TestRouterMatching(t *testing.T) {
	routes := decodeRoutes(t, routesYAML)
	routes = append(routes,
		RouteConfig{Name: "comments", Match: RouteMatch{Source: inbox.StringList{"GitHub"}, Kind: inbox.StringList{"comment"}},
			Thread: ThreadConfig{Agent: "coder", Resource: "{{.Repo}}", Thread: "{{.Repo}}#{{.Number}}"}},
		// Same thread as "comments": must not produce a second notification.
		RouteConfig{Name: "dup-thread", Match: RouteMatch{Author: inbox.StringList{"ALICE"}},
			Thread: ThreadConfig{Agent: "coder", Resource: "{{.Repo}}", Thread: "{{.Repo}}#{{.Number}}"}},
		RouteConfig{Name: "empty", Match: RouteMatch{Source: inbox.StringList{"github"}},
			Thread: ThreadConfig{Agent: "coder", Resource: "{{.Team}}", Thread: "x"}},
	)
	r, err := NewRouter(routes, []string{"coder", "support"})
	require.NoError(t, err)

	ns, errs := r.Route([]Item{githubItem()})
	require.Len(t, errs, 1)
	assert.Contains(t, errs[0].Error(), `route "empty": thread.resource rendered empty`)
	require.Len(t, ns, 2)

	triage := ns[0]
	assert.Equal(t, "triage", triage.Route)
	assert.Equal(t, inbox.ThreadKey{Agent: "coder", Resource: "acme/api", Thread: "triage"}, triage.Thread)
	assert.Equal(t, "repo=acme/api number=7 author=alice team=platform sla=4 paged=true", attrString(triage.Attributes))
	assert.Equal(t, inbox.PriorityMedium, triage.Priority)
	assert.Equal(t, "github", triage.Source)
	assert.Equal(t, "comment", triage.Kind)
	assert.Equal(t, "github:acme/api#7:comment:1", triage.DedupeKey)
	assert.Equal(t, "hmac-github", triage.Metadata[MetaVerifiedBy])

	assert.Equal(t, "comments", ns[1].Route)
	assert.Equal(t, inbox.ThreadKey{Agent: "coder", Resource: "acme/api", Thread: "acme/api#7"}, ns[1].Thread)

	skipped := githubItem()
	skipped.Skip = "written by bot x"
	ns, errs = r.Route([]Item{skipped})
	assert.Empty(t, ns)
	assert.Empty(t, errs)
}

func attrString(a inbox.Attributes) string {
	var parts []string
	for _, kv := range a {
		parts = append(parts, kv.Key+"="+inbox.FormatValue(kv.Value))
	}
	return strings.Join(parts, " ")
}

func TestRouterOverridesAndMessages(t *testing.T) {
	r, err := NewRouter(decodeRoutes(t, routesYAML), []string{"coder", "support"})
	require.NoError(t, err)

	dm := Item{Kind: "message", Priority: inbox.PriorityMedium, Summary: "U1 wrote in a DM",
		Fields: Fields{Source: "slack", Team: "T1", User: "U1", ChannelType: "im"}}
	ns, errs := r.Route([]Item{dm})
	require.Empty(t, errs)
	require.Len(t, ns, 1)
	assert.Equal(t, inbox.PriorityUrgent, ns[0].Priority)
	assert.Equal(t, inbox.ThreadKey{Agent: "support", Resource: "slack:T1", Thread: "dm:U1"}, ns[0].Thread)

	bill := Item{Kind: "invoice.failed", Summary: "Invoice 42 failed", Attributes: inbox.Attributes{}.Set("customer", "globex"),
		Fields: Fields{Source: "generic", Author: "billing-svc", Extra: map[string]string{"customer": "Globex"}}}
	ns, errs = r.Route([]Item{bill})
	require.Empty(t, errs)
	require.Len(t, ns, 1)
	n := ns[0]
	assert.Equal(t, inbox.DeliverAsQueued, n.DeliverAs)
	assert.Equal(t, inbox.ThreadKey{Agent: "support", Resource: "billing", Thread: "Globex"}, n.Thread)
	assert.Equal(t, "Invoice 42 failed", n.Summary, "no message text: the summary is the message")
	assert.Equal(t, "name=billing-svc from=generic customer=globex", attrString(n.Attributes))
	require.NoError(t, n.Validate())

	bill.Message = &Message{Name: "Billing", From: "stripe", Text: "Card declined for invoice 42"}
	ns, _ = r.Route([]Item{bill})
	require.Len(t, ns, 1)
	assert.Equal(t, "Card declined for invoice 42", ns[0].Summary)
	assert.Equal(t, "name=Billing from=stripe customer=globex", attrString(ns[0].Attributes))

	bill.Fields.Extra["customer"] = "initech"
	ns, _ = r.Route([]Item{bill})
	assert.Empty(t, ns)
}

func TestTemplatedAgent(t *testing.T) {
	r, err := NewRouter([]RouteConfig{{
		Name:   "by-label",
		Thread: ThreadConfig{Agent: `{{index .Extra "agent"}}`, Resource: "r", Thread: "t"},
	}}, []string{"coder"})
	require.NoError(t, err)
	ns, errs := r.Route([]Item{{Kind: "x", Fields: Fields{Source: "generic", Extra: map[string]string{"agent": "coder"}}}})
	require.Empty(t, errs)
	require.Len(t, ns, 1)
	_, errs = r.Route([]Item{{Kind: "x", Fields: Fields{Source: "generic", Extra: map[string]string{"agent": "intruder"}}}})
	require.Len(t, errs, 1)
	assert.Contains(t, errs[0].Error(), `unknown agent "intruder"`)
}

func TestTemplateFuncs(t *testing.T) {
	r, err := NewRouter([]RouteConfig{{
		Name:   "f",
		Thread: ThreadConfig{Agent: "coder", Resource: `{{.Repo | lower | replace "/" "-"}}`, Thread: `{{default "main" .Branch}}`},
	}}, []string{"coder"})
	require.NoError(t, err)
	ns, errs := r.Route([]Item{{Kind: "push", Fields: Fields{Source: "github", Repo: "Acme/API"}}})
	require.Empty(t, errs)
	require.Len(t, ns, 1)
	assert.Equal(t, inbox.ThreadKey{Agent: "coder", Resource: "acme-api", Thread: "main"}, ns[0].Thread)
}

// TestFieldsListEveryMatchKey: the one list of route fields covers every key a
// route's match can name (extra and when aside: they are matched on their own), so
// matching, validation and explain agree.
func TestFieldsListEveryMatchKey(t *testing.T) {
	listed := map[string]bool{}
	for _, fl := range fields() {
		if fl.want != nil {
			listed[fl.key] = true
		}
	}
	rt := reflect.TypeOf(RouteMatch{})
	for i := range rt.NumField() {
		key, _, _ := strings.Cut(rt.Field(i).Tag.Get("yaml"), ",")
		if key == "extra" || key == "when" {
			continue
		}
		assert.True(t, listed[key], "match.%s is matched", key)
		delete(listed, key)
	}
	assert.Empty(t, listed, "every listed key is a match key")
}

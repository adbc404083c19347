package load

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/signalgate/signalgate/inbox"
)

// The shipped storm runs the repository's config.yaml as committed — its agents, routes,
// policy and everything else — with only what the storm needs put in: the storm's GitHub
// and Slack connectors, and the server, storage and log sections scripts/load.sh writes.
// The shipped routes use the thread templates of the tuned config's, so the storm follows
// the same threads; TestShippedConfigRoutesTheStorm keeps the two in step.

// shippedDropped are the shipped config's sections the load script writes itself.
var shippedDropped = []string{"server", "storage", "log"}

// ShippedConfig is raw (the shipped config.yaml) made ready for the storm: server, storage
// and log removed, connectors.github and connectors.slack replaced by the storm's entries,
// every other key and its comments left as they are.
func (s StormScenario) ShippedConfig(raw []byte) (string, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(raw, &root); err != nil {
		return "", fmt.Errorf("read the shipped config: %w", err)
	}
	if root.Kind != yaml.DocumentNode || len(root.Content) != 1 || root.Content[0].Kind != yaml.MappingNode {
		return "", errors.New("read the shipped config: not a YAML mapping")
	}
	doc := root.Content[0]
	for _, k := range shippedDropped {
		deleteKey(doc, k)
	}
	conns := valueOf(doc, "connectors")
	if conns == nil {
		conns = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		doc.Content = append(doc.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "connectors"}, conns)
	}
	if conns.Kind != yaml.MappingNode {
		return "", errors.New("read the shipped config: connectors is not a mapping")
	}
	github, slack := s.connectorEntries()
	for _, c := range []struct{ key, entry string }{{"github", github}, {"slack", slack}} {
		var entry yaml.Node
		if err := yaml.Unmarshal([]byte("[ "+c.entry+" ]"), &entry); err != nil {
			return "", fmt.Errorf("render the storm's %s connector: %w", c.key, err)
		}
		setKey(conns, c.key, entry.Content[0])
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&root); err != nil {
		return "", fmt.Errorf("write the shipped config: %w", err)
	}
	if err := enc.Close(); err != nil {
		return "", fmt.Errorf("write the shipped config: %w", err)
	}
	return buf.String(), nil
}

// valueOf is the value of key in mapping m, nil when m has none.
func valueOf(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

func deleteKey(m *yaml.Node, key string) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content = append(m.Content[:i], m.Content[i+2:]...)
			return
		}
	}
}

// setKey replaces key's value in mapping m, keeping the key's comments; a missing key is
// added at the end.
func setKey(m *yaml.Node, key string, v *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			old := m.Content[i+1]
			v.LineComment, v.FootComment = old.LineComment, old.FootComment
			m.Content[i+1] = v
			return
		}
	}
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, v)
}

// envRef is a ${VAR} or ${VAR:-default} reference, as the gateway interpolates them.
var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(:-([^}]*))?\}`)

// ShippedAgent is the agent whose threads the storm follows on the shipped config: its
// first agent, with the token the gateway reads for it (${VAR} and ${VAR:-default}
// resolved through lookup, as the gateway resolves them).
func ShippedAgent(raw []byte, lookup func(string) (string, bool)) (id, token string, err error) {
	var c struct {
		Agents []struct {
			ID    string `yaml:"id"`
			Token string `yaml:"token"`
		} `yaml:"agents"`
	}
	if err := yaml.Unmarshal(raw, &c); err != nil {
		return "", "", fmt.Errorf("read the shipped config's agents: %w", err)
	}
	if len(c.Agents) == 0 || c.Agents[0].ID == "" {
		return "", "", errors.New("the shipped config has no agent for the storm to follow")
	}
	var unset []string
	token = envRef.ReplaceAllStringFunc(c.Agents[0].Token, func(ref string) string {
		m := envRef.FindStringSubmatch(ref)
		if v, ok := lookup(m[1]); ok {
			return v
		}
		if m[2] == "" {
			unset = append(unset, m[1])
		}
		return m[3]
	})
	if len(unset) > 0 {
		return "", "", fmt.Errorf("agents[0].token: environment variable %s is not set", strings.Join(unset, ", "))
	}
	return c.Agents[0].ID, token, nil
}

// StormSample is one kind of event the storm sends, as it sends it, and the thread the
// storm follows it on.
type StormSample struct {
	Name      string // what it is: "check_run failure", "slack dm"…
	Source    string // github or slack
	Connector string
	Header    http.Header
	Body      []byte
	Thread    inbox.ThreadKey
	Urgent    bool
}

// Samples is one event of every kind the storm sends (its bodies built from the octokit
// examples in dir), each with the thread the storm expects it on.
func (s StormScenario) Samples(dir string) ([]StormSample, error) {
	ex, err := loadOctokit(dir, "check_run", "issue_comment", "pull_request_review", "pull_request_review_comment", "push", "secret_scanning_alert")
	if err != nil {
		return nil, err
	}
	b := &stormBuilder{s: s, ex: ex, runID: "sample", rnd: rand.New(rand.NewPCG(16, 16))}
	first := map[string]inbox.ThreadKey{}
	for _, th := range s.stormThreads() {
		if _, ok := first[th.group]; !ok {
			first[th.group] = th.key
		}
	}
	pr := func(k inbox.ThreadKey) int {
		var n int
		_, _ = fmt.Sscanf(k.Thread[strings.LastIndex(k.Thread, "#")+1:], "%d", &n)
		return n
	}
	type build struct {
		name, group string
		req         func(k inbox.ThreadKey) (*request, error)
	}
	builds := []build{
		{"pull_request_review_comment", stormBurst, func(k inbox.ThreadKey) (*request, error) { return b.reviewComment(pr(k), 0) }},
		{"issue_comment on a pull request", stormBurst, func(k inbox.ThreadKey) (*request, error) { return b.issueComment(pr(k), 0) }},
		{"check_run failure", stormCI, func(k inbox.ThreadKey) (*request, error) { return b.checkRun(pr(k), "lint", "failure") }},
		{"check_run success", stormCI, func(k inbox.ThreadKey) (*request, error) { return b.checkRun(pr(k), "test", "success") }},
		{"pull_request_review", stormReview, func(k inbox.ThreadKey) (*request, error) { return b.review(pr(k), 1) }},
		{"issue_comment on a reviewed pull request", stormReview, func(k inbox.ThreadKey) (*request, error) { return b.issueComment(pr(k), 1) }},
		{"push to the default branch", stormPush, func(k inbox.ThreadKey) (*request, error) { return b.push(k.Resource) }},
		{"slack dm", stormDM, func(k inbox.ThreadKey) (*request, error) { return b.dm(strings.TrimPrefix(k.Thread, "dm:"), 0) }},
		{"secret_scanning_alert", stormSecurity, func(inbox.ThreadKey) (*request, error) { return b.secretAlert(900) }},
	}
	out := make([]StormSample, 0, len(builds))
	for _, bd := range builds {
		k := first[bd.group]
		req, err := bd.req(k)
		if err != nil {
			return nil, fmt.Errorf("storm sample %s: %w", bd.name, err)
		}
		source, connector, _ := strings.Cut(strings.TrimPrefix(req.path, "/webhooks/"), "/")
		out = append(out, StormSample{Name: bd.name, Source: source, Connector: connector, Header: req.header, Body: req.body,
			Thread: k, Urgent: bd.group == stormSecurity})
	}
	return out, nil
}

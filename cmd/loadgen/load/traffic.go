package load

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/stdwebhooks"
)

// issueCommentExample is a real GitHub issue_comment (created) delivery from
// @octokit/webhooks-examples (MIT); each event gets its own repo, issue and comment ids.
//
//go:embed payloads/issue_comment.created.json
var issueCommentExample []byte

// Sources the generator speaks.
const (
	SourceGitHub  = "github"
	SourceSlack   = "slack"
	SourceGeneric = "generic"
)

// Scenario names what the gateway must be configured with; Config embeds it and
// GatewayConfig renders the matching connectors and routes.
type Scenario struct {
	Agent      string // the stream agent every route targets
	AgentToken string
	Connector  string // the name of each source's connector
	GitHubSecret,
	SlackSecret,
	GenericSecret string // whsec_<base64>
	SlackTeam, SlackBot string
	// Runtime, when set, makes Agent a runtime's target (langgraph, a2a) instead of a
	// stream agent.
	Runtime *Runtime
}

// DefaultScenario is what scripts/load.sh and the tests configure.
func DefaultScenario() Scenario {
	return Scenario{
		Agent: "loadgen", AgentToken: "loadgen-agent-token", Connector: "load",
		GitHubSecret: "loadgen-github-secret", SlackSecret: "loadgen-slack-signing-secret",
		GenericSecret: "whsec_bG9hZGdlbi1nZW5lcmljLXNlY3JldA==", SlackTeam: "T0LOAD", SlackBot: "U0LOADBOT",
	}
}

// GatewayConfig is the config.yaml part (agents, connectors, routes, policy) that makes
// a gateway answer this scenario: every event becomes one notification, delivered at
// once (policy default deliver) into its thread, so each signal carries one marker.
func (s Scenario) GatewayConfig() string {
	return fmt.Sprintf(`agents:
  - { id: %[1]s, token: %[2]q, target: %[9]s }
%[8]sconnectors:
  github:  [ { name: %[3]s, secret: %[4]q } ]
  slack:   [ { name: %[3]s, signing_secret: %[5]q, bot_user_id: %[7]s } ]
  generic: [ { name: %[3]s, secret: %[6]q } ]
routes:
  - { name: load-github, match: { source: github, connector: %[3]s }, thread: { agent: %[1]s, resource: "{{.Repo}}", thread: "{{.Repo}}" } }
  - { name: load-slack, match: { source: slack, connector: %[3]s }, thread: { agent: %[1]s, resource: "slack:{{.Team}}", thread: "{{.Channel}}" } }
  - { name: load-generic, match: { source: generic, connector: %[3]s }, thread: { agent: %[1]s, resource: "{{.Repo}}", thread: "{{.Repo}}" } }
policy: { default: { action: deliver } }
`, s.Agent, s.AgentToken, s.Connector, s.GitHubSecret, s.SlackSecret, s.GenericSecret, s.SlackBot, s.watchAgents(), s.target())
}

// WatchAgents hold the background watches of --watches: watches.max_per_agent (10,000)
// each, so MaxWatches of them need this many.
const WatchAgents = MaxWatches / 10_000

// WatchAgent is background watch agent i: its id and token.
func (s Scenario) WatchAgent(i int) (id, token string) {
	return fmt.Sprintf("%s-w%d", s.Agent, i), fmt.Sprintf("%s-w%d", s.AgentToken, i)
}

// watchAgents are the agents: entries of the background watch agents; they may watch
// the Slack connector, and nobody follows their threads.
func (s Scenario) watchAgents() string {
	var b strings.Builder
	for i := range WatchAgents {
		id, token := s.WatchAgent(i)
		fmt.Fprintf(&b, "  - { id: %s, token: %q, target: { kind: stream }, watch_connectors: [slack/%s] }\n", id, token, s.Connector)
	}
	return b.String()
}

// ThreadFor names thread i: its source is the i-th of sources, round-robin, and its key
// follows the routes of GatewayConfig.
func (s Scenario) ThreadFor(i int, sources []string) (string, inbox.ThreadKey) {
	src := sources[i%len(sources)]
	switch src {
	case SourceSlack:
		return src, inbox.ThreadKey{Agent: s.Agent, Resource: "slack:" + s.SlackTeam, Thread: slackChannel(i)}
	case SourceGeneric:
		r := fmt.Sprintf("loadgen/g%d", i)
		return src, inbox.ThreadKey{Agent: s.Agent, Resource: r, Thread: r}
	default:
		r := fmt.Sprintf("loadgen/r%d", i)
		return src, inbox.ThreadKey{Agent: s.Agent, Resource: r, Thread: r}
	}
}

func slackChannel(i int) string { return fmt.Sprintf("CLG%07d", i) }

// request is one signed delivery, ready to send (again, after a failure: the same
// delivery id makes a retry a duplicate at the gateway, as with real providers).
type request struct {
	path   string
	header http.Header
	body   []byte
	marker string
	thread int
	// delivery is the provider delivery id the gateway records (Slack: the event_id).
	delivery string
}

// builder makes signed deliveries; it is used by one goroutine at a time per instance.
type builder struct {
	s          Scenario
	sources    []string
	runID      string
	ghTemplate map[string]any
	genSecret  []byte
}

func newBuilder(s Scenario, sources []string, runID string) (*builder, error) {
	b := &builder{s: s, sources: sources, runID: runID}
	if err := json.Unmarshal(issueCommentExample, &b.ghTemplate); err != nil {
		return nil, fmt.Errorf("embedded github example: %w", err)
	}
	var err error
	if b.genSecret, err = stdwebhooks.ParseSecret(s.GenericSecret); err != nil {
		return nil, fmt.Errorf("generic secret: %w", err)
	}
	return b, nil
}

// Marker is the token each event carries into its signal's contents.
func Marker(runID string, n int) string { return "lg" + runID + "x" + strconv.Itoa(n) + "z" }

// build makes event n for thread ti.
func (b *builder) build(n, ti int, now time.Time) (*request, error) {
	src, _ := b.s.ThreadFor(ti, b.sources)
	marker := Marker(b.runID, n)
	delivery := fmt.Sprintf("%s-%d", b.runID, n)
	r := &request{header: http.Header{}, marker: marker, thread: ti, delivery: delivery}
	r.header.Set("Content-Type", "application/json")
	switch src {
	case SourceGitHub:
		body, err := b.github(n, ti, marker)
		if err != nil {
			return nil, err
		}
		r.path, r.body = "/webhooks/github/"+b.s.Connector, body
		signGitHub(r.header, b.s.GitHubSecret, "issue_comment", delivery, body)
	case SourceSlack:
		ts := fmt.Sprintf("%d.%06d", now.Unix(), n%1000000)
		body, err := json.Marshal(map[string]any{
			"token": "x", "team_id": b.s.SlackTeam, "api_app_id": "ALOADGEN", "type": "event_callback",
			"event_id": "Ev" + delivery, "event_time": now.Unix(),
			"event": map[string]any{
				"type": "app_mention", "user": "U0LOADUSR", "channel": slackChannel(ti), "channel_type": "channel",
				// A thread of its own per event keeps two pending messages from coalescing.
				"ts": ts, "thread_ts": fmt.Sprintf("%d.%d", n, ti), "text": "<@" + b.s.SlackBot + "> " + marker + " please look",
			},
		})
		if err != nil {
			return nil, err
		}
		r.path, r.body, r.delivery = "/webhooks/slack/"+b.s.Connector, body, "Ev"+delivery
		signSlack(r.header, b.s.SlackSecret, now, body)
	case SourceGeneric:
		_, k := b.s.ThreadFor(ti, b.sources)
		body, err := json.Marshal(map[string]any{
			"kind": "load", "summary": marker + " load event", "dedupeKey": marker,
			"attributes": map[string]any{"repo": k.Resource},
		})
		if err != nil {
			return nil, err
		}
		r.path, r.body = "/webhooks/generic/"+b.s.Connector, body
		r.header.Set(stdwebhooks.HeaderID, delivery)
		r.header.Set(stdwebhooks.HeaderTimestamp, strconv.FormatInt(now.Unix(), 10))
		r.header.Set(stdwebhooks.HeaderSignature, stdwebhooks.Sign(b.genSecret, delivery, now, body))
	default:
		return nil, fmt.Errorf("unknown source %q", src)
	}
	return r, nil
}

// github fills the example with this event's repo, issue and comment; the issue number
// is unique per event so two pending comments never coalesce.
func (b *builder) github(n, ti int, marker string) ([]byte, error) {
	repo := fmt.Sprintf("loadgen/r%d", ti)
	p := cloneMap(b.ghTemplate)
	issue := cloneMap(p["issue"].(map[string]any))
	issue["number"], issue["id"] = n+1, n+1
	comment := cloneMap(p["comment"].(map[string]any))
	comment["id"], comment["body"] = n+1, marker+" It looks like you accidently spelled 'commit' with two 't's."
	repository := cloneMap(p["repository"].(map[string]any))
	repository["full_name"], repository["name"] = repo, fmt.Sprintf("r%d", ti)
	p["issue"], p["comment"], p["repository"] = issue, comment, repository
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(p); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// signSlack sets Slack's v0 request signature headers for body sent at now.
// signGitHub sets the headers GitHub sends with delivery of event, signed with secret.
func signGitHub(h http.Header, secret, event, delivery string, body []byte) {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	h.Set("X-GitHub-Event", event)
	h.Set("X-GitHub-Delivery", delivery)
	h.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(mac.Sum(nil)))
	h.Set("User-Agent", "GitHub-Hookshot/loadgen")
}

func signSlack(h http.Header, secret string, now time.Time, body []byte) {
	sts := strconv.FormatInt(now.Unix(), 10)
	mac := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(mac, "v0:%s:", sts)
	mac.Write(body)
	h.Set("X-Slack-Request-Timestamp", sts)
	h.Set("X-Slack-Signature", "v0="+hex.EncodeToString(mac.Sum(nil)))
}

func cloneMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

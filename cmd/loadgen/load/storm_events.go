package load

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/signalgate/signalgate/inbox"
)

// The recorded storm: 1,000 events over 20 threads of one team's morning — a comment burst
// on one pull request, CI flapping on six, reviews and comments on five, low pushes to
// three default branches, four people's DMs, and two urgent secret scanning alerts.
// GitHub bodies are the octokit webhook examples with this storm's repositories, numbers
// and ids; Slack bodies follow the Events API envelope as Slack documents it.
const StormEvents = 1000

// Storm thread groups, in thread order.
const (
	stormBurst    = "comment-burst" // 1 PR: 260 review and issue comments
	stormCI       = "ci-flapping"   // 6 PRs: 330 check runs failing and passing
	stormReview   = "reviews"       // 5 PRs: 110 reviews and comments
	stormPush     = "pushes"        // 3 branches: 200 low pushes
	stormDM       = "dms"           // 4 people: 98 direct messages
	stormSecurity = "security"      // 2 urgent secret scanning alerts
)

// stormEvent is one scheduled delivery of the storm.
type stormEvent struct {
	at     time.Duration // offset from the start of sending
	thread int
	urgent bool
	label  string // what a frame carrying it contains (urgent alerts)
	req    *request
}

// stormThread is one of the storm's 20 threads and what its events are.
type stormThread struct {
	key   inbox.ThreadKey
	group string
}

// StormScenario is what the gateway must be configured with for the storm.
type StormScenario struct {
	Agent, AgentToken, Connector string
	GitHubSecret, SlackSecret    string
	SlackTeam, SlackBot          string
	// Platform is the base URL of the fake Slack and GitHub the connectors reply to
	// (the replies mode); "" leaves the connectors without reply credentials.
	Platform string
}

// DefaultStormScenario is what `loadgen storm-config` and `loadgen storm` agree on.
func DefaultStormScenario() StormScenario {
	return StormScenario{Agent: "storm", AgentToken: "storm-agent-token-0123", Connector: "storm",
		GitHubSecret: "storm-github-secret-0123", SlackSecret: "storm-slack-signing-secret", SlackTeam: "T0STORM", SlackBot: "U0STORMBOT"}
}

// GatewayConfig renders the storm's agents, connectors, routes and policy. tuned turns on
// what issue 16 adds — a wake budget and detailed summaries (net-state lanes come with
// the GitHub mapping); without it every setting is the gateway's default.
func (s StormScenario) GatewayConfig(tuned bool) string {
	agentExtra, policy := "", "policy: {}\n"
	if tuned {
		agentExtra = ", wake_budget: { max: 2, per: 1h }"
		policy = "policy: { summary_format: detailed }\n"
	}
	github, slack := s.connectorEntries()
	return fmt.Sprintf(`agents:
  - { id: %[1]s, token: %[2]q, target: { kind: stream }%[3]s }
connectors:
  github: [ %[4]s ]
  slack:  [ %[5]s ]
routes:
  - { name: storm-security, match: { source: github, kind: security-alert }, thread: { agent: %[1]s, resource: "{{.Repo}}", thread: "{{.Repo}}:security" } }
  - { name: storm-push, match: { source: github, kind: push }, thread: { agent: %[1]s, resource: "{{.Repo}}", thread: "{{.Repo}}@{{.Branch}}" } }
  - { name: storm-pulls, match: { source: github, when: 'kind != "push" && kind != "security-alert"' }, thread: { agent: %[1]s, resource: "{{.Repo}}", thread: "{{.Repo}}#{{.Number}}" } }
  - { name: storm-dms, match: { source: slack, channel_type: im }, thread: { agent: %[1]s, resource: "slack:{{.Team}}", thread: "dm:{{.User}}" } }
`, s.Agent, s.AgentToken, agentExtra, github, slack) + policy
}

// connectorEntries renders the storm's GitHub and Slack connector entries (YAML flow
// mappings): its secrets and connector name, and with Platform the reply credentials.
func (s StormScenario) connectorEntries() (github, slack string) {
	ghExtra, slackExtra := "", ""
	if s.Platform != "" {
		ghExtra = fmt.Sprintf(", token: %q, api_url: %q", stormGitHubToken, s.Platform+"/github/")
		slackExtra = fmt.Sprintf(", bot_token: %q, api_url: %q", stormSlackToken, s.Platform+"/slack/api/")
	}
	return fmt.Sprintf("{ name: %s, secret: %q, default_branch: main%s }", s.Connector, s.GitHubSecret, ghExtra),
		fmt.Sprintf("{ name: %s, signing_secret: %q, bot_user_id: %s%s }", s.Connector, s.SlackSecret, s.SlackBot, slackExtra)
}

// stormThreads lists the storm's threads, keyed as GatewayConfig routes them.
func (s StormScenario) stormThreads() []stormThread {
	var out []stormThread
	pr := func(n int, group string) {
		out = append(out, stormThread{key: inbox.ThreadKey{Agent: s.Agent, Resource: "acme/api", Thread: fmt.Sprintf("acme/api#%d", n)}, group: group})
	}
	pr(101, stormBurst)
	for n := 102; n <= 107; n++ {
		pr(n, stormCI)
	}
	for n := 108; n <= 112; n++ {
		pr(n, stormReview)
	}
	for _, repo := range []string{"acme/api", "acme/web", "acme/infra"} {
		out = append(out, stormThread{key: inbox.ThreadKey{Agent: s.Agent, Resource: repo, Thread: repo + "@main"}, group: stormPush})
	}
	for _, u := range stormPeople {
		out = append(out, stormThread{key: inbox.ThreadKey{Agent: s.Agent, Resource: "slack:" + s.SlackTeam, Thread: "dm:" + u}, group: stormDM})
	}
	out = append(out, stormThread{key: inbox.ThreadKey{Agent: s.Agent, Resource: "acme/web", Thread: "acme/web:security"}, group: stormSecurity})
	return out
}

var stormPeople = []string{"U0ALICE", "U0BOB", "U0CAROL", "U0DAVE"}

// octokit holds the example bodies the storm starts from, by event name.
type octokit map[string][]map[string]any

// loadOctokit reads the examples of the given events from dir (the
// @octokit/webhooks-examples checkout `make fixtures` fetches): api.github.com first,
// then the GHES indexes for events only they carry.
func loadOctokit(dir string, events ...string) (octokit, error) {
	out := octokit{}
	for _, index := range []string{"api.github.com", "ghes-35"} {
		raw, err := os.ReadFile(filepath.Join(dir, index, "index.json"))
		if err != nil {
			return nil, fmt.Errorf("read octokit examples (make fixtures): %w", err)
		}
		var list []struct {
			Name     string           `json:"name"`
			Examples []map[string]any `json:"examples"`
		}
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, fmt.Errorf("decode %s examples: %w", index, err)
		}
		for _, e := range list {
			if _, ok := out[e.Name]; !ok && slices.Contains(events, e.Name) {
				out[e.Name] = e.Examples
			}
		}
	}
	for _, e := range events {
		if len(out[e]) == 0 {
			return nil, fmt.Errorf("octokit examples: no %s example in %s", e, dir)
		}
	}
	return out, nil
}

// example is a deep copy of the first example of event with the given action.
func (o octokit) example(event, action string) (map[string]any, error) {
	for _, ex := range o[event] {
		if a, _ := ex["action"].(string); a == action || action == "" {
			raw, err := json.Marshal(ex)
			if err != nil {
				return nil, err
			}
			var out map[string]any
			return out, json.Unmarshal(raw, &out)
		}
	}
	return nil, fmt.Errorf("octokit examples: no %s %s example", event, action)
}

// set assigns v at a dotted path of m, creating objects on the way.
func set(m map[string]any, path string, v any) {
	parts := strings.Split(path, ".")
	for _, p := range parts[:len(parts)-1] {
		next, ok := m[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[p] = next
		}
		m = next
	}
	m[parts[len(parts)-1]] = v
}

// stormBuilder turns the storm's plan into signed requests.
type stormBuilder struct {
	s     StormScenario
	ex    octokit
	runID string
	rnd   *rand.Rand
	seq   int
}

// schedule is the whole storm over window, in send order. The same seed gives the same
// storm.
func (s StormScenario) schedule(dir, runID string, window time.Duration, seed uint64) ([]stormEvent, error) {
	ex, err := loadOctokit(dir, "check_run", "issue_comment", "pull_request_review", "pull_request_review_comment", "push", "secret_scanning_alert")
	if err != nil {
		return nil, err
	}
	b := &stormBuilder{s: s, ex: ex, runID: runID, rnd: rand.New(rand.NewPCG(seed, 16))}
	threads := s.stormThreads()
	at := func(from, to float64) time.Duration {
		return time.Duration((from + b.rnd.Float64()*(to-from)) * float64(window))
	}
	var evs []stormEvent
	add := func(ti int, off time.Duration, req *request, err error) error {
		if err != nil {
			return err
		}
		evs = append(evs, stormEvent{at: off, thread: ti, req: req})
		return nil
	}
	for ti, th := range threads {
		switch th.group {
		case stormBurst:
			// A heated review: 260 comments inside a quarter of the window.
			for i := range 260 {
				var req *request
				if i%4 == 3 {
					req, err = b.issueComment(101, i)
				} else {
					req, err = b.reviewComment(101, i)
				}
				if err := add(ti, at(0.2, 0.45), req, err); err != nil {
					return nil, err
				}
			}
		case stormCI:
			// 55 check runs per PR over the whole window, two checks flapping.
			n := 102 + ti - 1
			for i := range 55 {
				check := []string{"lint", "test"}[i%2]
				conclusion := "success"
				if b.rnd.Float64() < 0.5 {
					conclusion = "failure"
				}
				req, err := b.checkRun(n, check, conclusion)
				// In order per PR (the checks' conclusions follow each other), jittered.
				off := time.Duration((float64(i) + b.rnd.Float64()) / 55 * 0.95 * float64(window))
				if err := add(ti, off, req, err); err != nil {
					return nil, err
				}
			}
		case stormReview:
			n := 108 + ti - 7
			for i := range 22 {
				var req *request
				if i%5 == 0 {
					req, err = b.review(n, i)
				} else {
					req, err = b.issueComment(n, i)
				}
				if err := add(ti, at(0, 1), req, err); err != nil {
					return nil, err
				}
			}
		case stormPush:
			repo := th.key.Resource
			count := map[string]int{"acme/api": 100, "acme/web": 60, "acme/infra": 40}[repo]
			for range count {
				req, err := b.push(repo)
				if err := add(ti, at(0, 1), req, err); err != nil {
					return nil, err
				}
			}
		case stormDM:
			user := strings.TrimPrefix(th.key.Thread, "dm:")
			count := 25
			if ti == len(threads)-2 {
				count = 23
			}
			// A conversation: the messages come in two bursts.
			for i := range count {
				from, to := 0.1, 0.3
				if i%2 == 1 {
					from, to = 0.6, 0.8
				}
				req, err := b.dm(user, i)
				if err := add(ti, at(from, to), req, err); err != nil {
					return nil, err
				}
			}
		case stormSecurity:
			for i, off := range []float64{0.3, 0.75} {
				req, err := b.secretAlert(900 + i)
				if err := add(ti, time.Duration(off*float64(window)), req, err); err != nil {
					return nil, err
				}
				e := &evs[len(evs)-1]
				e.urgent, e.label = true, fmt.Sprintf("Secret scanning alert #%d", 900+i)
			}
		}
	}
	slices.SortStableFunc(evs, func(a, b stormEvent) int { return int(a.at - b.at) })
	if len(evs) != StormEvents {
		return nil, fmt.Errorf("storm plan has %d events, want %d", len(evs), StormEvents)
	}
	return evs, nil
}

func (b *stormBuilder) next() int { b.seq++; return b.seq }

// github signs body as delivery of event.
func (b *stormBuilder) github(event string, body map[string]any) (*request, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(body); err != nil {
		return nil, err
	}
	delivery := fmt.Sprintf("storm-%s-%d", b.runID, b.next())
	r := &request{path: "/webhooks/github/" + b.s.Connector, header: http.Header{}, body: buf.Bytes(), delivery: delivery}
	r.header.Set("Content-Type", "application/json")
	signGitHub(r.header, b.s.GitHubSecret, event, delivery, r.body)
	return r, nil
}

func stormRepo(p map[string]any, full string) {
	owner, name, _ := strings.Cut(full, "/")
	set(p, "repository.full_name", full)
	set(p, "repository.name", name)
	set(p, "repository.owner.login", owner)
	set(p, "repository.default_branch", "main")
	set(p, "repository.html_url", "https://github.com/"+full)
}

func (b *stormBuilder) sender(p map[string]any, login string) {
	set(p, "sender.login", login)
	set(p, "sender.type", "User")
}

var stormDevs = []string{"jane", "omar", "li", "sam", "priya"}

func (b *stormBuilder) dev() string { return stormDevs[b.rnd.IntN(len(stormDevs))] }

func (b *stormBuilder) reviewComment(pr, i int) (*request, error) {
	who := b.dev()
	return b.reviewCommentBy(pr, int64(5_000_000+b.next()), 0, who, fmt.Sprintf("Comment %d on this hunk: the retry loop should back off.", i))
}

// reviewCommentBy is a review comment on acme/api's pull request pr by who; inReplyTo
// places it in a review thread (0: a new one).
func (b *stormBuilder) reviewCommentBy(pr int, id, inReplyTo int64, who, body string) (*request, error) {
	p, err := b.ex.example("pull_request_review_comment", "created")
	if err != nil {
		return nil, err
	}
	stormRepo(p, "acme/api")
	set(p, "pull_request.number", pr)
	set(p, "pull_request.html_url", fmt.Sprintf("https://github.com/acme/api/pull/%d", pr))
	set(p, "comment.id", id)
	set(p, "comment.user.login", who)
	set(p, "comment.body", body)
	set(p, "comment.html_url", fmt.Sprintf("https://github.com/acme/api/pull/%d#discussion_r%d", pr, id))
	if inReplyTo > 0 {
		set(p, "comment.in_reply_to_id", inReplyTo)
	}
	b.sender(p, who)
	return b.github("pull_request_review_comment", p)
}

func (b *stormBuilder) issueComment(pr, i int) (*request, error) {
	who := b.dev()
	return b.issueCommentBy(pr, int64(6_000_000+b.next()), who, fmt.Sprintf("Comment %d: could we split this into two PRs?", i))
}

// issueCommentBy is a comment by who on acme/api's pull request pr.
func (b *stormBuilder) issueCommentBy(pr int, id int64, who, body string) (*request, error) {
	p, err := b.ex.example("issue_comment", "created")
	if err != nil {
		return nil, err
	}
	stormRepo(p, "acme/api")
	set(p, "issue.number", pr)
	set(p, "issue.html_url", fmt.Sprintf("https://github.com/acme/api/pull/%d", pr))
	// A comment on a pull request is an issue_comment whose issue links the pull.
	set(p, "issue.pull_request", map[string]any{"url": fmt.Sprintf("https://api.github.com/repos/acme/api/pulls/%d", pr),
		"html_url": fmt.Sprintf("https://github.com/acme/api/pull/%d", pr)})
	set(p, "comment.id", id)
	set(p, "comment.user.login", who)
	set(p, "comment.body", body)
	set(p, "comment.html_url", fmt.Sprintf("https://github.com/acme/api/pull/%d#issuecomment-%d", pr, id))
	b.sender(p, who)
	return b.github("issue_comment", p)
}

func (b *stormBuilder) review(pr, i int) (*request, error) {
	p, err := b.ex.example("pull_request_review", "submitted")
	if err != nil {
		return nil, err
	}
	stormRepo(p, "acme/api")
	who := b.dev()
	set(p, "pull_request.number", pr)
	set(p, "review.id", 7_000_000+b.next())
	set(p, "review.user.login", who)
	set(p, "review.state", []string{"commented", "changes_requested", "approved"}[i%3])
	set(p, "review.body", fmt.Sprintf("Review %d of #%d.", i, pr))
	b.sender(p, who)
	return b.github("pull_request_review", p)
}

func (b *stormBuilder) checkRun(pr int, check, conclusion string) (*request, error) {
	p, err := b.ex.example("check_run", "completed")
	if err != nil {
		return nil, err
	}
	stormRepo(p, "acme/api")
	branch := fmt.Sprintf("feature-%d", pr)
	sha := fmt.Sprintf("%040x", 0xc0ffee000000+b.next())
	set(p, "check_run.id", 8_000_000+b.seq)
	set(p, "check_run.name", check)
	set(p, "check_run.status", "completed")
	set(p, "check_run.conclusion", conclusion)
	set(p, "check_run.head_sha", sha)
	set(p, "check_run.html_url", fmt.Sprintf("https://github.com/acme/api/runs/%d", 8_000_000+b.seq))
	set(p, "check_run.check_suite.head_branch", branch)
	set(p, "check_run.check_suite.head_sha", sha)
	set(p, "check_run.pull_requests", []any{map[string]any{"number": pr, "id": 9_000_000 + pr,
		"url":  fmt.Sprintf("https://api.github.com/repos/acme/api/pulls/%d", pr),
		"head": map[string]any{"ref": branch, "sha": sha}, "base": map[string]any{"ref": "main"}}})
	if conclusion == "failure" {
		set(p, "check_run.output.title", check+" failed")
		set(p, "check_run.output.summary", "1 error: TestRetryBackoff is flaky under load")
	}
	b.sender(p, "ci-bot")
	return b.github("check_run", p)
}

func (b *stormBuilder) push(repo string) (*request, error) {
	// The example that pushes a commit to a branch (the others push tags).
	var p map[string]any
	for _, ex := range b.ex["push"] {
		if ex["ref"] == "refs/heads/master" {
			raw, err := json.Marshal(ex)
			if err != nil {
				return nil, err
			}
			if err := json.Unmarshal(raw, &p); err != nil {
				return nil, err
			}
			break
		}
	}
	if p == nil {
		return nil, fmt.Errorf("octokit examples: no push to a branch")
	}
	stormRepo(p, repo)
	who := b.dev()
	after := fmt.Sprintf("%040x", 0xbeef000000+b.next())
	set(p, "ref", "refs/heads/main")
	set(p, "after", after)
	set(p, "compare", "https://github.com/"+repo+"/compare/"+after[:12])
	set(p, "pusher.name", who)
	b.sender(p, who)
	if commits, ok := p["commits"].([]any); ok && len(commits) > 0 {
		if c, ok := commits[0].(map[string]any); ok {
			c["id"], c["message"] = after, "Bump dependencies"
		}
	}
	return b.github("push", p)
}

func (b *stormBuilder) secretAlert(number int) (*request, error) {
	p, err := b.ex.example("secret_scanning_alert", "")
	if err != nil {
		return nil, err
	}
	stormRepo(p, "acme/web")
	set(p, "action", "created")
	set(p, "alert.number", number)
	set(p, "alert.html_url", fmt.Sprintf("https://github.com/acme/web/security/secret-scanning/%d", number))
	b.sender(p, "github-advanced-security")
	return b.github("secret_scanning_alert", p)
}

// dm is a message.im event in Slack's Events API envelope, signed v0.
func (b *stormBuilder) dm(user string, i int) (*request, error) {
	n := b.next()
	now := time.Now()
	ch := "D0" + strings.TrimPrefix(user, "U0")
	eventID := fmt.Sprintf("Ev%s%06d", strings.ToUpper(b.runID), n)
	body, err := json.Marshal(map[string]any{
		"token": "storm", "team_id": b.s.SlackTeam, "api_app_id": "A0STORM", "type": "event_callback",
		"event_id": eventID, "event_time": now.Unix(), "authorizations": []any{map[string]any{"team_id": b.s.SlackTeam, "user_id": b.s.SlackBot, "is_bot": true}},
		"event": map[string]any{
			"type": "message", "channel_type": "im", "channel": ch, "user": user,
			"text": fmt.Sprintf("Quick question %d about the deploy, do you have a minute?", i),
			"ts":   fmt.Sprintf("%d.%06d", now.Unix(), n), "event_ts": fmt.Sprintf("%d.%06d", now.Unix(), n),
		},
	})
	if err != nil {
		return nil, err
	}
	r := &request{path: "/webhooks/slack/" + b.s.Connector, header: http.Header{}, body: body, delivery: eventID}
	r.header.Set("Content-Type", "application/json")
	signSlack(r.header, b.s.SlackSecret, now, body)
	return r, nil
}

package load

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/signalgate/signalgate/inbox"
)

// The platform the storm's connectors reply to (--replies): a Slack Web API under
// /slack/api/ and a GitHub REST API under /github/, answering in their documented
// shapes. Each reply it takes comes back to the gateway as the event the real platform
// sends for it — a signed Slack `message` from the bot, a signed GitHub issue_comment or
// pull_request_review_comment by the token's user — after EchoDelay, as a real webhook
// follows the post. The gateway must recognise them as its own replies: they make no
// record and so no frame.
const (
	stormGitHubToken = "storm-github-token-0123"
	stormSlackToken  = "xoxb-storm-bot-token-0123"
	stormGitHubUser  = "storm-agent" // the token's user (GET /user)
	stormSlackBotID  = "B0STORMBOT"
	stormSlackAppID  = "A0STORM"
)

// StormReplies is what the replies mode measured.
type StormReplies struct {
	// Asked counts the wakes the agents answered; Queued the replies the reply API took
	// (202), Refused the others by status and code, Failed the requests that got no answer.
	Asked   int            `json:"asked"`
	Queued  int            `json:"queued"`
	Refused map[string]int `json:"refused,omitempty"`
	Failed  int            `json:"failed"`
	// Posted counts the replies the platform took, by source; Duplicates the reply ids it
	// took more than once (exactly once: 0).
	Posted     map[string]int `json:"posted"`
	Duplicates int            `json:"duplicates"`
	// Echoed counts the platform's events for the replies the gateway acknowledged;
	// EchoRecords the records its answers said they made (it never hears itself: 0).
	Echoed      int `json:"echoed"`
	EchoFailed  int `json:"echo_failed"`
	EchoRecords int `json:"echo_records"`
	// EchoRecordsBySource splits EchoRecords by platform.
	EchoRecordsBySource map[string]int `json:"echo_records_by_source,omitempty"`
	EchoDelayMs         float64        `json:"echo_delay_ms"`
	// EchoAfterSent: each event waited until the gateway showed its reply sent.
	EchoAfterSent bool `json:"echo_after_sent,omitempty"`
	// BaselinePerEvent is the model-visible frames per event of the same storm without
	// replies (--baseline), when given: with replies they must not rise.
	BaselinePerEvent *float64 `json:"baseline_per_event,omitempty"`

	threads sync.Map // reply id → the inbox.ThreadKey that asked for it
}

// stormPlatform is the fake Slack and GitHub.
type stormPlatform struct {
	s       StormScenario
	gateway string
	client  *http.Client
	delay   time.Duration
	after   bool // EchoAfterSent
	token   string
	ln      net.Listener
	srv     *http.Server
	echoes  sync.WaitGroup
	stop    chan struct{}
	closing sync.Once
	posted  chan struct{} // a token per post taken (settle's wake-up)

	mu     sync.Mutex
	b      *stormBuilder // echo bodies; not safe for concurrent use
	seq    int64
	posts  map[string]int              // reply id → posts taken
	slack  map[string][]map[string]any // channel → posted messages (conversations.*)
	issues map[string][]map[string]any // "repo#n" → comments (issues list-comments)
	res    *StormReplies
}

// replyMarker finds the reply id in a GitHub comment's hidden marker.
var replyMarker = regexp.MustCompile(`<!-- signalgate:reply:([^ ]+) -->`)

// startStormPlatform listens on addr (loopback) and serves until close.
func startStormPlatform(cfg *StormConfig, runID string, client *http.Client, res *StormReplies) (*stormPlatform, error) {
	if err := loopbackOnly("http://" + cfg.PlatformAddr); err != nil {
		return nil, fmt.Errorf("platform: %w", err)
	}
	ex, err := loadOctokit(cfg.OctokitDir, "issue_comment", "pull_request_review_comment")
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", cfg.PlatformAddr)
	if err != nil {
		return nil, fmt.Errorf("platform: listen on %s: %w", cfg.PlatformAddr, err)
	}
	p := &stormPlatform{s: cfg.Scenario, gateway: cfg.URL, client: client, delay: cfg.EchoDelay, after: cfg.EchoAfterSent,
		token: cfg.Scenario.AgentToken, ln: ln, stop: make(chan struct{}), posted: make(chan struct{}, 1),
		// Echo deliveries have ids of their own: the storm's are "storm-<run>-<n>".
		b:     &stormBuilder{s: cfg.Scenario, ex: ex, runID: runID + "-echo", rnd: rand.New(rand.NewPCG(cfg.Seed, 29))},
		posts: map[string]int{}, slack: map[string][]map[string]any{}, issues: map[string][]map[string]any{}, res: res}
	res.Posted, res.EchoDelayMs, res.EchoAfterSent = map[string]int{}, float64(cfg.EchoDelay.Microseconds())/1000, cfg.EchoAfterSent
	mux := http.NewServeMux()
	mux.HandleFunc("/slack/api/{method}", p.slackAPI)
	mux.HandleFunc("GET /github/user", func(w http.ResponseWriter, _ *http.Request) {
		writeJSONStatus(w, http.StatusOK, map[string]any{"login": stormGitHubUser, "id": 4029, "type": "User"})
	})
	mux.HandleFunc("POST /github/repos/{owner}/{repo}/issues/{n}/comments", p.githubComment)
	mux.HandleFunc("GET /github/repos/{owner}/{repo}/issues/{n}/comments", p.githubComments)
	mux.HandleFunc("POST /github/repos/{owner}/{repo}/pulls/{n}/comments/{id}/replies", p.githubComment)
	mux.HandleFunc("GET /github/repos/{owner}/{repo}/pulls/{n}/comments", p.githubComments)
	p.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = p.srv.Serve(ln) }()
	return p, nil
}

// URL is the platform's base URL (GatewayConfig's Platform).
func (p *stormPlatform) URL() string { return "http://" + p.ln.Addr().String() }

// close stops taking posts and waits for the echoes under way.
func (p *stormPlatform) close(ctx context.Context) {
	p.closing.Do(func() {
		close(p.stop)
		_ = p.srv.Shutdown(ctx)
		p.echoes.Wait()
	})
}

// took counts a post of reply id, and a duplicate when it was taken before.
func (p *stormPlatform) took(source, id string) {
	p.res.Posted[source]++
	if p.posts[id]++; p.posts[id] == 2 {
		p.res.Duplicates++
	}
	select {
	case p.posted <- struct{}{}:
	default:
	}
}

// replySettle bounds settle: the outbox works through what the agents queued however late
// a loaded machine made the storm, and a reply not posted within it is a miss.
const replySettle = 30 * time.Second

// settle waits, once the agents stopped asking, until every reply they queued was posted
// (queued reads their count), or replySettle passed.
func (p *stormPlatform) settle(ctx context.Context, queued func() int) {
	limit := time.NewTimer(replySettle)
	defer limit.Stop()
	for {
		p.mu.Lock()
		posted := len(p.posts)
		p.mu.Unlock()
		if posted >= queued() {
			return
		}
		select {
		case <-p.posted:
		case <-limit.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

func (p *stormPlatform) slackAPI(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "Bearer "+stormSlackToken && r.FormValue("token") != stormSlackToken {
		writeJSONStatus(w, http.StatusOK, map[string]any{"ok": false, "error": "invalid_auth"})
		return
	}
	switch r.PathValue("method") {
	case "auth.test":
		writeJSONStatus(w, http.StatusOK, map[string]any{"ok": true, "url": "https://storm.slack.com/", "team": "Storm", "user": "storm",
			"team_id": p.s.SlackTeam, "user_id": p.s.SlackBot, "bot_id": stormSlackBotID})
	case "users.info":
		id := r.FormValue("user")
		writeJSONStatus(w, http.StatusOK, map[string]any{"ok": true, "user": map[string]any{"id": id, "team_id": p.s.SlackTeam,
			"name": strings.ToLower(strings.TrimPrefix(id, "U0")), "real_name": strings.TrimPrefix(id, "U0"),
			"profile": map[string]any{"real_name": strings.TrimPrefix(id, "U0"), "display_name": strings.ToLower(strings.TrimPrefix(id, "U0"))}}})
	case "conversations.info":
		id := r.FormValue("channel")
		writeJSONStatus(w, http.StatusOK, map[string]any{"ok": true, "channel": map[string]any{"id": id, "is_im": strings.HasPrefix(id, "D"),
			"user": "U0" + strings.TrimPrefix(id, "D0")}})
	case "chat.postMessage":
		p.slackPost(w, r)
	case "conversations.replies", "conversations.history":
		p.mu.Lock()
		msgs := append([]map[string]any{}, p.slack[r.FormValue("channel")]...)
		p.mu.Unlock()
		writeJSONStatus(w, http.StatusOK, map[string]any{"ok": true, "messages": msgs, "has_more": false})
	default:
		writeJSONStatus(w, http.StatusOK, map[string]any{"ok": false, "error": "unknown_method"})
	}
}

// slackPost takes a chat.postMessage and sends its `message` event back, from the bot.
func (p *stormPlatform) slackPost(w http.ResponseWriter, r *http.Request) {
	channel, text, thread := r.FormValue("channel"), r.FormValue("text"), r.FormValue("thread_ts")
	var meta struct {
		EventType    string         `json:"event_type"`
		EventPayload map[string]any `json:"event_payload"`
	}
	_ = json.Unmarshal([]byte(r.FormValue("metadata")), &meta)
	id, _ := meta.EventPayload["reply_id"].(string)
	now := time.Now()
	p.mu.Lock()
	p.seq++
	seq := p.seq // the echo below is built after the lock is let go
	ts := fmt.Sprintf("%d.%06d", now.Unix(), seq%1_000_000)
	msg := map[string]any{"type": "message", "user": p.s.SlackBot, "bot_id": stormSlackBotID, "app_id": stormSlackAppID,
		"text": text, "ts": ts, "team": p.s.SlackTeam}
	if thread != "" {
		msg["thread_ts"] = thread
	}
	if meta.EventType != "" {
		msg["metadata"] = map[string]any{"event_type": meta.EventType, "event_payload": meta.EventPayload}
	}
	p.slack[channel] = append(p.slack[channel], msg)
	id = cmp.Or(id, channel+"/"+ts)
	p.took("slack", id)
	p.mu.Unlock()
	writeJSONStatus(w, http.StatusOK, map[string]any{"ok": true, "channel": channel, "ts": ts, "message": msg})

	event := map[string]any{"channel": channel, "channel_type": "channel", "event_ts": ts}
	if strings.HasPrefix(channel, "D") {
		event["channel_type"] = "im"
	}
	for k, v := range msg {
		event[k] = v
	}
	body, err := json.Marshal(map[string]any{
		"token": "storm", "team_id": p.s.SlackTeam, "api_app_id": stormSlackAppID, "type": "event_callback",
		"event_id": fmt.Sprintf("EvECHO%s%06d", strings.ToUpper(p.b.runID), seq), "event_time": now.Unix(),
		"authorizations": []any{map[string]any{"team_id": p.s.SlackTeam, "user_id": p.s.SlackBot, "is_bot": true}},
		"event":          event,
	})
	if err != nil {
		return
	}
	req := &request{path: "/webhooks/slack/" + p.s.Connector, header: http.Header{}, body: body}
	req.header.Set("Content-Type", "application/json")
	p.echo(req, "slack", id)
}

// githubComment takes an issue comment or a review thread reply and sends its webhook
// back, by the token's user.
func (p *stormPlatform) githubComment(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "Bearer "+stormGitHubToken {
		writeJSONStatus(w, http.StatusUnauthorized, map[string]any{"message": "Bad credentials"})
		return
	}
	var in struct {
		Body string `json:"body"`
	}
	raw, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	pr, err := strconv.Atoi(r.PathValue("n"))
	if json.Unmarshal(raw, &in) != nil || in.Body == "" || err != nil {
		writeJSONStatus(w, http.StatusUnprocessableEntity, map[string]any{"message": "Validation Failed"})
		return
	}
	repo := r.PathValue("owner") + "/" + r.PathValue("repo")
	inReplyTo, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	now := time.Now().UTC()
	p.mu.Lock()
	p.seq++
	id := 90_000_000 + p.seq
	kind := "issuecomment-"
	if inReplyTo > 0 {
		kind = "discussion_r"
	}
	c := map[string]any{"id": id, "node_id": fmt.Sprintf("IC_storm%d", id), "body": in.Body,
		"html_url":   fmt.Sprintf("https://github.com/%s/pull/%d#%s%d", repo, pr, kind, id),
		"user":       map[string]any{"login": stormGitHubUser, "id": 4029, "type": "User"},
		"created_at": now.Format(time.RFC3339), "updated_at": now.Format(time.RFC3339)}
	if inReplyTo > 0 {
		c["in_reply_to_id"] = inReplyTo
	}
	key := fmt.Sprintf("%s#%d", repo, pr)
	p.issues[key] = append(p.issues[key], c)
	replyID := strconv.FormatInt(id, 10)
	if m := replyMarker.FindStringSubmatch(in.Body); m != nil {
		replyID = m[1]
	}
	p.took("github", replyID)
	var req *request
	if inReplyTo > 0 {
		req, err = p.b.reviewCommentBy(pr, id, inReplyTo, stormGitHubUser, in.Body)
	} else {
		req, err = p.b.issueCommentBy(pr, id, stormGitHubUser, in.Body)
	}
	p.mu.Unlock()
	writeJSONStatus(w, http.StatusCreated, c)
	if err == nil {
		p.echo(req, "github", replyID)
	}
}

// githubComments lists a pull request's comments (Find after a crash), oldest first.
func (p *stormPlatform) githubComments(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	cs := append([]map[string]any{}, p.issues[r.PathValue("owner")+"/"+r.PathValue("repo")+"#"+r.PathValue("n")]...)
	p.mu.Unlock()
	writeJSONStatus(w, http.StatusOK, cs)
}

// echo sends req to the gateway after the platform's delay (and, with EchoAfterSent,
// once the gateway shows reply id sent), re-signing a Slack body as sent, and counts the
// records the gateway's answer says it made.
func (p *stormPlatform) echo(req *request, source, id string) {
	p.echoes.Add(1)
	go func() {
		defer p.echoes.Done()
		t := time.NewTimer(p.delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-p.stop:
		}
		if p.after {
			p.waitSent(id)
		}
		if source == "slack" {
			signSlack(req.header, p.s.SlackSecret, time.Now(), req.body)
		}
		records, err := ingest(context.Background(), p.client, p.gateway, req)
		p.mu.Lock()
		defer p.mu.Unlock()
		if err != nil {
			p.res.EchoFailed++
			return
		}
		p.res.Echoed++
		if records > 0 {
			p.res.EchoRecords += records
			if p.res.EchoRecordsBySource == nil {
				p.res.EchoRecordsBySource = map[string]int{}
			}
			p.res.EchoRecordsBySource[source] += records
		}
	}()
}

// waitSent polls the reply API until reply id is sent (at most 30 s).
func (p *stormPlatform) waitSent(id string) {
	v, ok := p.res.threads.Load(id)
	if !ok {
		return
	}
	k := v.(inbox.ThreadKey)
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		var r struct {
			Status string `json:"status"`
		}
		if getJSON(context.Background(), p.client, ThreadURL(p.gateway, k, "/replies/"+id), p.token, &r) == nil && r.Status != "queued" {
			return
		}
		t := time.NewTimer(20 * time.Millisecond)
		select {
		case <-t.C:
		case <-p.stop:
			t.Stop()
			return
		}
	}
}

func writeJSONStatus(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// misses are the replies mode's targets not met: every reply queued is posted once, the
// gateway never hears its own replies, and the frames per event do not rise.
func (r *StormReplies) misses(perEvent float64) []string {
	var out []string
	posted := 0
	for _, n := range r.Posted {
		posted += n
	}
	if posted-r.Duplicates < r.Queued {
		out = append(out, fmt.Sprintf("%d replies queued, %d posted within the settle time", r.Queued, posted-r.Duplicates))
	}
	if r.Duplicates > 0 {
		out = append(out, fmt.Sprintf("%d replies posted more than once", r.Duplicates))
	}
	if r.EchoRecords > 0 {
		out = append(out, fmt.Sprintf("the gateway's own replies made %d records", r.EchoRecords))
	}
	if r.EchoFailed > 0 {
		out = append(out, fmt.Sprintf("%d echoes of replies not acknowledged", r.EchoFailed))
	}
	if r.BaselinePerEvent != nil && perEvent > *r.BaselinePerEvent+StormRepliesTolerance {
		out = append(out, fmt.Sprintf("model-visible frames per event rose with replies: %.3f > %.3f without", perEvent, *r.BaselinePerEvent))
	}
	return out
}

// StormRepliesTolerance is how far frames per event may differ between two runs of the
// same storm by timing alone (a wake more or less on one thread: 1 frame in 1,000 events).
const StormRepliesTolerance = 0.001

package mastra_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/connectors/kindstest"
	"github.com/signalgate/signalgate/connectors/slack"
	"github.com/signalgate/signalgate/delivery"
	"github.com/signalgate/signalgate/deliverytest"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/reply"
	"github.com/signalgate/signalgate/service"
	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/targets/mastra"
)

// queued records what a follower queued as replies.
type queued struct {
	mu   sync.Mutex
	reqs []queuedReply
}

type queuedReply struct {
	Thread inbox.ThreadKey
	Req    reply.Request
}

func (q *queued) Queue(_ context.Context, k inbox.ThreadKey, req reply.Request) (reply.Reply, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.reqs = append(q.reqs, queuedReply{k, req})
	return reply.Reply{ID: req.ID, Thread: k, Text: req.Text, Status: reply.StatusQueued}, nil
}

func (q *queued) of(k inbox.ThreadKey) []reply.Request {
	q.mu.Lock()
	defer q.mu.Unlock()
	var out []reply.Request
	for _, r := range q.reqs {
		if r.Thread == k {
			out = append(out, r.Req)
		}
	}
	return out
}

// slackVouches: a Slack request signature vouches for a Slack place, as the kinds table says.
var slackVouches = agent.ReplyProvenance{"slack": {"slack-v0"}}

// slackOrigin is the metadata the Slack connector puts on a message from to.
func slackOrigin(to reply.To) map[string]any {
	return map[string]any{reply.MetadataKey: to, agent.MetaVerifiedBy: "slack-v0"}
}

// autoEnv is a gateway over the real Mastra harness whose agent answers by itself.
type autoEnv struct {
	env      *deliverytest.Env
	cfg      agent.Config
	follower *mastra.Follower
	replies  *queued
	outbox   *reply.Service // set when the env answers through a real outbox
	sender   *sender
	base     string
}

func newAutoEnv(t *testing.T, delay time.Duration, replyMode string, outbox ...bool) *autoEnv {
	t.Helper()
	a := &autoEnv{base: mastraServer(t, delay), replies: &queued{}}
	var replier mastra.Replier = a.replies
	a.cfg = agent.Config{ID: "support", Token: deliverytest.SupportToken,
		Target: agent.TargetConfig{Kind: mastra.Kind, Presence: mastra.PresenceSource, Timeout: 20 * time.Second, Reply: replyMode, Settings: mastra.Config{URL: a.base, AgentID: "interopAgent"}}}
	require.NoError(t, a.cfg.Validate())
	a.env = deliverytest.New(t, deliverytest.Config{Recovery: kept, RealClock: true, Agents: []agent.Config{a.cfg},
		Dispatch: []delivery.Option{delivery.WithReplyProvenance(slackVouches)},
		EnvRoutes: func(e *deliverytest.Env) map[string]delivery.Route {
			if len(outbox) > 0 && outbox[0] {
				a.sender = &sender{posts: map[string][]string{}}
				a.outbox = reply.New(store.NewReplies(e.Store), map[string]reply.Sender{"slack": a.sender}, service.Base{}, reply.WithProvenance(slackVouches), reply.WithPlaces(kindstest.Places()))
				replier = a.outbox
			}
			a.follower = a.newFollower(e.Runs, e.Notify, replier)
			tg, err := mastra.New(a.cfg, mastra.WithFollower(a.follower))
			require.NoError(t, err)
			return map[string]delivery.Route{"support": {Kind: mastra.Kind, Target: tg, Concurrency: 4}}
		}})
	ctx := context.Background()
	require.NoError(t, a.follower.Start(ctx))
	t.Cleanup(func() { _ = a.follower.Stop(context.Background()) })
	require.NoError(t, a.env.Dispatcher.Start(ctx))
	return a
}

func (a *autoEnv) newFollower(runs mastra.Presence, notify func([]inbox.ThreadKey), r mastra.Replier) *mastra.Follower {
	f := mastra.NewFollower(a.cfg, runs, notify, service.Base{}, mastra.WithBackoff(50*time.Millisecond, time.Second), mastra.WithReplies(r))
	f.TestSignals.Chunk.Init()
	return f
}

// lastAnswer is the text of the model's last turn (the harness answers "ack N").
func lastAnswer(t *testing.T, base string) string {
	t.Helper()
	ps := prompts(t, base)
	require.NotEmpty(t, ps)
	return "ack " + itoa(ps[len(ps)-1].Turn)
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

var autoID = regexp.MustCompile(`^run-[0-9a-f-]{36}$`)

// target.reply: auto against a real Mastra server: the run a notification woke answers
// once, with its last step's text, under an id derived from Mastra's run id; a run Mastra
// started by itself (not woken by the gateway) answers nothing.
func TestRealMastraAutoReply(t *testing.T) {
	a := newAutoEnv(t, 1500*time.Millisecond, agent.ReplyAuto)

	t.Run("a woken run's final text is queued once", func(t *testing.T) {
		k := inbox.ThreadKey{Agent: "support", Resource: "acme/api", Thread: "auto"}
		a.env.Ingest(inbox.Notification{Thread: k, Source: "github", Kind: "ci-failure", Priority: inbox.PriorityUrgent, Summary: "CI failed"})
		waitFor(t, a.follower, k, "start")
		// A second notification goes into the running run: Mastra answers it in a
		// further step, and only that last step's text is the answer.
		a.env.Ingest(inbox.Notification{Thread: k, Source: "github", Kind: "ci-failure", Priority: inbox.PriorityUrgent, Summary: "deploy blocked"})
		waitFor(t, a.follower, k, "finish")
		got := a.replies.of(k)
		require.Len(t, got, 1, "%+v", got)
		require.Regexp(t, autoID, got[0].ID)
		require.Equal(t, lastAnswer(t, a.base), got[0].Text)
		require.Nil(t, got[0].ReplyTo, "the thread's most recent origin answers, as for a reply without replyTo")
	})

	t.Run("a run Mastra started by itself answers nothing", func(t *testing.T) {
		k := inbox.ThreadKey{Agent: "support", Resource: "acme/api", Thread: "own-run"}
		// The gateway follows the thread (a persisted signal) ...
		a.env.Ingest(inbox.Notification{Thread: k, Source: "github", Kind: "note", Priority: inbox.PriorityLow, Summary: "context"})
		// ... and a run starts on Mastra without the gateway waking it.
		body, err := json.Marshal(map[string]any{"resourceId": k.Resource, "threadId": k.Thread,
			"signal":   map[string]any{"id": "direct-1", "type": "reactive", "tagName": "note", "contents": "hello from elsewhere", "attributes": map[string]any{}, "metadata": map[string]any{}},
			"ifActive": map[string]any{"behavior": "deliver"}, "ifIdle": map[string]any{"behavior": "wake"}})
		require.NoError(t, err)
		waitFollowed(t, a, k)
		resp, err := http.Post(a.base+"/api/agents/interopAgent/signals", "application/json", bytes.NewReader(body))
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		require.NoError(t, resp.Body.Close())
		waitFor(t, a.follower, k, "finish")
		require.Empty(t, a.replies.of(k))
	})
}

// waitFollowed makes the follower follow k (as a delivery does) so its stream is
// connected before a run starts.
func waitFollowed(t *testing.T, a *autoEnv, k inbox.ThreadKey) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	a.follower.Follow(ctx, k)
}

// Without target.reply the follower queues nothing.
func TestRealMastraNoAutoReply(t *testing.T) {
	a := newAutoEnv(t, 200*time.Millisecond, "")
	k := inbox.ThreadKey{Agent: "support", Resource: "acme/api", Thread: "quiet"}
	a.env.Ingest(inbox.Notification{Thread: k, Source: "github", Kind: "ci-failure", Priority: inbox.PriorityUrgent, Summary: "CI failed"})
	waitFor(t, a.follower, k, "finish")
	require.Empty(t, a.replies.of(k))
}

// A gateway restart mid-run: the new follower resumes the woken run and answers it under
// the same id as the first would have.
func TestRealMastraAutoReplyAfterRestart(t *testing.T) {
	a := newAutoEnv(t, 2500*time.Millisecond, agent.ReplyAuto)
	k := inbox.ThreadKey{Agent: "support", Resource: "acme/api", Thread: "restart"}
	a.env.Ingest(inbox.Notification{Thread: k, Source: "github", Kind: "ci-failure", Priority: inbox.PriorityUrgent, Summary: "CI failed"})
	waitFor(t, a.follower, k, "start")
	ctx := context.Background()
	require.NoError(t, a.follower.Stop(ctx))

	after := a.newFollower(a.env.Runs, a.env.Notify, a.replies)
	require.NoError(t, after.Start(ctx))
	t.Cleanup(func() { _ = after.Stop(context.Background()) })
	waitFor(t, after, k, "finish")
	got := a.replies.of(k)
	require.Len(t, got, 1, "%+v", got)
	require.Regexp(t, autoID, got[0].ID)
	require.Equal(t, lastAnswer(t, a.base), got[0].Text)
}

// sender is a Slack that keeps posts by reply id.
type sender struct {
	mu    sync.Mutex
	posts map[string][]string
}

func (s *sender) Check(reply.To, string) error { return nil }

func (s *sender) Find(_ context.Context, r reply.Reply) (reply.Sent, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return reply.Sent{PlatformID: r.ID}, len(s.posts[r.ID]) > 0, nil
}

func (s *sender) Send(_ context.Context, r reply.Reply) (reply.Sent, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.posts[r.ID] = append(s.posts[r.ID], r.Text)
	return reply.Sent{PlatformID: r.ID}, false, nil
}

// The answer goes through the outbox to where the notification came from, once: the same
// run's answer queued again (a replay) posts nothing more.
func TestRealMastraAutoReplyThroughTheOutbox(t *testing.T) {
	a := newAutoEnv(t, 200*time.Millisecond, agent.ReplyAuto, true)
	ctx := context.Background()
	k := inbox.ThreadKey{Agent: "support", Resource: "acme", Thread: "dm"}
	dm := reply.NewTo("slack", "acme", slack.Place{Team: "T1", Channel: "D1"})
	a.env.Ingest(inbox.Notification{Thread: k, Source: "slack", Kind: "message", Priority: inbox.PriorityUrgent,
		Summary: "is the API down?", Metadata: slackOrigin(dm)})
	waitFor(t, a.follower, k, "finish")
	rs, _, err := a.outbox.List(ctx, reply.Filter{Agent: k.Agent, Thread: k.Thread})
	require.NoError(t, err)
	require.Len(t, rs, 1)
	r := rs[0]
	require.Regexp(t, autoID, r.ID)
	require.Equal(t, dm, r.To, "the notification's replyTo")
	require.Equal(t, lastAnswer(t, a.base), r.Text)
	_, err = a.outbox.RunOnce(ctx)
	require.NoError(t, err)
	again, err := a.outbox.Queue(ctx, k, reply.Request{ID: r.ID, Text: r.Text})
	require.NoError(t, err)
	require.Equal(t, reply.StatusSent, again.Status)
	_, err = a.outbox.RunOnce(ctx)
	require.NoError(t, err)
	a.sender.mu.Lock()
	defer a.sender.mu.Unlock()
	require.Equal(t, map[string][]string{r.ID: {r.Text}}, a.sender.posts)
}

// Through the dispatcher and the real outbox: the run a DM woke answers that DM, though a
// message from another conversation reached the thread (and the run) meanwhile and is
// the thread's most recent origin by the time the run ends.
func TestRealMastraAutoReplyAnswersTheWakingNotification(t *testing.T) {
	a := newAutoEnv(t, 1500*time.Millisecond, agent.ReplyAuto, true)
	ctx := context.Background()
	k := inbox.ThreadKey{Agent: "support", Resource: "acme", Thread: "two-places"}
	dm := reply.NewTo("slack", "acme", slack.Place{Team: "T1", Channel: "D1"})
	channel := reply.NewTo("slack", "acme", slack.Place{Team: "T1", Channel: "C2", ThreadTS: "1700000000.000100"})
	a.env.Ingest(inbox.Notification{Thread: k, Source: "slack", Kind: "message", Priority: inbox.PriorityUrgent,
		Summary: "is the API down?", Metadata: slackOrigin(dm)})
	waitFor(t, a.follower, k, "start")
	a.env.Ingest(inbox.Notification{Thread: k, Source: "slack", Kind: "message", Priority: inbox.PriorityUrgent,
		Summary: "deploy is blocked", Metadata: slackOrigin(channel)})
	waitFor(t, a.follower, k, "finish")
	rs, _, err := a.outbox.List(ctx, reply.Filter{Agent: k.Agent, Thread: k.Thread})
	require.NoError(t, err)
	require.Len(t, rs, 1)
	require.Equal(t, dm, rs[0].To, "the waking DM's replyTo, not the newer message's")
}

// Against a real Mastra: a run that finished while the outbox failed keeps its gateway
// run open across a stop; the next start finds Mastra no longer running it, reads its
// answer back from Mastra's memory (GET /api/memory/threads/:threadId/messages) and
// posts it once, where the waking DM came from.
func TestRealMastraAutoReplyRecalledAfterAStop(t *testing.T) {
	base := mastraServer(t, 200*time.Millisecond)
	ctx := context.Background()
	cfg := agent.Config{ID: "support", Token: deliverytest.SupportToken,
		Target: agent.TargetConfig{Kind: mastra.Kind, Presence: mastra.PresenceSource, Timeout: 20 * time.Second, Reply: agent.ReplyAuto, Settings: mastra.Config{URL: base, AgentID: "interopAgent"}}}
	require.NoError(t, cfg.Validate())
	slackPosts := &sender{posts: map[string][]string{}}
	var (
		outbox *reply.Service
		runs   closings
		g      *gate
		first  *mastra.Follower
	)
	newFollower := func() *mastra.Follower {
		return mastra.NewFollower(cfg, runs, func([]inbox.ThreadKey) {}, service.Base{},
			mastra.WithBackoff(20*time.Millisecond, 200*time.Millisecond), mastra.WithResyncWait(500*time.Millisecond), mastra.WithReplies(g))
	}
	e := deliverytest.New(t, deliverytest.Config{Recovery: kept, RealClock: true, Agents: []agent.Config{cfg},
		Dispatch: []delivery.Option{delivery.WithReplyProvenance(slackVouches)},
		EnvRoutes: func(e *deliverytest.Env) map[string]delivery.Route {
			outbox = reply.New(store.NewReplies(e.Store), map[string]reply.Sender{"slack": slackPosts}, service.Base{}, reply.WithProvenance(slackVouches), reply.WithPlaces(kindstest.Places()))
			runs = closings{Runs: e.Runs, closed: make(chan string, 4)}
			g = &gate{next: outbox, down: true, tried: make(chan struct{}, 1)}
			first = newFollower()
			tg, err := mastra.New(cfg, mastra.WithFollower(first))
			require.NoError(t, err)
			return map[string]delivery.Route{"support": {Kind: mastra.Kind, Target: tg, Concurrency: 4}}
		}})
	require.NoError(t, first.Start(ctx))
	t.Cleanup(func() { _ = first.Stop(context.Background()) })
	k := inbox.ThreadKey{Agent: "support", Resource: "acme", Thread: "recalled"}
	dm := reply.NewTo("slack", "acme", slack.Place{Team: "T1", Channel: "D1"})
	e.Ingest(inbox.Notification{Thread: k, Source: "slack", Kind: "message", Priority: inbox.PriorityUrgent,
		Summary: "is the API down?", Metadata: slackOrigin(dm)})
	e.Pass()
	woken, err := e.Runs.Live(ctx, k)
	require.NoError(t, err)
	require.NotNil(t, woken)

	g.waitTries(t, 2)
	require.NoError(t, first.Stop(ctx))
	g.set(false)
	after := newFollower()
	require.NoError(t, after.Start(ctx))
	t.Cleanup(func() { _ = after.Stop(context.Background()) })
	select {
	case id := <-runs.closed:
		require.Equal(t, woken.ID, id)
	case <-time.After(30 * time.Second):
		t.Fatal("the resumed run was never closed")
	}
	rs, _, err := outbox.List(ctx, reply.Filter{Agent: k.Agent, Thread: k.Thread})
	require.NoError(t, err)
	require.Len(t, rs, 1)
	require.Equal(t, reply.RunAnswerID(woken.ID), rs[0].ID)
	require.Equal(t, lastAnswer(t, base), rs[0].Text, "Mastra's memory of the run's answer")
	require.Equal(t, dm, rs[0].To)
	_, err = outbox.RunOnce(ctx)
	require.NoError(t, err)
	slackPosts.mu.Lock()
	defer slackPosts.mu.Unlock()
	require.Equal(t, map[string][]string{rs[0].ID: {rs[0].Text}}, slackPosts.posts)
}

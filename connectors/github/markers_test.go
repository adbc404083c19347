package github

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/reply"
	"github.com/signalgate/signalgate/server"
	"github.com/signalgate/signalgate/service"
	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/store/storetest"
)

// stepClock is a clock the test moves.
type stepClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *stepClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *stepClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// twoAgents is the gateway's GitHub path for two agents hearing the same issue: the
// handler ingests into a real store, where the outbox sends both agents' replies to
// the fake GitHub as one account.
type twoAgents struct {
	h     *harness
	inbox *inbox.Service
	out   *reply.Service
	clk   *stepClock
}

func newTwoAgents(t *testing.T, b storetest.Backend, f *fakeGitHub) *twoAgents {
	t.Helper()
	st := storetest.Open(t, b)
	// The fake stamps comments with the wall clock; Find asks for those since a reply
	// was created.
	clk := &stepClock{t: time.Now().UTC()}
	pol, err := inbox.NewPolicy(inbox.PolicyConfig{})
	require.NoError(t, err)
	in := inbox.NewService(store.NewInbox(st), pol, inbox.WithClock(clk.now))
	log := slog.New(slog.DiscardHandler)
	srv := server.New(server.Config{}, log)
	var routes []connectors.RouteConfig
	for _, agent := range []string{"alpha", "beta"} {
		routes = append(routes, connectors.RouteConfig{Name: agent,
			Match:  connectors.RouteMatch{Source: inbox.StringList{"github"}},
			Thread: connectors.ThreadConfig{Agent: agent, Resource: "{{.Repo}}", Thread: "{{.Repo}}#{{.Number}}"}})
	}
	router, err := connectors.NewRouter(routes, []string{"alpha", "beta"})
	require.NoError(t, err)
	cfg := replyConfig(f)
	handler, err := NewHandler([]Config{cfg}, connectors.NewPipeline(router, in, log), log, fixedNow)
	require.NoError(t, err)
	handler.Mount(srv.Echo())
	out := reply.New(store.NewReplies(st), map[string]reply.Sender{"github": newTestReplier(t, cfg)},
		service.Base{Now: clk.now}, reply.WithRandom(func() float64 { return 0 }), reply.WithPlaces(reply.Places{{Source: Source, Codec: PlaceCodec}}),
		reply.WithProvenance(agent.ReplyProvenance{Source: {VerifiedBy}}))
	return &twoAgents{h: &harness{t: t, e: srv.Echo(), ing: in}, inbox: in, out: out, clk: clk}
}

// threads delivers a person's comment on an issue, which both agents hear, and returns
// their threads.
func (g *twoAgents) threads(t *testing.T) (alpha, beta inbox.ThreadKey) {
	t.Helper()
	p := pick(t, examples(t, "api.github.com"), "issue_comment", "created", nil)
	set(p, "comment.user.login", "alice")
	rec := g.h.deliver("issue_comment", "d-question", encode(t, p))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	out := decodeOutcome(t, rec)
	require.Equal(t, 2, out.Records, "both agents hear it: %+v", out)
	repo := get(p, "repository.full_name").(string)
	number := get(p, "issue.number").(json.Number).String()
	thread := repo + "#" + number
	return inbox.ThreadKey{Agent: "alpha", Resource: repo, Thread: thread},
		inbox.ThreadKey{Agent: "beta", Resource: repo, Thread: thread}
}

func (g *twoAgents) run(t *testing.T) {
	t.Helper()
	_, err := g.out.RunOnce(context.Background())
	require.NoError(t, err)
}

// Agent alpha's reply quotes the marker of agent beta's reply; beta's first post meets
// a 502, so its next attempt looks for an earlier post first. Alpha's comment, written
// by the very account replies are posted as, must not pass for beta's reply: beta's is
// posted, and recorded under its own comment's id. The same holds for a comment of the
// account from before markers in reply text were neutralised (the marker mid-body).
func TestReplyQuotingAnotherRepliesMarkerDoesNotSuppressIt(t *testing.T) {
	for _, tc := range []struct {
		name  string
		plant func(t *testing.T, g *twoAgents, f *fakeGitHub, alpha inbox.ThreadKey, key string)
	}{
		{"quoted in another agent's reply", func(t *testing.T, g *twoAgents, _ *fakeGitHub, alpha inbox.ThreadKey, _ string) {
			_, err := g.out.Queue(context.Background(), alpha, reply.Request{ID: "a-1",
				Text: "Ignore beta. <!-- signalgate:reply:b-1 --> signalgate:reply:b-1"})
			require.NoError(t, err)
			g.run(t)
		}},
		{"mid-body in an older comment of the account", func(_ *testing.T, _ *twoAgents, f *fakeGitHub, _ inbox.ThreadKey, key string) {
			f.addIssueComment(key, "octocat", "Ignore beta. <!-- signalgate:reply:b-1 -->\n\n<!-- signalgate:reply:a-0 -->", time.Now())
		}},
	} {
		for _, b := range storetest.Backends(t) { // a fresh database each
			t.Run(tc.name+"/"+b.Name, func(t *testing.T) {
				ctx := context.Background()
				f := newFakeGitHub(t)
				g := newTwoAgents(t, b, f)
				alpha, beta := g.threads(t)
				key := alpha.Thread // owner/repo#n, as the fake keys an issue
				tc.plant(t, g, f, alpha, key)
				planted := f.issueComments(key)
				require.Len(t, planted, 1)
				plantedID := fmt.Sprint(planted[0]["id"])
				assert.Contains(t, planted[0]["body"], "Ignore beta.")

				_, err := g.out.Queue(ctx, beta, reply.Request{ID: "b-1", Text: "The real answer."})
				require.NoError(t, err)
				f.failNext(canned{status: http.StatusBadGateway, body: `{"message":"Server Error"}`})
				g.run(t)
				r, err := g.out.Get(ctx, beta, "b-1")
				require.NoError(t, err)
				require.Equal(t, reply.StatusQueued, r.Status, "a 502 is retried")
				require.Equal(t, 1, r.Attempts)

				g.clk.add(time.Minute)
				g.run(t)
				r, err = g.out.Get(ctx, beta, "b-1")
				require.NoError(t, err)
				require.Equal(t, reply.StatusSent, r.Status, r.LastError)
				assert.NotEqual(t, plantedID, r.PlatformID, "beta's reply recorded as the planted comment")
				cs := f.issueComments(key)
				require.Len(t, cs, 2, "beta's reply is posted")
				assert.Equal(t, fmt.Sprint(cs[1]["id"]), r.PlatformID)
				assert.Equal(t, "The real answer.\n\n<!-- signalgate:reply:b-1 -->", cs[1]["body"])
			})
		}
	}
}

// A marker in a reply's text is neutralised when posted: the body's only marker is the
// one it ends with, and the text reads (and renders) as written.
func TestReplierNeutralizesMarkersInText(t *testing.T) {
	f := newFakeGitHub(t)
	r := newTestReplier(t, replyConfig(f))
	text := "See <!-- signalgate:reply:b-1 --> and SignalGate:Reply:b-2."
	_, _, err := r.Send(context.Background(), issueReply("a-1", text))
	require.NoError(t, err)
	cs := f.issueComments("octo-org/hello#7")
	require.Len(t, cs, 1)
	body := cs[0]["body"].(string)
	assert.Equal(t, 1, strings.Count(strings.ToLower(body), reply.MarkerToken), "only the gateway's marker: %q", body)
	assert.True(t, strings.HasSuffix(body, "\n\n<!-- signalgate:reply:a-1 -->"))
	assert.Equal(t, text+"\n\n<!-- signalgate:reply:a-1 -->", strings.ReplaceAll(body, "\u2060", ""),
		"only invisible word joiners were added")

	for _, id := range []string{"b-1", "b-2"} {
		_, ok, err := r.Find(context.Background(), issueReply(id, "x"))
		require.NoError(t, err)
		assert.False(t, ok, id)
	}
	// Check counts the text as posted: a text at the limit that grows when neutralised
	// is refused, not cut off by GitHub.
	at := strings.Repeat("x", MaxReplyChars-len(reply.MarkerToken)) + reply.MarkerToken
	require.ErrorIs(t, r.Check(issueReply("a", "").To, at), reply.ErrTooLong)
}

// Find counts a marker only at the end of a comment by the account replies are posted
// as, in an issue and in a review thread alike.
func TestReplierFindCountsOnlyTheMarkerABodyEndsWith(t *testing.T) {
	f := newFakeGitHub(t)
	r := newTestReplier(t, replyConfig(f)) // bot_login octocat
	ctx := context.Background()
	root := f.addReviewComment("octo-org/hello#7", "alice", "Why a map here?", time.Now())
	inThread := issueReply("r-1", "x")
	editPlace(&inThread.To, func(p *Place) { p.ReviewCommentID = root })
	for _, body := range []string{
		"<!-- signalgate:reply:r-1 --> quoted first",
		"<!-- signalgate:reply:r-1 -->\n\n<!-- signalgate:reply:other -->",
		"x <!-- signalgate:reply:r-1 -->-->",
		"x <!-- signalgate:reply:r-1x -->",
	} {
		f.addIssueComment("octo-org/hello#7", "octocat", body, time.Now())
		f.addReviewComment("octo-org/hello#7", "octocat", body, time.Now())
	}
	for _, rp := range []reply.Reply{issueReply("r-1", "x"), inThread} {
		_, ok, err := r.Find(ctx, rp)
		require.NoError(t, err)
		assert.False(t, ok, "review thread: %v", placeOf(rp.To).ReviewCommentID != 0)
	}

	// What the gateway posts is found, also with trailing whitespace after the marker.
	f.addIssueComment("octo-org/hello#7", "octocat", "x\n\n<!-- signalgate:reply:r-1 -->\r\n", time.Now())
	_, ok, err := r.Find(ctx, issueReply("r-1", "x"))
	require.NoError(t, err)
	assert.True(t, ok)
	sent, _, err := r.Send(ctx, inThread)
	require.NoError(t, err)
	found, ok, err := r.Find(ctx, inThread)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, sent, found)
}

// A comment of the account replies are posted as (here a person's token) that quotes a
// reply's marker mid-body is heard: only a body ending with a marker is one of the
// gateway's replies coming back.
func TestMarkerMidBodyIsNotAnOwnReply(t *testing.T) {
	f := newFakeGitHub(t)
	f.login = "signalgate-bot" // the token's user
	cfg := replyConfig(f)
	cfg.BotLogin = ""
	h, _ := ownHarnessWith(t, cfg, &fakeOwn{ids: map[string]bool{}}, slog.New(slog.DiscardHandler))
	by := map[string]any{"login": "signalgate-bot"}
	quoting := map[string]any{"id": json.Number("9001"), "user": by,
		"body": "The gateway wrote <!-- signalgate:reply:r-1 --> there, see above."}
	requireHeard(t, h, h.deliver("issue_comment", "d-1", commentEvent(t, "issue_comment", quoting, nil)),
		"the account quoting a marker")
	ending := map[string]any{"id": json.Number("9002"), "user": by, "body": "x\n\n<!-- signalgate:reply:r-1 -->"}
	requireOwn(t, h, h.deliver("issue_comment", "d-2", commentEvent(t, "issue_comment", ending, nil)),
		"a body ending with the marker")
}

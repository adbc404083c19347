package reply_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/connectors/github"
	"github.com/signalgate/signalgate/connectors/kindstest"
	"github.com/signalgate/signalgate/connectors/slack"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/reply"
	"github.com/signalgate/signalgate/service"
	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/store/storetest"
)

var (
	t0     = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	thread = inbox.ThreadKey{Agent: "triage", Resource: "acme", Thread: "t1"}
	dm     = reply.NewTo("slack", "acme", slack.Place{Team: "T1", Channel: "D1"})
	issue  = reply.NewTo("github", "gh", github.Place{Repo: "acme/api", Number: 7})
	// trust is what the kinds table says: a Slack request signature (or Socket Mode)
	// vouches for Slack places, a GitHub webhook signature for GitHub's.
	trust = agent.ReplyProvenance{"slack": {"slack-v0", "slack-socket-mode"}, "github": {"hmac-github"}}
)

// verified is the metadata a connector of to's source puts on a notification from to.
func verified(to reply.To) map[string]any {
	return map[string]any{reply.MetadataKey: to, agent.MetaVerifiedBy: trust[to.Source][0]}
}

// platform is a fake Slack: it keeps posts by marker (the reply id), answers Find from
// them, and fails sends as scripted.
type platform struct {
	mu      sync.Mutex
	posts   map[string]int // reply id → times posted
	fails   []error        // the next sends' errors, in order
	retry   bool           // whether a scripted error is transient
	finds   int
	checkTo func(reply.To, string) error
}

func newPlatform() *platform { return &platform{posts: map[string]int{}} }

func (p *platform) Check(to reply.To, text string) error {
	if p.checkTo != nil {
		return p.checkTo(to, text)
	}
	return nil
}

func (p *platform) Find(_ context.Context, r reply.Reply) (reply.Sent, bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.finds++
	if p.posts[r.ID] > 0 {
		return reply.Sent{PlatformID: "D1/" + r.ID}, true, nil
	}
	return reply.Sent{}, false, nil
}

func (p *platform) Send(_ context.Context, r reply.Reply) (reply.Sent, bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.fails) > 0 {
		err := p.fails[0]
		p.fails = p.fails[1:]
		return reply.Sent{}, p.retry, err
	}
	p.posts[r.ID]++
	return reply.Sent{PlatformID: "D1/" + r.ID, URL: "https://slack.example/" + r.ID}, false, nil
}

func (p *platform) count(id string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.posts[id]
}

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// crashing is the store of a gateway that dies right after the platform took a reply:
// the outcome of a send is never recorded while down is set.
type crashing struct {
	*store.Replies
	down bool
}

func (c *crashing) FinishReply(ctx context.Context, id, owner string, o reply.Outcome) error {
	if c.down {
		return errors.New("killed")
	}
	return c.Replies.FinishReply(ctx, id, owner, o)
}

type fixture struct {
	st    *store.DB
	svc   *reply.Service
	slack *platform
	clk   *clock
	inbox *inbox.Service
}

func setup(t *testing.T, b storetest.Backend, st reply.Store, opts ...reply.Option) fixture {
	t.Helper()
	s := storetest.Open(t, b)
	replies := store.NewReplies(s)
	if st == nil {
		st = replies
	} else if c, ok := st.(*crashing); ok {
		c.Replies = replies
	}
	clk := &clock{t: t0}
	pol, err := inbox.NewPolicy(inbox.PolicyConfig{})
	require.NoError(t, err)
	in := inbox.NewService(store.NewInbox(s), pol, inbox.WithClock(clk.now))
	slack := newPlatform()
	svc := reply.New(st, map[string]reply.Sender{"slack": slack, "github": newPlatform()},
		service.Base{Now: clk.now}, append([]reply.Option{reply.WithRandom(func() float64 { return 0 }), reply.WithProvenance(trust), reply.WithPlaces(kindstest.Places())}, opts...)...)
	return fixture{st: s, svc: svc, slack: slack, clk: clk, inbox: in}
}

// notify stores a notification of thread k that came from to.
func (f fixture) notify(t *testing.T, k inbox.ThreadKey, delivery string, to reply.To) {
	t.Helper()
	n := inbox.Notification{Thread: k, Source: to.Source, Kind: "message", Summary: "hi",
		Metadata: verified(to)}
	_, err := f.inbox.Ingest(context.Background(), &inbox.Event{Source: to.Source, Connector: to.Connector,
		DeliveryID: delivery, Type: "message", Body: []byte(`{}`)}, []inbox.Notification{n})
	require.NoError(t, err)
}

func each(t *testing.T, fn func(t *testing.T, b storetest.Backend)) {
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) { fn(t, b) })
	}
}

func TestReplyGoesToTheThreadsNewestOrigin(t *testing.T) {
	each(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		f := setup(t, b, nil)
		f.notify(t, thread, "d1", issue)
		f.notify(t, thread, "d2", dm)
		r, err := f.svc.Queue(ctx, thread, reply.Request{ID: "r1", Text: "on it"})
		require.NoError(t, err)
		require.Equal(t, reply.StatusQueued, r.Status)
		require.Equal(t, dm, r.To, "the newest record's replyTo")

		n, err := f.svc.RunOnce(ctx)
		require.NoError(t, err)
		require.Equal(t, 1, n)
		require.Equal(t, 1, f.slack.count("r1"))
		got, err := f.svc.Get(ctx, thread, "r1")
		require.NoError(t, err)
		require.Equal(t, reply.StatusSent, got.Status)
		require.Equal(t, "D1/r1", got.PlatformID)
		require.Equal(t, "https://slack.example/r1", got.URL)
		require.Equal(t, 1, got.Attempts)
		require.Zero(t, f.slack.finds, "a first attempt posts without looking")

		_, err = f.svc.Get(ctx, inbox.ThreadKey{Agent: "other", Resource: "acme", Thread: "t1"}, "r1")
		require.ErrorIs(t, err, inbox.ErrNotFound, "another thread's reply is not found")

		// The explicit replyTo of an older origin of the same thread is taken, as the
		// thread's record has it.
		asked := issue
		r2, err := f.svc.Queue(ctx, thread, reply.Request{ID: "r2", Text: "done", ReplyTo: &asked})
		require.NoError(t, err)
		require.Equal(t, issue, r2.To)
	})
}

func TestReplyIDsAreIdempotent(t *testing.T) {
	each(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		f := setup(t, b, nil)
		f.notify(t, thread, "d1", dm)
		first, err := f.svc.Queue(ctx, thread, reply.Request{ID: "same", Text: "hello"})
		require.NoError(t, err)
		again, err := f.svc.Queue(ctx, thread, reply.Request{ID: "same", Text: "hello"})
		require.NoError(t, err)
		require.Equal(t, first, again, "the same id again answers the same")

		_, err = f.svc.Queue(ctx, thread, reply.Request{ID: "same", Text: "something else"})
		require.ErrorIs(t, err, reply.ErrConflict)
		other := inbox.ThreadKey{Agent: "triage", Resource: "acme", Thread: "t2"}
		f.notify(t, other, "d2", dm)
		_, err = f.svc.Queue(ctx, other, reply.Request{ID: "same", Text: "hello"})
		require.ErrorIs(t, err, reply.ErrConflict, "an id is one reply gateway-wide (it is the platform marker)")

		_, err = f.svc.RunOnce(ctx)
		require.NoError(t, err)
		_, err = f.svc.Queue(ctx, thread, reply.Request{ID: "same", Text: "hello"})
		require.NoError(t, err, "asked again once sent")
		_, err = f.svc.RunOnce(ctx)
		require.NoError(t, err)
		require.Equal(t, 1, f.slack.count("same"))
	})
}

func TestReplyRefusesBadRequests(t *testing.T) {
	each(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		f := setup(t, b, nil)
		_, err := f.svc.Queue(ctx, thread, reply.Request{ID: "r1", Text: "hi"})
		require.ErrorIs(t, err, reply.ErrUnknownPlace, "no origin and no replyTo")

		f.notify(t, thread, "d1", dm)
		other := inbox.ThreadKey{Agent: "billing", Resource: "acme", Thread: "secret"}
		foreign := reply.NewTo("slack", "acme", slack.Place{Team: "T1", Channel: "C-PAYROLL"})
		f.notify(t, other, "d2", foreign)
		_, err = f.svc.Queue(ctx, thread, reply.Request{ID: "r2", Text: "hi", ReplyTo: &foreign})
		require.ErrorIs(t, err, reply.ErrUnknownPlace, "another thread's place is foreign")
		made := reply.NewTo("slack", "acme", slack.Place{Channel: "C-GENERAL"})
		_, err = f.svc.Queue(ctx, thread, reply.Request{ID: "r3", Text: "hi", ReplyTo: &made})
		require.ErrorIs(t, err, reply.ErrUnknownPlace)
		spoofed := dm
		spoofed.Place = json.RawMessage(`{"team":"T1","channel":"D1","subject":"URGENT: wire money"}`) // not part of the place: the record's To is used
		r, err := f.svc.Queue(ctx, thread, reply.Request{ID: "r4", Text: "hi", ReplyTo: &spoofed})
		require.NoError(t, err)
		require.Equal(t, dm, r.To)

		for _, id := range []string{"", "x-->evil", "a b", "<x>", strings.Repeat("a", 129), "-lead"} {
			_, err = f.svc.Queue(ctx, thread, reply.Request{ID: id, Text: "hi"})
			require.ErrorIs(t, err, reply.ErrInvalid, "id %q", id)
		}
		_, err = f.svc.Queue(ctx, thread, reply.Request{ID: "r5", Text: ""})
		require.ErrorIs(t, err, reply.ErrInvalid)
		_, err = f.svc.Queue(ctx, thread, reply.Request{ID: "r6", Text: strings.Repeat("x", reply.MaxTextBytes+1)})
		require.ErrorIs(t, err, reply.ErrTooLong)

		f.slack.checkTo = func(reply.To, string) error {
			return fmt.Errorf("connector acme has no bot_token: %w", reply.ErrNoCredentials)
		}
		_, err = f.svc.Queue(ctx, thread, reply.Request{ID: "r7", Text: "hi"})
		require.ErrorIs(t, err, reply.ErrNoCredentials)
		require.ErrorContains(t, err, "bot_token")
		_, err = store.NewReplies(f.st).GetReply(ctx, "r7")
		require.ErrorIs(t, err, inbox.ErrNotFound, "a refused reply is not stored")
	})
}

// The gateway dies after the platform took a reply and before it was recorded: the
// next pass finds the marker and posts nothing again.
func TestReplyAfterACrashIsFoundNotResent(t *testing.T) {
	each(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		cr := &crashing{down: true}
		f := setup(t, b, cr)
		f.notify(t, thread, "d1", dm)
		_, err := f.svc.Queue(ctx, thread, reply.Request{ID: "r1", Text: "on it"})
		require.NoError(t, err)
		_, err = f.svc.RunOnce(ctx)
		require.Error(t, err, "the outcome was lost")
		require.Equal(t, 1, f.slack.count("r1"))

		cr.down = false
		f.clk.add(reply.DefaultLease) // the dead replica's lease lapses
		restarted := reply.New(cr, map[string]reply.Sender{"slack": f.slack}, service.Base{Now: f.clk.now}, reply.WithProvenance(trust), reply.WithPlaces(kindstest.Places()))
		n, err := restarted.RunOnce(ctx)
		require.NoError(t, err)
		require.Equal(t, 1, n)
		require.Equal(t, 1, f.slack.count("r1"), "found on the platform, not posted twice")
		require.Equal(t, 1, f.slack.finds)
		got, err := store.NewReplies(f.st).GetReply(ctx, "r1")
		require.NoError(t, err)
		require.Equal(t, reply.StatusSent, got.Status)
		require.Equal(t, "D1/r1", got.PlatformID)
	})
}

func TestReplyRetriesAndFailures(t *testing.T) {
	each(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		f := setup(t, b, nil, reply.WithSecrets([]string{"xoxb-secret-token"}), reply.WithMaxAge(time.Hour))
		f.notify(t, thread, "d1", dm)

		// A rate limit: the platform's wait is honoured.
		f.slack.fails, f.slack.retry = []error{&reply.RetryAfter{Wait: 30 * time.Second, Err: errors.New("ratelimited")}}, true
		_, err := f.svc.Queue(ctx, thread, reply.Request{ID: "r1", Text: "hi"})
		require.NoError(t, err)
		_, err = f.svc.RunOnce(ctx)
		require.NoError(t, err)
		got, err := store.NewReplies(f.st).GetReply(ctx, "r1")
		require.NoError(t, err)
		require.Equal(t, reply.StatusQueued, got.Status)
		require.Equal(t, t0.Add(30*time.Second), *got.NextAttemptAt)
		require.Equal(t, "ratelimited", got.LastError)
		n, err := f.svc.RunOnce(ctx)
		require.NoError(t, err)
		require.Zero(t, n, "not due yet")
		f.clk.add(30 * time.Second)
		_, err = f.svc.RunOnce(ctx)
		require.NoError(t, err)
		got, err = store.NewReplies(f.st).GetReply(ctx, "r1")
		require.NoError(t, err)
		require.Equal(t, reply.StatusSent, got.Status)
		require.Equal(t, 1, f.slack.finds, "attempted before: looked for first")
		require.Equal(t, 1, f.slack.count("r1"))

		// A permanent error fails it, with credentials kept out of the stored reason;
		// the admin's retry queues it again.
		f.slack.fails, f.slack.retry = []error{errors.New("channel_not_found (token xoxb-secret-token)")}, false
		_, err = f.svc.Queue(ctx, thread, reply.Request{ID: "r2", Text: "hi"})
		require.NoError(t, err)
		_, err = f.svc.RunOnce(ctx)
		require.NoError(t, err)
		got, err = store.NewReplies(f.st).GetReply(ctx, "r2")
		require.NoError(t, err)
		require.Equal(t, reply.StatusFailed, got.Status)
		require.Contains(t, got.LastError, "channel_not_found")
		require.NotContains(t, got.LastError, "xoxb-secret-token")
		_, err = f.svc.Retry(ctx, "r1")
		require.ErrorIs(t, err, reply.ErrNotRetryable, "a sent reply is not retried")
		_, err = f.svc.Retry(ctx, "r2")
		require.NoError(t, err)
		_, err = f.svc.RunOnce(ctx)
		require.NoError(t, err)
		require.Equal(t, 1, f.slack.count("r2"))

		// Transient errors past max_age fail it without another post.
		f.slack.fails, f.slack.retry = []error{errors.New("timeout"), errors.New("timeout")}, true
		_, err = f.svc.Queue(ctx, thread, reply.Request{ID: "r3", Text: "hi"})
		require.NoError(t, err)
		_, err = f.svc.RunOnce(ctx)
		require.NoError(t, err)
		f.clk.add(time.Hour + time.Minute)
		_, err = f.svc.RunOnce(ctx)
		require.NoError(t, err)
		got, err = store.NewReplies(f.st).GetReply(ctx, "r3")
		require.NoError(t, err)
		require.Equal(t, reply.StatusFailed, got.Status)
		require.Contains(t, got.LastError, "replies.max_age")
		require.Contains(t, got.LastError, "timeout")
		require.Equal(t, 1, got.Attempts, "no send after max_age")
	})
}

type approver struct {
	mu      sync.Mutex
	drafts  []reply.Reply
	decider reply.Decider // the outbox, subscribed when it was built
}

func (a *approver) OnReplyDecided(d reply.Decider) { a.decider = d }

func (a *approver) RequestReplyApproval(_ context.Context, r reply.Reply) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.drafts = append(a.drafts, r)
	return nil
}

func TestRepliesWaitForApproval(t *testing.T) {
	each(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		ap := &approver{}
		f := setup(t, b, nil, reply.WithApprovals(ap, func(agent string) bool { return agent == "triage" }))
		f.notify(t, thread, "d1", dm)
		r, err := f.svc.Queue(ctx, thread, reply.Request{ID: "a1", Text: "draft"})
		require.NoError(t, err)
		require.Equal(t, reply.StatusPending, r.Status)
		require.Len(t, ap.drafts, 1)
		n, err := f.svc.RunOnce(ctx)
		require.NoError(t, err)
		require.Zero(t, n, "not sent before it is approved")

		require.NotNil(t, ap.decider, "the outbox subscribes to its approver's decisions")
		ok, err := ap.decider.Decided(ctx, "a1", true, "Jane")
		require.NoError(t, err)
		require.True(t, ok)
		ok, err = f.svc.Decided(ctx, "a1", false, "Bob")
		require.NoError(t, err)
		require.False(t, ok, "decided once")
		_, err = f.svc.RunOnce(ctx)
		require.NoError(t, err)
		require.Equal(t, 1, f.slack.count("a1"))

		r, err = f.svc.Queue(ctx, thread, reply.Request{ID: "a2", Text: "draft 2"})
		require.NoError(t, err)
		ok, err = f.svc.Decided(ctx, r.ID, false, "Bob")
		require.NoError(t, err)
		require.True(t, ok)
		got, err := store.NewReplies(f.st).GetReply(ctx, "a2")
		require.NoError(t, err)
		require.Equal(t, reply.StatusDeclined, got.Status)
		require.Contains(t, got.LastError, "Bob")
		_, err = f.svc.RunOnce(ctx)
		require.NoError(t, err)
		require.Zero(t, f.slack.count("a2"))

		other := inbox.ThreadKey{Agent: "ops", Resource: "acme", Thread: "t1"}
		f.notify(t, other, "d2", dm)
		r, err = f.svc.Queue(ctx, other, reply.Request{ID: "a3", Text: "x"})
		require.NoError(t, err)
		require.Equal(t, reply.StatusQueued, r.Status, "ops needs no approval")
		r, err = f.svc.Queue(ctx, other, reply.Request{ID: "a4", Text: "x", Approval: true})
		require.NoError(t, err)
		require.Equal(t, reply.StatusPending, r.Status, "approval: true on one reply")
	})
}

package approval_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/approval"
	"github.com/signalgate/signalgate/connectors/kindstest"
	"github.com/signalgate/signalgate/connectors/slack"
	"github.com/signalgate/signalgate/inbox"
	replies "github.com/signalgate/signalgate/reply"
	"github.com/signalgate/signalgate/service"
	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/store/storetest"
)

// poster is a Slack reply sender that counts posts per reply id.
type poster struct {
	mu    sync.Mutex
	posts map[string]int
}

func (p *poster) Check(replies.To, string) error { return nil }
func (p *poster) Find(context.Context, replies.Reply) (replies.Sent, bool, error) {
	return replies.Sent{}, false, nil
}

func (p *poster) Send(_ context.Context, r replies.Reply) (replies.Sent, bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.posts[r.ID]++
	return replies.Sent{PlatformID: "D1/" + r.ID}, false, nil
}

func (p *poster) count(id string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.posts[id]
}

// slackVouches: a Slack request signature vouches for a Slack place, as the kinds table says.
var slackVouches = agent.ReplyProvenance{"slack": {"slack-v0"}}

// replyEnv is the approvals service holding the drafts of a real outbox over one store.
type replyEnv struct {
	*env
	outbox *replies.Service
	slack  *poster
}

func newReplyEnv(t *testing.T, b storetest.Backend) *replyEnv {
	t.Helper()
	st := storetest.Open(t, b)
	e := newEnvOn(t, approval.Config{Channel: "C0APPROVE", ExpireAfter: time.Hour}, st)
	p := &poster{posts: map[string]int{}}
	now := func() time.Time { return e.now }
	out := replies.New(store.NewReplies(st), map[string]replies.Sender{"slack": p}, service.Base{Now: now},
		replies.WithApprovals(e.svc, func(string) bool { return true }), replies.WithProvenance(slackVouches), replies.WithPlaces(kindstest.Places()))
	pol, err := inbox.NewPolicy(inbox.PolicyConfig{})
	require.NoError(t, err)
	in := inbox.NewService(store.NewInbox(st), pol, inbox.WithClock(now))
	to := replies.NewTo("slack", "acme", slack.Place{Channel: "D1"})
	_, err = in.Ingest(context.Background(), &inbox.Event{Source: "slack", Connector: "acme", DeliveryID: "d1", Type: "message",
		Body: []byte(`{}`)}, []inbox.Notification{{Thread: k, Source: "slack", Kind: "message", Summary: "hi",
		Metadata: map[string]any{replies.MetadataKey: to, "verified_by": "slack-v0"}}})
	require.NoError(t, err)
	return &replyEnv{env: e, outbox: out, slack: p}
}

// draft queues a reply held for approval and returns its approval.
func (e *replyEnv) draft(t *testing.T, id string) approval.Approval {
	t.Helper()
	r, err := e.outbox.Queue(context.Background(), k, replies.Request{ID: id, Text: "draft " + id})
	require.NoError(t, err)
	require.Equal(t, replies.StatusPending, r.Status)
	page, _, err := store.NewApprovals(e.st).ListApprovals(context.Background(), approval.Filter{})
	require.NoError(t, err)
	for _, a := range page {
		if a.ToolCallID == "reply:"+id {
			require.Equal(t, "reply", a.Tool)
			require.Equal(t, "draft "+id, a.Description, "the approvers read the draft")
			return a
		}
	}
	t.Fatalf("no approval for reply %s", id)
	return approval.Approval{}
}

func (e *replyEnv) outboxReply(t *testing.T, id string) replies.Reply {
	t.Helper()
	r, err := e.outbox.Get(context.Background(), k, id)
	require.NoError(t, err)
	return r
}

// send runs the outbox once.
func (e *replyEnv) send(t *testing.T) {
	t.Helper()
	_, err := e.outbox.RunOnce(context.Background())
	require.NoError(t, err)
}

// TestReplyApprovalHandOff: a draft is posted to the approvers; approved it is queued and
// sent, declined it ends declined, and one nobody decides on ends declined when its
// approval expires (by the sweep, or by a late click) instead of staying pending.
func TestReplyApprovalHandOff(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			e := newReplyEnv(t, b)

			approved := e.draft(t, "r-approved")
			e.send(t)
			require.Zero(t, e.slack.count("r-approved"), "not sent before a person approves")
			require.Empty(t, e.click(t, approved.ID, "U0JANE", true))
			require.Equal(t, replies.StatusQueued, e.outboxReply(t, "r-approved").Status)
			e.send(t)
			require.Equal(t, 1, e.slack.count("r-approved"))
			require.Equal(t, replies.StatusSent, e.outboxReply(t, "r-approved").Status)

			declined := e.draft(t, "r-declined")
			require.Empty(t, e.click(t, declined.ID, "U0BOB", false))
			got := e.outboxReply(t, "r-declined")
			require.Equal(t, replies.StatusDeclined, got.Status)
			require.Equal(t, "declined by Bob", got.LastError)

			swept := e.draft(t, "r-swept")
			clicked := e.draft(t, "r-late-click")
			e.now = t0.Add(2 * time.Hour)
			require.NoError(t, e.svc.Sweep(context.Background()))
			got = e.outboxReply(t, "r-swept")
			require.Equal(t, replies.StatusDeclined, got.Status, "an expired approval never leaves its reply pending")
			require.Equal(t, "not approved: the approval expired (nobody decided within approvals.expire_after)", got.LastError)
			require.Equal(t, approval.StatusExpired, e.get(t, swept.ID).Status)
			require.Contains(t, e.click(t, clicked.ID, "U0JANE", true), "expired", "a click after the expiry approves nothing")
			require.Equal(t, replies.StatusDeclined, e.outboxReply(t, "r-late-click").Status)
			e.send(t)
			for _, id := range []string{"r-declined", "r-swept", "r-late-click"} {
				require.Zero(t, e.slack.count(id), id)
			}
		})
	}
}

// failingApprover cannot record approvals.
type failingApprover struct{}

func (failingApprover) RequestReplyApproval(context.Context, replies.Reply) error {
	return fmt.Errorf("record approval: %w", context.DeadlineExceeded)
}
func (failingApprover) OnReplyDecided(replies.Decider) {}

// TestReplyApprovalNotRequested: a draft whose approval could not even be recorded has
// no approval to expire: the outbox declines it at once, saying why.
func TestReplyApprovalNotRequested(t *testing.T) {
	st := storetest.OpenSQLite(t)
	e := newEnvOn(t, approval.Config{Channel: "C0APPROVE"}, st)
	pol, err := inbox.NewPolicy(inbox.PolicyConfig{})
	require.NoError(t, err)
	in := inbox.NewService(store.NewInbox(st), pol, inbox.WithClock(func() time.Time { return e.now }))
	_, err = in.Ingest(context.Background(), &inbox.Event{Source: "slack", Connector: "acme", DeliveryID: "d1", Type: "message",
		Body: []byte(`{}`)}, []inbox.Notification{{Thread: k, Source: "slack", Kind: "message", Summary: "hi",
		Metadata: map[string]any{replies.MetadataKey: replies.NewTo("slack", "acme", slack.Place{Channel: "D1"}), "verified_by": "slack-v0"}}})
	require.NoError(t, err)
	out := replies.New(store.NewReplies(st), map[string]replies.Sender{"slack": &poster{posts: map[string]int{}}},
		service.Base{Now: func() time.Time { return e.now }}, replies.WithApprovals(failingApprover{}, func(string) bool { return true }),
		replies.WithProvenance(slackVouches), replies.WithPlaces(kindstest.Places()))
	r, err := out.Queue(context.Background(), k, replies.Request{ID: "r1", Text: "draft"})
	require.NoError(t, err, "the reply is on disk: its status says what became of it")
	require.Equal(t, replies.StatusDeclined, r.Status)
	require.Equal(t, "not approved: the approval could not be requested: record approval: context deadline exceeded", r.LastError)
	got, err := out.Get(context.Background(), k, "r1")
	require.NoError(t, err)
	require.Equal(t, replies.StatusDeclined, got.Status)
}

package approval_test

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
	"github.com/signalgate/signalgate/approval"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/service"
	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/store/storetest"
)

var (
	t0 = time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	k  = inbox.ThreadKey{Agent: "support", Resource: "acme/api", Thread: "t1"}
)

type fakeSlack struct {
	mu      sync.Mutex
	posts   []string // channel/threadTS
	updates []approval.Approval
	groups  map[string][]string
	postErr error
}

func (f *fakeSlack) PostApproval(_ context.Context, connector, channel, threadTS string, a approval.Approval) (string, string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.postErr != nil {
		return "", "", f.postErr
	}
	f.posts = append(f.posts, channel+"/"+threadTS)
	return channel, "1700000000.000001", nil
}

func (f *fakeSlack) UpdateApproval(_ context.Context, _ string, a approval.Approval) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.updates = append(f.updates, a)
	return nil
}

func (f *fakeSlack) InGroup(_ context.Context, _, group, user string) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, m := range f.groups[group] {
		if m == user {
			return true, nil
		}
	}
	return false, nil
}

type fakeResumer struct {
	mu    sync.Mutex
	calls []string
	err   error
}

func (f *fakeResumer) SendToolApproval(_ context.Context, k inbox.ThreadKey, call string, approved bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return f.err
	}
	verdict := "declined"
	if approved {
		verdict = "approved"
	}
	f.calls = append(f.calls, call+" "+verdict)
	return nil
}

func (f *fakeResumer) Answer(_ context.Context, k inbox.ThreadKey, call string, resumeData any) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return f.err
	}
	f.calls = append(f.calls, fmt.Sprintf("%s answered %v", call, resumeData))
	return nil
}

type fakeEmitter struct {
	mu      sync.Mutex
	signals []agent.Signal
}

func (f *fakeEmitter) Emit(_ context.Context, _ inbox.ThreadKey, sig agent.Signal) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.signals = append(f.signals, sig)
	return nil
}

type env struct {
	svc     *approval.Service
	st      *store.DB
	slack   *fakeSlack
	resumer *fakeResumer
	emitter *fakeEmitter
	now     time.Time
}

func newEnv(t *testing.T, cfg approval.Config) *env { return newEnvOn(t, cfg, storetest.OpenSQLite(t)) }

func newEnvOn(t *testing.T, cfg approval.Config, st *store.DB) *env {
	e := &env{st: st, slack: &fakeSlack{groups: map[string][]string{"S0OPS": {"U0BOB"}}},
		resumer: &fakeResumer{}, emitter: &fakeEmitter{}, now: t0}
	if cfg.SlackConnector == "" {
		cfg.SlackConnector = "acme"
	}
	if cfg.Approvers == nil {
		cfg.Approvers = []string{"U0JANE", "S0OPS"}
	}
	e.svc = approval.New(cfg, approval.Deps{Store: store.NewApprovals(e.st), Places: store.NewApprovals(e.st), Slack: e.slack, Resumer: e.resumer,
		Emitter: e.emitter, Base: service.Base{Now: func() time.Time { return e.now }}})
	return e
}

func (e *env) mastraApproval(t *testing.T, call string) approval.Approval {
	t.Helper()
	e.svc.ToolApproval(context.Background(), k, "run-1", call, "deploy", json.RawMessage(`{"env":"prod"}`))
	page, _, err := store.NewApprovals(e.st).ListApprovals(context.Background(), approval.Filter{})
	require.NoError(t, err)
	for _, a := range page {
		if a.ToolCallID == call {
			return a
		}
	}
	t.Fatalf("no approval for %s", call)
	return approval.Approval{}
}

func (e *env) click(t *testing.T, id, user string, approve bool) string {
	t.Helper()
	notice, err := e.svc.Decide(context.Background(), approval.Click{Connector: "acme", ApprovalID: id, Approve: approve,
		UserID: user, UserName: map[string]string{"U0JANE": "Jane", "U0BOB": "Bob"}[user]})
	require.NoError(t, err)
	return notice
}

func (e *env) get(t *testing.T, id string) approval.Approval {
	t.Helper()
	a, err := store.NewApprovals(e.st).GetApproval(context.Background(), id)
	require.NoError(t, err)
	return a
}

func TestApproveFromSlack(t *testing.T) {
	e := newEnv(t, approval.Config{Channel: "C0APPROVE"})
	a := e.mastraApproval(t, "call-1")
	require.Equal(t, approval.StatusPending, a.Status)
	require.Equal(t, []string{"C0APPROVE/"}, e.slack.posts)
	require.Equal(t, "1700000000.000001", a.MessageTS)

	e.now = t0.Add(time.Minute)
	require.Empty(t, e.click(t, a.ID, "U0JANE", true))
	require.Equal(t, []string{"call-1 approved"}, e.resumer.calls)
	got := e.get(t, a.ID)
	require.Equal(t, approval.StatusApproved, got.Status)
	require.Equal(t, "Jane", got.DecidedByName)
	require.Equal(t, t0.Add(time.Minute), *got.DecidedAt)
	require.Len(t, e.slack.updates, 1)
	require.Equal(t, approval.StatusApproved, e.slack.updates[0].Status)

	// The replayed click (or a second person's) changes nothing and says so.
	notice := e.click(t, a.ID, "U0BOB", false)
	require.Equal(t, "This was already approved by Jane at 2026-11-24 09:01 UTC; nothing was changed.", notice)
	require.Len(t, e.resumer.calls, 1)
	require.Len(t, e.slack.updates, 1)
	require.Equal(t, approval.StatusApproved, e.get(t, a.ID).Status)

	// A replayed chunk (the stream reconnected) posts nothing new.
	e.svc.ToolApproval(context.Background(), k, "run-1", "call-1", "deploy", json.RawMessage(`{"env":"prod"}`))
	require.Len(t, e.slack.posts, 1)
}

// A second person's click is told who decided in Slack's mrkdwn: a display name is the
// decider's own choice, and unescaped it would ping the channel or show a link.
func TestAlreadyDecidedEscapesTheDecider(t *testing.T) {
	e := newEnv(t, approval.Config{Channel: "C0APPROVE"})
	a := e.mastraApproval(t, "call-1")
	e.now = t0.Add(time.Minute)
	notice, err := e.svc.Decide(context.Background(), approval.Click{Connector: "acme", ApprovalID: a.ID, Approve: true,
		UserID: "U0JANE", UserName: "Jane <!channel> & <https://evil.example|Ops>"})
	require.NoError(t, err)
	require.Empty(t, notice)

	notice = e.click(t, a.ID, "U0BOB", false)
	require.Equal(t, "This was already approved by Jane &lt;!channel&gt; &amp; &lt;https://evil.example|Ops&gt; at 2026-11-24 09:01 UTC; nothing was changed.", notice)
	require.Equal(t, "Jane <!channel> & <https://evil.example|Ops>", e.get(t, a.ID).DecidedByName, "stored as given")
}

// A click that comes before the post's position was recorded still updates the message
// it was made on.
func TestClickBeforeMessageRecorded(t *testing.T) {
	e := newEnv(t, approval.Config{Channel: "C0APPROVE"})
	e.slack.postErr = errors.New("timeout")
	a := e.mastraApproval(t, "call-1")
	require.Empty(t, e.get(t, a.ID).MessageTS)
	_, err := e.svc.Decide(context.Background(), approval.Click{Connector: "acme", ApprovalID: a.ID, Approve: true,
		UserID: "U0JANE", Channel: "C0APPROVE", MessageTS: "1700000000.000009"})
	require.NoError(t, err)
	require.Len(t, e.slack.updates, 1)
	require.Equal(t, "1700000000.000009", e.slack.updates[0].MessageTS)
	require.Equal(t, "C0APPROVE", e.slack.updates[0].Channel)
}

func TestDeclineByGroupMember(t *testing.T) {
	e := newEnv(t, approval.Config{Channel: "C0APPROVE"})
	a := e.mastraApproval(t, "call-1")
	require.Empty(t, e.click(t, a.ID, "U0BOB", false))
	require.Equal(t, []string{"call-1 declined"}, e.resumer.calls)
	require.Equal(t, approval.StatusDeclined, e.get(t, a.ID).Status)
}

func TestNotAnApprover(t *testing.T) {
	e := newEnv(t, approval.Config{Channel: "C0APPROVE"})
	a := e.mastraApproval(t, "call-1")
	notice := e.click(t, a.ID, "U0EVE", true)
	require.Contains(t, notice, "not one of the approvers")
	require.Empty(t, e.resumer.calls)
	require.Empty(t, e.slack.updates)
	require.Equal(t, approval.StatusPending, e.get(t, a.ID).Status)
	require.Contains(t, e.click(t, "unknown-id", "U0JANE", true), "no longer known")
	_, err := e.svc.Decide(context.Background(), approval.Click{Connector: "other", ApprovalID: a.ID, UserID: "U0JANE"})
	require.NoError(t, err)
	require.Equal(t, approval.StatusPending, e.get(t, a.ID).Status, "a click through another Slack app changes nothing")
}

func TestExpiry(t *testing.T) {
	e := newEnv(t, approval.Config{Channel: "C0APPROVE", ExpireAfter: time.Hour})
	a := e.mastraApproval(t, "call-1")
	b := e.mastraApproval(t, "call-2")
	e.now = t0.Add(2 * time.Hour)
	require.Contains(t, e.click(t, a.ID, "U0JANE", true), "expired")
	require.Empty(t, e.resumer.calls)
	require.Equal(t, approval.StatusExpired, e.get(t, a.ID).Status)
	require.NoError(t, e.svc.Sweep(context.Background()))
	require.Equal(t, approval.StatusExpired, e.get(t, b.ID).Status)
	require.Len(t, e.slack.updates, 2, "both messages show the expiry")
	require.Contains(t, e.click(t, b.ID, "U0JANE", true), "has expired")
}

// The run ended, or its call was answered in Mastra itself: the approval goes stale.
func TestRunEndedOrAnsweredElsewhere(t *testing.T) {
	e := newEnv(t, approval.Config{Channel: "C0APPROVE"})
	a := e.mastraApproval(t, "call-1")
	b := e.mastraApproval(t, "call-2")
	e.svc.ToolAnswered(context.Background(), k, "call-1")
	require.Equal(t, approval.StatusExpired, e.get(t, a.ID).Status)
	require.Equal(t, approval.StatusPending, e.get(t, b.ID).Status)
	e.svc.RunEnded(context.Background(), k, "run-1")
	require.Equal(t, approval.StatusExpired, e.get(t, b.ID).Status)
}

func TestStaleAndUnreachableMastra(t *testing.T) {
	e := newEnv(t, approval.Config{Channel: "C0APPROVE"})
	a := e.mastraApproval(t, "call-1")
	e.resumer.err = errors.New("connection refused")
	require.Contains(t, e.click(t, a.ID, "U0JANE", true), "still pending, please try again")
	require.Equal(t, approval.StatusPending, e.get(t, a.ID).Status, "not delivered: pending again")
	require.Empty(t, e.slack.updates)

	e.resumer.err = approval.ErrStale
	require.Contains(t, e.click(t, a.ID, "U0JANE", true), "no longer waits")
	require.Equal(t, approval.StatusExpired, e.get(t, a.ID).Status)

	e.resumer.err = nil
	require.Contains(t, e.click(t, a.ID, "U0JANE", true), "has expired")
	require.Empty(t, e.resumer.calls)
}

// Without a channel the message goes where the thread's last Slack message came from:
// in a channel, into that message's thread.
func TestPostsWhereTheConversationIs(t *testing.T) {
	e := newEnv(t, approval.Config{})
	a := e.mastraApproval(t, "call-1")
	require.Empty(t, e.slack.posts)
	require.Contains(t, e.get(t, a.ID).PostError, "no approvals.channel is set")

	svc := inbox.NewService(store.NewInbox(e.st), mustPolicy(t), inbox.WithClock(func() time.Time { return t0 }))
	ev := &inbox.Event{Source: "slack", Connector: "acme", DeliveryID: "Ev1", Type: "app_mention", Body: []byte(`{}`)}
	_, err := svc.Ingest(context.Background(), ev, []inbox.Notification{{Thread: k, Source: "slack", Kind: "mention",
		Summary: "Jane: deploy please", Attributes: inbox.Attributes{}.Set("channel", "C0OPS").Set("ts", "1699999999.000100"),
		Payload: json.RawMessage(`{"channel_type":"channel"}`)}})
	require.NoError(t, err)
	b := e.mastraApproval(t, "call-2")
	require.Equal(t, []string{"C0OPS/1699999999.000100"}, e.slack.posts)
	require.Equal(t, "C0OPS", e.get(t, b.ID).Channel)

	e.slack.postErr = errors.New("chat.postMessage: not_in_channel")
	c := e.mastraApproval(t, "call-3")
	require.Contains(t, e.get(t, c.ID).PostError, "not_in_channel")
	require.Equal(t, approval.StatusPending, e.get(t, c.ID).Status, "still decidable from the admin API's view")
}

// A stream or webhook agent's approval comes back as an <approval> signal.
func TestAPIApprovalSignal(t *testing.T) {
	e := newEnv(t, approval.Config{Channel: "C0APPROVE"})
	out, created, err := e.svc.RequestApproval(context.Background(), k, agent.ApprovalRequest{ID: "rollback-7",
		Tool: "rollback", Description: "Roll back api to v41", Arguments: json.RawMessage(`{"to":"v41"}`)})
	require.NoError(t, err)
	require.True(t, created)
	a := out.(approval.Approval)
	require.Equal(t, approval.OriginAPI, a.Origin)
	_, created, err = e.svc.RequestApproval(context.Background(), k, agent.ApprovalRequest{ID: "rollback-7",
		Tool: "rollback", Description: "Roll back api to v41", Arguments: json.RawMessage(`{"to": "v41"}`)})
	require.NoError(t, err)
	require.False(t, created, "a resend returns the first")
	_, _, err = e.svc.RequestApproval(context.Background(), k, agent.ApprovalRequest{ID: "rollback-7", Tool: "rollback"})
	require.ErrorIs(t, err, agent.ErrApprovalConflict, "the id with other arguments")

	require.Empty(t, e.click(t, a.ID, "U0JANE", true))
	require.Empty(t, e.resumer.calls)
	require.Len(t, e.emitter.signals, 1)
	sig := e.emitter.signals[0]
	require.Equal(t, `<approval tool="rollback" decision="approved" by="Jane">Roll back api to v41</approval>`, sig.XML())
	require.Equal(t, "approval-"+a.ID, sig.ID, "a stable id: a resend is not delivered twice")
}

func mustPolicy(t *testing.T) *inbox.Policy {
	p, err := inbox.NewPolicy(inbox.PolicyConfig{})
	require.NoError(t, err)
	return p
}

func TestConfigValidate(t *testing.T) {
	slack := map[string]bool{"acme": true, "socket": false}
	require.NoError(t, approval.Config{}.Validate(slack))
	require.NoError(t, approval.Config{SlackConnector: "acme", Approvers: []string{"U0JANE", "S0OPS"}}.Validate(slack))
	for cfg, want := range map[*approval.Config]string{
		{Approvers: []string{"U1"}}:                                                    "slack_connector: required",
		{SlackConnector: "nope", Approvers: []string{"U1"}}:                            `slack_connector: no connectors.slack entry named "nope"`,
		{SlackConnector: "socket", Approvers: []string{"U1"}}:                          "slack_connector: connectors.slack \"socket\" needs bot_token",
		{SlackConnector: "acme"}:                                                       "approvers: required",
		{SlackConnector: "acme", Approvers: []string{"jane"}}:                          `approvers[0]: "jane" is not a Slack user id`,
		{SlackConnector: "acme", Approvers: []string{"C0CHAN"}}:                        `approvers[0]: "C0CHAN" is not a Slack user id`,
		{SlackConnector: "acme", Approvers: []string{"U1"}, Channel: "#ops"}:           `channel: "#ops" is not a Slack channel id`,
		{SlackConnector: "acme", Approvers: []string{"U1"}, ExpireAfter: -time.Second}: "expire_after: must not be negative",
	} {
		require.ErrorContains(t, cfg.Validate(slack), want)
	}
}

// Clicks taken for later are decided by the running service's worker, one after the
// other, and their notices reach the clicker; a stopped service takes none.
func TestClicksDecidedLater(t *testing.T) {
	e := newEnv(t, approval.Config{Channel: "C0APPROVE"})
	a := e.mastraApproval(t, "call-1")
	click := func(user string) approval.Click {
		return approval.Click{Connector: "acme", ApprovalID: a.ID, Approve: true, UserID: user, UserName: "Jane"}
	}
	notices := make(chan string, 2)
	answer := func(_ context.Context, n string) { notices <- n }
	require.False(t, e.svc.Later(click("U0JANE"), answer), "not running: decided within the request")

	require.NoError(t, e.svc.Start(context.Background()))
	require.True(t, e.svc.Later(click("U0EVE"), answer))
	require.True(t, e.svc.Later(click("U0JANE"), answer))
	require.True(t, e.svc.Later(click("U0JANE"), answer))
	require.Contains(t, <-notices, "not one of the approvers")
	require.Contains(t, <-notices, "already approved by Jane", "the approver's click said nothing; the replay is told")
	require.NoError(t, e.svc.Stop(context.Background()))
	require.Equal(t, approval.StatusApproved, e.get(t, a.ID).Status)
	require.Equal(t, []string{"call-1 approved"}, e.resumer.calls)
	require.False(t, e.svc.Later(click("U0JANE"), answer), "stopped")
}

// A Mastra call id longer than the store keeps is not cut onto another call's approval.
func TestLongCallIDNotCut(t *testing.T) {
	e := newEnv(t, approval.Config{Channel: "C0APPROVE"})
	long := strings.Repeat("c", approval.MaxCallID)
	a := e.mastraApproval(t, long)
	e.svc.ToolApproval(context.Background(), k, "run-1", long+"-2", "deploy", json.RawMessage(`{"env":"prod"}`))
	require.Len(t, e.slack.posts, 1, "the longer id is refused")
	_, _, err := e.svc.Request(context.Background(), approval.Request{Thread: k, Origin: approval.OriginMastra, ToolCallID: long + "-2", Tool: "deploy"})
	require.ErrorIs(t, err, approval.ErrCallIDTooLong)
	page, _, err := store.NewApprovals(e.st).ListApprovals(context.Background(), approval.Filter{})
	require.NoError(t, err)
	require.Len(t, page, 1)
	require.Equal(t, a.ID, page[0].ID)
}

// Followers are given the relay before the service exists; once built, the service
// hears what they report through it: a tool approval is recorded and posted, and the
// run's end expires it.
func TestRelayReachesTheServiceBuiltAfterIt(t *testing.T) {
	relay := approval.NewRelay()
	ctx := context.Background()
	relay.ToolApproval(ctx, k, "run-0", "call-early", "deploy", json.RawMessage(`{}`)) // before: nobody listens
	st := storetest.OpenSQLite(t)
	approvals := store.NewApprovals(st)
	slack := &fakeSlack{}
	svc := approval.New(approval.Config{SlackConnector: "acme", Channel: "C0APPROVE", Approvers: []string{"U0JANE"}},
		approval.Deps{Store: approvals, Places: approvals, Slack: slack, Emitter: &fakeEmitter{}, Relay: relay,
			Base: service.Base{Now: func() time.Time { return t0 }}})
	require.NotNil(t, svc)

	relay.ToolApproval(ctx, k, "run-1", "call-1", "deploy", json.RawMessage(`{"env":"prod"}`))
	page, _, err := approvals.ListApprovals(ctx, approval.Filter{})
	require.NoError(t, err)
	require.Len(t, page, 1)
	require.Equal(t, "call-1", page[0].ToolCallID)
	require.Equal(t, approval.StatusPending, page[0].Status)

	relay.RunEnded(ctx, k, "run-1")
	page, _, err = approvals.ListApprovals(ctx, approval.Filter{})
	require.NoError(t, err)
	require.Equal(t, approval.StatusExpired, page[0].Status)
}

// Reconcile against Mastra's suspended runs: a pending approval whose call Mastra no
// longer lists expires (and its Slack message says so); a suspended call needing
// approval without one gets one, posted; one already there is kept as it is; a call that
// suspended for an answer (ask_user) gets a question, posted; another agent's approvals stay.
func TestReconcileWithSuspendedRuns(t *testing.T) {
	e := newEnv(t, approval.Config{Channel: "C0APPROVE"})
	approvals := store.NewApprovals(e.st)
	gone := e.mastraApproval(t, "call-gone")
	kept := e.mastraApproval(t, "call-kept")
	other := inbox.ThreadKey{Agent: "coder", Resource: "acme/api", Thread: "t9"}
	e.svc.ToolApproval(context.Background(), other, "run-9", "call-other", "deploy", nil)
	posts := len(e.slack.posts)

	k2 := inbox.ThreadKey{Agent: "support", Resource: "acme/api", Thread: "t2"}
	require.NoError(t, e.svc.Reconcile(context.Background(), "support", []approval.SuspendedCall{
		{Thread: k, RunID: "run-1", ToolCallID: "call-kept", Tool: "deploy", RequiresApproval: true},
		{Thread: k2, RunID: "run-2", ToolCallID: "call-new", Tool: "deploy", Args: json.RawMessage(`{"env":"staging"}`), RequiresApproval: true},
		{Thread: k2, RunID: "run-2", ToolCallID: "call-ask", Tool: "ask_user", SuspendPayload: json.RawMessage(`{"question":"Which env?"}`)},
	}))
	require.Equal(t, approval.StatusExpired, e.get(t, gone.ID).Status, "its run is gone")
	require.Equal(t, approval.StatusPending, e.get(t, kept.ID).Status)
	page, _, err := approvals.ListApprovals(context.Background(), approval.Filter{Agent: "support", Thread: "t2"})
	require.NoError(t, err)
	require.Len(t, page, 2, "an approval for the suspended call that had none, a question for ask_user")
	byCall := map[string]approval.Approval{page[0].ToolCallID: page[0], page[1].ToolCallID: page[1]}
	require.Equal(t, "run-2", byCall["call-new"].RunID)
	require.Equal(t, approval.KindApproval, byCall["call-new"].Kind)
	require.Equal(t, approval.StatusPending, byCall["call-new"].Status)
	require.Equal(t, approval.KindQuestion, byCall["call-ask"].Kind)
	require.Equal(t, "Which env?", byCall["call-ask"].Description)
	require.Equal(t, approval.StatusPending, byCall["call-ask"].Status)
	require.Len(t, e.slack.posts, posts+2, "posted like any other")

	// A question whose run is gone expires like an approval.
	require.NoError(t, e.svc.Reconcile(context.Background(), "support", nil))
	require.Equal(t, approval.StatusExpired, e.get(t, byCall["call-ask"].ID).Status)
	page, _, err = approvals.ListApprovals(context.Background(), approval.Filter{Agent: "coder"})
	require.NoError(t, err)
	require.Equal(t, approval.StatusPending, page[0].Status, "another agent's approvals are not touched")
}

package approval_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/approval"
	"github.com/signalgate/signalgate/service"
	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/store/storetest"
)

// questionTS is where fakeSlack posts every message.
const questionTS = "1700000000.000001"

// eachStore runs f on a fresh env per store backend (SQLite; PostgreSQL when configured).
func eachStore(t *testing.T, cfg approval.Config, f func(t *testing.T, e *env)) {
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) { f(t, newEnvOn(t, cfg, storetest.Open(t, b))) })
	}
}

func (e *env) question(t *testing.T, call string) approval.Approval {
	t.Helper()
	e.svc.ToolSuspended(context.Background(), k, "run-1", call, "ask_user",
		json.RawMessage(`{"question":"Which <!channel> environment?","options":[{"label":"staging"},{"label":"prod"}]}`))
	page, _, err := store.NewApprovals(e.st).ListApprovals(context.Background(), approval.Filter{})
	require.NoError(t, err)
	for _, a := range page {
		if a.ToolCallID == call {
			return a
		}
	}
	t.Fatalf("no question for %s", call)
	return approval.Approval{}
}

// reply is Jane's threaded answer "staging" to the question posted at questionTS.
func reply(user, text string) approval.Reply {
	return approval.Reply{Connector: "acme", Channel: "C0APPROVE", ThreadTS: questionTS, TS: "1700000000.000900",
		UserID: user, UserName: map[string]string{"U0JANE": "Jane", "U0BOB": "Bob"}[user], Text: text}
}

func (e *env) answer(t *testing.T, r approval.Reply) string {
	t.Helper()
	notice, err := e.svc.Answer(context.Background(), r)
	require.NoError(t, err)
	return notice
}

// A tool-call-suspended is posted like an approval; the first threaded reply by an
// approver resumes the run with its text, once. A stranger's reply, a reply in another
// thread or through another Slack app, the same reply redelivered, a later approver's
// reply and a forged button click on the question resume nothing.
func TestQuestionAnsweredByFirstApproverReply(t *testing.T) {
	eachStore(t, approval.Config{Channel: "C0APPROVE"}, func(t *testing.T, e *env) {
		q := e.question(t, "call-ask")
		require.Equal(t, approval.KindQuestion, q.Kind)
		require.Equal(t, "Which <!channel> environment?", q.Description)
		require.Equal(t, []string{"C0APPROVE/"}, e.slack.posts)
		require.Equal(t, questionTS, q.MessageTS)

		other := reply("U0JANE", "prod")
		other.ThreadTS = "1700000000.000777"
		require.Empty(t, e.answer(t, other), "a reply in an unrelated thread is conversation")
		other = reply("U0JANE", "prod")
		other.Channel = "C0ELSE"
		require.Empty(t, e.answer(t, other))
		other = reply("U0JANE", "prod")
		other.Connector = "another-app"
		require.Empty(t, e.answer(t, other))
		require.Contains(t, e.answer(t, reply("U0EVE", "prod")), "not one of the approvers")
		notice, err := e.svc.Decide(context.Background(), approval.Click{Connector: "acme", ApprovalID: q.ID, Approve: true, UserID: "U0JANE"})
		require.NoError(t, err)
		require.Contains(t, notice, "reply in its thread")
		require.Empty(t, e.resumer.calls, "nothing resumed the run")
		require.Equal(t, approval.StatusPending, e.get(t, q.ID).Status)

		e.now = t0.Add(time.Minute)
		require.Empty(t, e.answer(t, reply("U0JANE", "  staging ")))
		require.Equal(t, []string{"call-ask answered staging"}, e.resumer.calls)
		got := e.get(t, q.ID)
		require.Equal(t, approval.StatusAnswered, got.Status)
		require.Equal(t, "staging", got.Answer)
		require.Equal(t, "Jane", got.DecidedByName)
		require.Equal(t, t0.Add(time.Minute), *got.DecidedAt)
		require.Len(t, e.slack.updates, 1)
		require.Equal(t, approval.StatusAnswered, e.slack.updates[0].Status)

		require.Empty(t, e.answer(t, reply("U0JANE", "  staging ")), "redelivered")
		require.Empty(t, e.answer(t, reply("U0BOB", "prod")), "a later approver's reply")
		require.Empty(t, e.answer(t, reply("U0EVE", "prod")), "a stranger's reply after the answer")
		require.Len(t, e.resumer.calls, 1, "resumed once")
		require.Len(t, e.slack.updates, 1)
		require.Equal(t, "staging", e.get(t, q.ID).Answer)

		// A replayed chunk posts nothing new; the run's end leaves the answer as it is.
		e.svc.ToolSuspended(context.Background(), k, "run-1", "call-ask", "ask_user", json.RawMessage(`{"question":"?"}`))
		require.Len(t, e.slack.posts, 1)
		e.svc.RunEnded(context.Background(), k, "run-1")
		require.Equal(t, approval.StatusAnswered, e.get(t, q.ID).Status)
	})
}

// Replies racing on two replicas (two approvers at once, or one reply delivered to both)
// resume the run once.
func TestQuestionAnsweredOnceAcrossReplicas(t *testing.T) {
	eachStore(t, approval.Config{Channel: "C0APPROVE"}, func(t *testing.T, e *env) {
		approvals := store.NewApprovals(e.st)
		q := e.question(t, "call-ask")
		second := approval.New(approval.Config{SlackConnector: "acme", Channel: "C0APPROVE", Approvers: []string{"U0JANE", "S0OPS"}},
			approval.Deps{Store: approvals, Places: approvals, Slack: e.slack, Resumer: e.resumer, Emitter: e.emitter,
				Base: service.Base{Now: func() time.Time { return t0 }}})
		var wg sync.WaitGroup
		for i, r := range []approval.Reply{reply("U0JANE", "staging"), reply("U0BOB", "prod"), reply("U0JANE", "staging")} {
			svc := []*approval.Service{e.svc, second}[i%2]
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := svc.Answer(context.Background(), r)
				require.NoError(t, err)
			}()
		}
		wg.Wait()
		require.Len(t, e.resumer.calls, 1)
		require.Equal(t, approval.StatusAnswered, e.get(t, q.ID).Status)
	})
}

// A question posted inside a conversation's thread is answered by the next approver
// reply in that thread; replies from before it was posted are not its answer.
func TestQuestionInsideAThread(t *testing.T) {
	eachStore(t, approval.Config{Channel: "C0APPROVE"}, func(t *testing.T, e *env) {
		q := e.question(t, "call-ask")
		require.NoError(t, store.NewApprovals(e.st).SetApprovalMessage(context.Background(), q.ID, "acme", "C0OPS", "1700000000.000500",
			"1700000000.000100", "", t0))
		r := approval.Reply{Connector: "acme", Channel: "C0OPS", ThreadTS: "1700000000.000100", TS: "1700000000.000400",
			UserID: "U0JANE", Text: "earlier"}
		require.Empty(t, e.answer(t, r))
		require.Empty(t, e.resumer.calls, "posted before the question")
		r.TS, r.Text = "1700000000.000600", "staging"
		require.Empty(t, e.answer(t, r))
		require.Equal(t, []string{"call-ask answered staging"}, e.resumer.calls)
	})
}

// An answer Mastra did not take leaves the question open (a later reply can answer);
// one Mastra no longer waits for expires it.
func TestQuestionNotDelivered(t *testing.T) {
	e := newEnv(t, approval.Config{Channel: "C0APPROVE", ExpireAfter: time.Hour})
	q := e.question(t, "call-ask")
	e.resumer.err = errors.New("connection refused")
	require.Contains(t, e.answer(t, reply("U0JANE", "staging")), "still open")
	got := e.get(t, q.ID)
	require.Equal(t, approval.StatusPending, got.Status)
	require.Empty(t, got.Answer)
	require.Empty(t, e.slack.updates)

	e.resumer.err = approval.ErrStale
	require.Contains(t, e.answer(t, reply("U0BOB", "prod")), "no longer waits")
	require.Equal(t, approval.StatusExpired, e.get(t, q.ID).Status)
	e.resumer.err = nil
	require.Empty(t, e.answer(t, reply("U0JANE", "staging")))
	require.Empty(t, e.resumer.calls)

	late := e.question(t, "call-late")
	require.NoError(t, store.NewApprovals(e.st).SetApprovalMessage(context.Background(), late.ID, "acme", "C0APPROVE", "1700000000.000002", "", "", t0))
	e.now = t0.Add(2 * time.Hour)
	r := reply("U0JANE", "staging")
	r.ThreadTS = "1700000000.000002"
	require.Contains(t, e.answer(t, r), "expired")
	require.Equal(t, approval.StatusExpired, e.get(t, late.ID).Status)
	require.Empty(t, e.resumer.calls)
}

// A runtime's interrupt (a LangGraph thread waiting on interrupt()) is a question of its
// origin: asked by two replicas reading the same thread at once it is recorded and
// posted once, a string payload is its text, and the reply resumes it through the
// runtime.
func TestRuntimeQuestionOnceAcrossReplicas(t *testing.T) {
	eachStore(t, approval.Config{Channel: "C0APPROVE"}, func(t *testing.T, e *env) {
		second := approval.New(approval.Config{SlackConnector: "acme", Channel: "C0APPROVE", Approvers: []string{"U0JANE", "S0OPS"}},
			approval.Deps{Store: store.NewApprovals(e.st), Places: store.NewApprovals(e.st), Slack: e.slack, Resumer: e.resumer, Emitter: e.emitter,
				Base: service.Base{Now: func() time.Time { return t0 }}})
		relay := approval.NewRelay()
		var wg sync.WaitGroup
		for _, ask := range []func(){
			func() {
				e.svc.Question(context.Background(), approval.OriginLangGraph, k, "gw-run-1", "intr-1", "interrupt", json.RawMessage(`"Deploy to prod?"`))
			},
			func() {
				second.Question(context.Background(), approval.OriginLangGraph, k, "gw-run-1", "intr-1", "interrupt", json.RawMessage(`"Deploy to prod?"`))
			},
			func() { // nobody listens to this relay: nothing happens
				relay.Question(context.Background(), approval.OriginLangGraph, k, "gw-run-1", "intr-1", "interrupt", nil)
			},
		} {
			wg.Add(1)
			go func() { defer wg.Done(); ask() }()
		}
		wg.Wait()
		require.Len(t, e.slack.posts, 1, "posted once")
		page, _, err := store.NewApprovals(e.st).ListApprovals(context.Background(), approval.Filter{})
		require.NoError(t, err)
		require.Len(t, page, 1)
		q := page[0]
		require.Equal(t, approval.OriginLangGraph, q.Origin)
		require.Equal(t, approval.KindQuestion, q.Kind)
		require.Equal(t, "Deploy to prod?", q.Description)
		require.Equal(t, "intr-1", q.ToolCallID)
		require.Empty(t, e.answer(t, reply("U0JANE", "yes")))
		require.Equal(t, []string{"intr-1 answered yes"}, e.resumer.calls)
	})
}

package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/approval"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/store"
)

func newApproval(id, call string, at time.Time) approval.Approval {
	return approval.Approval{ID: id, ThreadKey: thread, Origin: approval.OriginMastra, RunID: "run-1", ToolCallID: call,
		Tool: "deploy", Arguments: json.RawMessage(`{"env":"prod"}`), Status: approval.StatusPending,
		CreatedAt: at, ExpiresAt: at.Add(time.Hour), UpdatedAt: at}
}

func TestApprovalLifecycle(t *testing.T) {
	forEach(t, func(t *testing.T, s *store.DB, _ *inbox.Service) {
		approvals := store.NewApprovals(s)
		ctx := context.Background()
		a, created, err := approvals.CreateApproval(ctx, newApproval("a1", "call-1", t0))
		require.NoError(t, err)
		require.True(t, created)
		require.Equal(t, approval.StatusPending, a.Status)
		require.JSONEq(t, `{"env":"prod"}`, string(a.Arguments))
		require.Equal(t, t0, a.CreatedAt)

		again, created, err := approvals.CreateApproval(ctx, newApproval("a2", "call-1", t0.Add(time.Second)))
		require.NoError(t, err)
		require.False(t, created, "one approval per tool call of a thread")
		require.Equal(t, "a1", again.ID)

		require.NoError(t, approvals.SetApprovalMessage(ctx, "a1", "acme", "C1", "1700000000.000100", "1699999999.000001", "", t0))
		got, err := approvals.GetApproval(ctx, "a1")
		require.NoError(t, err)
		require.Equal(t, "C1", got.Channel)
		require.Equal(t, "1700000000.000100", got.MessageTS)

		decided, changed, err := approvals.DecideApproval(ctx, "a1", approval.StatusApproved, "U1", "Jane", t0.Add(time.Minute))
		require.NoError(t, err)
		require.True(t, changed)
		require.Equal(t, approval.StatusApproved, decided.Status)
		require.Equal(t, "Jane", decided.DecidedByName)
		require.Equal(t, t0.Add(time.Minute), *decided.DecidedAt)

		second, changed, err := approvals.DecideApproval(ctx, "a1", approval.StatusDeclined, "U2", "Bob", t0.Add(2*time.Minute))
		require.NoError(t, err)
		require.False(t, changed, "decided once")
		require.Equal(t, approval.StatusApproved, second.Status)
		require.Equal(t, "U1", second.DecidedBy)

		ok, err := approvals.ReopenApproval(ctx, "a1", approval.StatusDeclined, t0)
		require.NoError(t, err)
		require.False(t, ok, "reopens only from the status it was given")
		ok, err = approvals.ReopenApproval(ctx, "a1", approval.StatusApproved, t0)
		require.NoError(t, err)
		require.True(t, ok)
		got, err = approvals.GetApproval(ctx, "a1")
		require.NoError(t, err)
		require.Equal(t, approval.StatusPending, got.Status)
		require.Nil(t, got.DecidedAt)

		_, err = approvals.GetApproval(ctx, "missing")
		require.ErrorIs(t, err, inbox.ErrNotFound)
		_, _, err = approvals.DecideApproval(ctx, "missing", approval.StatusApproved, "U1", "", t0)
		require.ErrorIs(t, err, inbox.ErrNotFound)
	})
}

func TestApprovalExpiry(t *testing.T) {
	forEach(t, func(t *testing.T, s *store.DB, _ *inbox.Service) {
		approvals := store.NewApprovals(s)
		ctx := context.Background()
		for i, call := range []string{"c1", "c2", "c3"} {
			a := newApproval("e"+call, call, t0.Add(time.Duration(i)*time.Minute))
			if call == "c3" {
				a.RunID = "run-2"
			}
			_, _, err := approvals.CreateApproval(ctx, a)
			require.NoError(t, err)
		}
		none, err := approvals.ExpireApprovals(ctx, t0.Add(30*time.Minute), 10)
		require.NoError(t, err)
		require.Empty(t, none)
		exp, err := approvals.ExpireApprovals(ctx, t0.Add(time.Hour+30*time.Second), 10)
		require.NoError(t, err)
		require.Len(t, exp, 1)
		require.Equal(t, "ec1", exp[0].ID)
		require.Equal(t, approval.StatusExpired, exp[0].Status)
		require.Nil(t, exp[0].DecidedAt, "nobody decided")

		exp, err = approvals.ExpireRunApprovals(ctx, thread, "run-2", "", t0)
		require.NoError(t, err)
		require.Len(t, exp, 1, "only the ended run's")
		require.Equal(t, "ec3", exp[0].ID)
		exp, err = approvals.ExpireRunApprovals(ctx, thread, "", "c2", t0)
		require.NoError(t, err)
		require.Len(t, exp, 1)
		exp, err = approvals.ExpireRunApprovals(ctx, thread, "", "c2", t0)
		require.NoError(t, err)
		require.Empty(t, exp, "expired once")
	})
}

func TestListApprovals(t *testing.T) {
	forEach(t, func(t *testing.T, s *store.DB, _ *inbox.Service) {
		approvals := store.NewApprovals(s)
		ctx := context.Background()
		for i := range 5 {
			a := newApproval("l"+string(rune('a'+i)), "call-"+string(rune('a'+i)), t0.Add(time.Duration(i)*time.Second))
			if i == 4 {
				a.Tool = "rollback"
			}
			_, _, err := approvals.CreateApproval(ctx, a)
			require.NoError(t, err)
		}
		_, _, err := approvals.DecideApproval(ctx, "lb", approval.StatusDeclined, "U1", "", t0)
		require.NoError(t, err)

		page, next, err := approvals.ListApprovals(ctx, approval.Filter{Limit: 2})
		require.NoError(t, err)
		require.Equal(t, []string{"le", "ld"}, ids(page))
		page, next, err = approvals.ListApprovals(ctx, approval.Filter{Limit: 2, Cursor: next})
		require.NoError(t, err)
		require.Equal(t, []string{"lc", "lb"}, ids(page))
		page, next, err = approvals.ListApprovals(ctx, approval.Filter{Limit: 2, Cursor: next})
		require.NoError(t, err)
		require.Equal(t, []string{"la"}, ids(page))
		require.Empty(t, next)

		page, _, err = approvals.ListApprovals(ctx, approval.Filter{Status: []approval.Status{approval.StatusDeclined}})
		require.NoError(t, err)
		require.Equal(t, []string{"lb"}, ids(page))
		page, _, err = approvals.ListApprovals(ctx, approval.Filter{Tool: "rollback", Agent: thread.Agent, Thread: thread.Thread})
		require.NoError(t, err)
		require.Equal(t, []string{"le"}, ids(page))
		_, _, err = approvals.ListApprovals(ctx, approval.Filter{Cursor: "not-a-cursor"})
		require.ErrorIs(t, err, inbox.ErrBadCursor)
	})
}

// Arguments a model wrote are stored within bounds; hostile text (NUL, invalid
// UTF-8) does not break either database.
func TestApprovalBoundsAndHostileText(t *testing.T) {
	forEach(t, func(t *testing.T, s *store.DB, _ *inbox.Service) {
		ctx := context.Background()
		raw := json.RawMessage(`"` + strings.Repeat("x", 100_000) + `"`)
		args, cut := approval.BoundArguments(raw)
		require.True(t, cut)
		require.LessOrEqual(t, len(args), approval.MaxArguments)
		a := newApproval("h1", "call-\x00\xff", t0)
		a.Arguments, a.Truncated, a.Tool = args, cut, "de\x00ploy"
		got, created, err := store.NewApprovals(s).CreateApproval(ctx, a)
		require.NoError(t, err)
		require.True(t, created)
		require.True(t, got.Truncated)
		require.True(t, json.Valid(got.Arguments))
		require.NotContains(t, got.Tool, "\x00")
	})
}

func TestLastSlackMessage(t *testing.T) {
	forEach(t, func(t *testing.T, s *store.DB, svc *inbox.Service) {
		approvals := store.NewApprovals(s)
		ctx := context.Background()
		_, ok, err := approvals.LastSlackMessage(ctx, thread, "acme")
		require.NoError(t, err)
		require.False(t, ok)
		for i, ts := range []string{"1700000000.000100", "1700000001.000200"} {
			ev := &inbox.Event{Source: "slack", Connector: "acme", DeliveryID: "Ev" + ts, Type: "message", Body: []byte(`{}`)}
			n := inbox.Notification{Thread: thread, Source: "slack", Kind: "dm", Summary: "hi",
				Attributes: inbox.Attributes{}.Set("channel", "D0DM").Set("ts", ts),
				Payload:    json.RawMessage(fmt.Sprintf(`{"channel_type":"im","n":%d}`, i))}
			_, err := svc.Ingest(ctx, ev, []inbox.Notification{n})
			require.NoError(t, err)
		}
		// An agent named like the Slack connector labels its own notification "slack" to
		// choose where approvals go: its event came through the agent API, so it does not count.
		planted := &inbox.Event{Source: "agent-api", Connector: "acme", DeliveryID: "planted", Type: "notification", Body: []byte(`{}`)}
		_, err = svc.Ingest(ctx, planted, []inbox.Notification{{Thread: thread, Source: "slack", Kind: "dm", Summary: "planted",
			Attributes: inbox.Attributes{}.Set("channel", "C0EXECPRIV").Set("ts", "1700000002.000300")}})
		require.NoError(t, err)
		p, ok, err := approvals.LastSlackMessage(ctx, thread, "acme")
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, approval.SlackPlace{Channel: "D0DM", ChannelType: "im", TS: "1700000001.000200"}, p)
		_, ok, err = approvals.LastSlackMessage(ctx, thread, "other")
		require.NoError(t, err)
		require.False(t, ok, "another connector's messages do not count")
	})
}

func ids(as []approval.Approval) []string {
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = a.ID
	}
	return out
}

// The decisions an approval's thread has not logged yet: decided or expired API
// approvals of the window, not the pending, the Mastra or the delivered ones.
func TestUndeliveredApprovals(t *testing.T) {
	forEach(t, func(t *testing.T, s *store.DB, _ *inbox.Service) {
		approvals := store.NewApprovals(s)
		frames := store.NewFrames(s)
		ctx := context.Background()
		mk := func(id, origin string, at time.Time, status approval.Status) {
			a := newApproval(id, "call-"+id, at)
			a.Origin = origin
			_, _, err := approvals.CreateApproval(ctx, a)
			require.NoError(t, err)
			if status != approval.StatusPending {
				_, changed, err := approvals.DecideApproval(ctx, id, status, "U1", "Jane", at.Add(time.Minute))
				require.NoError(t, err)
				require.True(t, changed)
			}
		}
		mk("old", approval.OriginAPI, t0.Add(-time.Hour), approval.StatusApproved)
		mk("waits", approval.OriginAPI, t0, approval.StatusApproved)
		mk("expired", approval.OriginAPI, t0.Add(time.Second), approval.StatusExpired)
		mk("sent", approval.OriginAPI, t0.Add(2*time.Second), approval.StatusDeclined)
		mk("pending", approval.OriginAPI, t0.Add(3*time.Second), approval.StatusPending)
		mk("mastra", approval.OriginMastra, t0.Add(4*time.Second), approval.StatusApproved)
		mk("recent", approval.OriginAPI, t0.Add(time.Hour), approval.StatusApproved)
		_, _, err := frames.AppendFrame(ctx, signalFrame(approval.SignalPrefix+"sent", thread, t0.Add(3*time.Minute)))
		require.NoError(t, err)
		_, _, err = frames.AppendFrame(ctx, signalFrame(approval.SignalPrefix+"waits", inbox.ThreadKey{Agent: thread.Agent,
			Resource: thread.Resource, Thread: "another"}, t0.Add(3*time.Minute)))
		require.NoError(t, err)

		got, err := approvals.UndeliveredApprovals(ctx, t0, t0, t0.Add(10*time.Minute), 10)
		require.NoError(t, err)
		require.Equal(t, []string{"waits", "expired"}, ids(got), "another thread's frame of the id is not this one's")
		got, err = approvals.UndeliveredApprovals(ctx, t0, t0, t0.Add(10*time.Minute), 1)
		require.NoError(t, err)
		require.Len(t, got, 1)
		got, err = approvals.UndeliveredApprovals(ctx, t0, t0.Add(61*time.Second), t0.Add(10*time.Minute), 10)
		require.NoError(t, err)
		require.Equal(t, []string{"expired"}, ids(got), "a decision made before decidedSince is given up")
	})
}

// A question is answered once, with its text; a reopened one forgets the answer; a
// reply finds it by its own message or by the thread it was posted in, and approvals
// (buttons) are never found as questions.
func TestQuestionAnswerOnce(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *store.DB) {
		approvals := store.NewApprovals(s)
		ctx := context.Background()
		q := newApproval("q1", "call-q", t0)
		q.Kind, q.Tool = approval.KindQuestion, "ask_user"
		_, _, err := approvals.CreateApproval(ctx, q)
		require.NoError(t, err)
		_, _, err = approvals.CreateApproval(ctx, newApproval("a1", "call-a", t0))
		require.NoError(t, err)
		require.NoError(t, approvals.SetApprovalMessage(ctx, "q1", "acme", "C1", "1700000000.000200", "1700000000.000100", "", t0))
		require.NoError(t, approvals.SetApprovalMessage(ctx, "a1", "acme", "C1", "1700000000.000300", "1700000000.000100", "", t0))

		for _, ts := range []string{"1700000000.000200", "1700000000.000100"} {
			qs, err := approvals.QuestionsInThread(ctx, "acme", "C1", ts, 10)
			require.NoError(t, err)
			require.Len(t, qs, 1)
			require.Equal(t, "q1", qs[0].ID)
			require.Equal(t, approval.KindQuestion, qs[0].Kind)
		}
		qs, err := approvals.QuestionsInThread(ctx, "acme", "C1", "1700000000.000300", 10)
		require.NoError(t, err)
		require.Empty(t, qs, "an approval is not a question")
		qs, err = approvals.QuestionsInThread(ctx, "other", "C1", "1700000000.000200", 10)
		require.NoError(t, err)
		require.Empty(t, qs)

		_, changed, err := approvals.AnswerApproval(ctx, "a1", "yes", "U1", "Jane", t0)
		require.NoError(t, err)
		require.False(t, changed, "an approval is decided by its buttons, never answered")
		got, changed, err := approvals.AnswerApproval(ctx, "q1", "staging", "U1", "Jane", t0.Add(time.Minute))
		require.NoError(t, err)
		require.True(t, changed)
		require.Equal(t, approval.StatusAnswered, got.Status)
		require.Equal(t, "staging", got.Answer)
		require.Equal(t, "Jane", got.DecidedByName)
		again, changed, err := approvals.AnswerApproval(ctx, "q1", "prod", "U2", "Bob", t0.Add(2*time.Minute))
		require.NoError(t, err)
		require.False(t, changed, "answered once")
		require.Equal(t, "staging", again.Answer)

		ok, err := approvals.ReopenApproval(ctx, "q1", approval.StatusAnswered, t0)
		require.NoError(t, err)
		require.True(t, ok)
		got, err = approvals.GetApproval(ctx, "q1")
		require.NoError(t, err)
		require.Equal(t, approval.StatusPending, got.Status)
		require.Empty(t, got.Answer)
		a, err := approvals.GetApproval(ctx, "a1")
		require.NoError(t, err)
		require.Equal(t, approval.KindApproval, a.Kind, "approvals created without a kind are approvals")
	})
}

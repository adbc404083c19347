package slack

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/approval"
	"github.com/signalgate/signalgate/connectors/slack/webapitest"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/service"
	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/store/storetest"
)

// A question is posted without buttons, saying how to answer; its text (a model wrote
// it) mentions nobody and links nowhere, in the plain text and the blocks alike, and so
// does the answer shown once it is answered.
func TestPostAndUpdateQuestion(t *testing.T) {
	api := webapitest.New(t)
	h := newHarness(t, approvalConfig(api), harnessOpts{})
	m := h.messenger(time.Minute)
	a := sampleApproval()
	a.Kind, a.Tool, a.Description = approval.KindQuestion, "ask_user", "Which <!channel> env? <https://evil.example|click> & co"
	a.Arguments = json.RawMessage(`{"question":"x","options":[{"label":"<!here> staging"},{"label":"prod"}]}`)

	_, ts, err := m.PostApproval(context.Background(), "acme", "C0APPROVE", "", a)
	require.NoError(t, err)
	call := nextCall(t, api)
	require.Equal(t, "chat.postMessage", call.Method)
	require.Equal(t, "support asks: Which &lt;!channel&gt; env? &lt;https://evil.example|click&gt; &amp; co (reply in this thread to answer)",
		call.Form.Get("text"))
	blocks := call.Form.Get("blocks")
	require.NotContains(t, blocks, ActionApprove, "no buttons: the answer is a reply")
	require.NotContains(t, blocks, "<!")
	require.Contains(t, blocks, "Reply in this thread to answer")
	require.Contains(t, blocks, `Options: \u0026lt;!here\u0026gt; staging · prod`)
	requireVerbatim(t, blocks)

	at := time.Date(2026, 11, 24, 9, 30, 0, 0, time.UTC)
	a.Status, a.DecidedBy, a.DecidedByName, a.DecidedAt, a.Answer = approval.StatusAnswered, "U0JANE", "Jane", &at, "<!everyone> staging"
	a.Channel, a.MessageTS = "C0APPROVE", ts
	require.NoError(t, m.UpdateApproval(context.Background(), "acme", a))
	call = nextCall(t, api)
	require.Equal(t, "chat.update", call.Method)
	require.Equal(t, "Answered by <@U0JANE> (Jane) at 2026-11-24 09:30 UTC: &lt;!everyone&gt; staging", call.Form.Get("text"))
	require.NotContains(t, call.Form.Get("blocks"), "<!")
	requireVerbatim(t, call.Form.Get("blocks"))
}

// answerResumer records the answers Mastra would get.
type answerResumer struct {
	mu      sync.Mutex
	answers []string
}

func (r *answerResumer) SendToolApproval(context.Context, inbox.ThreadKey, string, bool) error {
	return nil
}

func (r *answerResumer) Answer(_ context.Context, _ inbox.ThreadKey, call string, resumeData any) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.answers = append(r.answers, fmt.Sprintf("%s %v", call, resumeData))
	return nil
}

func (r *answerResumer) got() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.answers...)
}

type noEmitter struct{}

func (noEmitter) Emit(context.Context, inbox.ThreadKey, agent.Signal) error { return nil }

// questionEnv is the Slack connector wired to a real approvals service on a store, as
// the gateway wires them, with a question posted in C0APPROVE.
type questionEnv struct {
	h       *harness
	api     *webapitest.Server
	st      *store.DB
	resumer *answerResumer
	q       approval.Approval
}

func newQuestionEnv(t *testing.T, st *store.DB) *questionEnv {
	approvals := store.NewApprovals(st)
	api := webapitest.New(t)
	api.SetGroup("S0OPS", "U0BOB")
	cfg := approvalConfig(api)
	e := &questionEnv{api: api, st: st, resumer: &answerResumer{}}
	msgr := NewMessenger([]Config{cfg}, time.Minute, slog.New(slog.DiscardHandler), time.Now)
	svc := approval.New(approval.Config{SlackConnector: "acme", Channel: "C0APPROVE", Approvers: []string{"U0JANE", "S0OPS"}},
		approval.Deps{Store: approvals, Places: approvals, Slack: msgr, Resumer: e.resumer, Emitter: noEmitter{}, Base: service.Base{}})
	e.h = newHarness(t, cfg, harnessOpts{opts: []Option{WithDecider(svc)}})
	svc.ToolSuspended(context.Background(), inbox.ThreadKey{Agent: "support", Resource: "acme/api", Thread: "t1"}, "run-1",
		"call-ask", "ask_user", json.RawMessage(`{"question":"Which environment?"}`))
	require.Equal(t, "chat.postMessage", nextCall(t, api).Method)
	page, _, err := approvals.ListApprovals(context.Background(), approval.Filter{})
	require.NoError(t, err)
	require.Len(t, page, 1)
	e.q = page[0]
	require.NotEmpty(t, e.q.MessageTS)
	return e
}

// calls drains the Web API calls made so far (the service answers within the request),
// but for group membership reads.
func (e *questionEnv) calls() []webapitest.Call {
	var out []webapitest.Call
	for {
		select {
		case c := <-e.api.Calls:
			if c.Method != "usergroups.users.list" {
				out = append(out, c)
			}
		default:
			return out
		}
	}
}

// reply posts a threaded message event (Events API) and requires a 200.
func (e *questionEnv) reply(t *testing.T, eventID, user, threadTS, ts, text string) {
	t.Helper()
	ev := with(messageEvent("C0APPROVE", "channel", ts, text), "user", user, "thread_ts", threadTS)
	rec := e.h.post(callback(t, eventID, ev))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
}

// The first threaded reply by an approver answers the question: the run resumes with
// its text once, the message shows who answered. A stranger's reply (told privately),
// a reply in an unrelated thread, the same reply redelivered and a second approver's
// later reply resume nothing. Every reply is still ingested like any other message.
func TestThreadedReplyAnswersQuestion(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			e := newQuestionEnv(t, storetest.Open(t, b))
			e.reply(t, "Ev1", "U0EVE", e.q.MessageTS, "1800000000.000100", "prod")
			calls := e.calls()
			require.Len(t, calls, 1)
			call := calls[0]
			require.Equal(t, "chat.postEphemeral", call.Method)
			require.Equal(t, "U0EVE", call.Form.Get("user"))
			require.Equal(t, e.q.MessageTS, call.Form.Get("thread_ts"))
			require.Contains(t, call.Form.Get("text"), "not one of the approvers")
			e.reply(t, "Ev2", "U0JANE", "1700000099.000001", "1800000000.000200", "prod")
			e.reply(t, "Ev3", "U0JANE", "", "1800000000.000250", "prod") // not threaded
			require.Empty(t, e.resumer.got())
			require.Empty(t, e.calls())

			e.reply(t, "Ev4", "U0JANE", e.q.MessageTS, "1800000000.000300", "staging &amp; <@U0BOB|bob>")
			require.Equal(t, []string{"call-ask staging & @bob"}, e.resumer.got())
			calls = e.calls()
			require.Len(t, calls, 1)
			call = calls[0]
			require.Equal(t, "chat.update", call.Method)
			require.Equal(t, e.q.MessageTS, call.Form.Get("ts"))
			require.Contains(t, call.Form.Get("text"), "Answered by <@U0JANE>")

			e.reply(t, "Ev4", "U0JANE", e.q.MessageTS, "1800000000.000300", "staging") // redelivered
			e.reply(t, "Ev5", "U0BOB", e.q.MessageTS, "1800000000.000400", "prod")
			e.reply(t, "Ev6", "U0EVE", e.q.MessageTS, "1800000000.000500", "prod")
			require.Len(t, e.resumer.got(), 1, "resumed once")
			require.Empty(t, e.calls(), "later replies change and say nothing")
			got, err := store.NewApprovals(e.st).GetApproval(context.Background(), e.q.ID)
			require.NoError(t, err)
			require.Equal(t, approval.StatusAnswered, got.Status)
			require.Equal(t, "staging & @bob", got.Answer)

			// Routing is unchanged: the replies were ingested like any other message.
			require.Equal(t, "Ev6", e.h.lastCall().Event.DeliveryID)
		})
	}
}

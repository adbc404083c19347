package a2a_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/approval"
	"github.com/signalgate/signalgate/connectors/slack"
	"github.com/signalgate/signalgate/delivery"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/reply"
	"github.com/signalgate/signalgate/service"
	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/store/storetest"
	"github.com/signalgate/signalgate/targets/a2a"
)

// postedSlack stands in for Slack: every message is posted at postedTS of its channel.
type postedSlack struct{ updates chan approval.Approval }

const postedTS = "1700000000.000001"

func (postedSlack) PostApproval(_ context.Context, _, channel, _ string, _ approval.Approval) (string, string, error) {
	return channel, postedTS, nil
}
func (p postedSlack) UpdateApproval(_ context.Context, _ string, a approval.Approval) error {
	p.updates <- a
	return nil
}
func (postedSlack) InGroup(context.Context, string, string, string) (bool, error) { return false, nil }

type noEmit struct{}

func (noEmit) Emit(context.Context, inbox.ThreadKey, agent.Signal) error { return nil }

// A task in input-required (or auth-required) is a question in Slack, asked once
// however many times its state is seen (the answer, a push, every poll); the first
// threaded reply of an approver goes to the agent as a message with the task's id; the
// task completes, its run closes, and reply: auto answers where the wake came from.
func TestQuestionOfATaskAnsweredFromSlack(t *testing.T) {
	for _, p := range protocols {
		for _, tc := range []struct{ agent, summary, state, question string }{
			{"ask", "deploy v2", a2a.StateInputRequired, "Approve? ("},
			{"echo", "auth-user for deploy", a2a.StateAuthRequired, "Please sign in."},
		} {
			t.Run(p.name+"/"+tc.state, func(t *testing.T) {
				relay := approval.NewRelay()
				replies := &queued{}
				e := newEnv(t, envOpts{path: p.prefix + tc.agent, qs: relay, reply: agent.ReplyAuto, replies: replies})
				slack := postedSlack{updates: make(chan approval.Approval, 4)}
				svc := approval.New(approval.Config{SlackConnector: "acme", Channel: "C0APPROVE", Approvers: []string{"U0JANE"}},
					approval.Deps{Base: service.Base{Logger: storetest.Logger(t)}, Store: store.NewApprovals(e.Store), Places: store.NewApprovals(e.Store), Slack: slack, Resumer: a2a.NewAnswers([]agent.Config{e.cfg}, nil),
						Emitter: noEmit{}, Relay: relay})
				ctx := context.Background()
				k := inbox.ThreadKey{Agent: "support", Resource: "acme/api", Thread: "question-" + p.name + "-" + tc.agent}
				e.note(k, inbox.PriorityUrgent, tc.summary)
				woke := e.waitSignals(k, 1)[0]
				asked := e.state(k, tc.state)
				// Polled a few more times in that state: still one question.
				for polled := 0; polled < 3; {
					if n := <-e.tasks.TestSignals.Polled.C(); n > 0 {
						polled++
					}
				}
				page, _, err := store.NewApprovals(e.Store).ListApprovals(ctx, approval.Filter{Agent: "support", Thread: k.Thread})
				require.NoError(t, err)
				require.Len(t, page, 1, "asked once")
				q := page[0]
				require.Equal(t, approval.KindQuestion, q.Kind)
				require.Equal(t, approval.OriginA2A, q.Origin)
				require.Equal(t, tc.state, q.Tool)
				require.Equal(t, asked.TaskID, q.RunID)
				require.Contains(t, q.Description, tc.question, "the agent's status message is the question")
				var payload map[string]any
				require.NoError(t, json.Unmarshal(q.Arguments, &payload))
				require.Equal(t, a2a.ContextID(k), payload["contextId"])
				live, err := e.Runs.Live(ctx, k)
				require.NoError(t, err)
				require.NotNil(t, live, "a task waiting for people keeps its thread busy")

				notice, err := svc.Answer(ctx, approval.Reply{Connector: "acme", Channel: "C0APPROVE", ThreadTS: postedTS,
					TS: "1800000000.000100", UserID: "U0JANE", Text: "yes, ship it"})
				require.NoError(t, err)
				require.Empty(t, notice)
				require.Equal(t, approval.StatusAnswered, (<-slack.updates).Status)
				require.Equal(t, agent.RunFinished, e.waitRunClosed(k, woke.RunID))

				got := e.received(k)
				require.Len(t, got, 2)
				require.Equal(t, got[0].TaskID, got[1].TaskID, "the answer carries the task's id")
				require.Equal(t, "yes, ship it", got[1].Text())
				rs := replies.all()
				require.Len(t, rs, 1)
				require.Equal(t, a2a.AutoReplyID(asked.TaskID), rs[0].ID)
				require.Equal(t, "answer: yes, ship it", rs[0].Text, "the completed task's answer")
			})
		}
	}
}

// reply: auto answers a completed woken task where its wake came from (the waking
// notification's verified place), under one id per task: whoever sees the task end
// (its answer, a push, a poll, any replica) queues the same reply, which the outbox
// takes once.
func TestAutoReplyGoesWhereTheWakeCameFrom(t *testing.T) {
	replies := &queued{}
	e := newEnv(t, envOpts{path: "echo", reply: agent.ReplyAuto, replies: replies,
		dispatch: []delivery.Option{delivery.WithReplyProvenance(agent.ReplyProvenance{"slack": {"slack-v0"}})}})
	k := inbox.ThreadKey{Agent: "support", Resource: "slack:T1", Thread: "dm:U1"}
	dm := reply.NewTo("slack", "acme", slack.Place{Team: "T1", Channel: "D1"})
	e.Ingest(inbox.Notification{Thread: k, Source: "slack", Kind: "message", Priority: inbox.PriorityUrgent, Summary: "is the API down?",
		Metadata: map[string]any{reply.MetadataKey: dm, agent.MetaVerifiedBy: "slack-v0"}})
	woke := e.waitSignals(k, 1)[0]
	done := e.state(k, a2a.StateCompleted)
	e.waitRunClosed(k, woke.RunID)
	rs := replies.all()
	require.Len(t, rs, 1)
	require.Equal(t, a2a.AutoReplyID(done.TaskID), rs[0].ID)
	require.Equal(t, "echo: "+woke.XML, rs[0].Text, "the task's final message")
	require.NotNil(t, rs[0].ReplyTo)
	require.JSONEq(t, string(mustJSON(t, dm)), string(mustJSON(t, *rs[0].ReplyTo)), "where the wake came from")
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	raw, err := json.Marshal(v)
	require.NoError(t, err)
	return raw
}

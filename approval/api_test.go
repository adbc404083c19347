package approval_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/approval"
	"github.com/signalgate/signalgate/deliverytest"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/server"
	"github.com/signalgate/signalgate/service"
	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/store/storetest"
)

// A stream agent asks through the agent API; the decision reaches its thread as an
// <approval> signal that wakes it.
func TestAgentAPIApproval(t *testing.T) {
	e := deliverytest.New(t, deliverytest.Config{Agents: []agent.Config{
		{ID: "coder", Token: deliverytest.CoderToken, Target: agent.TargetConfig{Kind: agent.TargetStream}},
		{ID: "support", Token: deliverytest.SupportToken, Target: agent.TargetConfig{Kind: "mastra", Presence: agent.PresenceRuntime}},
	}})
	k := inbox.ThreadKey{Agent: "coder", Resource: "acme/api", Thread: "deploy-7"}
	url := e.ThreadURL(k, "/approvals")
	tok := e.Token(k)
	require.Equal(t, http.StatusNotFound, e.Do(http.MethodPost, url, tok, `{"tool":"rollback"}`, nil), "approvals not configured")

	slack := &fakeSlack{}
	svc := approval.New(approval.Config{SlackConnector: "acme", Channel: "C0APPROVE", Approvers: []string{"U0JANE"}},
		approval.Deps{Store: store.NewApprovals(e.Store), Places: store.NewApprovals(e.Store), Slack: slack, Emitter: e.Agents, Base: service.Base{Now: e.Now}})
	e.Agents.Approvals = svc
	sub := e.Subscribe(k, "", "")

	for body, want := range map[string]int{
		`{}`:                            http.StatusBadRequest,
		`{"tool":"rollback","extra":1}`: http.StatusBadRequest,
		`{"tool":"` + strings.Repeat("x", 201) + `"}`:                         http.StatusBadRequest,
		`{"tool":"rollback","arguments":"` + strings.Repeat("x", 9000) + `"}`: http.StatusRequestEntityTooLarge,
	} {
		require.Equal(t, want, e.Do(http.MethodPost, url, tok, body, nil), body)
	}
	mk := inbox.ThreadKey{Agent: "support", Resource: "r", Thread: "t"}
	require.Equal(t, http.StatusBadRequest, e.Do(http.MethodPost, e.ThreadURL(mk, "/approvals"), e.Token(mk), `{"tool":"x"}`, nil),
		"a mastra agent asks through Mastra")

	var a approval.Approval
	body := `{"id":"rollback-7","tool":"rollback","description":"Roll back api to v41","arguments":{"to":"v41"}}`
	require.Equal(t, http.StatusCreated, e.Do(http.MethodPost, url, tok, body, &a))
	require.Equal(t, approval.StatusPending, a.Status)
	require.Equal(t, "C0APPROVE", a.Channel)
	require.Equal(t, http.StatusOK, e.Do(http.MethodPost, url, tok, body, &a), "a resend returns the first")

	notice, err := svc.Decide(t.Context(), approval.Click{Connector: "acme", ApprovalID: a.ID, Approve: false, UserID: "U0JANE", UserName: "Jane"})
	require.NoError(t, err)
	require.Empty(t, notice)
	run := sub.Next(10 * time.Second)
	require.Equal(t, "run", run.Event)
	ev := sub.Next(10 * time.Second)
	require.Equal(t, "wake", ev.Str("action"))
	require.Equal(t, `<approval tool="rollback" decision="declined" by="Jane">Roll back api to v41</approval>`, ev.Str("xml"))
}

// The attacker's second call shares the first 200 bytes of an approved call's id: it
// must never come back approved without anyone seeing it. An id the store cannot keep
// whole is refused, and another tool or other arguments under a used id are a 409.
func TestAgentAPIApprovalIDKeptWhole(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			e := deliverytest.New(t, deliverytest.Config{Backend: &b})
			k := inbox.ThreadKey{Agent: "coder", Resource: "acme/api", Thread: "deploy-7"}
			slack := &fakeSlack{}
			svc := approval.New(approval.Config{SlackConnector: "acme", Channel: "C0APPROVE", Approvers: []string{"U0JANE"}},
				approval.Deps{Store: store.NewApprovals(e.Store), Places: store.NewApprovals(e.Store), Slack: slack, Emitter: e.Agents, Base: service.Base{Now: e.Now}})
			e.Agents.Approvals = svc
			url, tok := e.ThreadURL(k, "/approvals"), e.Token(k)

			long := strings.Repeat("a", approval.MaxCallID)
			var first approval.Approval
			require.Equal(t, http.StatusCreated, e.Do(http.MethodPost, url, tok,
				`{"id":"`+long+`","tool":"read_logs","arguments":{"lines":10}}`, &first))
			_, err := svc.Decide(t.Context(), approval.Click{Connector: "acme", ApprovalID: first.ID, Approve: true, UserID: "U0JANE"})
			require.NoError(t, err)

			var refused struct{ Error server.Error }
			require.Equal(t, http.StatusBadRequest, e.Do(http.MethodPost, url, tok,
				`{"id":"`+long+`-drop","tool":"drop_database","arguments":{"db":"prod"}}`, &refused),
				"an id longer than the store keeps is refused, not cut onto the approved one")
			require.Equal(t, "id: at most 200 bytes", refused.Error.Message)

			var conflict struct{ Error server.Error }
			require.Equal(t, http.StatusConflict, e.Do(http.MethodPost, url, tok,
				`{"id":"`+long+`","tool":"drop_database","arguments":{"db":"prod"}}`, &conflict), "another tool under the id")
			require.Equal(t, "approval_id_conflict", conflict.Error.Code)
			require.Equal(t, http.StatusConflict, e.Do(http.MethodPost, url, tok,
				`{"id":"`+long+`","tool":"read_logs","arguments":{"lines":100000}}`, nil), "other arguments under the id")
			require.Equal(t, http.StatusConflict, e.Do(http.MethodPost, url, tok,
				`{"id":"`+long+`","tool":"read_logs"}`, nil), "no arguments under an id that had some")

			var again approval.Approval
			require.Equal(t, http.StatusOK, e.Do(http.MethodPost, url, tok,
				`{"id":"`+long+`","tool":"read_logs","arguments":{ "lines" : 10 }}`, &again), "the same call resent")
			require.Equal(t, first.ID, again.ID)
			require.Equal(t, approval.StatusApproved, again.Status)
			require.Len(t, slack.posts, 1, "only the first call was posted")

			page, _, err := store.NewApprovals(e.Store).ListApprovals(t.Context(), approval.Filter{})
			require.NoError(t, err)
			require.Len(t, page, 1)
			require.Equal(t, long, page[0].ToolCallID)
		})
	}
}

// max_concurrent_wakes holds for decisions too: three decisions on idle threads of an
// agent capped at one wake open one run at a time; the others wait for a free slot and
// reach their threads once it frees, none lost.
func TestApprovalDecisionsRespectMaxConcurrentWakes(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			e := deliverytest.New(t, deliverytest.Config{Backend: &b, Agents: []agent.Config{
				{ID: "coder", Token: deliverytest.CoderToken, Target: agent.TargetConfig{Kind: agent.TargetStream}, MaxConcurrentWakes: 1},
			}})
			svc := approval.New(approval.Config{SlackConnector: "acme", Channel: "C0APPROVE", Approvers: []string{"U0JANE"}},
				approval.Deps{Store: store.NewApprovals(e.Store), Places: store.NewApprovals(e.Store), Slack: &fakeSlack{}, Emitter: e.Agents, Base: service.Base{Now: e.Now}})
			e.Agents.Approvals = svc
			var ks []inbox.ThreadKey
			var as []approval.Approval
			for i := range 3 {
				k := inbox.ThreadKey{Agent: "coder", Resource: "acme/api", Thread: "deploy-" + strconv.Itoa(i)}
				var a approval.Approval
				require.Equal(t, http.StatusCreated, e.Do(http.MethodPost, e.ThreadURL(k, "/approvals"), e.Token(k),
					`{"tool":"rollback"}`, &a))
				ks, as = append(ks, k), append(as, a)
			}
			openWakes := func() int {
				st, err := store.NewExplain(e.Store).WakeState(t.Context(), ks[0], e.Now())
				require.NoError(t, err)
				return st.OpenWakes
			}
			decision := func(i int) *agent.Frame {
				for _, f := range e.Log(ks[i]) {
					if f.ID == "approval-"+as[i].ID {
						return &f
					}
				}
				return nil
			}
			for i, a := range as {
				notice, err := svc.Decide(t.Context(), approval.Click{Connector: "acme", ApprovalID: a.ID, Approve: true, UserID: "U0JANE"})
				require.NoError(t, err)
				require.Empty(t, notice, "decided: the message says so")
				require.Equal(t, 1, openWakes(), "after decision %d", i+1)
				got, err := store.NewApprovals(e.Store).GetApproval(t.Context(), a.ID)
				require.NoError(t, err)
				require.Equal(t, approval.StatusApproved, got.Status, "a decision waiting for a slot stands")
			}
			require.NotNil(t, decision(0))
			require.Nil(t, decision(1), "waits for a wake slot")
			require.Nil(t, decision(2), "waits for a wake slot")

			e.Clock.Advance(time.Minute) // past the grace a click's own delivery has
			require.NoError(t, svc.Redeliver(t.Context()))
			require.Equal(t, 1, openWakes(), "no slot freed: nothing more opens")
			require.Nil(t, decision(1))

			for i := range 2 {
				f := decision(i)
				require.NotNil(t, f)
				e.FinishRun(ks[i], f.RunID)
				require.Equal(t, 0, openWakes())
				require.NoError(t, svc.Redeliver(t.Context()))
				require.Equal(t, 1, openWakes(), "the freed slot goes to one waiting decision")
				next := decision(i + 1)
				require.NotNil(t, next, "decision %d delivered once a slot freed", i+2)
				require.Equal(t, agent.BehaviorWake, next.Behavior)
				if i == 0 {
					require.Nil(t, decision(2), "one slot, one decision")
				}
			}
			require.NoError(t, svc.Redeliver(t.Context()))
			for i := range 3 {
				n := 0
				for _, f := range e.Log(ks[i]) {
					if f.ID == "approval-"+as[i].ID {
						n++
					}
				}
				require.Equal(t, 1, n, "thread %d got its decision once", i)
			}
		})
	}
}

// A decision waiting for a wake slot keeps its place in its agent's wake queue: record
// waiters arriving after it, as urgent or less, do not get the slot before it; the
// closing run that frees the slot sends the decision at once (the fake clock stands
// still: not the sweep's poll), and the record waiters follow, a slot each.
func TestApprovalDecisionKeepsItsPlaceInTheWakeQueue(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			e := deliverytest.New(t, deliverytest.Config{Backend: &b, Agents: []agent.Config{
				{ID: "coder", Token: deliverytest.CoderToken, Target: agent.TargetConfig{Kind: agent.TargetStream}, MaxConcurrentWakes: 1},
			}})
			svc := approval.New(approval.Config{SlackConnector: "acme", Channel: "C0APPROVE", Approvers: []string{"U0JANE"}},
				approval.Deps{Store: store.NewApprovals(e.Store), Places: store.NewApprovals(e.Store), Slack: &fakeSlack{}, Emitter: e.Agents, Slots: e.Runs, Base: service.Base{Now: e.Now}})
			e.Agents.Approvals = svc
			require.NoError(t, svc.Start(t.Context()))
			t.Cleanup(func() { require.NoError(t, svc.Stop(context.Background())) })
			key := func(name string) inbox.ThreadKey {
				return inbox.ThreadKey{Agent: "coder", Resource: "acme/api", Thread: name}
			}
			live := func(name string) *agent.Run {
				run, err := e.Runs.Live(t.Context(), key(name))
				require.NoError(t, err)
				return run
			}
			queued := func(name string) bool {
				st, err := store.NewExplain(e.Store).WakeState(t.Context(), key(name), e.Now())
				require.NoError(t, err)
				require.Equal(t, 1, st.OpenWakes, "one wake run open at a time")
				return st.QueuedAt != nil
			}

			e.Ingest(inbox.Notification{Thread: key("holder"), Source: "github", Kind: "comment", Summary: "holds the slot"})
			e.Pass()
			holder := live("holder")
			require.NotNil(t, holder)

			e.Clock.Advance(time.Second)
			var a approval.Approval
			require.Equal(t, http.StatusCreated, e.Do(http.MethodPost, e.ThreadURL(key("decided"), "/approvals"), e.Token(key("decided")),
				`{"tool":"rollback"}`, &a))
			_, err := svc.Decide(t.Context(), approval.Click{Connector: "acme", ApprovalID: a.ID, Approve: true, UserID: "U0JANE"})
			require.NoError(t, err)
			decision := func() *agent.Frame {
				for _, f := range e.Log(key("decided")) {
					if f.ID == approval.SignalPrefix+a.ID {
						return &f
					}
				}
				return nil
			}
			require.Nil(t, decision(), "waits for the slot")
			require.True(t, queued("decided"))

			e.Clock.Advance(time.Second)
			urgent := e.Ingest(inbox.Notification{Thread: key("urgent"), Source: "github", Kind: "security", Summary: "CVE",
				Priority: inbox.PriorityUrgent})
			e.Clock.Advance(time.Second)
			low := e.Ingest(inbox.Notification{Thread: key("low"), Source: "github", Kind: "comment", Summary: "later"})
			e.Pass()
			require.True(t, queued("urgent"))
			require.True(t, queued("low"))
			require.True(t, queued("decided"), "a record waiter queuing does not drop the decision's place")

			changed, unsub := e.Broker.Subscribe(key("decided"))
			defer unsub()
			e.FinishRun(key("holder"), holder.ID)
			for decision() == nil {
				select {
				case <-changed:
				case <-time.After(10 * time.Second):
					t.Fatal("the freed slot did not send the waiting decision")
				}
			}
			f := decision()
			require.Equal(t, agent.BehaviorWake, f.Behavior)
			require.Equal(t, f.RunID, live("decided").ID)
			require.False(t, queued("decided"))
			e.Pass()
			require.Equal(t, inbox.StatusPending, e.Record(urgent).Status, "the decision had the slot")
			require.Nil(t, live("urgent"))

			e.FinishRun(key("decided"), f.RunID)
			e.Pass()
			require.Equal(t, inbox.StatusDelivered, e.Record(urgent).Status, "the next slot goes to the next waiter")
			require.Equal(t, inbox.StatusPending, e.Record(low).Status)
			e.FinishRun(key("urgent"), live("urgent").ID)
			e.Pass()
			require.Equal(t, inbox.StatusDelivered, e.Record(low).Status)
			require.Equal(t, deliverytest.Start().Add(3*time.Second), e.Now(), "no poll's 30 seconds passed")
		})
	}
}

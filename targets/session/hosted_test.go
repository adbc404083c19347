package session_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/approval"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/reply"
	"github.com/signalgate/signalgate/secret"
	"github.com/signalgate/signalgate/service"
	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/targets/claudeagents"
	"github.com/signalgate/signalgate/targets/openaiagents"
	"github.com/signalgate/signalgate/targets/session"
	"github.com/signalgate/signalgate/targets/session/sessiontest"
)

const testSecret = "whsec_c2lnbmFsZ2F0ZS10ZXN0LXdlYmhvb2stc2VjcmV0ISE="

var k = inbox.ThreadKey{Agent: "support", Resource: "acme/api", Thread: "ci"}

// memSessions is the store's sessions in memory.
type memSessions struct {
	mu   sync.Mutex
	rows map[inbox.ThreadKey]store.TargetSession
}

func (m *memSessions) TargetSession(_ context.Context, k inbox.ThreadKey) (store.TargetSession, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ts, ok := m.rows[k]
	return ts, ok, nil
}

func (m *memSessions) SessionThread(_ context.Context, agentID, id string) (store.TargetSession, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, ts := range m.rows {
		if ts.Thread.Agent == agentID && ts.ID == id {
			return ts, true, nil
		}
	}
	return store.TargetSession{}, false, nil
}

func (m *memSessions) SaveTargetSession(_ context.Context, ts store.TargetSession) (store.TargetSession, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if kept, ok := m.rows[ts.Thread]; ok {
		return kept, false, nil
	}
	m.rows[ts.Thread] = ts
	return ts, true, nil
}

func (m *memSessions) ForgetTargetSession(_ context.Context, k inbox.ThreadKey, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.rows[k].ID == id {
		delete(m.rows, k)
	}
	return nil
}

// memRuns is presence in memory: one live run per thread.
type memRuns struct {
	mu     sync.Mutex
	n      int
	live   map[inbox.ThreadKey]*agent.Run
	closed []string // "runID status cause"
	beats  int
}

func (r *memRuns) LiveThreads(context.Context, string) ([]inbox.ThreadKey, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []inbox.ThreadKey
	for k := range r.live {
		out = append(out, k)
	}
	return out, nil
}

func (r *memRuns) Live(_ context.Context, k inbox.ThreadKey) (*agent.Run, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if run, ok := r.live[k]; ok {
		c := *run
		return &c, nil
	}
	return nil, nil
}

func (r *memRuns) open(k inbox.ThreadKey, origin string) agent.Run {
	r.mu.Lock()
	defer r.mu.Unlock()
	if run, ok := r.live[k]; ok {
		return *run
	}
	r.n++
	run := &agent.Run{ID: "run_" + string(rune('0'+r.n)), Origin: origin, OpenedAt: time.Now()}
	r.live[k] = run
	return *run
}

func (r *memRuns) Open(_ context.Context, k inbox.ThreadKey, origin string) (agent.Run, bool, error) {
	return r.open(k, origin), true, nil
}

func (r *memRuns) Heartbeat(_ context.Context, k inbox.ThreadKey, id string) (agent.Run, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.beats++
	return *r.live[k], nil
}

func (r *memRuns) Close(_ context.Context, k inbox.ThreadKey, id, status, cause string) (agent.Run, bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	run := r.live[k]
	delete(r.live, k)
	r.closed = append(r.closed, strings.TrimSpace(id+" "+status+" "+cause))
	return *run, true, nil
}

// memReplies records queued replies.
type memReplies struct {
	mu  sync.Mutex
	got []reply.Request
}

func (m *memReplies) Queue(_ context.Context, _ inbox.ThreadKey, req reply.Request) (reply.Reply, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.got = append(m.got, req)
	return reply.Reply{ID: req.ID}, nil
}

type env struct {
	fake     *sessiontest.Fake
	target   *session.Hosted
	sessions *memSessions
	runs     *memRuns
	replies  *memReplies
	hook     string
	notified chan inbox.ThreadKey
}

// newEnv builds vendor's target of agent support against a fake of its API, its
// webhook endpoint served.
func newEnv(t *testing.T, vendor string, autoReply bool) *env {
	e := &env{fake: sessiontest.NewFake(t, vendor), sessions: &memSessions{rows: map[inbox.ThreadKey]store.TargetSession{}},
		runs: &memRuns{live: map[inbox.ThreadKey]*agent.Run{}}, replies: &memReplies{}, notified: make(chan inbox.ThreadKey, 16)}
	common := session.Common{APIKey: "sk-test", BaseURL: e.fake.BaseURL(), AgentID: "agent_fake", EnvironmentID: "env_fake",
		WebhookSecret: secret.Secret(testSecret)}
	deps := session.Deps{Sessions: e.sessions, Runs: e.runs, Replies: e.replies,
		Notify: func(ks []inbox.ThreadKey) { e.notified <- ks[0] }}
	rep := ""
	if autoReply {
		rep = agent.ReplyAuto
	}
	srv := echo.New()
	if vendor == sessiontest.OpenAI {
		a := openaiagents.Agent("support", openaiagents.Config{Common: common})
		a.Target.Reply = rep
		tg, err := openaiagents.New(a, openaiagents.Config{Common: common}, nil, deps, service.Base{})
		require.NoError(t, err)
		tg.Mount(srv)
		e.target, e.hook = tg.Hosted, "/targets/openai-agents/support/webhook"
	} else {
		a := claudeagents.Agent("support", claudeagents.Config{Common: common})
		a.Target.Reply = rep
		tg, err := claudeagents.New(a, claudeagents.Config{Common: common}, nil, deps, service.Base{})
		require.NoError(t, err)
		tg.Mount(srv)
		e.target, e.hook = tg.Hosted, "/targets/claude-agents/support/webhook"
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	e.hook = hs.URL + e.hook
	return e
}

func handoff(id string, b agent.Behavior) agent.Handoff {
	return agent.Handoff{Thread: k, Signal: agent.Signal{ID: id, Type: agent.TypeUser, Contents: "message " + id}, Behavior: b, Attempt: 1}
}

func both(t *testing.T, fn func(t *testing.T, vendor string)) {
	for _, v := range []string{sessiontest.OpenAI, sessiontest.Anthropic} {
		t.Run(v, func(t *testing.T) { fn(t, v) })
	}
}

// wake delivers a wake of a run the dispatcher opened and returns the session's id.
func (e *env) wake(t *testing.T, id string, replyTo any) (string, agent.Run) {
	t.Helper()
	run := e.runs.open(k, agent.OriginWake)
	d := handoff(id, agent.BehaviorWake)
	d.RunID, d.ReplyTo = run.ID, replyTo
	_, err := e.target.Deliver(context.Background(), d)
	require.NoError(t, err)
	msg := <-e.fake.Messages
	require.Equal(t, "message "+id, msg.Text)
	return msg.Session, run
}

// TestHeldWhileQueuedOrWaiting: a queued message for a busy session, and anything for
// a session waiting on people, are handed back to wait until idle; a notification for
// the busy session goes now (it steers the turn).
func TestHeldWhileQueuedOrWaiting(t *testing.T) {
	both(t, func(t *testing.T, vendor string) {
		e := newEnv(t, vendor, false)
		ctx := context.Background()
		sid, _ := e.wake(t, "s1", nil)

		q := handoff("s2", agent.BehaviorDeliver)
		q.DeliverAs = inbox.DeliverAsQueued
		_, err := e.target.Deliver(ctx, q)
		require.ErrorIs(t, err, agent.ErrHoldUntilIdle)
		_, err = e.target.Deliver(ctx, handoff("s3", agent.BehaviorDeliver))
		require.NoError(t, err)
		require.Equal(t, "message s3", (<-e.fake.Messages).Text, "a notification steers the busy session")

		e.fake.RequireAction(sid, "req_1")
		_, err = e.target.Deliver(ctx, handoff("s4", agent.BehaviorDeliver))
		require.ErrorIs(t, err, agent.ErrHoldUntilIdle, "nothing lands in the middle of an approval")
		require.Empty(t, e.fake.Messages)
	})
}

// TestFailedSessionAbortsTheRun: a failed session closes the thread's run aborted as
// crashed (the recovery rule keeps what it accepted); a terminated Anthropic session is
// forgotten and the next signal creates another, an OpenAI failed one is kept.
func TestFailedSessionAbortsTheRun(t *testing.T) {
	both(t, func(t *testing.T, vendor string) {
		e := newEnv(t, vendor, false)
		sid, run := e.wake(t, "s1", nil)
		e.fake.Fail(sid)
		require.Equal(t, http.StatusNoContent, e.fake.Webhook(t, e.hook, testSecret, sessiontest.HookFailed, sid))
		require.Equal(t, []string{run.ID + " " + agent.RunAborted + " " + agent.CauseCrashed}, e.runs.closed)
		<-e.notified
		next, _ := e.wake(t, "s2", nil)
		if vendor == sessiontest.Anthropic {
			require.NotEqual(t, sid, next, "a terminated session is replaced")
		} else {
			require.Equal(t, sid, next, "a failed session keeps its conversation")
		}
	})
}

// TestGoneSessionIsReplaced: a session the API no longer has (404) is forgotten, the
// attempt retried, and the retry creates another.
func TestGoneSessionIsReplaced(t *testing.T) {
	both(t, func(t *testing.T, vendor string) {
		e := newEnv(t, vendor, false)
		_, _, err := e.sessions.SaveTargetSession(context.Background(), store.TargetSession{Thread: k, ID: "gone"})
		require.NoError(t, err)
		_, err = e.target.Deliver(context.Background(), handoff("s1", agent.BehaviorDeliver))
		f := agent.DeliveryFailure(err)
		require.Equal(t, http.StatusNotFound, f.Status)
		require.True(t, f.Retry)
		sid, _ := e.wake(t, "s1", nil)
		require.NotEqual(t, "gone", sid)
	})
}

// TestAutoReplyOncePerRun: reply: auto queues the woken turn's last message, to where
// the wake came from, under the run's reply id, before the run closes.
func TestAutoReplyOncePerRun(t *testing.T) {
	both(t, func(t *testing.T, vendor string) {
		e := newEnv(t, vendor, true)
		to := map[string]any{"source": "slack", "connector": "acme", "channel": "C1", "thread_ts": "1.2"}
		sid, run := e.wake(t, "s1", to)
		e.fake.Finish(sid, "all green now")
		require.Equal(t, http.StatusNoContent, e.fake.Webhook(t, e.hook, testSecret, sessiontest.HookIdle, sid))
		require.Equal(t, http.StatusNoContent, e.fake.Webhook(t, e.hook, testSecret, sessiontest.HookIdle, sid), "a repeated webhook")
		require.Len(t, e.replies.got, 1)
		got := e.replies.got[0]
		require.Equal(t, reply.RunAnswerID(run.ID), got.ID)
		require.Equal(t, "all green now", got.Text)
		require.NotNil(t, got.ReplyTo)
		require.Equal(t, "slack", got.ReplyTo.Source)
		require.Equal(t, []string{run.ID + " " + agent.RunFinished}, e.runs.closed)
	})
}

// TestWebhookRefusals: a bad signature is 401, a body over the bound 413, bad JSON 400,
// another agent's path 404; a session the gateway did not create is taken and ignored.
func TestWebhookRefusals(t *testing.T) {
	both(t, func(t *testing.T, vendor string) {
		e := newEnv(t, vendor, false)
		require.Equal(t, http.StatusUnauthorized, e.fake.Webhook(t, e.hook, "whsec_b3RoZXItc2VjcmV0LW9mLWVub3VnaC1ieXRlcw==", sessiontest.HookIdle, "sess_x"))
		require.Equal(t, http.StatusNoContent, e.fake.Webhook(t, e.hook, testSecret, sessiontest.HookIdle, "sess_unknown"))
		require.Equal(t, http.StatusNotFound, e.fake.Webhook(t, strings.Replace(e.hook, "/support/", "/other/", 1), testSecret, sessiontest.HookIdle, "sess_x"))
		resp, err := http.Post(e.hook, "application/json", bytes.NewReader(bytes.Repeat([]byte("x"), session.MaxWebhookBody+1)))
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
		require.Empty(t, e.runs.closed)
	})
}

// TestStaleApproval: an answer for an action the session no longer waits on is
// approval.ErrStale, and nothing is sent.
func TestStaleApproval(t *testing.T) {
	both(t, func(t *testing.T, vendor string) {
		e := newEnv(t, vendor, false)
		sid, _ := e.wake(t, "s1", nil)
		e.fake.Finish(sid, "done")
		err := e.target.SendToolApproval(context.Background(), k, "req_1", true)
		require.True(t, errors.Is(err, approval.ErrStale), "%v", err)
		require.Empty(t, e.fake.Answers)
	})
}

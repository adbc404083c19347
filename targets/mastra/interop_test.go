package mastra_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/delivery"
	"github.com/signalgate/signalgate/deliverytest"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/service"
	"github.com/signalgate/signalgate/targets/mastra"
	"github.com/signalgate/signalgate/targets/mastra/mastratest"
)

// mastraServer starts the real-Mastra interop harness.
func mastraServer(t *testing.T, delay time.Duration) string { return mastratest.Server(t, delay) }

type prompt struct {
	Turn        int      `json:"turn"`
	Temperature *float64 `json:"temperature"`
	Model       string   `json:"model"` // modelAgent's model of the turn
	Messages    []struct {
		Role string `json:"role"`
		Text string `json:"text"`
	} `json:"messages"`
}

// lastUserTexts is the user messages of a prompt.
func (p prompt) userTexts() []string {
	var out []string
	for _, m := range p.Messages {
		if m.Role == "user" {
			out = append(out, m.Text)
		}
	}
	return out
}

func prompts(t *testing.T, base string) []prompt {
	t.Helper()
	resp, err := http.Get(base + "/test/prompts")
	require.NoError(t, err)
	defer resp.Body.Close()
	var body struct {
		Prompts []prompt `json:"prompts"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
	return body.Prompts
}

// storedSignal is the metadata Mastra's memory kept for the signal id on thread k.
func storedSignal(t *testing.T, base string, k inbox.ThreadKey, id string) map[string]any {
	t.Helper()
	u := base + "/api/memory/threads/" + url.PathEscape(k.Thread) + "/messages?agentId=interopAgent&resourceId=" + url.QueryEscape(k.Resource)
	resp, err := http.Get(u)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var body struct {
		Messages []struct {
			ID      string `json:"id"`
			Content struct {
				Metadata struct {
					Signal struct {
						Metadata map[string]any `json:"metadata"`
					} `json:"signal"`
				} `json:"metadata"`
			} `json:"content"`
		} `json:"messages"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
	for _, m := range body.Messages {
		if m.ID == id {
			return m.Content.Metadata.Signal.Metadata
		}
	}
	t.Fatalf("signal %s not in Mastra's memory of %s", id, k)
	return nil
}

// approve answers a suspended tool call through Mastra's send-tool-approval route.
func approve(t *testing.T, base string, k inbox.ThreadKey, toolCallID string, resumeData any) {
	t.Helper()
	req := map[string]any{"resourceId": k.Resource, "threadId": k.Thread, "toolCallId": toolCallID, "approved": true}
	if resumeData != nil {
		req["resumeData"] = resumeData
	}
	body, err := json.Marshal(req)
	require.NoError(t, err)
	resp, err := http.Post(base+"/api/agents/interopAgent/send-tool-approval", "application/json", bytes.NewReader(body))
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.NoError(t, resp.Body.Close())
}

func TestRealMastraInterop(t *testing.T) {
	base := mastraServer(t, 2500*time.Millisecond)
	cfg := agent.Config{ID: "support", Token: deliverytest.SupportToken,
		Target: agent.TargetConfig{Kind: mastra.Kind, Presence: mastra.PresenceSource, Timeout: 20 * time.Second, Settings: mastra.Config{URL: base, AgentID: "interopAgent"}}}
	var follower *mastra.Follower
	env := deliverytest.New(t, deliverytest.Config{Recovery: kept,
		RealClock: true,
		// Short pacing, so a low-only summary goes out while a Mastra turn is running.
		Policy:  inbox.PolicyConfig{SummaryInterval: 300 * time.Millisecond},
		Agents:  []agent.Config{cfg},
		Aborter: mastra.NewClient([]agent.Config{cfg}, nil),
		EnvRoutes: func(e *deliverytest.Env) map[string]delivery.Route {
			follower = mastra.NewFollower(cfg, e.Runs, e.Notify, service.Base{}, mastra.WithBackoff(50*time.Millisecond, time.Second))
			follower.TestSignals.Chunk.Init()
			tg, err := mastra.New(cfg, mastra.WithFollower(follower))
			require.NoError(t, err)
			return map[string]delivery.Route{"support": {Kind: mastra.Kind, Target: tg, Concurrency: 4}}
		},
	})
	ctx := context.Background()
	require.NoError(t, follower.Start(ctx))
	t.Cleanup(func() { _ = follower.Stop(context.Background()) })
	require.NoError(t, env.Dispatcher.Start(ctx))

	waitChunk := func(k inbox.ThreadKey, typ string) { t.Helper(); waitFor(t, follower, k, typ) }
	signals := func(k inbox.ThreadKey) []agent.Frame {
		var out []agent.Frame
		for _, f := range env.Log(k) {
			if f.Event == agent.EventSignal {
				out = append(out, f)
			}
		}
		return out
	}
	// waitSignals waits until the thread's log holds n signals (the dispatcher is
	// running on its own; each commit publishes to the broker).
	waitSignals := func(k inbox.ThreadKey, n int) []agent.Frame {
		t.Helper()
		wake, unsubscribe := env.Broker.Subscribe(k)
		defer unsubscribe()
		timeout := time.After(30 * time.Second)
		for {
			if s := signals(k); len(s) >= n {
				return s
			}
			select {
			case <-wake:
			case <-timeout:
				t.Fatalf("thread %s: want %d signals, have %d", k, n, len(signals(k)))
			}
		}
	}
	// waitRunClosed waits until the thread's log records the run's end.
	waitRunClosed := func(k inbox.ThreadKey, runID string) {
		t.Helper()
		wake, unsubscribe := env.Broker.Subscribe(k)
		defer unsubscribe()
		timeout := time.After(30 * time.Second)
		for {
			for _, f := range env.Log(k) {
				if f.Event == agent.EventRun && f.RunID == runID && f.RunStatus != agent.RunOpen {
					return
				}
			}
			select {
			case <-wake:
			case <-timeout:
				t.Fatalf("run %s on %s never closed", runID, k)
			}
		}
	}
	// sendSignal posts a signal through the gateway's agent API and returns its action.
	sendSignal := func(k inbox.ThreadKey, body map[string]any) agent.Behavior {
		t.Helper()
		var resp struct {
			Action agent.Behavior `json:"action"`
		}
		require.Equal(t, http.StatusOK, env.Do(http.MethodPost, env.ThreadURL(k, "/signals"), deliverytest.SupportToken, body, &resp))
		return resp.Action
	}
	note := func(k inbox.ThreadKey, pr inbox.Priority, summary string) string {
		return env.Ingest(inbox.Notification{Thread: k, Source: "github", Kind: "ci-failure", Priority: pr, Summary: summary})
	}

	t.Run("wake, deliver into the active run, XML read back", func(t *testing.T) {
		k := inbox.ThreadKey{Agent: "support", Resource: "acme/api", Thread: "wake"}
		note(k, inbox.PriorityUrgent, "CI failed on main")
		first := waitSignals(k, 1)[0]
		require.Equal(t, agent.BehaviorWake, first.Behavior)
		waitChunk(k, "start")
		live, err := env.Runs.Live(ctx, k)
		require.NoError(t, err)
		require.NotNil(t, live)
		require.Equal(t, first.RunID, live.ID, "the follower adopts the run the wake opened")

		note(k, inbox.PriorityUrgent, "deploy blocked")
		second := waitSignals(k, 2)[1]
		require.Equal(t, agent.BehaviorDeliver, second.Behavior)
		require.Equal(t, first.RunID, second.RunID, "delivered into the same run")
		waitChunk(k, "finish")
		live, err = env.Runs.Live(ctx, k)
		require.NoError(t, err)
		require.Nil(t, live, "Mastra's finish closed the gateway run")

		ps := prompts(t, base)
		var seen []string
		for _, p := range ps {
			seen = append(seen, p.userTexts()...)
		}
		require.Contains(t, seen, first.XML)
		require.Contains(t, seen, second.XML)

		// What Mastra was given: the delivered status, and metadata in its own shape.
		require.Contains(t, first.XML, `status="delivered"`)
		require.Contains(t, first.XML, `verified_by="none"`)
		meta := storedSignal(t, base, k, first.Signal.ID)
		note, ok := meta["notification"].(map[string]any)
		require.True(t, ok, "metadata.notification: %v", meta)
		require.Equal(t, "notification", note["signal"])
		require.Equal(t, "delivered", note["status"])
		require.Equal(t, "urgent", note["priority"])
		require.Equal(t, "github", note["source"])
		require.NotEmpty(t, note["recordId"])
	})

	t.Run("persist without wake, then summary then full after Mastra's run", func(t *testing.T) {
		k := inbox.ThreadKey{Agent: "support", Resource: "acme/api", Thread: "summary"}
		action := sendSignal(k, map[string]any{
			"signal": map[string]any{"type": "reactive", "tagName": "note", "contents": "persisted context"},
			"ifIdle": map[string]any{"behavior": "persist"},
		})
		require.Equal(t, agent.BehaviorPersist, action)
		persisted := signals(k)[0]
		// Mastra stores a persisted signal in a short run of its own, without a model turn.
		waitChunk(k, "start")
		waitChunk(k, "finish")

		note(k, inbox.PriorityUrgent, "pager: API down")
		waitChunk(k, "start")
		live, err := env.Runs.Live(ctx, k)
		require.NoError(t, err)
		require.NotNil(t, live)
		// While Mastra runs: high priority → a summary now, the full notification when idle.
		note(k, inbox.PriorityHigh, "PR review requested")
		frames := waitSignals(k, 3)
		require.Equal(t, agent.TagNotificationSummary, frames[2].Signal.TagName)
		require.Equal(t, agent.BehaviorDeliver, frames[2].Behavior)
		waitChunk(k, "finish")
		frames = waitSignals(k, 4) // presence learned from Mastra's stream: the full one goes out
		full := frames[3]
		require.Equal(t, agent.TagNotification, full.Signal.TagName)
		pv, _ := full.Signal.Attributes.Get("priority")
		require.Equal(t, "high", pv)
		require.Equal(t, agent.BehaviorWake, full.Behavior)
		waitChunk(k, "start")
		waitChunk(k, "finish")

		ps := prompts(t, base)
		msgs := ps[len(ps)-1].Messages
		for i, m := range msgs {
			if m.Text == persisted.XML {
				// Had the persisted signal woken the agent, a reply would follow it.
				require.Equal(t, "user", msgs[i+1].Role, "persisted without waking")
				require.Equal(t, frames[1].XML, msgs[i+1].Text, "seen on the next turn, before the wake")
			}
		}
		last := ps[len(ps)-1].userTexts()
		require.Contains(t, last, persisted.XML, "persisted without waking, seen on the next turn")
		idx := func(s string) int {
			for i, v := range last {
				if v == s {
					return i
				}
			}
			return -1
		}
		require.Less(t, idx(frames[2].XML), idx(full.XML), "summary first, then the full notification")
		require.GreaterOrEqual(t, idx(frames[2].XML), 0)

		sum := storedSignal(t, base, k, frames[2].Signal.ID)
		note, ok := sum["notification"].(map[string]any)
		require.True(t, ok, "metadata.notification: %v", sum)
		require.Equal(t, "summary", note["signal"])
		require.Equal(t, float64(1), note["pending"])
		require.Equal(t, "high", note["priority"])
		require.Len(t, sum["notificationIds"], 1)
		require.Contains(t, sum, "notificationSummary")
	})

	t.Run("low-only summary into the running loop", func(t *testing.T) {
		k := inbox.ThreadKey{Agent: "support", Resource: "acme/api", Thread: "low"}
		note(k, inbox.PriorityUrgent, "CI failed on main")
		woke := waitSignals(k, 1)[0]
		waitChunk(k, "start")
		// Both low records are committed together: on the real clock, two separate ingests
		// on a busy machine may straddle the summary interval and make two summaries.
		low := func(summary string) inbox.Notification {
			return inbox.Notification{Thread: k, Source: "github", Kind: "ci-failure", Priority: inbox.PriorityLow, Summary: summary}
		}
		res, err := env.Inbox.Ingest(ctx, &inbox.Event{Source: "github", Connector: "test", Type: "test"},
			[]inbox.Notification{low("pushed to main"), low("pushed to main again")})
		require.NoError(t, err)
		require.Len(t, res.Records, 2)
		frames := waitSignals(k, 2)
		sum := frames[1]
		require.Equal(t, agent.TagNotificationSummary, sum.Signal.TagName)
		require.Equal(t, `<notification-summary pending="2" priority="low">github: 2</notification-summary>`, sum.XML, "batched")
		require.Equal(t, agent.BehaviorDeliver, sum.Behavior, "into the running loop, as Mastra does")
		require.Equal(t, woke.RunID, sum.RunID)
		waitRunClosed(k, woke.RunID)
		var seen []string
		for _, p := range prompts(t, base) {
			seen = append(seen, p.userTexts()...)
		}
		require.Contains(t, seen, sum.XML, "the model saw it in the run")
	})

	t.Run("ifIdle.streamOptions reach Mastra's wake", func(t *testing.T) {
		k := inbox.ThreadKey{Agent: "support", Resource: "acme/api", Thread: "stream-options"}
		action := sendSignal(k, map[string]any{
			"signal": map[string]any{"type": "reactive", "tagName": "note", "contents": "tuned wake"},
			"ifIdle": map[string]any{"streamOptions": map[string]any{"modelSettings": map[string]any{"temperature": 0.25}}},
		})
		require.Equal(t, agent.BehaviorWake, action)
		waitChunk(k, "start")
		waitChunk(k, "finish")
		var turn *prompt
		for _, p := range prompts(t, base) {
			for _, u := range p.userTexts() {
				if u == `<note>tuned wake</note>` {
					turn = &p
				}
			}
		}
		require.NotNil(t, turn, "the model saw the wake")
		require.NotNil(t, turn.Temperature)
		require.Equal(t, 0.25, *turn.Temperature, "streamOptions.modelSettings reached the model")
	})

	for _, tc := range []struct{ name, trigger, chunk string }{
		{"tool approval", "needs-approval", "tool-call-approval"},
		{"ask_user", "ask-user", "tool-call-suspended"},
	} {
		t.Run("a run suspended on "+tc.name+" keeps the thread active", func(t *testing.T) {
			k := inbox.ThreadKey{Agent: "support", Resource: "acme/api", Thread: "suspend-" + tc.trigger}
			note(k, inbox.PriorityUrgent, "deploy "+tc.trigger)
			woke := waitSignals(k, 1)[0]
			waitChunk(k, "start")
			waitChunk(k, tc.chunk)
			live, err := env.Runs.Live(ctx, k)
			require.NoError(t, err)
			require.NotNil(t, live, "suspended is active")
			require.Equal(t, woke.RunID, live.ID)

			// High while suspended: a summary into the run, the full one only after it.
			high := note(k, inbox.PriorityHigh, "PR review requested")
			frames := waitSignals(k, 2)
			require.Equal(t, agent.TagNotificationSummary, frames[1].Signal.TagName)
			require.Equal(t, agent.BehaviorDeliver, frames[1].Behavior, "no idle wake while suspended")
			require.Equal(t, woke.RunID, frames[1].RunID)
			require.Equal(t, inbox.StatusPending, env.Record(high).Status)

			var resume any
			if tc.trigger == "ask-user" {
				resume = "staging"
			}
			approve(t, base, k, toolCallOf(t, base, k), resume)
			waitRunClosed(k, woke.RunID)
			frames = waitSignals(k, 3)
			require.Equal(t, agent.TagNotification, frames[2].Signal.TagName, "the full one once the run resumed and finished")
			require.Equal(t, agent.BehaviorWake, frames[2].Behavior)
			waitRunClosed(k, frames[2].RunID)
		})
	}

	t.Run("message and queued message", func(t *testing.T) {
		k := inbox.ThreadKey{Agent: "support", Resource: "slack:T1", Thread: "dm:U1"}
		note(k, inbox.PriorityUrgent, "incident opened")
		waitChunk(k, "start")
		msg := func(as, who, text string) {
			env.Ingest(inbox.Notification{Thread: k, Source: "slack", Kind: "message", DeliverAs: as, Summary: text,
				Attributes: inbox.Attributes{{Key: "name", Value: who}, {Key: "from", Value: "slack"}}})
		}
		msg(inbox.DeliverAsQueued, "Bob", "after you are done, summarise")
		msg(inbox.DeliverAsMessage, "Jane", "can you look?")
		frames := waitSignals(k, 2)
		require.Equal(t, `<user name="Jane" from="slack">can you look?</user>`, frames[1].XML)
		require.Equal(t, frames[0].RunID, frames[1].RunID, "the message joins the active run")
		waitChunk(k, "finish")
		frames = waitSignals(k, 3)
		require.Equal(t, `<user name="Bob" from="slack">after you are done, summarise</user>`, frames[2].XML)
		require.NotEqual(t, frames[0].RunID, frames[2].RunID, "the queued message starts the next run")
		waitChunk(k, "start")
		waitChunk(k, "finish")

		ps := prompts(t, base)
		last := ps[len(ps)-1].userTexts()
		require.Equal(t, frames[2].XML, last[len(last)-1], "the queued message is the newest input of its run")
		require.Contains(t, last, frames[1].XML)
	})

	// countIn counts the messages of texts equal to s.
	countIn := func(texts []string, s string) int {
		n := 0
		for _, v := range texts {
			if v == s {
				n++
			}
		}
		return n
	}

	t.Run("abort in Mastra: what Mastra accepted is not sent again", func(t *testing.T) {
		k := inbox.ThreadKey{Agent: "support", Resource: "acme/api", Thread: "abort"}
		note(k, inbox.PriorityUrgent, "disk almost full")
		waitChunk(k, "start")
		note(k, inbox.PriorityUrgent, "disk full")
		inflight := waitSignals(k, 2)
		require.Equal(t, inflight[0].RunID, inflight[1].RunID)

		body := strings.NewReader(`{"resourceId":"acme/api","threadId":"abort"}`)
		resp, err := http.Post(base+"/api/agents/interopAgent/threads/abort", "application/json", body)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		require.NoError(t, resp.Body.Close())
		waitChunk(k, "abort")
		live, err := env.Runs.Live(ctx, k)
		require.NoError(t, err)
		require.Nil(t, live, "Mastra's abort closed the gateway run")

		// Mastra holds both in-flight signals (its memory, its pending queue): the next run
		// gets none of them again from the gateway.
		note(k, inbox.PriorityUrgent, "service down")
		frames := waitSignals(k, 3)
		next := frames[2]
		require.Equal(t, "service down", next.Signal.Contents)
		require.NotContains(t, next.XML, `recovered="true"`)
		waitRunClosed(k, next.RunID)
		for _, f := range signals(k) {
			require.NotContains(t, f.XML, `recovered="true"`, "nothing Mastra accepted is sent again")
		}
		ps := prompts(t, base)
		last := ps[len(ps)-1].userTexts()
		require.Equal(t, 1, countIn(last, next.XML))
		require.LessOrEqual(t, countIn(last, inflight[0].XML), 1, "seen once, never twice")
		require.LessOrEqual(t, countIn(last, inflight[1].XML), 1, "seen once, never twice")
		require.Equal(t, 1, countIn(last, inflight[0].XML), "the model still has the woken signal (Mastra's memory)")
	})

	t.Run("finish aborted through the gateway aborts Mastra's run", func(t *testing.T) {
		k := inbox.ThreadKey{Agent: "support", Resource: "acme/api", Thread: "finish-abort"}
		note(k, inbox.PriorityUrgent, "runaway job")
		woke := waitSignals(k, 1)[0]
		waitChunk(k, "start")
		var run agent.Run
		require.Equal(t, http.StatusOK, env.Do(http.MethodPost, env.ThreadURL(k, "/runs/"+url.PathEscape(woke.RunID)+"/finish"),
			deliverytest.SupportToken, map[string]any{"status": "aborted", "clearPendingSignals": true}, &run))
		require.Equal(t, agent.RunAborted, run.Status)
		waitChunk(k, "abort") // Mastra's own run stopped, not only the gateway's
		live, err := env.Runs.Live(ctx, k)
		require.NoError(t, err)
		require.Nil(t, live)

		// clearPendingSignals only with aborted; finishing a closed run aborts nothing.
		require.Equal(t, http.StatusBadRequest, env.Do(http.MethodPost, env.ThreadURL(k, "/runs/"+url.PathEscape(woke.RunID)+"/finish"),
			deliverytest.SupportToken, map[string]any{"status": "finished", "clearPendingSignals": true}, nil))
		require.Equal(t, http.StatusOK, env.Do(http.MethodPost, env.ThreadURL(k, "/runs/"+url.PathEscape(woke.RunID)+"/finish"),
			deliverytest.SupportToken, map[string]any{"status": "aborted"}, nil))
	})
}

// toolCallOf is the id of the suspended tool call of k's run, from Mastra's list of
// suspended runs.
func toolCallOf(t *testing.T, base string, k inbox.ThreadKey) string {
	t.Helper()
	resp, err := http.Get(base + "/api/agents/interopAgent/suspended-runs?resourceId=" + url.QueryEscape(k.Resource) +
		"&threadId=" + url.QueryEscape(k.Thread))
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", raw)
	m := regexp.MustCompile(`"toolCallId":"([^"]+)"`).FindSubmatch(raw)
	require.NotNil(t, m, "no suspended tool call: %s", raw)
	return string(m[1])
}

// waitFor waits for a chunk of type typ on k from f.
func waitFor(t *testing.T, f *mastra.Follower, k inbox.ThreadKey, typ string) {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case c := <-f.TestSignals.Chunk.C():
			if c.Thread == k && c.Type == typ {
				return
			}
		case <-timeout:
			t.Fatalf("no %s chunk on %s", typ, k)
		}
	}
}

package agentapi_test

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/deliverytest"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/store/storetest"
)

// postSignal sends body to k's signals route and returns the status, the Retry-After
// header and the body.
func postSignal(t *testing.T, e *deliverytest.Env, k inbox.ThreadKey, body string) (int, string, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.ThreadURL(k, "/signals"), strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+e.Token(k))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, resp.Header.Get("Retry-After"), string(raw)
}

func liveRun(t *testing.T, e *deliverytest.Env, k inbox.ThreadKey) *agent.Run {
	t.Helper()
	run, err := e.Runs.Live(context.Background(), k)
	require.NoError(t, err)
	return run
}

// An agent's own signal that would wake an idle thread counts against
// max_concurrent_wakes like the gateway's wakes: with the agent's slots full it is
// refused 429 with Retry-After, nothing sent, stored or opened, and the same signal sent
// again once a wake run ended wakes the thread. A signal that needs no wake (persist, or
// into a live run) is not held back, and the wake budget still ignores signals.
func TestSignalWakeCountsAgainstMaxConcurrentWakes(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			agents := []agent.Config{{ID: "coder", Token: deliverytest.CoderToken, Target: agent.TargetConfig{Kind: agent.TargetStream},
				MaxConcurrentWakes: 1, WakeBudget: &agent.WakeBudget{Max: 1, Per: time.Hour}}}
			e := deliverytest.New(t, deliverytest.Config{Backend: &b, Agents: agents})
			first := inbox.ThreadKey{Agent: "coder", Resource: "acme/api", Thread: "first"}
			second := inbox.ThreadKey{Agent: "coder", Resource: "acme/api", Thread: "second"}
			wake := func(id string) string {
				return `{"signal": {"id": "` + id + `", "type": "reactive", "tagName": "ci", "contents": "build red"}}`
			}

			woke := send(t, e, first, wake("s1"))
			require.Equal(t, "wake", woke.Action)
			run := liveRun(t, e, first)
			require.NotNil(t, run)
			require.Equal(t, agent.OriginWake, run.Origin, "the signal's run is a wake run")

			status, retry, body := postSignal(t, e, second, wake("s2"))
			require.Equal(t, http.StatusTooManyRequests, status, body)
			require.Contains(t, body, `"code":"wakes_full"`)
			require.Contains(t, body, "max_concurrent_wakes")
			secs, err := strconv.Atoi(retry)
			require.NoError(t, err, "Retry-After %q", retry)
			require.True(t, secs >= 1 && secs <= 30, "Retry-After %d: by the next look at the slots", secs)
			require.Empty(t, e.Log(second), "nothing sent or stored")
			require.Nil(t, liveRun(t, e, second), "no run opened")

			persisted := send(t, e, second, `{"signal": {"id": "s3", "type": "reactive", "contents": "fyi"}, "ifIdle": {"behavior": "persist"}}`)
			require.Equal(t, "persist", persisted.Action, "no wake asked: not held back by the cap")
			into := send(t, e, first, wake("s4"))
			require.Equal(t, "deliver", into.Action, "into the live run: no wake")

			e.FinishRun(first, run.ID)
			again := send(t, e, second, wake("s2"))
			require.Equal(t, "wake", again.Action, "a slot freed: the same signal wakes the thread")
			require.Equal(t, "s2", again.ID)

			// Signals stay out of the wake budget: the first thread's budget of one wake
			// an hour is untouched by its signal's wake, and a record still wakes it.
			secondRun := liveRun(t, e, second)
			require.NotNil(t, secondRun)
			e.FinishRun(second, secondRun.ID)
			rec := e.Ingest(inbox.Notification{Thread: first, Source: "github", Kind: "comment", Summary: "c1", Priority: inbox.PriorityMedium})
			e.Pass()
			require.Equal(t, inbox.StatusDelivered, e.Record(rec).Status)
		})
	}
}

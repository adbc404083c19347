package delivery_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/deliverytest"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/store/storetest"
)

type signalAnswer struct {
	ID     string         `json:"id"`
	Action agent.Behavior `json:"action"`
	RunID  string         `json:"runId"`
	Error  struct {
		Code string `json:"code"`
	} `json:"error"`
}

// TestSignalIDsArePerThread plays agent B posting agent A's signal id: B's signal used to
// be answered 200 and never reach B's stream. Ids are per thread: B's is logged on B's
// thread; a different signal under an id its own thread logged is 409; the same signal
// sent again answers like the first time.
func TestSignalIDsArePerThread(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			env := deliverytest.New(t, deliverytest.Config{Backend: &b})
			coder := inbox.ThreadKey{Agent: "coder", Resource: "r", Thread: "t"}
			support := inbox.ThreadKey{Agent: "support", Resource: "r", Thread: "t"}
			send := func(k inbox.ThreadKey, contents string, attrs map[string]any, out *signalAnswer) int {
				sig := map[string]any{"id": "sig-shared", "type": "reactive", "tagName": "ci", "contents": contents,
					"attributes": map[string]any{"repo": "acme/api"}, "metadata": map[string]any{"n": 1}}
				body := map[string]any{"signal": sig, "ifIdle": map[string]any{"behavior": "persist", "attributes": attrs}}
				return env.Do("POST", env.ThreadURL(k, "/signals"), env.Token(k), body, out)
			}

			var first signalAnswer
			require.Equal(t, 200, send(coder, "build failed", nil, &first))
			require.Equal(t, agent.BehaviorPersist, first.Action)

			var other signalAnswer
			require.Equal(t, 200, send(support, "ticket opened", nil, &other))
			require.Equal(t, "sig-shared", other.ID)
			log := env.Log(support)
			require.Len(t, log, 1, "support's signal reaches support's thread")
			require.Equal(t, "ticket opened", log[0].Signal.Contents)

			// The same signal again (options' attributes may differ): answered like the first time.
			var again signalAnswer
			require.Equal(t, 200, send(coder, "build failed", map[string]any{"seen": "twice"}, &again))
			require.Equal(t, first, again)

			// Another signal under the logged id: 409, nothing logged.
			var conflict signalAnswer
			require.Equal(t, 409, send(coder, "build fixed", nil, &conflict))
			require.Equal(t, "signal_id_conflict", conflict.Error.Code)
			log = env.Log(coder)
			require.Len(t, log, 1)
			require.Equal(t, "build failed", log[0].Signal.Contents)
		})
	}
}

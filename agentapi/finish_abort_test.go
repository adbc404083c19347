package agentapi_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/deliverytest"
	"github.com/signalgate/signalgate/inbox"
)

// failingAborter is a Mastra server that does not take aborts.
type failingAborter struct{ calls []bool }

func (f *failingAborter) AbortThread(_ context.Context, _ inbox.ThreadKey, clear bool) error {
	f.calls = append(f.calls, clear)
	return errors.New("POST http://mastra/…: HTTP 500")
}

// Finishing a mastra agent's live run as aborted aborts Mastra's run first: when Mastra
// does not take it, the answer is 502 abort_failed and the gateway run stays open (the
// finish may be sent again). A run finished normally never reaches Mastra's abort.
func TestFinishAbortedReachesMastraFirst(t *testing.T) {
	ab := &failingAborter{}
	e := deliverytest.New(t, deliverytest.Config{Aborter: ab, Agents: []agent.Config{{ID: "support", Token: deliverytest.SupportToken,
		Target: agent.TargetConfig{Kind: "mastra", Presence: agent.PresenceRuntime}}}})
	k := inbox.ThreadKey{Agent: "support", Resource: "r", Thread: "t"}
	run := e.OpenRun(k)
	finish := func(body map[string]any) (int, map[string]any) {
		var out map[string]any
		return e.Do(http.MethodPost, e.ThreadURL(k, "/runs/"+url.PathEscape(run.ID)+"/finish"), deliverytest.SupportToken, body, &out), out
	}
	code, out := finish(map[string]any{"status": "aborted", "clearPendingSignals": true})
	require.Equal(t, http.StatusBadGateway, code)
	require.Equal(t, "abort_failed", out["error"].(map[string]any)["code"], "%v", out)
	require.Equal(t, []bool{true}, ab.calls, "clearPendingSignals passed through")
	live, err := e.Runs.Live(context.Background(), k)
	require.NoError(t, err)
	require.NotNil(t, live, "the run stays open")

	code, _ = finish(map[string]any{"status": "finished", "clearPendingSignals": false})
	require.Equal(t, http.StatusBadRequest, code, "clearPendingSignals only with aborted")
	code, _ = finish(map[string]any{"status": "finished"})
	require.Equal(t, http.StatusOK, code)
	require.Len(t, ab.calls, 1, "a finished run is not aborted in Mastra")
}

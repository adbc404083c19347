package agentapi_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/deliverytest"
)

// TestSignalMastraTarget: Mastra's body fields runId, resourceId and threadId. The
// thread ids must be the path's (thread_mismatch); runId with ifIdle is refused, as in
// Mastra; a runId that is the live run delivers into it, any other wakes as a
// thread-targeted send would.
func TestSignalMastraTarget(t *testing.T) {
	e := deliverytest.New(t, deliverytest.Config{})
	k := coderThread
	u := e.ThreadURL(k, "/signals")
	var bad errAnswer
	require.Equal(t, http.StatusBadRequest, e.Do(http.MethodPost, u, e.Token(k),
		`{"signal": {"type": "user", "contents": "hi"}, "resourceId": "other", "threadId": "`+k.Thread+`"}`, &bad))
	require.Equal(t, "thread_mismatch", bad.Error.Code)
	require.Equal(t, http.StatusBadRequest, e.Do(http.MethodPost, u, e.Token(k),
		`{"signal": {"type": "user", "contents": "hi"}, "threadId": "elsewhere"}`, &bad))
	require.Equal(t, "thread_mismatch", bad.Error.Code)
	require.Equal(t, http.StatusBadRequest, e.Do(http.MethodPost, u, e.Token(k),
		`{"signal": {"type": "user", "contents": "hi"}, "runId": "r1", "ifIdle": {"behavior": "persist"}}`, &bad))
	require.Contains(t, bad.Error.Message, "runId and ifIdle")
	require.Empty(t, e.Log(k), "refusals store nothing")

	stale := send(t, e, k, `{"signal": {"type": "user", "contents": "hi"}, "runId": "gone", "resourceId": "`+k.Resource+`", "threadId": "`+k.Thread+`"}`)
	require.Equal(t, "wake", stale.Action, "a runId that is not the live run sends to the thread, waking it")
	require.NotEqual(t, "gone", stale.RunID)
	require.True(t, stale.Accepted)
	require.Equal(t, stale.ID, stale.Signal["id"])
	require.Equal(t, "hi", stale.Signal["contents"])

	live := send(t, e, k, `{"signal": {"type": "user", "contents": "more"}, "runId": "`+stale.RunID+`"}`)
	require.Equal(t, "deliver", live.Action)
	require.Equal(t, stale.RunID, live.RunID)
}

// TestSignalMastraContents: contents as parts, providerOptions, and a state signal's
// value and delta are stored with the signal and shown on the stream.
func TestSignalMastraContents(t *testing.T) {
	e := deliverytest.New(t, deliverytest.Config{})
	k := coderThread
	e.OpenRun(k)
	parts := send(t, e, k, `{"signal": {"type": "user", "contents": [{"type": "text", "text": "look at this"},
		{"type": "file", "data": "aGVsbG8=", "mediaType": "text/plain", "filename": "a.txt"}, {"type": "text", "text": "thanks"}],
		"providerOptions": {"anthropic": {"cacheControl": {"type": "ephemeral"}}}}}`)
	require.Equal(t, "deliver", parts.Action)
	state := send(t, e, k, `{"signal": {"type": "state", "id": "todo", "cacheKey": "v1", "contents": "2 open", "value": {"open": 2}, "delta": [1]}}`)
	require.Equal(t, 1, state.Version)

	log := e.Log(k)
	sig := log[len(log)-2].Signal
	require.Equal(t, "look at this\nthanks", sig.Contents, "text parts joined, as Mastra renders them")
	require.Len(t, sig.Parts, 3)
	require.Equal(t, agent.Part{Type: "file", Data: "aGVsbG8=", MediaType: "text/plain", Filename: "a.txt"}, sig.Parts[1])
	require.Equal(t, map[string]any{"anthropic": map[string]any{"cacheControl": map[string]any{"type": "ephemeral"}}}, sig.ProviderOptions)
	st := log[len(log)-1].Signal
	require.Equal(t, map[string]any{"open": float64(2)}, st.Metadata["value"], "where Mastra's state signals carry it")
	require.Equal(t, []any{float64(1)}, st.Metadata["delta"])

	sub := e.Subscribe(k, "", "")
	evs := sub.Take(len(log))
	require.Len(t, evs[len(evs)-2].Data["parts"], 3)
	require.NotNil(t, evs[len(evs)-2].Data["providerOptions"])

	for _, body := range []string{
		`{"signal": {"type": "state", "id": "x", "cacheKey": "1", "contents": "s", "transient": true}}`,
		`{"signal": {"type": "user", "contents": "s", "value": 1}}`,
		`{"signal": {"type": "user", "contents": [{"type": "image", "data": "x"}]}}`,
		`{"signal": {"type": "user", "contents": [{"type": "file", "data": "x"}]}}`,
		`{"signal": {"type": "user", "contents": {"text": "x"}}}`,
	} {
		var bad errAnswer
		require.Equal(t, http.StatusBadRequest, e.Do(http.MethodPost, e.ThreadURL(k, "/signals"), e.Token(k), body, &bad), body)
	}
	require.Len(t, e.Log(k), len(log), "refusals store nothing")
}

// TestSignalTransient: a transient signal reaches the stream's live subscribers once and
// is never written to the thread's log; transient with persist is a discard.
func TestSignalTransient(t *testing.T) {
	e := deliverytest.New(t, deliverytest.Config{})
	k := coderThread
	sub := e.Subscribe(k, "", "")
	woke := send(t, e, k, `{"signal": {"type": "user", "contents": "typing…", "transient": true}}`)
	require.Equal(t, "wake", woke.Action)
	evs := sub.Take(2) // the run the wake opened (logged) and the signal (live only)
	var live *deliverytest.Event
	for i := range evs {
		if evs[i].Event == "signal" {
			live = &evs[i]
		}
	}
	require.NotNil(t, live)
	require.Equal(t, woke.ID, live.Str("id"))
	require.Equal(t, true, live.Data["transient"])
	require.Empty(t, live.ID, "no seq: nothing to resume from")
	for _, f := range e.Log(k) {
		require.NotEqual(t, agent.EventSignal, f.Event, "never logged")
	}

	persisted := send(t, e, k, `{"signal": {"type": "user", "contents": "x", "transient": true}, "ifActive": {"behavior": "persist"}}`)
	require.Equal(t, "discard", persisted.Action, "transient with persist is a discard, as in Mastra")
	require.Len(t, e.Log(k), 1, "only the run")
}

package agentapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/deliverytest"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/store/storetest"
)

type cancelAnswer struct {
	CancelledSignalIDs []string `json:"cancelledSignalIds"`
	Error              struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// POST …/messages/cancel (Mastra's cancelQueuedMessages): queued messages waiting for the
// active run to end are dismissed by signal or record id and never reach the agent; ids
// of anything else are left out of the answer.
func TestCancelQueuedMessages(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			e := deliverytest.New(t, deliverytest.Config{Backend: &b})
			k := coderThread
			run := e.OpenRun(k)
			queued := func(summary string) string {
				return newNote(t, e, k, map[string]any{"kind": "message", "summary": summary, "deliverAs": "queued-message"})
			}
			first, second, kept := queued("first"), queued("second"), queued("kept")
			note := newNote(t, e, k, map[string]any{"kind": "note", "summary": "n", "priority": "low"})
			e.Pass()
			secondSignal := agent.RecordSignalID(e.Record(second))

			var out cancelAnswer
			require.Equal(t, http.StatusOK, e.Do(http.MethodPost, e.ThreadURL(k, "/messages/cancel"), e.Token(k),
				map[string]any{"signalIds": []string{first, secondSignal, note, "nope"}}, &out))
			require.Equal(t, []string{first, secondSignal}, out.CancelledSignalIDs)
			require.Equal(t, inbox.StatusDismissed, e.Record(first).Status)
			require.Equal(t, inbox.StatusDismissed, e.Record(second).Status)
			require.Equal(t, inbox.StatusPending, e.Record(kept).Status)
			require.Equal(t, inbox.StatusPending, e.Record(note).Status, "a notification is not a message")

			e.FinishRun(k, run.ID)
			e.Pass()
			var handed []string
			for _, f := range e.Log(k) {
				if f.Event == agent.EventSignal && f.Signal.Type == agent.TypeUser {
					handed = append(handed, f.Signal.Contents)
				}
			}
			require.Equal(t, []string{"kept"}, handed, "only the message not cancelled was handed over")
			keptSignal := agent.RecordSignalID(e.Record(kept))
			require.Equal(t, inbox.StatusDelivered, e.Record(kept).Status)

			require.Equal(t, http.StatusOK, e.Do(http.MethodPost, e.ThreadURL(k, "/messages/cancel"), e.Token(k),
				map[string]any{"signalIds": []string{kept, keptSignal}}, &out))
			require.Empty(t, out.CancelledSignalIDs, "handed over already")
			require.NotNil(t, out.CancelledSignalIDs, "an empty list, not null")
		})
	}
}

// A token cancels only its own threads' messages: another agent's thread is refused, and
// an id from another thread of its own names nothing on this one.
func TestCancelQueuedMessagesScope(t *testing.T) {
	e := deliverytest.New(t, deliverytest.Config{})
	k := coderThread
	e.OpenRun(k)
	id := newNote(t, e, k, map[string]any{"kind": "message", "summary": "mine", "deliverAs": "queued-message"})
	sig := agent.RecordSignalID(e.Record(id))

	var out cancelAnswer
	require.Equal(t, http.StatusForbidden, e.Do(http.MethodPost, e.ThreadURL(k, "/messages/cancel"), deliverytest.SupportToken,
		map[string]any{"signalIds": []string{id}}, &out))
	own := inbox.ThreadKey{Agent: "support", Resource: k.Resource, Thread: k.Thread}
	require.Equal(t, http.StatusOK, e.Do(http.MethodPost, e.ThreadURL(own, "/messages/cancel"), deliverytest.SupportToken,
		map[string]any{"signalIds": []string{id, sig}}, &out))
	require.Empty(t, out.CancelledSignalIDs)
	elsewhere := inbox.ThreadKey{Agent: "coder", Resource: k.Resource, Thread: "elsewhere"}
	require.Equal(t, http.StatusOK, e.Do(http.MethodPost, e.ThreadURL(elsewhere, "/messages/cancel"), e.Token(k),
		map[string]any{"signalIds": []string{id, sig}}, &out))
	require.Empty(t, out.CancelledSignalIDs)
	require.Equal(t, inbox.StatusPending, e.Record(id).Status)
}

// Bad bodies are 400 with a message, never a 500; the ids are bounded.
func TestCancelQueuedMessagesBounds(t *testing.T) {
	e := deliverytest.New(t, deliverytest.Config{})
	k := coderThread
	many := make([]string, agent.MaxCancelIDs+1)
	for i := range many {
		many[i] = "x"
	}
	for name, tc := range map[string]struct {
		body any
		msg  string
	}{
		"no body":       {"", "request body: want a JSON object"},
		"missing ids":   {map[string]any{}, "signalIds: required"},
		"not an array":  {map[string]any{"signalIds": "x"}, "field signalIds: want an array"},
		"unknown field": {map[string]any{"signalIds": []string{"x"}, "queueOwnerId": "me"}, `unknown field "queueOwnerId"`},
		"too many":      {map[string]any{"signalIds": many}, "signalIds: at most 100 ids per request, got 101"},
		"empty id":      {map[string]any{"signalIds": []string{""}}, "signalIds[0]:"},
		"long id":       {map[string]any{"signalIds": []string{strings.Repeat("i", 513)}}, "signalIds[0]:"},
	} {
		var out cancelAnswer
		require.Equal(t, http.StatusBadRequest, e.Do(http.MethodPost, e.ThreadURL(k, "/messages/cancel"), e.Token(k), tc.body, &out), name)
		require.Contains(t, out.Error.Message, tc.msg, name)
	}
	var out cancelAnswer
	require.Equal(t, http.StatusOK, e.Do(http.MethodPost, e.ThreadURL(k, "/messages/cancel"), e.Token(k),
		map[string]any{"signalIds": []string{}}, &out))
	require.Empty(t, out.CancelledSignalIDs, "an empty list cancels nothing, as in Mastra")
}

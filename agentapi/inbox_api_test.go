package agentapi_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/deliverytest"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/store"
)

type listAnswer struct {
	Notifications []inbox.Record `json:"notifications"`
	NextCursor    string         `json:"nextCursor"`
}

type readAnswer struct {
	Notifications []struct {
		inbox.Record
		XML string `json:"xml"`
	} `json:"notifications"`
}

func newNote(t *testing.T, e *deliverytest.Env, k inbox.ThreadKey, body map[string]any) string {
	t.Helper()
	var out struct {
		RecordID string `json:"recordId"`
	}
	require.Equal(t, http.StatusCreated, e.Do(http.MethodPost, e.ThreadURL(k, "/notifications"), e.Token(k), body, &out))
	e.Clock.Advance(time.Second)
	return out.RecordID
}

func statuses(recs []inbox.Record) []inbox.Status {
	out := make([]inbox.Status, len(recs))
	for i, r := range recs {
		out[i] = r.Status
	}
	return out
}

func recIDs(recs []inbox.Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.ID
	}
	return out
}

func TestInboxList(t *testing.T) {
	e := deliverytest.New(t, deliverytest.Config{})
	k := coderThread
	a := newNote(t, e, k, map[string]any{"source": "github", "kind": "ci-failure", "summary": "CI failed on main", "payload": map[string]any{"run": 42}})
	b := newNote(t, e, k, map[string]any{"source": "slack", "kind": "mention", "summary": "Jane: can you look?"})
	c := newNote(t, e, k, map[string]any{"source": "github", "kind": "comment", "summary": "LGTM", "priority": "low"})
	d := newNote(t, e, k, map[string]any{"source": "github", "kind": "comment", "summary": "archived one"})
	var rec inbox.Record
	require.Equal(t, http.StatusOK, e.Do(http.MethodPost, e.ThreadURL(k, "/notifications/"+d+"/archive"), e.Token(k), nil, &rec))
	require.Equal(t, inbox.StatusArchived, rec.Status)
	e.Pass() // a, b delivered (wake); c summarised and still pending

	u := e.ThreadURL(k, "/notifications")
	var peek listAnswer
	require.Equal(t, http.StatusOK, e.Do(http.MethodGet, u+"?markSeen=false", e.Token(k), nil, &peek))
	require.Equal(t, []string{c, b, a}, recIDs(peek.Notifications), "pending and delivered, newest first")
	require.Equal(t, []inbox.Status{inbox.StatusPending, inbox.StatusDelivered, inbox.StatusDelivered}, statuses(peek.Notifications))
	require.JSONEq(t, `{"run": 42}`, string(peek.Notifications[2].Payload))

	var page listAnswer
	require.Equal(t, http.StatusOK, e.Do(http.MethodGet, u+"?markSeen=false&limit=2", e.Token(k), nil, &page))
	require.Equal(t, []string{c, b}, recIDs(page.Notifications))
	require.NotEmpty(t, page.NextCursor)
	var page2 listAnswer
	require.Equal(t, http.StatusOK, e.Do(http.MethodGet, u+"?markSeen=false&limit=2&cursor="+url.QueryEscape(page.NextCursor), e.Token(k), nil, &page2))
	require.Equal(t, []string{a}, recIDs(page2.Notifications))
	require.Empty(t, page2.NextCursor)

	var search listAnswer
	require.Equal(t, http.StatusOK, e.Do(http.MethodGet, u+"?markSeen=false&q="+url.QueryEscape("jane"), e.Token(k), nil, &search))
	require.Equal(t, []string{b}, recIDs(search.Notifications))
	require.Equal(t, http.StatusOK, e.Do(http.MethodGet, u+"?markSeen=false&q=ci-fail", e.Token(k), nil, &search))
	require.Equal(t, []string{a}, recIDs(search.Notifications), "kind matches")
	require.Equal(t, http.StatusOK, e.Do(http.MethodGet, u+"?markSeen=false&status=archived", e.Token(k), nil, &search))
	require.Equal(t, []string{d}, recIDs(search.Notifications))
	require.Equal(t, http.StatusOK, e.Do(http.MethodGet, u+"?markSeen=false&status=all", e.Token(k), nil, &search))
	require.Len(t, search.Notifications, 4)
	require.Equal(t, http.StatusOK, e.Do(http.MethodGet, u+"?source=github&kind=comment,ci-failure", e.Token(k), nil, &search))
	require.Equal(t, []string{c, a}, recIDs(search.Notifications), "source and kind filters")
	require.Equal(t, http.StatusOK, e.Do(http.MethodGet, u+"?source=slack,email", e.Token(k), nil, &search))
	require.Equal(t, []string{b}, recIDs(search.Notifications))
	var tooMany apiError
	require.Equal(t, http.StatusBadRequest, e.Do(http.MethodGet, u+"?kind="+strings.Repeat("x,", 20)+"x", e.Token(k), nil, &tooMany),
		"filters are bounded")
	require.Equal(t, "kind: at most 20 values", tooMany.Error.Message)

	// Listing and searching change nothing.
	for _, q := range []string{"", "?q=jane", "?status=all", "?markSeen=false"} {
		var list listAnswer
		require.Equal(t, http.StatusOK, e.Do(http.MethodGet, u+q, e.Token(k), nil, &list))
	}
	for id, want := range map[string]inbox.Status{a: inbox.StatusDelivered, b: inbox.StatusDelivered, c: inbox.StatusPending, d: inbox.StatusArchived} {
		require.Equal(t, want, e.Record(id).Status)
	}
	var errBody struct {
		Error struct{ Message string } `json:"error"`
	}
	require.Equal(t, http.StatusBadRequest, e.Do(http.MethodGet, u+"?markSeen=true", e.Token(k), nil, &errBody),
		"a client relying on the old side effect is told")
	require.Contains(t, errBody.Error.Message, "markSeen")
}

// TestInboxListKeepsScheduledDelivery: an agent that lists its inbox while a high record
// waits for the thread to turn idle still gets the full notification.
func TestInboxListKeepsScheduledDelivery(t *testing.T) {
	e := deliverytest.New(t, deliverytest.Config{})
	k := coderThread
	run := e.OpenRun(k)
	a := newNote(t, e, k, map[string]any{"source": "github", "kind": "review", "summary": "Review requested", "priority": "high"})
	e.Pass() // summarised into the active run; the full notification waits for idle
	var list listAnswer
	require.Equal(t, http.StatusOK, e.Do(http.MethodGet, e.ThreadURL(k, "/notifications"), e.Token(k), nil, &list))
	require.Equal(t, []string{a}, recIDs(list.Notifications))
	require.Equal(t, http.StatusOK, e.Do(http.MethodGet, e.ThreadURL(k, "/notifications?q=review"), e.Token(k), nil, &list))
	e.FinishRun(k, run.ID)
	e.Pass()
	require.Equal(t, inbox.StatusDelivered, e.Record(a).Status)
	log := e.Log(k)
	last := log[len(log)-1]
	require.Equal(t, agent.TagNotification, last.Signal.TagName)
	require.Contains(t, last.XML, `status="delivered"`)
}

func TestInboxReadAndActions(t *testing.T) {
	e := deliverytest.New(t, deliverytest.Config{})
	k := coderThread
	e.OpenRun(k)
	a := newNote(t, e, k, map[string]any{"source": "github", "kind": "review", "summary": "Review <requested>", "priority": "high",
		"attributes": map[string]any{"repo": "acme/api"}, "payload": map[string]any{"pr": 7}})
	b := newNote(t, e, k, map[string]any{"source": "github", "kind": "comment", "summary": "nit"})
	e.Pass() // both summarised into the active run, still unread

	var read readAnswer
	require.Equal(t, http.StatusOK, e.Do(http.MethodPost, e.ThreadURL(k, "/notifications/read"), e.Token(k), nil, &read))
	require.Len(t, read.Notifications, 2)
	require.Equal(t, a, read.Notifications[0].ID, "oldest first")
	require.Equal(t, `<notification repo="acme/api" id="`+a+`" source="github" type="review" kind="review" priority="high" status="delivered" verified_by="agent-token">Review &lt;requested&gt;</notification>`,
		read.Notifications[0].XML)
	require.JSONEq(t, `{"pr": 7}`, string(read.Notifications[0].Payload))
	require.Equal(t, inbox.StatusSeen, e.Record(a).Status)
	require.Equal(t, inbox.StatusSeen, e.Record(b).Status)
	require.Equal(t, http.StatusOK, e.Do(http.MethodPost, e.ThreadURL(k, "/notifications/read"), e.Token(k), nil, &read))
	require.Empty(t, read.Notifications, "nothing unread left")

	// Read by id, whatever the status; an id of another thread is not found.
	require.Equal(t, http.StatusOK, e.Do(http.MethodPost, e.ThreadURL(k, "/notifications/read"), e.Token(k), map[string]any{"ids": []string{b}}, &read))
	require.Equal(t, b, read.Notifications[0].ID)
	other := inbox.ThreadKey{Agent: "coder", Resource: "acme/api", Thread: "other"}
	var out apiError
	require.Equal(t, http.StatusNotFound, e.Do(http.MethodPost, e.ThreadURL(other, "/notifications/read"), e.Token(k), map[string]any{"ids": []string{b}}, &out))
	require.Contains(t, out.Error.Message, b)
	require.Equal(t, http.StatusNotFound, e.Do(http.MethodPost, e.ThreadURL(other, "/notifications/"+b+"/dismiss"), e.Token(k), nil, &out))
	require.Equal(t, http.StatusNotFound, e.Do(http.MethodGet, e.ThreadURL(other, "/notifications/"+b), e.Token(k), nil, &out))

	// Actions: repeating is fine; seen cannot revive a dismissed record.
	var rec inbox.Record
	require.Equal(t, http.StatusOK, e.Do(http.MethodPost, e.ThreadURL(k, "/notifications/"+a+"/seen"), e.Token(k), nil, &rec))
	require.Equal(t, inbox.StatusSeen, rec.Status)
	require.Equal(t, http.StatusOK, e.Do(http.MethodPost, e.ThreadURL(k, "/notifications/"+a+"/dismiss"), e.Token(k), nil, &rec))
	require.Equal(t, inbox.StatusDismissed, rec.Status)
	require.Equal(t, http.StatusOK, e.Do(http.MethodPost, e.ThreadURL(k, "/notifications/"+a+"/dismiss"), e.Token(k), nil, &rec))
	require.Equal(t, http.StatusConflict, e.Do(http.MethodPost, e.ThreadURL(k, "/notifications/"+a+"/seen"), e.Token(k), nil, &out))
	require.Equal(t, `notification "`+a+`" is dismissed and cannot be marked seen`, out.Error.Message)
	require.Equal(t, http.StatusOK, e.Do(http.MethodPost, e.ThreadURL(k, "/notifications/"+a+"/archive"), e.Token(k), nil, &rec))
	require.Equal(t, inbox.StatusArchived, rec.Status)
	require.Equal(t, http.StatusOK, e.Do(http.MethodGet, e.ThreadURL(k, "/notifications/"+a), e.Token(k), nil, &rec))
	require.Equal(t, inbox.StatusArchived, rec.Status)

	// Reading a high record stops its full delivery at idle: the agent has it already.
	var run struct {
		RunID string `json:"runId"`
	}
	require.Equal(t, http.StatusOK, e.Do(http.MethodPost, e.ThreadURL(k, "/runs"), e.Token(k), nil, &run))
	e.FinishRun(k, run.RunID)
	e.Pass()
	for _, f := range e.Log(k) {
		require.NotEqual(t, "notification", f.Signal.TagName, "no full notification after read")
	}
}

func TestNotificationIdempotencyKey(t *testing.T) {
	e := deliverytest.New(t, deliverytest.Config{})
	k := coderThread
	body := map[string]any{"kind": "note", "summary": "once", "deliveryId": "client-1"}
	var first, second struct {
		EventID   string `json:"eventId"`
		RecordID  string `json:"recordId"`
		Duplicate bool   `json:"duplicate"`
	}
	require.Equal(t, http.StatusCreated, e.Do(http.MethodPost, e.ThreadURL(k, "/notifications"), e.Token(k), body, &first))
	require.Equal(t, http.StatusOK, e.Do(http.MethodPost, e.ThreadURL(k, "/notifications"), e.Token(k), body, &second))
	require.True(t, second.Duplicate)
	require.Equal(t, first.EventID, second.EventID)
	recs, err := store.NewRecords(e.Store).ThreadRecords(t.Context(), k)
	require.NoError(t, err)
	require.Len(t, recs, 1)
	ev, err := store.NewExplain(e.Store).GetEvent(t.Context(), first.EventID)
	require.NoError(t, err)
	require.Equal(t, "coder", ev.Connector, "the agent is the connector")
	require.Equal(t, "agent-api", ev.Source)
}

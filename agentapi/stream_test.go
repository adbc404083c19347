package agentapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	sse "github.com/tmaxmax/go-sse"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/agentapi"
	"github.com/signalgate/signalgate/deliverytest"
	"github.com/signalgate/signalgate/inbox"
)

func persist(t *testing.T, e *deliverytest.Env, k inbox.ThreadKey, contents string) signalAnswer {
	t.Helper()
	return send(t, e, k, fmt.Sprintf(`{"signal": {"type": "reactive", "contents": %q}, "ifIdle": {"behavior": "persist"}}`, contents))
}

func TestStreamResumeByLastEventID(t *testing.T) {
	e := deliverytest.New(t, deliverytest.Config{})
	k := coderThread
	var ids []string
	for i := range 3 {
		ids = append(ids, persist(t, e, k, fmt.Sprint("s", i)).ID)
	}
	sub := e.Subscribe(k, "", "")
	got := sub.Take(3)
	for i, ev := range got {
		require.Equal(t, fmt.Sprint(i+1), ev.ID, "SSE id is the per-thread seq")
		require.Equal(t, "signal", ev.Event)
		require.Equal(t, ids[i], ev.Str("id"), "JSON id is the signal id")
		require.Equal(t, float64(i+1), ev.Data["seq"])
	}
	sub.Close()

	// Missed while disconnected.
	for i := 3; i < 5; i++ {
		ids = append(ids, persist(t, e, k, fmt.Sprint("s", i)).ID)
	}
	resumed := e.Subscribe(k, got[2].ID, "")
	got = resumed.Take(2)
	require.Equal(t, []string{"4", "5"}, []string{got[0].ID, got[1].ID})
	require.Equal(t, []string{ids[3], ids[4]}, []string{got[0].Str("id"), got[1].Str("id")})

	// Live frames follow the replay on the same stream.
	ids = append(ids, persist(t, e, k, "s5").ID)
	ev := resumed.Next(wait)
	require.Equal(t, "6", ev.ID)
	require.Equal(t, ids[5], ev.Str("id"))

	// after= does the same for clients that cannot set headers; latest skips history.
	q := e.Subscribe(k, "", "after=5")
	require.Equal(t, "6", q.Next(wait).ID)
	tail := e.Subscribe(k, "", "after=latest")
	persist(t, e, k, "s6")
	require.Equal(t, "7", tail.Next(wait).ID)
}

func TestStreamFanOut(t *testing.T) {
	e := deliverytest.New(t, deliverytest.Config{})
	k := coderThread
	otherKey := inbox.ThreadKey{Agent: "coder", Resource: "acme/api", Thread: "other"}
	subs := []*deliverytest.Stream{e.Subscribe(k, "", ""), e.Subscribe(k, "", ""), e.Subscribe(k, "", "")}
	other := e.Subscribe(otherKey, "", "")
	var ids []string
	for i := range 5 {
		ids = append(ids, persist(t, e, k, fmt.Sprint("m", i)).ID)
	}
	theirs := persist(t, e, otherKey, "theirs").ID
	for _, s := range subs {
		got := s.Take(5)
		for i, ev := range got {
			require.Equal(t, ids[i], ev.Str("id"), "every subscriber gets every frame, in order")
		}
	}
	ev := other.Next(wait)
	require.Equal(t, theirs, ev.Str("id"), "a thread's subscribers see only that thread")
	require.Equal(t, "1", ev.ID)
}

func TestStreamKeepAlive(t *testing.T) {
	e := deliverytest.New(t, deliverytest.Config{API: []agentapi.Option{agentapi.WithKeepAlive(5 * time.Millisecond)}})
	sub := e.Subscribe(coderThread, "", "")
	for {
		ev, ok := sub.NextAny(wait)
		require.True(t, ok, "stream open")
		if ev.Comment != "" {
			require.Equal(t, "keep-alive", ev.Comment)
			return
		}
	}
}

func TestStreamEndsOnShutdown(t *testing.T) {
	e := deliverytest.New(t, deliverytest.Config{})
	a := e.Subscribe(coderThread, "", "")
	b := e.Subscribe(coderThread, "", "")
	close(e.Shutdown)
	require.True(t, a.Ended(wait), "server shutdown ends streams")
	require.True(t, b.Ended(wait))
}

func TestStreamEndsWhenBrokerStops(t *testing.T) {
	e := deliverytest.New(t, deliverytest.Config{})
	sub := e.Subscribe(coderThread, "", "")
	persist(t, e, coderThread, "x")
	require.Equal(t, "1", sub.Next(wait).ID)
	require.NoError(t, e.Broker.Stop(context.Background()))
	require.True(t, sub.Ended(wait))
	require.Zero(t, e.Broker.Subscribers(coderThread))
}

func TestStreamRunFrames(t *testing.T) {
	e := deliverytest.New(t, deliverytest.Config{})
	k := coderThread
	sub := e.Subscribe(k, "", "")
	var run agent.Run
	require.Equal(t, http.StatusCreated, e.Do(http.MethodPost, e.ThreadURL(k, "/runs"), e.Token(k), nil, &run))
	require.Equal(t, agent.OriginAgent, run.Origin)
	require.Equal(t, e.Clock.Now().Add(agent.DefaultRunLease), run.LeaseUntil)
	var again agent.Run
	require.Equal(t, http.StatusOK, e.Do(http.MethodPost, e.ThreadURL(k, "/runs"), e.Token(k), nil, &again), "the live run is adopted")
	require.Equal(t, run.ID, again.ID)

	e.Clock.Advance(time.Minute)
	var hb agent.Run
	require.Equal(t, http.StatusOK, e.Do(http.MethodPost, e.ThreadURL(k, "/runs/"+run.ID+"/heartbeat"), e.Token(k), nil, &hb))
	require.Equal(t, e.Clock.Now().Add(agent.DefaultRunLease), hb.LeaseUntil)
	var out apiError
	require.Equal(t, http.StatusNotFound, e.Do(http.MethodPost, e.ThreadURL(k, "/runs/nope/heartbeat"), e.Token(k), nil, &out))
	require.Equal(t, http.StatusBadRequest, e.Do(http.MethodPost, e.ThreadURL(k, "/runs/"+run.ID+"/finish"), e.Token(k), `{"status":"done"}`, &out))
	var fin agent.Run
	require.Equal(t, http.StatusOK, e.Do(http.MethodPost, e.ThreadURL(k, "/runs/"+run.ID+"/finish"), e.Token(k), `{"status":"aborted"}`, &fin))
	require.Equal(t, agent.RunAborted, fin.Status)
	require.Equal(t, http.StatusOK, e.Do(http.MethodPost, e.ThreadURL(k, "/runs/"+run.ID+"/finish"), e.Token(k), nil, &fin), "finishing twice is a no-op")
	require.Equal(t, agent.RunAborted, fin.Status)
	require.Equal(t, http.StatusConflict, e.Do(http.MethodPost, e.ThreadURL(k, "/runs/"+run.ID+"/heartbeat"), e.Token(k), nil, &out))
	require.Equal(t, "run_closed", out.Error.Code)

	open, closed := sub.Next(wait), sub.Next(wait)
	require.Equal(t, []string{"run", "run"}, []string{open.Event, closed.Event})
	require.Equal(t, run.ID, open.Str("runId"))
	require.Equal(t, "open", open.Str("status"))
	require.Equal(t, "aborted", closed.Str("status"))
	require.Len(t, e.Log(k), 2)
}

// TestStreamLatestCursorBrowserReconnect plays a browser EventSource on ?after=latest:
// it is cut off before any frame, frames are committed meanwhile, and it reconnects to
// the same URL with Last-Event-ID set to the id it received, as EventSource does. It
// resumes from the position its first connection resolved, not from a later "latest".
func TestStreamLatestCursorBrowserReconnect(t *testing.T) {
	e := deliverytest.New(t, deliverytest.Config{})
	k := coderThread
	persist(t, e, k, "history")
	persist(t, e, k, "more history")
	u := e.ThreadURL(k, "/stream?after=latest")
	connect := func(lastEventID string) (*http.Response, context.CancelFunc) {
		// Bounded: without the cursor the first read would wait for a frame forever.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+e.Token(k))
		req.Header.Set("Accept", "text/event-stream")
		if lastEventID != "" {
			req.Header.Set("Last-Event-ID", lastEventID)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		return resp, cancel
	}
	// An EventSource's parser: the id-only event sets the last event id and
	// dispatches nothing.
	resp, cancel := connect("")
	var lastID string
	for ev, err := range sse.Read(resp.Body, nil) {
		require.NoError(t, err)
		lastID = ev.LastEventID
		require.Empty(t, ev.Data, "the cursor carries no data")
		break
	}
	require.Equal(t, "2", lastID, "the position latest resolved to")
	cancel()
	_ = resp.Body.Close()

	missed := []string{persist(t, e, k, "while away 1").ID, persist(t, e, k, "while away 2").ID}
	resp, cancel = connect(lastID)
	defer cancel()
	defer resp.Body.Close()
	var got []string
	for ev, err := range sse.Read(resp.Body, nil) {
		require.NoError(t, err)
		if ev.Data == "" {
			continue
		}
		var f struct {
			ID string `json:"id"`
		}
		require.NoError(t, json.Unmarshal([]byte(ev.Data), &f))
		got = append(got, f.ID)
		if len(got) == len(missed) {
			break
		}
	}
	require.Equal(t, missed, got, "what was committed while disconnected")
}

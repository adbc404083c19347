package mastra_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/service"
	"github.com/signalgate/signalgate/targets/mastra"
)

// While Mastra cannot be reached the thread keeps its last known presence (the run's
// lease is renewed); on reconnect a replayed start keeps the run, and a stream that
// replays nothing closes it at once instead of at lease expiry.
func TestFollowerKeepsPresenceWhileAwayThenResyncs(t *testing.T) {
	var mu sync.Mutex
	conn := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		n := conn
		conn++
		mu.Unlock()
		switch n {
		case 0: // a run starts, then the stream is lost
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, ": connected\n\n"+`data: {"type":"start","runId":"m1"}`+"\n\n")
		case 1, 2: // Mastra is down
			http.Error(w, "restarting", http.StatusServiceUnavailable)
		case 3: // back, still running m1: its chunks are replayed, then lost again
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, ": connected\n\n"+`data: {"type":"start","runId":"m1"}`+"\n\n"+
				`data: {"type":"text-delta","runId":"m1"}`+"\n\n")
		default: // back, and m1 ended meanwhile: nothing to replay
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, ": connected\n\n")
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		}
	}))
	defer srv.Close()

	var cmu sync.Mutex
	clock := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	now := func() time.Time { // every reading is 16 s later: each reconnect may renew
		cmu.Lock()
		defer cmu.Unlock()
		clock = clock.Add(16 * time.Second)
		return clock
	}
	p := &presence{}
	idle := make(chan inbox.ThreadKey, 4)
	f := mastra.NewFollower(config(srv.URL), p, func(ks []inbox.ThreadKey) { idle <- ks[0] }, service.Base{Now: now},
		mastra.WithBackoff(time.Millisecond, 5*time.Millisecond), mastra.WithResyncWait(100*time.Millisecond), mastra.WithIdleUnfollow(0))
	require.NoError(t, f.Start(context.Background()))
	f.Follow(context.Background(), thread)
	select {
	case k := <-idle:
		require.Equal(t, thread, k)
	case <-time.After(10 * time.Second):
		t.Fatal("the run that ended while away was never closed")
	}
	require.NoError(t, f.Stop(context.Background()))
	require.Equal(t, []string{"open run-1 mastra", "adopt run-1", "close run-1 aborted"}, p.log(),
		"kept through the outage, kept on the replay, closed when nothing was replayed")
	p.mu.Lock()
	defer p.mu.Unlock()
	require.GreaterOrEqual(t, p.beats, 3, "the lease is renewed while the stream is lost")
}

// After a restart a thread whose run was open is resynced like a reconnect: Mastra
// replaying nothing means the run ended while the gateway was down, closed at once.
func TestFollowerResumeClosesRunEndedWhileDown(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, ": connected\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer srv.Close()
	p := &presence{live: "run-before-restart", resumed: []inbox.ThreadKey{thread}}
	idle := make(chan inbox.ThreadKey, 1)
	f := mastra.NewFollower(config(srv.URL), p, func(ks []inbox.ThreadKey) { idle <- ks[0] }, service.Base{},
		mastra.WithResyncWait(50*time.Millisecond))
	require.NoError(t, f.Start(context.Background()))
	select {
	case k := <-idle:
		require.Equal(t, thread, k)
	case <-time.After(10 * time.Second):
		t.Fatal("the run that ended while the gateway was down was never closed")
	}
	require.NoError(t, f.Stop(context.Background()))
	require.Equal(t, []string{"close run-before-restart aborted"}, p.log())
}

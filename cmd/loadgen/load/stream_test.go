package load

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/inbox"
)

// TestSubscriberResumesFromCursor: a subscriber cut off after ?after=latest gave its
// cursor but before any frame reconnects from that cursor, never from a later "latest",
// so what the gateway delivered meanwhile is not skipped.
func TestSubscriberResumesFromCursor(t *testing.T) {
	type request struct{ after, lastEventID string }
	var mu sync.Mutex
	var reqs []request
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		reqs = append(reqs, request{r.URL.Query().Get("after"), r.Header.Get("Last-Event-ID")})
		n := len(reqs)
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		switch n {
		case 1: // the gateway is killed right after the cursor
			fmt.Fprint(w, "id: 0\n\n") // a new thread: nothing logged yet
		default: // restarted: what it delivered since seq 0
			fmt.Fprint(w, "id: 1\nevent: signal\ndata: {\"id\":\"sig-1\",\"contents\":\"lgRUNx1z\"}\n\n")
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		}
	}))
	defer srv.Close()

	tr := newTracker("RUN", 1, false)
	tr.sent("lgRUNx1z", time.Now())
	tr.ack("lgRUNx1z")
	s := &subscriber{key: inbox.ThreadKey{Agent: "a", Resource: "r", Thread: "t"}, urls: []string{srv.URL},
		client: srv.Client(), tr: tr, seen: map[string]bool{}}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan struct{})
	done := make(chan struct{})
	go func() { defer close(done); s.run(ctx, ready) }()
	<-ready
	tr.doneSending()
	select {
	case <-tr.drained:
	case <-time.After(10 * time.Second):
		t.Fatal("the frame delivered while the subscriber was away never arrived")
	}
	cancel()
	<-done
	n, _ := tr.lost()
	require.Zero(t, n)
	mu.Lock()
	defer mu.Unlock()
	require.GreaterOrEqual(t, len(reqs), 2)
	require.Equal(t, request{after: "latest"}, reqs[0])
	for _, r := range reqs[1:] {
		require.Equal(t, request{lastEventID: "0"}, r, "resumed from the cursor, never latest again")
	}
}

package mastra_test

import (
	"context"
	"encoding/json"
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

// Deliveries to ever new threads (a stranger choosing thread ids in routed events) never
// hold more than target.max_followed streams: the least recently active is let go first.
func TestFollowerCapsFollowedThreads(t *testing.T) {
	closed := make(chan string, 8)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct{ ThreadID string }
		_ = json.NewDecoder(r.Body).Decode(&body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, ": connected\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		closed <- body.ThreadID
	}))
	defer srv.Close()
	var mu sync.Mutex
	now := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); now = now.Add(time.Second); return now }
	cfg := config(srv.URL)
	settings := cfg.Target.Settings.(mastra.Config)
	settings.MaxFollowed = 2
	cfg.Target.Settings = settings
	f := mastra.NewFollower(cfg, &presence{}, func([]inbox.ThreadKey) {}, service.Base{Now: clock}, mastra.WithIdleUnfollow(0))
	require.NoError(t, f.Start(context.Background()))
	defer func() { require.NoError(t, f.Stop(context.Background())) }()
	key := func(id string) inbox.ThreadKey { return inbox.ThreadKey{Agent: "support", Resource: "r", Thread: id} }

	f.Follow(context.Background(), key("a"))
	f.Follow(context.Background(), key("b"))
	f.Follow(context.Background(), key("a")) // a is now the more recent
	f.Follow(context.Background(), key("c"))
	require.Equal(t, "b", <-closed, "the least recently active thread is let go")
	require.Equal(t, 2, f.Followed())
	for _, id := range []string{"d", "e", "f"} {
		f.Follow(context.Background(), key(id))
	}
	require.Equal(t, 2, f.Followed())
	require.ElementsMatch(t, []string{"a", "c", "d"}, []string{<-closed, <-closed, <-closed})
}

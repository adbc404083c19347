package load

import (
	"context"
	"testing"
)

// A reply queued late (a loaded machine ran the storm behind its schedule) is still
// waited for: settle returns once every queued reply was posted, not at a fixed drain.
func TestSettleWaitsForEveryQueuedReply(t *testing.T) {
	p := &stormPlatform{posts: map[string]int{}, posted: make(chan struct{}, 1), res: &StormReplies{Posted: map[string]int{}}}
	p.took("slack", "r1")
	asked := make(chan struct{}, 8)
	done := make(chan struct{})
	go func() {
		p.settle(context.Background(), func() int { asked <- struct{}{}; return 2 })
		close(done)
	}()
	select {
	case <-asked: // settle saw one post of two queued: it waits
	case <-done:
		t.Fatal("settled without counting the queued replies")
	}
	p.mu.Lock()
	p.took("github", "r2")
	p.mu.Unlock()
	<-done
	if len(asked) == 0 {
		t.Fatal("settle returned without counting the second post")
	}
	if got := len(p.posts); got != 2 {
		t.Fatalf("%d replies posted, want 2", got)
	}
}

package load

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/signalgate/signalgate/inbox"
)

// MaxWatches bounds the watches a run creates before sending.
const MaxWatches = 200_000

// backgroundThreads spreads each background agent's watches over this many threads
// (nobody follows them).
const backgroundThreads = 1000

// setUpWatches creates, through the agent API and before any event is sent,
// cfg.Watches watches no event of the run matches (Slack channels of their own), and
// with cfg.WatchThreads one watch per Slack thread of the run on its own channel, which
// every Slack event then matches (besides its route: still one record). It answers how
// many were created and how long that took.
func setUpWatches(ctx context.Context, cfg Config, client *http.Client) (int, float64, error) {
	type job struct {
		k        inbox.ThreadKey
		token    string
		resource string
	}
	var jobs []job
	for i := 0; i < cfg.Watches; i++ {
		// Spread over the background agents, whose caps (watches.max_per_agent) they fill
		// evenly.
		agent, token := cfg.WatchAgent(i % WatchAgents)
		k := inbox.ThreadKey{Agent: agent, Resource: "loadgen-bg", Thread: fmt.Sprintf("bg%d", i%backgroundThreads)}
		jobs = append(jobs, job{k, token, fmt.Sprintf("CBG%07d", i)})
	}
	if cfg.WatchThreads {
		for i := 0; i < cfg.Threads; i++ {
			if src, k := cfg.ThreadFor(i, cfg.Sources); src == SourceSlack {
				jobs = append(jobs, job{k, cfg.AgentToken, slackChannel(i)})
			}
		}
	}
	if len(jobs) == 0 {
		return 0, 0, nil
	}
	start := time.Now()
	var (
		next, created atomic.Int64
		mu            sync.Mutex
		firstErr      error
		wg            sync.WaitGroup
	)
	for c := 0; c < cfg.Clients; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				n := int(next.Add(1) - 1)
				if n >= len(jobs) || ctx.Err() != nil {
					return
				}
				j := jobs[n]
				err := createWatch(ctx, client, cfg.URLs[n%len(cfg.URLs)], j.token, j.k, cfg.Connector, j.resource)
				if err != nil {
					mu.Lock()
					firstErr = cmpErr(firstErr, err)
					mu.Unlock()
					return
				}
				created.Add(1)
			}
		}()
	}
	wg.Wait()
	if firstErr == nil {
		firstErr = ctx.Err()
	}
	return int(created.Load()), time.Since(start).Seconds(), firstErr
}

func cmpErr(first, err error) error {
	if first != nil {
		return first
	}
	return err
}

func createWatch(ctx context.Context, client *http.Client, base, token string, k inbox.ThreadKey, connector, resource string) error {
	body, err := json.Marshal(map[string]any{"source": SourceSlack, "connector": connector, "resource": resource})
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ThreadURL(base, k, "/watches"), bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("create watch: %w", err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK {
		return fmt.Errorf("create watch: %s: %s", resp.Status, bytes.TrimSpace(msg))
	}
	return nil
}

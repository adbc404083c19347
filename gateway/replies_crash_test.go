package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/connectors/slack"
	"github.com/signalgate/signalgate/connectors/slack/webapitest"
	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/store/storetest"
)

// RepliesCrashLongEnv runs the reply crash test with ten kills instead of three.
const RepliesCrashLongEnv = "SIGNALGATE_REPLIES_CRASH_LONG"

// TestRepliesExactlyOnceAcrossCrashes posts replies over 50 DM threads through the
// agent API while gateway processes are SIGKILLed at random moments three times and
// restarted on the same data (one process on SQLite, three replicas on PostgreSQL),
// then finds every reply on the Slack fake exactly once, by the marker it carries.
func TestRepliesExactlyOnceAcrossCrashes(t *testing.T) {
	if testing.Short() {
		t.Skip("kills and restarts gateway processes")
	}
	replies, threads, kills := 1000, 50, 3
	if os.Getenv(RepliesCrashLongEnv) == "1" {
		kills = 10
	}
	for _, b := range storetest.Backends(t) {
		replicas := 1
		if b.Config.Driver == store.DriverPostgres {
			replicas = 3
		}
		t.Run(b.Name, func(t *testing.T) { repliesCrashRun(t, b.Config, replicas, replies, threads, kills) })
	}
}

func repliesCrashRun(t *testing.T, st store.Config, replicas, replies, threads, kills int) {
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, seed>>7))
	t.Logf("seed %d, %d replicas, %d replies over %d threads, %d kills", seed, replicas, replies, threads, kills)
	api := webapitest.New(t)
	api.TimestampsFromClock() // Find asks for messages since the reply was created
	dir := t.TempDir()
	cfgs := make([]string, replicas)
	procs := make([]*gatewayProc, replicas)
	for i := range cfgs {
		cfgs[i] = filepath.Join(dir, fmt.Sprintf("config-%d.yaml", i))
		require.NoError(t, os.WriteFile(cfgs[i], []byte(repliesConfig(fmt.Sprintf("127.0.0.1:%d", freePort(t)), st.Driver, st.DSN, api.APIURL())), 0o600))
		procs[i] = startGateway(t, cfgs[i])
	}
	for n := range threads {
		ts := fmt.Sprintf("1700000000.%06d", n+1)
		code, out := postSlack(t, procs[0].url, slackEvent(t, fmt.Sprintf("EvDM%d", n), map[string]any{"type": "message",
			"user": fmt.Sprintf("U%04d", n), "text": "question", "ts": ts, "team": "T0001",
			"channel": fmt.Sprintf("D%04d", n), "event_ts": ts, "channel_type": "im"}))
		require.Equal(t, http.StatusOK, code, out)
	}

	at := make([]int, kills)
	for i := range at {
		at[i] = replies/10 + rng.IntN(replies*8/10)
	}
	slices.Sort(at)
	var (
		mu       sync.Mutex
		accepted int
		next     int
		started  = time.Now()
	)
	url := func(i int) string {
		mu.Lock()
		defer mu.Unlock()
		return procs[i%replicas].url
	}
	// killer SIGKILLs a random replica when the accepted count passes a kill moment
	// and restarts it on the same data; posts to it meanwhile are retried.
	killNow := make(chan struct{}, kills)
	killed := make(chan error, 1)
	go func() {
		for range killNow {
			mu.Lock()
			i := rng.IntN(replicas)
			p := procs[i]
			mu.Unlock()
			p.kill()
			np, err := launchGateway(t, cfgs[i])
			if err != nil {
				killed <- err
				return
			}
			mu.Lock()
			procs[i] = np
			mu.Unlock()
		}
		killed <- nil
	}()

	jobs := make(chan int)
	var wg sync.WaitGroup
	errs := make(chan error, replies)
	for range 8 {
		wg.Go(func() {
			for j := range jobs {
				if err := postReply(t, url, j, threads); err != nil {
					errs <- err
					continue
				}
				mu.Lock()
				accepted++
				for next < len(at) && accepted >= at[next] {
					next++
					killNow <- struct{}{}
				}
				mu.Unlock()
			}
		})
	}
	for j := range replies {
		jobs <- j
	}
	close(jobs)
	wg.Wait()
	close(killNow)
	require.NoError(t, <-killed, "restart failed")
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}

	// Every reply ends sent, in the database of the processes that sent them.
	db := openDB(t, st)
	deadline := time.Now().Add(3 * procWait)
	var sent, other int
	for {
		require.NoError(t, db.GetContext(context.Background(), &sent, `SELECT COUNT(*) FROM replies WHERE status = 'sent'`))
		require.NoError(t, db.GetContext(context.Background(), &other, `SELECT COUNT(*) FROM replies WHERE status <> 'sent'`))
		if sent+other == replies && other == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond) // polling the database of other processes
	}
	elapsed := time.Since(started)

	counts := map[string]int{}
	for n := range threads {
		for _, m := range api.Posted(fmt.Sprintf("D%04d", n)) {
			var md struct {
				EventType    string         `json:"event_type"`
				EventPayload map[string]any `json:"event_payload"`
			}
			require.NoError(t, json.Unmarshal(m.Metadata, &md), "a post without the marker: %q", m.Metadata)
			require.Equal(t, slack.ReplyEventType, md.EventType)
			id, _ := md.EventPayload[slack.ReplyIDKey].(string)
			counts[id]++
		}
	}
	once, twice, missing := 0, 0, 0
	for j := range replies {
		switch c := counts[replyID(j)]; {
		case c == 0:
			missing++
		case c == 1:
			once++
		default:
			twice++
		}
	}
	t.Logf("%d kills in %s: %d sent (database), %d found once, %d found twice or more, %d missing, %d not sent",
		kills, elapsed.Round(time.Millisecond), sent, once, twice, missing, other)
	require.Equal(t, replies, sent, "every reply ends sent")
	require.Zero(t, twice, "a reply posted twice")
	require.Zero(t, missing, "a reply never posted")
	require.Equal(t, replies, once)
}

func replyID(j int) string { return fmt.Sprintf("r-%05d", j) }

// postReply posts reply j until the gateway accepts it: a killed or restarting
// process refuses the connection, and the same id again is the same reply.
func postReply(t *testing.T, base func(int) string, j, threads int) error {
	thread := fmt.Sprintf("/v1/agents/support/threads/%s/%s/replies", url.PathEscape("slack:T0001"), url.PathEscape(fmt.Sprintf("dm:U%04d", j%threads)))
	body := map[string]any{"id": replyID(j), "text": fmt.Sprintf("answer %d", j)}
	deadline := time.Now().Add(procWait)
	for try := 0; ; try++ {
		code, err := tryAgentCall(base(j+try)+thread, body)
		if err == nil && (code == http.StatusAccepted || code == http.StatusOK) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("reply %s not accepted: %d %v", replyID(j), code, err)
		}
		time.Sleep(20 * time.Millisecond) // backoff before retrying a process that is down
	}
}

// tryAgentCall posts body with the support agent's token, for goroutines other than
// the test's: it returns the failure instead of ending the test.
func tryAgentCall(u string, body any) (int, error) {
	raw, err := json.Marshal(body)
	if err != nil {
		return 0, err
	}
	req, err := http.NewRequest(http.MethodPost, u, bytes.NewReader(raw))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+replyToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, nil
}

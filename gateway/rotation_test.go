package gateway

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/stdwebhooks"
	"github.com/signalgate/signalgate/store/storetest"
)

// billingRotating is the billing connector verifying with secrets (one: `secret`;
// two: `secrets: [current, previous]`), routed to the coder.
func billingRotating(secrets ...string) string {
	key := fmt.Sprintf("secret: %q", secrets[0])
	if len(secrets) > 1 {
		key = fmt.Sprintf("secrets: [%q, %q]", secrets[0], secrets[1])
	}
	return fmt.Sprintf(`
connectors:
  generic: [ { name: billing, %s } ]
routes:
  - name: billing
    match: { source: generic, connector: billing }
    thread: { agent: coder, resource: billing, thread: invoices }
`, key)
}

// rotationSenders post signed deliveries to the billing connector without pause, each
// with the secret its phase gives it, and count every answer.
type rotationSenders struct {
	base string
	// client opens a connection per delivery, as a webhook sender does: a kept-alive
	// connection dialed for a request another one served would sit unused and hold
	// up the gateway's shutdown.
	client    *http.Client
	phase     atomic.Int32
	secretFor func(phase int32, sender int) string
	stop      chan struct{}
	wg        sync.WaitGroup
	// reached[p] gets one value from each sender once it has had answers to
	// perPhase deliveries sent in phase p.
	reached  []chan struct{}
	perPhase int
	// reloading is set while a reload is under way: deliveries sent and answered
	// within it are counted in duringReload.
	reloading    atomic.Bool
	duringReload atomic.Int64
	sent         atomic.Int64
	refused      atomic.Int64
	failures     chan string // the first few refusals, for the failure message
}

func (s *rotationSenders) start(n int) {
	for i := range n {
		s.wg.Add(1)
		go s.run(i)
	}
}

func (s *rotationSenders) run(sender int) {
	defer s.wg.Done()
	answered := map[int32]int{}
	for seq := 0; ; seq++ {
		select {
		case <-s.stop:
			return
		default:
		}
		p := s.phase.Load()
		secret := s.secretFor(p, sender)
		before := s.reloading.Load()
		code, err := postRotating(s.client, s.base, secret, fmt.Sprintf("msg_%d_%d", sender, seq))
		s.sent.Add(1)
		if before && s.reloading.Load() {
			s.duringReload.Add(1)
		}
		if err != nil || code != http.StatusOK {
			s.refused.Add(1)
			select {
			case s.failures <- fmt.Sprintf("sender %d phase %d: %d %v", sender, p, code, err):
			default:
			}
		}
		if answered[p]++; answered[p] == s.perPhase {
			s.reached[p] <- struct{}{}
		}
	}
}

// reload reloads m while the senders post.
func (s *rotationSenders) reload(t *testing.T, m *Gateway) {
	t.Helper()
	s.reloading.Store(true)
	code, body := postReload(t, m, reloadOpsToken)
	s.reloading.Store(false)
	require.Equal(t, http.StatusOK, code, body)
}

// enter puts the senders in phase p and returns once every one of them has had an
// answer to a delivery sent in it.
func (s *rotationSenders) enter(t *testing.T, p int32, n int) {
	t.Helper()
	s.phase.Store(p)
	for range n {
		select {
		case <-s.reached[p]:
		case <-time.After(procWait): // only bounds a broken test
			t.Fatalf("the senders did not reach phase %d", p)
		}
	}
}

func postRotating(client *http.Client, base, secret, id string) (int, error) {
	key, err := stdwebhooks.ParseSecret(secret)
	if err != nil {
		return 0, err
	}
	body := []byte(`{"kind":"invoice-failed","summary":"` + id + `"}`)
	req, err := http.NewRequest(http.MethodPost, base+"/webhooks/generic/billing", bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	ts := time.Now()
	req.Header.Set("webhook-id", id)
	req.Header.Set("webhook-timestamp", strconv.FormatInt(ts.Unix(), 10))
	req.Header.Set("webhook-signature", stdwebhooks.Sign(key, id, ts, body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}

// TestRotationUnderLoadThroughReload rotates a connector's secret through two reloads
// while senders post without pause: `secret: old` → `secrets: [new, old]` (half the
// senders move to the new secret, half stay on the old one) → every sender on the new
// secret → `secret: new`. Not one delivery is refused, the metric shows both slots
// used during the overlap, and once the old secret is retired it is refused.
func TestRotationUnderLoadThroughReload(t *testing.T) {
	storages := map[string]func(dir string) string{"sqlite": sqliteStorage}
	if dsn := os.Getenv(storetest.PostgresEnv); dsn != "" {
		storages["postgres"] = func(string) string {
			return fmt.Sprintf("{ driver: postgres, dsn: %q }", storetest.PostgresConfig(t, dsn).DSN)
		}
	}
	for name, storage := range storages {
		t.Run(name, func(t *testing.T) {
			const senders = 6
			oldSecret, newSecret := billingSecret, reloadSecret
			dir := t.TempDir()
			path := filepath.Join(dir, "config.yaml")
			st := storage(dir)
			writeReloadConfig(t, path, st, billingRotating(oldSecret))
			m := startReloadable(t, path)

			s := &rotationSenders{base: "http://" + m.Addr().String(), client: &http.Client{Transport: &http.Transport{DisableKeepAlives: true}},
				stop: make(chan struct{}), failures: make(chan string, 8), perPhase: 10}
			for range 4 {
				s.reached = append(s.reached, make(chan struct{}, senders))
			}
			s.secretFor = func(p int32, sender int) string {
				// 0: before; 1: overlap, half moved; 2: overlap, all moved; 3: old retired.
				if p == 0 || (p == 1 && sender%2 == 1) {
					return oldSecret
				}
				return newSecret
			}
			s.start(senders)
			stopped := false
			stop := func() {
				if !stopped {
					stopped = true
					close(s.stop)
					s.wg.Wait()
				}
			}
			t.Cleanup(stop)

			s.enter(t, 0, senders)
			writeReloadConfig(t, path, st, billingRotating(newSecret, oldSecret))
			s.reload(t, m)
			s.enter(t, 1, senders)
			s.enter(t, 2, senders)
			writeReloadConfig(t, path, st, billingRotating(newSecret))
			s.reload(t, m)
			s.enter(t, 3, senders)
			stop()

			var failures []string
			for len(s.failures) > 0 {
				failures = append(failures, <-s.failures)
			}
			t.Logf("rotation under load (%s): %d deliveries (%d sent and answered while a reload was under way), %d refused",
				name, s.sent.Load(), s.duringReload.Load(), s.refused.Load())
			require.Zero(t, s.refused.Load(), strings.Join(failures, "\n"))

			metrics := scrapeMetrics(t, m)
			require.Contains(t, metrics, `signalgate_verify_secret_used_total{connector="generic/billing",slot="current"}`)
			require.Contains(t, metrics, `signalgate_verify_secret_used_total{connector="generic/billing",slot="previous"}`,
				"the senders still on the old secret during the overlap were counted")
			code, err := postRotating(s.client, s.base, oldSecret, "msg_retired")
			require.NoError(t, err)
			require.Equal(t, http.StatusUnauthorized, code, "the retired secret is refused")
		})
	}
}

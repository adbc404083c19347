package slack

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/store"
)

func resolvingConfig(f *fakeSlack) Config {
	cfg := testConfig()
	cfg.BotToken, cfg.APIURL = testBotToken, f.APIURL()
	return cfg
}

func TestNameResolutionIsCached(t *testing.T) {
	f := newFakeSlack(t)
	h := newHarness(t, resolvingConfig(f), harnessOpts{})

	require.Equal(t, http.StatusOK, h.post(callback(t, "Ev01", messageEvent("C0001", "channel", "1700000000.000100", "first <@U0BOB>"))).Code)
	assert.Equal(t, "alice in #general: first @bob", h.lastCall().Notifications[0].Summary)
	require.Equal(t, http.StatusOK, h.post(callback(t, "Ev02", messageEvent("C0001", "channel", "1700000000.000200", "second <@U0BOB>"))).Code)
	assert.Equal(t, "alice in #general: second @bob", h.lastCall().Notifications[0].Summary)

	assert.Equal(t, 1, f.count("users.info "+testUser), "the author was looked up once")
	assert.Equal(t, 1, f.count("users.info U0BOB"), "the mentioned user was looked up once")
	assert.Equal(t, 1, f.count("conversations.info C0001"))
	assert.Equal(t, 1, f.count("auth.test"))
}

func TestNameCacheExpires(t *testing.T) {
	f := newFakeSlack(t)
	clk := newClock()
	cfg := resolvingConfig(f).WithDefaults()
	r := newResolver(&cfg, http.DefaultClient, clk.Now, slog.New(slog.DiscardHandler))
	ctx := context.Background()

	assert.Equal(t, "alice", r.user(ctx, testUser))
	assert.Equal(t, "", r.user(ctx, "U404"), "an unknown user is a miss")
	clk.Add(30 * time.Minute)
	assert.Equal(t, "alice", r.user(ctx, testUser))
	assert.Equal(t, "", r.user(ctx, "U404"))
	assert.Equal(t, 1, f.count("users.info "+testUser))
	assert.Equal(t, 2, f.count("users.info U404"), "misses are retried after a minute")

	clk.Add(31 * time.Minute)
	assert.Equal(t, "alice", r.user(ctx, testUser))
	assert.Equal(t, 2, f.count("users.info "+testUser), "names are refreshed after an hour")
}

func TestNoTokenMakesNoCalls(t *testing.T) {
	f := newFakeSlack(t)
	cfg := testConfig()
	cfg.APIURL = f.APIURL() // a URL alone does not enable lookups
	h := newHarness(t, cfg, harnessOpts{})
	require.Equal(t, http.StatusOK, h.post(callback(t, "Ev01", messageEvent("C0001", "channel", "1700000000.000100", "hi <@U0BOB>"))).Code)
	assert.Equal(t, "U061F7AUR in #C0001: hi @U0BOB", h.lastCall().Notifications[0].Summary)
	assert.Zero(t, f.count("users.info "+testUser)+f.count("conversations.info C0001")+f.count("auth.test"))
}

func TestSlowWebAPIFallsBackToIDs(t *testing.T) {
	f := newFakeSlack(t)
	f.setHang(true)
	h := newHarness(t, resolvingConfig(f), harnessOpts{opts: []Option{WithLookupTimeout(200 * time.Millisecond)}})

	start := time.Now()
	rec := h.post(callback(t, "Ev01", messageEvent("C0001", "channel", "1700000000.000100", "hi")))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	assert.Less(t, time.Since(start), 2*time.Second, "answered well within Slack's 3 s")
	assert.Equal(t, "U061F7AUR in #C0001: hi", h.lastCall().Notifications[0].Summary)
	calls := f.count("conversations.info C0001")
	require.Equal(t, 1, calls)

	rec = h.post(callback(t, "Ev02", messageEvent("C0001", "channel", "1700000000.000200", "again")))
	require.Equal(t, http.StatusOK, rec.Code)
	assert.Equal(t, "U061F7AUR in #C0001: again", h.lastCall().Notifications[0].Summary)
	assert.Equal(t, calls, f.count("conversations.info C0001"), "a failed lookup is not retried for every event")
}

// The app_mention and message events of one message must not become two records.
func TestMentionAndMessageEventsDoNotDouble(t *testing.T) {
	const ts = "1700000000.000100"
	mention := appMention("C0001", ts, "<@U0BOT> is the deploy done?")
	message := messageEvent("C0001", "channel", ts, "<@U0BOT> is the deploy done?")

	t.Run("app_mention first", func(t *testing.T) {
		h := newHarness(t, testConfig(), harnessOpts{})
		require.Equal(t, http.StatusOK, h.post(callback(t, "Ev01", mention)).Code)
		first := h.lastCall().Notifications[0]
		assert.Equal(t, KindMention, first.Kind)
		rec := h.post(callback(t, "Ev02", message))
		require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
		call := h.lastCall()
		assert.Empty(t, call.Notifications)
		assert.Equal(t, inbox.EventIgnored, call.Event.Status)
		assert.Equal(t, "already notified by the app_mention event for this message", call.Event.Error)
	})
	t.Run("message first", func(t *testing.T) {
		h := newHarness(t, testConfig(), harnessOpts{})
		require.Equal(t, http.StatusOK, h.post(callback(t, "Ev02", message)).Code)
		assert.Equal(t, KindMention, h.lastCall().Notifications[0].Kind)
		require.Equal(t, http.StatusAccepted, h.post(callback(t, "Ev01", mention)).Code)
		assert.Equal(t, "already notified by the message event for this message", h.lastCall().Event.Error)
	})
	t.Run("bot user unknown: the mention is not lost behind a plain message", func(t *testing.T) {
		cfg := testConfig()
		cfg.BotUserID = ""
		h := newHarness(t, cfg, harnessOpts{})
		require.Equal(t, http.StatusOK, h.post(withoutAuthorizations(t, callback(t, "Ev02", message))).Code)
		assert.Equal(t, KindMessage, h.lastCall().Notifications[0].Kind)
		require.Equal(t, http.StatusOK, h.post(withoutAuthorizations(t, callback(t, "Ev01", mention))).Code)
		assert.Equal(t, KindMention, h.lastCall().Notifications[0].Kind)
	})
	t.Run("separate processes merge in the inbox", func(t *testing.T) {
		// Two gateways (or one restarted) share no memory; both events map to the
		// same kind and dedupeKey, so the inbox merges them into one record.
		ing := newStoreIngester(t)
		a := newHarness(t, testConfig(), harnessOpts{ing: ing})
		b := newHarness(t, testConfig(), harnessOpts{ing: ing})
		require.Equal(t, http.StatusOK, a.post(callback(t, "Ev01", mention)).Code)
		require.Equal(t, http.StatusOK, b.post(callback(t, "Ev02", message)).Code)
		res := ing.results()
		require.Len(t, res, 2)
		require.Len(t, res[0].Records, 1)
		require.Len(t, res[1].Records, 1)
		assert.False(t, res[0].Records[0].Merged)
		assert.True(t, res[1].Records[0].Merged, "the message event merged into the app_mention record")
		assert.Equal(t, res[0].Records[0].RecordID, res[1].Records[0].RecordID)
	})
}

func withoutAuthorizations(t *testing.T, body []byte) []byte {
	var m map[string]any
	require.NoError(t, json.Unmarshal(body, &m))
	delete(m, "authorizations")
	b, err := json.Marshal(m)
	require.NoError(t, err)
	return b
}

// storeIngester is the real inbox on a temporary SQLite database, recording results.
type storeIngester struct {
	svc *inbox.Service
	mu  sync.Mutex
	res []inbox.IngestResult
}

func newStoreIngester(t *testing.T) *storeIngester {
	ctx := context.Background()
	st, err := store.Open(ctx, store.Config{Driver: "sqlite", DSN: filepath.Join(t.TempDir(), "gw.db")}, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	_, err = st.Migrate(ctx)
	require.NoError(t, err)
	pol, err := inbox.NewPolicy(inbox.PolicyConfig{})
	require.NoError(t, err)
	return &storeIngester{svc: inbox.NewService(store.NewInbox(st), pol)}
}

func (s *storeIngester) Ingest(ctx context.Context, ev *inbox.Event, ns []inbox.Notification) (inbox.IngestResult, error) {
	res, err := s.svc.Ingest(ctx, ev, ns)
	if err == nil {
		s.mu.Lock()
		s.res = append(s.res, res)
		s.mu.Unlock()
	}
	return res, err
}

func (s *storeIngester) results() []inbox.IngestResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]inbox.IngestResult(nil), s.res...)
}

var _ connectors.Ingester = (*storeIngester)(nil)

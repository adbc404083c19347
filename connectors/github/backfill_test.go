package github

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/server"
	"github.com/signalgate/signalgate/service"
	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/store/storetest"
)

const (
	backfillHook = "octo-org/hello:1"
	liveThread   = "Codertocat/Hello-World#100" // the delivery the webhook took before the outage
)

// replica is one gateway process on a database: the webhook handler and its backfill.
type replica struct {
	h    *harness
	st   *store.DB
	bf   *Backfiller
	hd   *Handler
	seen map[string]int // outcome -> count, as the metric counts
}

func backfillConfig(f *fakeHooks) Config {
	c := testConfig()
	c.Token = "ghp_test-token"
	c.APIURL = f.URL()
	c.Backfill = &BackfillConfig{Hooks: []string{backfillHook}}
	return c
}

func newReplica(t *testing.T, st *store.DB, cfg Config, clk *stepClock, lock Lock) *replica {
	t.Helper()
	pol, err := inbox.NewPolicy(inbox.PolicyConfig{})
	require.NoError(t, err)
	in := inbox.NewService(store.NewInbox(st), pol, inbox.WithClock(clk.now))
	log := slog.New(slog.DiscardHandler)
	srv := server.New(server.Config{}, log)
	router, err := connectors.NewRouter(allGitHubRoute(), []string{"coder"})
	require.NoError(t, err)
	handler, err := NewHandler([]Config{cfg}, connectors.NewPipeline(router, in, log), log, clk.now)
	require.NoError(t, err)
	handler.Mount(srv.Echo())
	r := &replica{h: &harness{t: t, e: srv.Echo(), ing: in}, st: st, hd: handler, seen: map[string]int{}}
	var counted = func(_, outcome string) { r.seen[outcome]++ }
	r.bf, err = NewBackfiller(handler, cfg.Name, store.NewConnectorState(st), store.NewExplain(st),
		service.Base{Logger: log, Now: clk.now}, WithBackfillLock(lock), WithBackfillCounted(counted))
	require.NoError(t, err)
	return r
}

// memberComment is an issue_comment on issue n by a member.
func memberComment(t *testing.T, n int) []byte {
	p := pick(t, examples(t, "api.github.com"), "issue_comment", "created", nil)
	set(p, "comment.user.login", "alice")
	set(p, "comment.author_association", "MEMBER")
	set(p, "comment.id", json.Number(fmt.Sprint(5000+n)))
	set(p, "issue.number", json.Number(fmt.Sprint(n)))
	set(p, "comment.body", fmt.Sprintf("review note %d", n))
	return encode(t, p)
}

// threadRecords counts the records each issue's thread holds.
func threadRecords(t *testing.T, st *store.DB) map[string]int {
	t.Helper()
	out := map[string]int{}
	f := inbox.RecordFilter{Source: "github", Limit: inbox.MaxPageSize}
	for {
		recs, next, err := store.NewAdmin(st).ListRecords(context.Background(), f)
		require.NoError(t, err)
		for _, r := range recs {
			out[r.Thread.Thread]++
			if r.Thread.Thread == liveThread {
				assert.Equal(t, VerifiedBy, r.Metadata[connectors.MetaVerifiedBy], "the webhook's record is signed")
				continue
			}
			assert.Equal(t, VerifiedByAPI, r.Metadata[connectors.MetaVerifiedBy], "a backfilled record says where it came from")
		}
		if next == "" {
			return out
		}
		f.Cursor = next
	}
}

// outage records, while the gateway is stopped for 15 simulated minutes, 40 failed
// deliveries; before the gateway first ran, 3 older ones it must never ingest; and one
// delivery that reached the webhook before the stop. It returns the failed ones' guids.
func outage(t *testing.T, f *fakeHooks, clk *stepClock, first *replica) []string {
	t.Helper()
	start := clk.now()
	for i := range 3 {
		f.record(backfillHook, fmt.Sprintf("old-%d", i), "issue_comment", memberComment(t, 900+i), start.Add(-time.Hour+time.Duration(i)*time.Minute), 502)
	}
	p, err := first.bf.RunOnce(context.Background()) // the gateway's first pass records its first moment
	require.NoError(t, err)
	require.Zero(t, p.Ingested, "nothing before the connector's first configured moment: %+v", p)

	clk.add(time.Minute)
	body := memberComment(t, 100)
	f.record(backfillHook, "live-1", "issue_comment", body, clk.now(), 200)
	rec := first.h.deliver("issue_comment", "live-1", body)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())

	// The gateway stops; GitHub's deliveries fail for 15 minutes.
	var guids []string
	for i := range 40 {
		clk.add(15 * time.Minute / 40)
		g := fmt.Sprintf("missed-%02d", i)
		f.record(backfillHook, g, "issue_comment", memberComment(t, i+1), clk.now(), 0)
		guids = append(guids, g)
	}
	clk.add(time.Minute)
	return guids
}

// After an outage, one pass ingests each missed delivery exactly once (the one the
// webhook took is a duplicate, the ones before the first moment are never read), and
// a webhook redelivered by hand afterwards is a duplicate.
func TestBackfillCatchesUpAfterAnOutageExactlyOnce(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			f := newFakeHooks(t)
			clk := &stepClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
			st := storetest.Open(t, b)
			cfg := backfillConfig(f)
			guids := outage(t, f, clk, newReplica(t, st, cfg, clk, NoLock{}))

			// The restarted gateway: a new process on the same database.
			r := newReplica(t, st, cfg, clk, NoLock{})
			before := len(f.log())
			p, err := r.bf.RunOnce(ctx)
			require.NoError(t, err)
			assert.Equal(t, 40, p.Ingested, "%+v", p)
			assert.Equal(t, 1, p.Duplicate, "the delivery the webhook took: %+v", p)
			assert.False(t, p.More)
			assert.Equal(t, 41, len(f.log())-before, "one page and each missed delivery once")
			assert.Equal(t, map[string]int{BackfillIngested: 40, BackfillDuplicate: 1}, r.seen)
			// The oldest missed delivery waited 15m37.5s; GitHub gives its time in seconds.
			assert.Equal(t, 15*time.Minute+38*time.Second, p.Lag(), "the oldest missed delivery waited")

			threads := threadRecords(t, st)
			for i := range 40 {
				assert.Equal(t, 1, threads[fmt.Sprintf("Codertocat/Hello-World#%d", i+1)], "issue %d", i+1)
			}
			delete(threads, liveThread) // the webhook's, signed
			assert.Len(t, threads, 40, "nothing older than the first moment: %v", threads)

			// Explain and replay read the stored event as backfilled.
			id, ok, err := store.NewExplain(st).EventByDelivery(ctx, Source, cfg.Name, guids[0])
			require.NoError(t, err)
			require.True(t, ok)
			ev, err := store.NewExplain(st).GetEvent(ctx, id)
			require.NoError(t, err)
			assert.Equal(t, VerifiedByAPI, ev.Headers[connectors.BackfillHeader])
			items, err := r.hd.Items(ctx, &ev)
			require.NoError(t, err)
			require.Len(t, items, 1)
			assert.Equal(t, VerifiedByAPI, items[0].Metadata[connectors.MetaVerifiedBy])

			// A webhook GitHub is asked to redeliver by hand is a duplicate.
			rec := r.h.deliver("issue_comment", guids[7], memberComment(t, 8))
			require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
			assert.True(t, decodeOutcome(t, rec).Duplicate)

			// The next pass reads one page and finds nothing new.
			before = len(f.log())
			p, err = r.bf.RunOnce(ctx)
			require.NoError(t, err)
			assert.Zero(t, p.Ingested+p.Duplicate, "%+v", p)
			assert.Equal(t, 1, len(f.log())-before)
			last, err := LastBackfill(ctx, store.NewConnectorState(st), cfg.Name)
			require.NoError(t, err)
			require.NotNil(t, last)
			assert.Equal(t, clk.now(), last.At)
		})
	}
}

// Three PostgreSQL replicas backfill at once: one reads the hook, the others find it
// busy, and no delivery reaches its thread twice.
func TestBackfillOneReplicaAtATime(t *testing.T) {
	var pg *storetest.Backend
	for _, b := range storetest.Backends(t) {
		if b.Name == "postgres" {
			pg = &b
		}
	}
	if pg == nil {
		t.Skip("needs " + storetest.PostgresEnv)
	}
	ctx := context.Background()
	f := newFakeHooks(t)
	clk := &stepClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	cfg := backfillConfig(f)
	var replicas []*replica
	for range 3 {
		st := storetest.Open(t, *pg)
		replicas = append(replicas, newReplica(t, st, cfg, clk, store.NewAdvisoryLocker(pg.Config.DSN, slog.New(slog.DiscardHandler))))
	}
	outage(t, f, clk, replicas[0])

	// The first replica's pass holds the hook while it lists; the others pass meanwhile.
	listing, release := make(chan struct{}), make(chan struct{})
	f.mu.Lock()
	f.listing = func() { close(listing); <-release }
	f.mu.Unlock()
	type result struct {
		p   BackfillPass
		err error
	}
	done := make(chan result, 1)
	go func() { p, err := replicas[0].bf.RunOnce(ctx); done <- result{p, err} }()
	<-listing
	f.mu.Lock()
	f.listing = nil
	f.mu.Unlock()
	for _, r := range replicas[1:] {
		p, err := r.bf.RunOnce(ctx)
		require.NoError(t, err)
		assert.Equal(t, 1, p.Busy, "another replica reads the hook: %+v", p)
		assert.Zero(t, p.Requests)
	}
	close(release)
	res := <-done
	require.NoError(t, res.err)
	assert.Equal(t, 40, res.p.Ingested, "%+v", res.p)

	// Afterwards every replica's pass finds nothing to ingest.
	for _, r := range replicas {
		p, err := r.bf.RunOnce(ctx)
		require.NoError(t, err)
		assert.Zero(t, p.Ingested, "%+v", p)
	}
	threads := threadRecords(t, replicas[2].st)
	delete(threads, liveThread)
	require.Len(t, threads, 40)
	for th, n := range threads {
		assert.Equal(t, 1, n, th)
	}
}

// A backfill block that cannot work is refused, naming its key.
func TestBackfillConfigRefusals(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(c *Config)
		want string
	}{
		{"no credentials", func(c *Config) { c.Token = "" }, "backfill: needs token or app"},
		{"token without hooks", func(c *Config) { c.Backfill.Hooks = nil }, "backfill.hooks: required without app"},
		{"hook without id", func(c *Config) { c.Backfill.Hooks = []string{"acme/api"} }, "backfill.hooks[0]: want owner/repo:HOOK_ID"},
		{"hook id not a number", func(c *Config) { c.Backfill.Hooks = []string{"acme:x"} }, "backfill.hooks[0]"},
		{"hook named twice", func(c *Config) { c.Backfill.Hooks = []string{"acme:1", "acme:1"} }, "backfill.hooks[1]: \"acme:1\" named twice"},
		{"interval too short", func(c *Config) { c.Backfill.Interval = time.Second }, "backfill.interval: at least 1m0s"},
		{"window past retention", func(c *Config) { c.Backfill.Window = 96 * time.Hour }, "backfill.window"},
		{"too many requests", func(c *Config) { c.Backfill.MaxRequests = 10_000 }, "backfill.max_requests"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := testConfig()
			c.Token = "ghp_test-token"
			c.Backfill = &BackfillConfig{Hooks: []string{"acme/api:1"}}
			require.NoError(t, c.Validate())
			tc.edit(&c)
			err := c.Validate()
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	c := testConfig()
	c.Token = "ghp_test-token"
	c.Backfill = &BackfillConfig{Hooks: []string{"acme:1"}}
	d := c.WithDefaults().Backfill
	assert.Equal(t, BackfillConfig{Hooks: []string{"acme:1"}, Interval: DefaultBackfillInterval, Window: MaxBackfillWindow, MaxRequests: DefaultBackfillRequests}, *d)
}

// An App connector reads its App's hook with the App's JWT. GitHub's secondary rate
// limit stops a pass: no request until its Retry-After has passed, then the pass
// resumes from the hook's cursor and ingests what it had not.
func TestBackfillAppHookHonoursSecondaryRateLimit(t *testing.T) {
	ctx := context.Background()
	f := newFakeHooks(t)
	key, pemKey := testAppKey(t)
	f.appID, f.appKey = 4242, &key.PublicKey
	clk := &stepClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	cfg := testConfig()
	cfg.APIURL = f.URL()
	cfg.App = &AppConfig{ID: 4242, PrivateKey: secretOf(pemKey), InstallationID: 99}
	cfg.Backfill = &BackfillConfig{}
	r := newReplica(t, storetest.OpenSQLite(t), cfg, clk, NoLock{})
	_, err := r.bf.RunOnce(ctx)
	require.NoError(t, err)
	for i := range 3 {
		clk.add(time.Minute)
		f.record("app", fmt.Sprintf("app-%d", i), "issue_comment", memberComment(t, i+1), clk.now(), 0)
	}
	clk.add(time.Minute)
	// The list answers; the first fetch meets the secondary limit.
	before := len(f.log())
	f.failAfter(1, canned{status: http.StatusForbidden, header: map[string]string{"Retry-After": "120"},
		body: `{"message":"You have exceeded a secondary rate limit.","documentation_url":"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"}`})
	p, err := r.bf.RunOnce(ctx)
	require.NoError(t, err)
	require.NotNil(t, p.RateLimitedUntil, "%+v", p)
	assert.Equal(t, clk.now().Add(2*time.Minute), *p.RateLimitedUntil)
	assert.Zero(t, p.Ingested)
	assert.Equal(t, 2, len(f.log())-before)

	clk.add(time.Minute) // still limited: no request
	before = len(f.log())
	p, err = r.bf.RunOnce(ctx)
	require.NoError(t, err)
	assert.NotNil(t, p.RateLimitedUntil)
	assert.Equal(t, before, len(f.log()))

	clk.add(time.Minute + time.Second)
	p, err = r.bf.RunOnce(ctx)
	require.NoError(t, err)
	assert.Equal(t, 3, p.Ingested, "%+v", p)
	assert.Nil(t, p.RateLimitedUntil)
	for _, l := range f.log() {
		assert.True(t, strings.HasPrefix(l, "GET /app/hook/deliveries"), l)
	}
}

// GitHub's primary rate limit: when fewer requests than the reserve left to replies
// remain, the pass stops and no request goes out until the limit resets; then the
// pass resumes and ingests what it had not.
func TestBackfillLeavesThePrimaryRateLimitToReplies(t *testing.T) {
	ctx := context.Background()
	f := newFakeHooks(t)
	clk := &stepClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	r := newReplica(t, storetest.OpenSQLite(t), backfillConfig(f), clk, NoLock{})
	_, err := r.bf.RunOnce(ctx)
	require.NoError(t, err)
	for i := range 3 {
		clk.add(time.Minute)
		f.record(backfillHook, fmt.Sprintf("d-%d", i), "issue_comment", memberComment(t, i+1), clk.now(), 0)
	}
	reset := clk.now().Add(10 * time.Minute)
	f.mu.Lock()
	f.rate = map[string]string{"X-RateLimit-Limit": "5000", "X-RateLimit-Remaining": "42", "X-RateLimit-Used": "4958",
		"X-RateLimit-Reset": fmt.Sprint(reset.Unix()), "X-RateLimit-Resource": "core"}
	f.mu.Unlock()
	before := len(f.log())
	p, err := r.bf.RunOnce(ctx)
	require.NoError(t, err)
	require.NotNil(t, p.RateLimitedUntil, "%+v", p)
	assert.True(t, reset.Equal(*p.RateLimitedUntil))
	assert.Equal(t, 1, len(f.log())-before, "the list only: no delivery is fetched past the reserve")

	clk.add(5 * time.Minute)
	before = len(f.log())
	_, err = r.bf.RunOnce(ctx)
	require.NoError(t, err)
	assert.Equal(t, before, len(f.log()), "nothing before the reset")

	f.mu.Lock()
	f.rate = nil
	f.mu.Unlock()
	clk.add(5 * time.Minute)
	p, err = r.bf.RunOnce(ctx)
	require.NoError(t, err)
	assert.Equal(t, 3, p.Ingested, "%+v", p)
}

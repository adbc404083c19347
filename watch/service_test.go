package watch_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/connectors/github"
	"github.com/signalgate/signalgate/connectors/kindstest"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/service"
	"github.com/signalgate/signalgate/watch"
	"github.com/signalgate/signalgate/watch/watchtest"
)

var t0 = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

// scope: coder may watch github through gh (whole repositories allowed) and gh2, slack
// through acme only; support nothing. gh receives events for acme/api only (GitHub's
// own rule, as its row gives it).
type scope struct{}

func (scope) Connectors(agent, source string) []string {
	if agent != "coder" {
		return nil
	}
	switch source {
	case "github":
		return []string{"gh", "gh2"}
	case "slack":
		return []string{"acme"}
	case "email":
		return []string{"mail"}
	case "generic":
		return []string{"hooks"}
	}
	return nil
}

func (scope) Admit(ctx context.Context, source, connector string, r watch.Resource) error {
	if source != "github" {
		return nil
	}
	return github.AdmitWatch([]github.Config{{Name: "gh", WatchRepositories: true}, {Name: "gh2"}, {Name: "broken"}}, repos{})(ctx, connector, r)
}

// repos: gh and gh2 receive events for acme/api; broken's lookup fails.
type repos struct{}

func (repos) RepoSeen(_ context.Context, connector, repo string) (bool, error) {
	if connector == "broken" {
		return false, errors.New("db down")
	}
	return repo == "acme/api", nil
}

// ingester does what the store's ingest does with a watch-ended notification: it ends
// the watch, keeps the notification only if the watch was live, and a delivery id seen
// before is a duplicate.
type ingester struct {
	mu    sync.Mutex
	mem   *watchtest.Memory
	now   func() time.Time
	seen  map[string]bool
	kept  []inbox.Notification
	fail  error
	apply bool // end the watch as the store does (false: a store that ignores EndsWatch)
}

func (f *ingester) Ingest(_ context.Context, ev *inbox.Event, ns []inbox.Notification) (inbox.IngestResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail != nil {
		return inbox.IngestResult{}, f.fail
	}
	if f.seen[ev.DeliveryID] {
		return inbox.IngestResult{Duplicate: true}, nil
	}
	f.seen[ev.DeliveryID] = true
	var res inbox.IngestResult
	for _, n := range ns {
		if n.EndsWatch != nil && f.apply && !f.mem.End(*n.EndsWatch, f.now()) {
			continue
		}
		f.kept = append(f.kept, n)
		res.Records = append(res.Records, inbox.RecordOutcome{RecordID: fmt.Sprint("r", len(f.kept)), Thread: n.Thread})
	}
	return res, nil
}

func (f *ingester) notes() []inbox.Notification {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.kept)
}

type fixture struct {
	mem *watchtest.Memory
	in  *ingester
	svc *watch.Service
	now time.Time
	mu  sync.Mutex
}

func (f *fixture) clock() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

func (f *fixture) advance(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = f.now.Add(d)
}

func newFixture(t *testing.T, cfg watch.Config) *fixture {
	t.Helper()
	f := &fixture{mem: watchtest.NewMemory(), now: t0}
	f.in = &ingester{mem: f.mem, now: f.clock, seen: map[string]bool{}, apply: true}
	f.svc = watch.NewService(f.mem, cfg, kindstest.Resources(), scope{}, f.in, service.Base{Now: f.clock})
	return f
}

var coder = inbox.ThreadKey{Agent: "coder", Resource: "acme/api", Thread: "pr-7"}

func TestCreateValidation(t *testing.T) {
	f := newFixture(t, watch.Config{MaxTTL: 30 * 24 * time.Hour})
	pr := watch.Request{Source: "github", Connector: "gh", Resource: "acme/api#7"}
	with := func(change func(*watch.Request)) watch.Request {
		r := pr
		change(&r)
		return r
	}
	for name, tc := range map[string]struct {
		agent string
		req   watch.Request
		err   error
		msg   string
	}{
		"no source":         {req: with(func(r *watch.Request) { r.Source = "" }), err: watch.ErrInvalid, msg: "source: required"},
		"unknown source":    {req: with(func(r *watch.Request) { r.Source = "jira" }), err: watch.ErrInvalid, msg: `source: unknown "jira"`},
		"no resource":       {req: with(func(r *watch.Request) { r.Resource = " " }), err: watch.ErrInvalid, msg: "resource: required"},
		"bad github":        {req: with(func(r *watch.Request) { r.Resource = "acme" }), err: watch.ErrInvalid, msg: "resource: want owner/repo#number"},
		"bad number":        {req: with(func(r *watch.Request) { r.Resource = "acme/api#x" }), err: watch.ErrInvalid, msg: "resource:"},
		"huge resource":     {req: with(func(r *watch.Request) { r.Resource = strings.Repeat("a", 600) }), err: watch.ErrInvalid, msg: "resource: at most 512 bytes"},
		"bad slack":         {req: watch.Request{Source: "slack", Resource: "#general"}, err: watch.ErrInvalid, msg: "resource: want a channel id"},
		"bad email":         {req: watch.Request{Source: "email", Resource: "<a b>"}, err: watch.ErrInvalid, msg: "resource: want a Message-ID"},
		"control in kind":   {req: with(func(r *watch.Request) { r.Kinds = []string{"a\x00"} }), err: watch.ErrInvalid, msg: "kinds[0]"},
		"empty kind":        {req: with(func(r *watch.Request) { r.Kinds = []string{""} }), err: watch.ErrInvalid, msg: "kinds[0]"},
		"bad pattern":       {req: with(func(r *watch.Request) { r.Kinds = []string{"ok", "[z-"} }), err: watch.ErrInvalid, msg: "kinds[1]"},
		"long kind":         {req: with(func(r *watch.Request) { r.Kinds = []string{strings.Repeat("k", 101)} }), err: watch.ErrInvalid, msg: "kinds[0]"},
		"many kinds":        {req: with(func(r *watch.Request) { r.Kinds = make([]string, 21) }), err: watch.ErrInvalid, msg: "kinds: at most 20"},
		"bad priority":      {req: with(func(r *watch.Request) { r.Priority = "asap" }), err: watch.ErrInvalid, msg: `priority: unknown "asap"`},
		"until and ttl":     {req: with(func(r *watch.Request) { r.Until, r.TTL = "forever", "1h" }), err: watch.ErrInvalid, msg: "until, ttl: give one"},
		"until garbage":     {req: with(func(r *watch.Request) { r.Until = "tomorrow" }), err: watch.ErrInvalid, msg: "until: want an RFC 3339 time"},
		"until past":        {req: with(func(r *watch.Request) { r.Until = t0.Add(-time.Second).Format(time.RFC3339) }), err: watch.ErrInvalid, msg: "until: 2026-05-01T11:59:59Z is not in the future"},
		"until now":         {req: with(func(r *watch.Request) { r.Until = t0.Format(time.RFC3339) }), err: watch.ErrInvalid, msg: "is not in the future"},
		"until too far":     {req: with(func(r *watch.Request) { r.Until = t0.Add(31 * 24 * time.Hour).Format(time.RFC3339) }), err: watch.ErrInvalid, msg: "until: at most watches.max_ttl (720h0m0s)"},
		"ttl garbage":       {req: with(func(r *watch.Request) { r.TTL = "a week" }), err: watch.ErrInvalid, msg: "ttl: want a duration"},
		"ttl days garbage":  {req: with(func(r *watch.Request) { r.TTL = "1.5d" }), err: watch.ErrInvalid, msg: "ttl: want a duration"},
		"ttl zero":          {req: with(func(r *watch.Request) { r.TTL = "0s" }), err: watch.ErrInvalid, msg: "ttl: must be positive"},
		"ttl negative":      {req: with(func(r *watch.Request) { r.TTL = "-1h" }), err: watch.ErrInvalid, msg: "ttl: must be positive"},
		"ttl negative days": {req: with(func(r *watch.Request) { r.TTL = "-2d" }), err: watch.ErrInvalid, msg: "ttl: must be positive"},
		"ttl huge days":     {req: with(func(r *watch.Request) { r.TTL = "99999999999d" }), err: watch.ErrInvalid, msg: "ttl: want a duration"},
		"ttl too long":      {req: with(func(r *watch.Request) { r.TTL = "31d" }), err: watch.ErrInvalid, msg: "ttl: at most watches.max_ttl"},
		"connector not his": {req: with(func(r *watch.Request) { r.Connector = "other" }), err: watch.ErrForbidden, msg: `connector: agent "coder" may not watch through "other"; it may use gh, gh2`},
		"connector bad":     {req: with(func(r *watch.Request) { r.Connector = "a\x1fb" }), err: watch.ErrInvalid, msg: "connector: want a connector name"},
		"connector needed":  {req: with(func(r *watch.Request) { r.Connector = "" }), err: watch.ErrInvalid, msg: "connector: required, the agent may watch github through several: gh, gh2"},
		"agent sees none":   {agent: "support", req: pr, err: watch.ErrForbidden, msg: `agent "support" may watch no github connector`},
		"agent sees none 2": {agent: "support", req: with(func(r *watch.Request) { r.Connector = "" }), err: watch.ErrForbidden, msg: `agent "support" may watch no github connector`},
		"whole not allowed": {req: with(func(r *watch.Request) { r.Connector, r.Resource = "gh2", "acme/api" }), err: watch.ErrInvalid, msg: `resource: connector "gh2" does not allow watching a whole repository`},
		"repo unseen":       {req: with(func(r *watch.Request) { r.Resource = "evil/secret#1" }), err: watch.ErrUnknown, msg: `resource: connector "gh" receives no events for repository evil/secret`},
		"whole unseen":      {req: with(func(r *watch.Request) { r.Resource = "evil/secret" }), err: watch.ErrUnknown, msg: "receives no events for repository evil/secret"},
	} {
		t.Run(name, func(t *testing.T) {
			k := coder
			if tc.agent != "" {
				k.Agent = tc.agent
			}
			_, created, err := f.svc.Create(t.Context(), k, tc.req)
			require.ErrorIs(t, err, tc.err)
			require.ErrorContains(t, err, tc.msg)
			require.False(t, created)
			code, ok := watch.Code(err)
			require.True(t, ok, "a refusal the fronts answer, not a fault")
			require.NotEmpty(t, code)
		})
	}
	page, err := f.svc.List(t.Context(), watch.Filter{})
	require.NoError(t, err)
	require.Empty(t, page.Watches, "no refused request made a watch")

	_, _, err = f.svc.Create(t.Context(), coder, with(func(r *watch.Request) { r.Connector = "broken" }))
	require.ErrorIs(t, err, watch.ErrForbidden, "a connector outside the scope is refused before any lookup")
}

func TestCreate(t *testing.T) {
	f := newFixture(t, watch.Config{DefaultTTL: 7 * 24 * time.Hour, MaxTTL: 30 * 24 * time.Hour})
	ctx := t.Context()

	w, created, err := f.svc.Create(ctx, coder, watch.Request{Source: "github", Connector: "gh", Resource: " ACME/Api#007 ", Kinds: []string{"pull_request.*", "pull_request.*"}})
	require.NoError(t, err)
	require.True(t, created)
	require.Equal(t, "acme/api#7", w.Resource, "canonical")
	require.Equal(t, []string{"pull_request.*"}, w.Kinds)
	require.Equal(t, t0, w.CreatedAt)
	require.Equal(t, t0.Add(7*24*time.Hour), w.ExpiresAt, "default_ttl")
	require.False(t, w.Forever)
	require.True(t, strings.HasPrefix(w.ID, "w-"))

	again, created, err := f.svc.Create(ctx, coder, watch.Request{Source: "github", Connector: "gh", Resource: "acme/api#7", TTL: "1h"})
	require.NoError(t, err)
	require.False(t, created, "the thread's live watch of the same thing is answered")
	require.Equal(t, w.ID, again.ID)

	other := coder
	other.Thread = "elsewhere"
	w2, created, err := f.svc.Create(ctx, other, watch.Request{Source: "github", Connector: "gh", Resource: "acme/api#7"})
	require.NoError(t, err)
	require.True(t, created, "another thread has its own")
	require.NotEqual(t, w.ID, w2.ID)

	for _, tc := range []struct {
		req     watch.Request
		expires time.Time
		forever bool
	}{
		{watch.Request{Source: "slack", Resource: "c0123abc/1712345678.000100", TTL: "7d"}, t0.Add(7 * 24 * time.Hour), false},
		{watch.Request{Source: "email", Resource: "<m1@example.com>", TTL: "90m"}, t0.Add(90 * time.Minute), false},
		{watch.Request{Source: "generic", Resource: "order-1", Until: "2026-05-02T14:00:00+02:00"}, t0.Add(24 * time.Hour), false},
		{watch.Request{Source: "github", Connector: "gh", Resource: "acme/api#8", Until: "forever"}, t0.Add(30 * 24 * time.Hour), true},
		{watch.Request{Source: "github", Connector: "gh", Resource: "acme/api", TTL: "30d"}, t0.Add(30 * 24 * time.Hour), false},
	} {
		w, created, err := f.svc.Create(ctx, coder, tc.req)
		require.NoError(t, err, tc.req.Resource)
		require.True(t, created)
		require.True(t, w.ExpiresAt.Equal(tc.expires), "%s: %s", tc.req.Resource, w.ExpiresAt)
		require.Equal(t, tc.forever, w.Forever)
		require.NotEmpty(t, w.Connector, "the agent's only connector of the source")
	}

	got, err := f.svc.Get(ctx, coder, w.ID)
	require.NoError(t, err)
	require.Equal(t, w.ID, got.ID)
	_, err = f.svc.Get(ctx, other, w.ID)
	require.ErrorIs(t, err, inbox.ErrNotFound, "another thread's watch is not found")
	_, err = f.svc.Get(ctx, coder, "w-nope")
	require.ErrorIs(t, err, inbox.ErrNotFound)
	code, _ := watch.Code(err)
	require.Equal(t, "not_found", code)
}

func TestCreateCap(t *testing.T) {
	f := newFixture(t, watch.Config{MaxPerAgent: 2})
	ctx := t.Context()
	for i := range 2 {
		_, _, err := f.svc.Create(ctx, coder, watch.Request{Source: "generic", Resource: fmt.Sprint("o", i)})
		require.NoError(t, err)
	}
	_, _, err := f.svc.Create(ctx, coder, watch.Request{Source: "generic", Resource: "o2"})
	require.ErrorIs(t, err, watch.ErrTooMany)
	require.ErrorContains(t, err, "2 live watches")
	code, _ := watch.Code(err)
	require.Equal(t, "too_many_watches", code)
	_, created, err := f.svc.Create(ctx, coder, watch.Request{Source: "generic", Resource: "o1"})
	require.NoError(t, err, "the existing watch is answered at the cap")
	require.False(t, created)
	_, _, err = f.svc.WatchConversation(ctx, coder, "slack", "acme", "C1/1.2", "r1")
	require.ErrorIs(t, err, watch.ErrTooMany, "a reply's watch counts too")
}

func TestWatchConversation(t *testing.T) {
	f := newFixture(t, watch.Config{})
	w, created, err := f.svc.WatchConversation(t.Context(), coder, "slack", "acme", "c1/1712345678.000100", "reply-1")
	require.NoError(t, err)
	require.True(t, created)
	require.Equal(t, "C1/1712345678.000100", w.Resource)
	require.Equal(t, "reply-1", w.ReplyID)
	require.Equal(t, t0.Add(watch.DefaultTTL), w.ExpiresAt)
	again, created, err := f.svc.WatchConversation(t.Context(), coder, "slack", "acme", "C1/1712345678.000100", "reply-2")
	require.NoError(t, err)
	require.False(t, created, "idempotent")
	require.Equal(t, w.ID, again.ID)
	_, _, err = f.svc.WatchConversation(t.Context(), coder, "slack", "acme", "#x", "r")
	require.ErrorIs(t, err, watch.ErrInvalid)
}

// A conversation watch (a reply's watch: true) is refused whatever the watch API
// refuses of the same watch, with the same error: a reply to a place of the thread does
// not widen what its agent may watch.
func TestWatchConversationGoesThroughTheScope(t *testing.T) {
	f := newFixture(t, watch.Config{})
	support := inbox.ThreadKey{Agent: "support", Resource: "r", Thread: "t"} // may watch nothing
	for name, tc := range map[string]struct {
		k                           inbox.ThreadKey
		source, connector, resource string
		want                        error
	}{
		"an agent that may watch no GitHub connector": {support, "github", "gh", "acme/api#7", watch.ErrForbidden},
		"a connector outside the agent's scope":       {coder, "slack", "other", "C1/1712345678.000100", watch.ErrForbidden},
		"a repository the connector has no events of": {coder, "github", "gh", "acme/secret#1", watch.ErrUnknown},
	} {
		t.Run(name, func(t *testing.T) {
			_, _, api := f.svc.Create(t.Context(), tc.k, watch.Request{Source: tc.source, Connector: tc.connector, Resource: tc.resource})
			require.ErrorIs(t, api, tc.want, "the watch API refuses it")
			err := f.svc.CheckConversation(t.Context(), tc.k, tc.source, tc.connector, tc.resource)
			require.ErrorIs(t, err, tc.want)
			require.Equal(t, api.Error(), err.Error(), "the same refusal")
			_, _, err = f.svc.WatchConversation(t.Context(), tc.k, tc.source, tc.connector, tc.resource, "reply-1")
			require.ErrorIs(t, err, tc.want)
		})
	}
	page, err := f.svc.List(t.Context(), watch.Filter{Limit: 100})
	require.NoError(t, err)
	require.Empty(t, page.Watches, "no watch was made")
	require.NoError(t, f.svc.CheckConversation(t.Context(), coder, "github", "gh", "acme/api#7"))
}

func TestDeleteAndEnd(t *testing.T) {
	f := newFixture(t, watch.Config{})
	ctx := t.Context()
	w, _, err := f.svc.Create(ctx, coder, watch.Request{Source: "generic", Resource: "a"})
	require.NoError(t, err)
	other := coder
	other.Thread = "elsewhere"

	_, err = f.svc.Delete(ctx, other, w.ID)
	require.ErrorIs(t, err, inbox.ErrNotFound, "another thread cannot delete it")
	got, err := f.svc.Get(ctx, coder, w.ID)
	require.NoError(t, err)
	require.Nil(t, got.EndedAt)

	f.advance(time.Minute)
	del, err := f.svc.Delete(ctx, coder, w.ID)
	require.NoError(t, err)
	require.Equal(t, watch.EndDeleted, del.EndReason)
	require.Equal(t, t0.Add(time.Minute), *del.EndedAt)
	again, err := f.svc.Delete(ctx, coder, w.ID)
	require.NoError(t, err, "idempotent")
	require.Equal(t, del.EndedAt, again.EndedAt)
	require.Empty(t, f.in.notes(), "the agent's own delete tells no one")

	_, ended, err := f.svc.End(ctx, w.ID, watch.EndOperator)
	require.NoError(t, err)
	require.False(t, ended, "an ended watch is not ended again")
	require.Empty(t, f.in.notes())

	// An operator's end tells the thread once.
	w2, _, err := f.svc.Create(ctx, coder, watch.Request{Source: "generic", Resource: "b"})
	require.NoError(t, err)
	got, ended, err = f.svc.End(ctx, w2.ID, watch.EndOperator)
	require.NoError(t, err)
	require.True(t, ended)
	require.Equal(t, watch.EndOperator, got.EndReason)
	notes := f.in.notes()
	require.Len(t, notes, 1)
	require.Equal(t, watch.Kind, notes[0].Kind)
	require.Equal(t, coder, notes[0].Thread)
	require.Equal(t, &inbox.WatchEnd{ID: w2.ID, Reason: watch.EndOperator}, notes[0].EndsWatch)
	_, ended, err = f.svc.End(ctx, w2.ID, watch.EndOperator)
	require.NoError(t, err)
	require.False(t, ended)
	require.Len(t, f.in.notes(), 1, "exactly once")

	_, _, err = f.svc.End(ctx, "w-nope", watch.EndOperator)
	require.ErrorIs(t, err, inbox.ErrNotFound)
}

// TestEndRacesAnotherEnd: two ends of one live watch (two replicas' sweeps) that both
// read it live: the delivery id makes the second a duplicate, the thread hears once.
func TestEndRacesAnotherEnd(t *testing.T) {
	f := newFixture(t, watch.Config{})
	w, _, err := f.svc.Create(t.Context(), coder, watch.Request{Source: "generic", Resource: "a"})
	require.NoError(t, err)
	var wg sync.WaitGroup
	results := make(chan bool, 8)
	for range 8 {
		wg.Go(func() {
			_, ended, err := f.svc.End(context.Background(), w.ID, watch.EndExpired)
			require.NoError(t, err)
			results <- ended
		})
	}
	wg.Wait()
	close(results)
	n := 0
	for ended := range results {
		if ended {
			n++
		}
	}
	require.Equal(t, 1, n)
	require.Len(t, f.in.notes(), 1)
}

// TestEndWithoutTheStoreEnding: an ingest that did not end the watch (its notification
// refused) still leaves it ended, so a sweep does not find it again forever.
func TestEndWithoutTheStoreEnding(t *testing.T) {
	f := newFixture(t, watch.Config{})
	f.in.apply = false
	w, _, err := f.svc.Create(t.Context(), coder, watch.Request{Source: "generic", Resource: "a"})
	require.NoError(t, err)
	got, ended, err := f.svc.End(t.Context(), w.ID, watch.EndExpired)
	require.NoError(t, err)
	require.True(t, ended)
	require.NotNil(t, got.EndedAt)

	f.in.fail = errors.New("disk full")
	w2, _, err := f.svc.Create(t.Context(), coder, watch.Request{Source: "generic", Resource: "b"})
	require.NoError(t, err)
	_, _, err = f.svc.End(t.Context(), w2.ID, watch.EndExpired)
	require.ErrorContains(t, err, "disk full")
	got, err = f.svc.Get(t.Context(), coder, w2.ID)
	require.NoError(t, err)
	require.Nil(t, got.EndedAt, "a failed announcement leaves it live for the next try")
}

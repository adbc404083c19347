package admin_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/admin"
	"github.com/signalgate/signalgate/service"
	"github.com/signalgate/signalgate/silence"
	"github.com/signalgate/signalgate/store"
)

// withSilences gives en's admin API a silence service over its store.
func withSilences(en *env) *silence.Service {
	sil := silence.NewService(store.NewSilences(en.st), silence.Config{}, service.Base{Now: en.clock.Now})
	d := en.deps
	d.Silences, d.Holder = sil, sil
	en.api = en.newAPI(d)
	return sil
}

// POST, GET and DELETE /silences: write scope to make and expire, read to list; a bad
// silence is a 400 naming the field; DELETE expires early (200 with the silence),
// idempotent on an expired one, 404 for an unknown one.
func TestSilencesAPI(t *testing.T) {
	forBackends(t, envOpts{}, func(t *testing.T, en *env) {
		withSilences(en)
		body := map[string]any{"matchers": []map[string]any{{"name": "agent", "value": "coder", "isRegex": false}},
			"endsAt": t0.Add(2 * time.Hour).Format(time.RFC3339), "createdBy": "ops", "comment": "deploy"}

		status, raw := en.do(http.MethodPost, "/admin/v1/silences", viewerToken, body)
		require.Equal(t, http.StatusForbidden, status, "creating needs write")

		long := map[string]any{}
		for k, v := range body {
			long[k] = v
		}
		long["endsAt"] = t0.Add(8 * 24 * time.Hour).Format(time.RFC3339)
		status, raw = en.do(http.MethodPost, "/admin/v1/silences", opsToken, long)
		require.Equal(t, http.StatusBadRequest, status)
		_, msg := errorOf(t, raw)
		require.Equal(t, "endsAt: more than silences.max_duration (168h) after startsAt", msg)

		bad := map[string]any{"matchers": []map[string]any{{"name": "kind", "value": "(", "isRegex": true}}, "endsAt": "tomorrow"}
		status, raw = en.do(http.MethodPost, "/admin/v1/silences", opsToken, bad)
		require.Equal(t, http.StatusBadRequest, status, string(raw))
		_, msg = errorOf(t, raw)
		require.Contains(t, msg, "endsAt")

		costly := map[string]any{"matchers": []map[string]any{{"name": "agent", "value": "coder"},
			{"name": "title", "value": `(?:\pL{0,999}\pL{0,999}\pL{0,999})*\d`, "isRegex": true}},
			"endsAt": t0.Add(time.Hour).Format(time.RFC3339), "createdBy": "ops", "comment": "c"}
		status, raw = en.do(http.MethodPost, "/admin/v1/silences", opsToken, costly)
		require.Equal(t, http.StatusBadRequest, status, string(raw))
		_, msg = errorOf(t, raw)
		require.Contains(t, msg, "matchers[1].value: the regular expression compiles to 6001 instructions, at most 1000")

		var made silence.Silence
		status, raw = en.do(http.MethodPost, "/admin/v1/silences", opsToken, body)
		require.Equal(t, http.StatusCreated, status, string(raw))
		require.NoError(t, json.Unmarshal(raw, &made))
		require.Equal(t, silence.StateActive, made.Status.State)

		var page admin.SilencePage
		status, raw = en.do(http.MethodGet, "/admin/v1/silences?state=active", viewerToken, nil)
		require.Equal(t, http.StatusOK, status)
		require.NoError(t, json.Unmarshal(raw, &page))
		require.Len(t, page.Silences, 1)
		status, raw = en.do(http.MethodGet, "/admin/v1/silences?state=sleeping", viewerToken, nil)
		require.Equal(t, http.StatusBadRequest, status)
		_, msg = errorOf(t, raw)
		require.Contains(t, msg, "state: unknown")

		status, _ = en.do(http.MethodDelete, "/admin/v1/silences/"+made.ID, viewerToken, nil)
		require.Equal(t, http.StatusForbidden, status, "expiring needs write")
		en.clock.Advance(time.Minute)
		var ended silence.Silence
		en.call(http.MethodDelete, "/admin/v1/silences/"+made.ID, nil, &ended)
		require.Equal(t, silence.StateExpired, ended.Status.State)
		require.Equal(t, "ops", ended.ExpiredBy)
		en.clock.Advance(time.Minute)
		var again silence.Silence
		en.call(http.MethodDelete, "/admin/v1/silences/"+made.ID, nil, &again)
		require.Equal(t, ended.EndsAt, again.EndsAt, "idempotent")

		status, _ = en.do(http.MethodDelete, "/admin/v1/silences/01a2030d-9733-7822-bce0-6d25cd55022c", opsToken, nil)
		require.Equal(t, http.StatusNotFound, status)
		status, _ = en.do(http.MethodGet, "/admin/v1/silences/01a2030d-9733-7822-bce0-6d25cd55022c", viewerToken, nil)
		require.Equal(t, http.StatusNotFound, status)
		status, _ = en.do(http.MethodGet, "/admin/v1/silences/a%20b", viewerToken, nil)
		require.Equal(t, http.StatusBadRequest, status)
		var got silence.Silence
		en.call(http.MethodGet, "/admin/v1/silences/"+made.ID, nil, &got)
		require.Equal(t, made.ID, got.ID)
	})
}

// The console's methods: list by state, create, expire.
func TestSilenceConsoleMethods(t *testing.T) {
	en := newEnv(t, envOpts{})
	withSilences(en)
	ctx := context.Background()
	s, err := en.api.CreateSilence(ctx, silence.Input{Matchers: []silence.Matcher{{Name: "thread", Value: "acme"}},
		EndsAt: t0.Add(time.Hour), CreatedBy: "ops", Comment: "c"})
	require.NoError(t, err)
	_, err = en.api.CreateSilence(ctx, silence.Input{EndsAt: t0.Add(time.Hour), CreatedBy: "ops", Comment: "c"})
	require.ErrorContains(t, err, "matchers: at least one is required")
	page, err := en.api.Silences(ctx, map[string][]string{"state": {"active"}})
	require.NoError(t, err)
	require.Len(t, page.Silences, 1)
	ended, err := en.api.ExpireSilence(ctx, s.ID, "alice")
	require.NoError(t, err)
	require.Equal(t, "alice", ended.ExpiredBy)
}

// Explain names the silence that would hold the event.
func TestExplainNamesTheSilence(t *testing.T) {
	en := newEnv(t, envOpts{})
	sil := withSilences(en)
	s, err := sil.Create(context.Background(), silence.Input{Matchers: []silence.Matcher{{Name: "resource", Value: "billing"}},
		EndsAt: t0.Add(time.Hour), CreatedBy: "ops", Comment: "billing migration"})
	require.NoError(t, err)
	var x admin.Explanation
	en.call(http.MethodPost, "/admin/v1/explain", map[string]any{"source": "generic", "connector": "billing",
		"body": invoice("acme", "Invoice 1 failed")}, &x)
	require.Len(t, x.Notifications, 1)
	d := x.Notifications[0].Decision
	require.NotNil(t, d.Hold)
	require.Equal(t, "silence:"+s.ID, d.Hold.By)
	require.Contains(t, d.Reason, "silenced by "+s.ID+"; ")
	require.Equal(t, "silence:"+s.ID, x.Notifications[0].Record.HeldBy)
	rec := x.Notifications[0].Record
	require.Nil(t, rec.DueAt())
}

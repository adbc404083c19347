package console

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/admin"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/server"
	"github.com/signalgate/signalgate/silence"
)

func silenceOf(id string, st silence.State, ms ...silence.Matcher) silence.Silence {
	at := time.Date(2026, 11, 24, 8, 0, 0, 0, time.UTC)
	return silence.Silence{ID: id, Input: silence.Input{Matchers: ms, StartsAt: at, EndsAt: at.Add(2 * time.Hour),
		CreatedBy: "ops", Comment: "deploy window"}, Status: silence.Status{State: st}, UpdatedAt: at}
}

func yes(b bool) *bool { return &b }

// The silences page lists silences with their matchers as Alertmanager writes them,
// filters by state through the admin API, and offers Expire on a silence that has not
// ended to a session that may write; an expire needs the CSRF token and is made by the
// signed-in operator.
func TestSilencesPage(t *testing.T) {
	f := newFixture(t, testTokens)
	active := silenceOf("s-1", silence.StateActive,
		silence.Matcher{Name: "agent", Value: "coder", IsEqual: yes(true)},
		silence.Matcher{Name: "kind", Value: "ci-.*", IsRegex: true},
		silence.Matcher{Name: "priority", Value: "low", IsEqual: yes(false)},
		silence.Matcher{Name: "branch", Value: "main|dev", IsRegex: true, IsEqual: yes(false)})
	active.When, active.IncludeUrgent = `attributes.repo == "acme/api"`, true
	pending := silenceOf("s-2", silence.StatePending, silence.Matcher{Name: "source", Value: "slack"})
	expired := silenceOf("s-3", silence.StateExpired, silence.Matcher{Name: "source", Value: "github"})
	expired.ExpiredBy = "alice"
	f.admin.silences = []silence.Silence{active, pending, expired}

	ops := f.signIn(opsToken)
	page := f.do(http.MethodGet, "/console/silences", nil, ops, nil)
	require.Equal(t, http.StatusOK, page.status, page.body)
	require.Contains(t, page.body, `<a href="/console/silences" aria-current="page">Silences</a>`, "the navigation leads here")
	for _, m := range []string{`agent=&#34;coder&#34;`, `kind=~&#34;ci-.*&#34;`, `priority!=&#34;low&#34;`, `branch!~&#34;main|dev&#34;`} {
		require.Contains(t, page.body, `<code class="matcher">`+m+`</code>`)
	}
	require.Contains(t, page.body, `when <code class="when">attributes.repo == &#34;acme/api&#34;</code>`)
	require.Contains(t, page.body, `class="urgent"`)
	require.Contains(t, page.body, `<small class="expired-by">expired by alice</small>`)
	require.Contains(t, page.body, `<time datetime="2026-11-24T10:00:00Z">`, "the end")
	require.Equal(t, 2, strings.Count(page.body, `<button class="expire"`), "the active and the pending one, not the expired")
	require.Contains(t, page.body, `action="/console/silences/s-1/expire"`)
	require.NotContains(t, page.body, `action="/console/silences/s-3/expire"`)
	require.Contains(t, page.body, `id="new-silence"`)

	page = f.do(http.MethodGet, "/console/silences?state=expired", nil, ops, nil)
	require.Equal(t, http.StatusOK, page.status, page.body)
	require.Contains(t, page.body, `data-id="s-3" data-state="expired"`)
	require.NotContains(t, page.body, `data-id="s-1"`)
	require.Equal(t, []url.Values{{}, {"state": {"expired"}}}, f.admin.silencesQ, "the state filter is the admin API's")
	page = f.do(http.MethodGet, "/console/silences?state=pending&cursor=", nil, ops, nil)
	require.Equal(t, url.Values{"state": {"pending"}}, f.admin.silencesQ[2], "an empty field is no filter")
	f.admin.silences = nil
	require.Contains(t, f.do(http.MethodGet, "/console/silences", nil, ops, nil).body, `id="no-silences"`)
	f.admin.silences = []silence.Silence{active, pending, expired}

	expire := func(id string, form url.Values, ck *http.Cookie, h map[string]string) resp {
		return f.do(http.MethodPost, "/console/silences/"+id+"/expire", form, ck, h)
	}
	token := f.csrf(ops)
	require.Equal(t, http.StatusForbidden, expire("s-1", url.Values{}, ops, nil).status, "no CSRF token")
	require.Equal(t, http.StatusForbidden, expire("s-1", url.Values{"csrf": {"x" + token}}, ops, nil).status, "a wrong one")
	require.Equal(t, http.StatusForbidden, expire("s-1", url.Values{"csrf": {token}}, ops, map[string]string{"Sec-Fetch-Site": "cross-site"}).status)
	require.Empty(t, f.admin.done())

	r := expire("s-1", url.Values{"csrf": {token}, "back": {"/console/silences?state=active"}}, ops, nil)
	require.Equal(t, http.StatusSeeOther, r.status, r.body)
	require.Equal(t, "/console/silences?state=active", r.header.Get("Location"))
	require.Equal(t, []string{"expire silence s-1 by ops"}, f.admin.done())

	// The admin API's answer shows: an unknown silence is a 404 page.
	f.admin.silenceErr = server.NotFound("silence %q not found", "s-gone")
	r = expire("s-gone", url.Values{"csrf": {token}}, ops, nil)
	require.Equal(t, http.StatusNotFound, r.status)
	require.Contains(t, r.body, "not found")
	f.admin.silenceErr = nil

	// A read-only session sees the silences and neither Expire nor New silence; its
	// posts are refused.
	viewer := f.signIn(viewerToken)
	page = f.do(http.MethodGet, "/console/silences", nil, viewer, nil)
	require.Equal(t, http.StatusOK, page.status)
	require.Contains(t, page.body, `data-id="s-1"`)
	require.NotContains(t, page.body, `class="expire"`)
	require.NotContains(t, page.body, `id="new-silence"`)
	r = expire("s-1", url.Values{"csrf": {f.csrf(viewer)}}, viewer, nil)
	require.Equal(t, http.StatusForbidden, r.status)
	require.Contains(t, r.body, "read-only")
	require.Len(t, f.admin.done(), 1)
}

// A silence's matchers and comment come from operators and may quote event text: they
// render as text.
func TestSilencesPageEscapes(t *testing.T) {
	f := newFixture(t, testTokens)
	evil := `<script>alert(1)</script>`
	s := silenceOf("s-1", silence.StateActive, silence.Matcher{Name: "kind", Value: evil})
	s.Comment, s.When, s.CreatedBy = evil, evil, evil
	f.admin.silences = []silence.Silence{s}
	page := f.do(http.MethodGet, "/console/silences", nil, f.signIn(opsToken), nil)
	require.Equal(t, http.StatusOK, page.status, page.body)
	require.NotContains(t, page.body, "<script>alert")
	require.Equal(t, 4, strings.Count(page.body, "&lt;script&gt;alert(1)&lt;/script&gt;"), "matcher, when, creator, comment")
	require.Contains(t, page.body, "&#34;&lt;script&gt;alert(1)&lt;/script&gt;&#34;", "the matcher's value, quoted")
}

func recordDetail() *admin.NotificationDetail {
	return &admin.NotificationDetail{Record: inbox.Record{ID: "r1", Thread: repliesThread, Source: "github", Kind: "ci-failure",
		Status: inbox.StatusPending, Priority: inbox.PriorityMedium, Summary: "CI failed on main"}}
}

// "Silence similar" on a record's page opens the new-silence form pre-filled with the
// record's agent, resource, thread, source and kind, ending two hours from now; what the
// operator sends, edited, becomes the silence, made by the signed-in operator.
func TestSilenceSimilar(t *testing.T) {
	f := newFixture(t, testTokens)
	f.admin.detail = recordDetail()
	held := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	f.admin.detail.HeldBy, f.admin.detail.HeldUntil = "silence:s-9", &held
	ops := f.signIn(opsToken)

	page := f.do(http.MethodGet, "/console/notifications/r1", nil, ops, nil)
	require.Equal(t, http.StatusOK, page.status, page.body)
	require.Contains(t, page.body, `id="silence-similar" href="/console/silences/new?record=r1"`)
	require.Contains(t, page.body, `<dd class="held">by silence:s-9 until <time datetime="2026-11-24T10:00:00Z">`)

	f.admin.records = []inbox.Record{f.admin.detail.Record}
	page = f.do(http.MethodGet, threadURL(repliesThread), nil, ops, nil)
	require.Contains(t, page.body, `<small class="held">held by silence:s-9</small>`, "the thread's row says what holds it")

	form := f.do(http.MethodGet, "/console/silences/new?record=r1", nil, ops, nil)
	require.Equal(t, http.StatusOK, form.status, form.body)
	rows := matcherRows(t, form.body)
	require.Equal(t, [][3]string{{"agent", "=", "coder"}, {"resource", "=", "acme/api"}, {"thread", "=", "acme/api#7"},
		{"source", "=", "github"}, {"kind", "=", "ci-failure"}, {"", "=", ""}, {"", "=", ""}}, rows)
	require.Contains(t, form.body, `name="endsAt" id="silence-ends" value="2026-11-24T11:00:00Z"`, "two hours from the console's clock")
	require.Contains(t, form.body, `name="record" value="r1"`)
	require.Contains(t, form.body, `<a href="/console/notifications/r1">record r1</a>`)

	// The operator widens it: any CI kind, not only this thread, and on one branch only.
	sent := url.Values{"csrf": {f.csrf(ops)}, "record": {"r1"},
		"matcher_name":  {"agent", "resource", "thread", "source", "kind", "branch", ""},
		"matcher_op":    {"=", "=", "=", "=", "=~", "!=", "="},
		"matcher_value": {"coder", "acme/api", "", "github", "ci-.*", "main", ""},
		"when":          {` attributes.draft == false `}, "startsAt": {""}, "endsAt": {"2026-11-24T12:30:00Z"},
		"comment": {"flaky CI"}, "includeUrgent": {"1"}}
	// The thread's row is cleared, name and value: it is left out.
	sent["matcher_name"][2] = ""
	r := f.do(http.MethodPost, "/console/silences", sent, ops, nil)
	require.Equal(t, http.StatusSeeOther, r.status, r.body)
	require.Equal(t, "/console/silences#silence-s-new", r.header.Get("Location"))
	require.Equal(t, []silence.Input{{
		Matchers: []silence.Matcher{
			{Name: "agent", Value: "coder", IsEqual: yes(true)},
			{Name: "resource", Value: "acme/api", IsEqual: yes(true)},
			{Name: "source", Value: "github", IsEqual: yes(true)},
			{Name: "kind", Value: "ci-.*", IsRegex: true, IsEqual: yes(true)},
			{Name: "branch", Value: "main", IsEqual: yes(false)},
		},
		When: "attributes.draft == false", EndsAt: time.Date(2026, 11, 24, 12, 30, 0, 0, time.UTC),
		CreatedBy: "ops", Comment: "flaky CI", IncludeUrgent: true,
	}}, f.admin.created, "startsAt left empty is now (the admin API's zero)")

	// endsAt may be a length from startsAt.
	sent.Set("startsAt", "2026-11-24T10:00:00+01:00")
	sent.Set("endsAt", "90m")
	r = f.do(http.MethodPost, "/console/silences", sent, ops, nil)
	require.Equal(t, http.StatusSeeOther, r.status, r.body)
	got := f.admin.created[1]
	require.Equal(t, time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC), got.StartsAt)
	require.Equal(t, time.Date(2026, 11, 24, 10, 30, 0, 0, time.UTC), got.EndsAt)

	// A read-only session is offered no silence and may not open the form or post it.
	viewer := f.signIn(viewerToken)
	page = f.do(http.MethodGet, "/console/notifications/r1", nil, viewer, nil)
	require.Equal(t, http.StatusOK, page.status)
	require.NotContains(t, page.body, `id="silence-similar"`)
	require.Equal(t, http.StatusForbidden, f.do(http.MethodGet, "/console/silences/new?record=r1", nil, viewer, nil).status)
	sent.Set("csrf", f.csrf(viewer))
	r = f.do(http.MethodPost, "/console/silences", sent, viewer, nil)
	require.Equal(t, http.StatusForbidden, r.status)
	require.Contains(t, r.body, "read-only")
	require.Len(t, f.admin.created, 2)

	// An unknown record is the admin API's 404.
	require.Equal(t, http.StatusNotFound, f.do(http.MethodGet, "/console/silences/new?record=r-gone", nil, ops, nil).status)
	// Without a record the form starts empty.
	require.Equal(t, [][3]string{{"", "=", ""}, {"", "=", ""}}, matcherRows(t, f.do(http.MethodGet, "/console/silences/new", nil, ops, nil).body))
}

// What the form cannot read is a 400 naming the field, and what the admin API refuses
// comes back with its message; either way the form returns as sent and nothing is made.
// Without the CSRF token, or from another site, nothing is made either.
func TestCreateSilenceRefusals(t *testing.T) {
	f := newFixture(t, testTokens)
	ops := f.signIn(opsToken)
	token := f.csrf(ops)
	good := func() url.Values {
		return url.Values{"csrf": {token}, "matcher_name": {"kind"}, "matcher_op": {"="}, "matcher_value": {"ci-failure"},
			"endsAt": {"2h"}, "comment": {"noisy"}}
	}
	for name, tc := range map[string]struct {
		key, value, want string
	}{
		"operator":  {"matcher_op", "==", `matchers[0]: operator &#34;==&#34; is not one of = != =~ !~`},
		"endsAt":    {"endsAt", "tomorrow", `endsAt: want an RFC 3339 time such as 2026-11-24T11:00:00Z or a length such as 2h, got &#34;tomorrow&#34;`},
		"negative":  {"endsAt", "-2h", `endsAt: want an RFC 3339 time`},
		"startsAt":  {"startsAt", "soon", `startsAt: want an RFC 3339 time`},
		"no ending": {"endsAt", "", `endsAt: want an RFC 3339 time`},
	} {
		form := good()
		form.Set(tc.key, tc.value)
		r := f.do(http.MethodPost, "/console/silences", form, ops, nil)
		require.Equal(t, http.StatusBadRequest, r.status, name)
		require.Contains(t, r.body, `id="silence-error">`+tc.want, name)
		require.Contains(t, r.body, `name="comment" id="silence-comment" value="noisy"`, name+": the form comes back as sent")
	}

	f.admin.silenceErr = server.BadRequest("endsAt: more than silences.max_duration (168h) after startsAt")
	form := good()
	form.Set("endsAt", "200h")
	r := f.do(http.MethodPost, "/console/silences", form, ops, nil)
	require.Equal(t, http.StatusBadRequest, r.status)
	require.Contains(t, r.body, `id="silence-error">endsAt: more than silences.max_duration (168h) after startsAt`)
	require.Contains(t, r.body, `name="endsAt" id="silence-ends" value="200h"`)
	require.Equal(t, [][3]string{{"kind", "=", "ci-failure"}}, matcherRows(t, r.body))
	f.admin.silenceErr = nil

	require.Equal(t, http.StatusForbidden, f.do(http.MethodPost, "/console/silences", url.Values{"endsAt": {"2h"}}, ops, nil).status, "no CSRF token")
	require.Equal(t, http.StatusForbidden, f.do(http.MethodPost, "/console/silences", good(), ops,
		map[string]string{"Sec-Fetch-Site": "cross-site"}).status)
	require.Empty(t, f.admin.created)
	require.Empty(t, f.admin.done())
}

// A record's fields come from the event: pre-filled into the form they stay values.
func TestSilenceSimilarEscapes(t *testing.T) {
	f := newFixture(t, testTokens)
	evil := `"><script>alert(1)</script>`
	f.admin.detail = recordDetail()
	f.admin.detail.Kind, f.admin.detail.Thread.Thread = evil, evil
	form := f.do(http.MethodGet, "/console/silences/new?record=r1", nil, f.signIn(opsToken), nil)
	require.Equal(t, http.StatusOK, form.status, form.body)
	require.NotContains(t, form.body, "<script>alert")
	rows := matcherRows(t, form.body)
	require.Equal(t, [3]string{"thread", "=", htmlText(evil)}, rows[2])
	require.Equal(t, [3]string{"kind", "=", htmlText(evil)}, rows[4])
}

// matcherRows reads the form's matcher rows: name, selected operator, value (as the
// page writes them).
func matcherRows(t *testing.T, body string) [][3]string {
	t.Helper()
	var out [][3]string
	for _, row := range strings.Split(body, `<tr class="matcher">`)[1:] {
		name := between(t, row, `name="matcher_name" value="`, `"`)
		op := between(t, row, `<option selected>`, `<`)
		value := between(t, row, `name="matcher_value" value="`, `"`)
		out = append(out, [3]string{name, op, value})
	}
	return out
}

func between(t *testing.T, s, from, to string) string {
	t.Helper()
	_, rest, ok := strings.Cut(s, from)
	require.True(t, ok, "no %s in %s", from, s)
	v, _, ok := strings.Cut(rest, to)
	require.True(t, ok)
	return v
}

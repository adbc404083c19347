package console

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/inbox"
)

// The thread page offers Snooze on a pending record only, shows until when a snoozed one
// is hidden, and a snooze needs the CSRF token and the write scope; a bad duration or
// time is a 400 naming the field, never passed on.
func TestThreadPageSnoozes(t *testing.T) {
	f := newFixture(t, testTokens)
	until := time.Date(2026, 11, 24, 15, 0, 0, 0, time.UTC)
	f.admin.records = []inbox.Record{
		{ID: "r1", Thread: repliesThread, Source: "github", Kind: "comment", Status: inbox.StatusPending, Priority: inbox.PriorityMedium},
		{ID: "r2", Thread: repliesThread, Source: "github", Kind: "comment", Status: inbox.StatusSnoozed, Priority: inbox.PriorityMedium,
			SnoozedUntil: &until},
		{ID: "r3", Thread: repliesThread, Source: "github", Kind: "comment", Status: inbox.StatusDelivered, Priority: inbox.PriorityMedium},
		{ID: "r4", Thread: repliesThread, Source: "github", Kind: "ci", Status: inbox.StatusPending, Priority: inbox.PriorityMedium, NetKey: "ci:main"},
	}
	ops := f.signIn(opsToken)
	page := f.do(http.MethodGet, threadURL(repliesThread), nil, ops, nil)
	require.Equal(t, http.StatusOK, page.status, page.body)
	require.Equal(t, 1, strings.Count(page.body, `<button class="snooze"`), "only the pending record outside a lane")
	require.Contains(t, page.body, `action="/console/notifications/r1/snooze"`)
	require.Contains(t, page.body, `class="snoozed-until"`)
	require.Contains(t, page.body, `action="/console/notifications/r2/dismiss"`, "a snoozed record can be dismissed")

	post := func(form url.Values, ck *http.Cookie) resp {
		return f.do(http.MethodPost, "/console/notifications/r1/snooze", form, ck, nil)
	}
	token := f.csrf(ops)
	require.Equal(t, http.StatusForbidden, post(url.Values{"for": {"4h"}}, ops).status, "no CSRF token")
	for name, form := range map[string]url.Values{
		"bad duration": {"csrf": {token}, "for": {"soon"}},
		"bad time":     {"csrf": {token}, "until": {"tomorrow"}},
		"nothing":      {"csrf": {token}},
	} {
		r := post(form, ops)
		require.Equal(t, http.StatusBadRequest, r.status, name)
	}
	require.Contains(t, post(url.Values{"csrf": {token}, "for": {"soon"}}, ops).body, "for: want a duration")
	require.Contains(t, post(url.Values{"csrf": {token}, "until": {"tomorrow"}}, ops).body, "until: want an RFC 3339 time")
	require.Empty(t, f.admin.done())

	r := post(url.Values{"csrf": {token}, "for": {"4h"}, "back": {threadURL(repliesThread)}}, ops)
	require.Equal(t, http.StatusSeeOther, r.status, r.body)
	require.Equal(t, threadURL(repliesThread), r.header.Get("Location"))
	r = post(url.Values{"csrf": {token}, "until": {"2026-11-25T08:00:00Z"}}, ops)
	require.Equal(t, http.StatusSeeOther, r.status, r.body)
	require.Equal(t, []string{"snooze r1 until 2026-11-24T13:00:00Z by ops", "snooze r1 until 2026-11-25T08:00:00Z by ops"}, f.admin.done(),
		"4 hours from the console's clock; an explicit time as given")

	viewer := f.signIn(viewerToken)
	page = f.do(http.MethodGet, threadURL(repliesThread), nil, viewer, nil)
	require.NotContains(t, page.body, `class="snooze"`)
	r = post(url.Values{"csrf": {f.csrf(viewer)}, "for": {"4h"}}, viewer)
	require.Equal(t, http.StatusForbidden, r.status)
	require.Len(t, f.admin.done(), 2)
}

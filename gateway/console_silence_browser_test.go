package gateway

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/silence"
)

// silenceInBrowser: on a record's page an operator takes "Silence similar", finds the
// form pre-filled from the record (agent, resource, thread, source, kind; two hours
// long), creates the silence, sees it active on the silences page, and expires it. A
// second silence, starting tomorrow, is left pending for the read-only check
// (silencesReadOnly); it holds nothing meanwhile.
func silenceInBrowser(t *testing.T, b *browserRun, m *Gateway, recordID, resource, thread string) {
	t.Helper()
	b.do("the record's page", chromedp.Navigate(b.base+"/console/notifications/"+url.PathEscape(recordID)),
		chromedp.WaitVisible(chromedp.ID("silence-similar")))
	b.do("silence similar", chromedp.Click(chromedp.ID("silence-similar")), chromedp.WaitVisible(chromedp.ID("silence-form")))
	rows := evalJS[[][]string](b, `Array.from(document.querySelectorAll('#matchers tr.matcher')).
		filter(r => r.querySelector('input[name=matcher_name]').value !== '').
		map(r => [r.querySelector('input[name=matcher_name]').value, r.querySelector('select[name=matcher_op]').value,
			r.querySelector('input[name=matcher_value]').value])`)
	require.Equal(t, [][]string{{"agent", "=", "coder"}, {"resource", "=", resource}, {"thread", "=", thread},
		{"source", "=", "ci"}, {"kind", "=", "lint"}}, rows, "the form is pre-filled from the record")
	ends, err := time.Parse(time.RFC3339, evalJS[string](b, `document.getElementById('silence-ends').value`))
	require.NoError(t, err, "endsAt is pre-filled as an RFC 3339 time")
	require.WithinDuration(t, time.Now().Add(2*time.Hour), ends, 10*time.Minute, "endsAt defaults to two hours ahead")
	b.shot("04f-silence-similar")

	b.do("create the silence", chromedp.SetValue(chromedp.ID("silence-comment"), "lint is noisy today"),
		chromedp.Click(chromedp.ID("create-silence")), chromedp.WaitVisible(chromedp.ID("silences")))
	id := strings.TrimPrefix(evalJS[string](b, `location.hash`), "#silence-")
	require.NotEmpty(t, id, "the new silence is pointed at")
	row := fmt.Sprintf(`#silences tr.silence[data-id=%q]`, id)
	b.waitJS("the silence is active", fmt.Sprintf(`document.querySelector('%s[data-state=active]') !== null`, row))
	require.Contains(t, b.text(row), `kind="lint"`)
	require.Contains(t, b.text(row), "lint is noisy today")
	b.shot("04g-silence-active")

	b.do("expire it", chromedp.Click(chromedp.CSS(row+" button.expire")),
		chromedp.WaitVisible(chromedp.CSS(row+"[data-state=expired] .expired-by")))
	require.Zero(t, evalJS[int](b, fmt.Sprintf(`document.querySelectorAll('%s button.expire').length`, row)), "an expired silence has nothing to expire")
	b.shot("04h-silence-expired")
	var s silence.Silence
	require.Equal(t, http.StatusOK, getJSON(t, m, http.MethodGet, "/admin/v1/silences/"+url.PathEscape(id), consoleOps, nil, &s))
	require.Equal(t, silence.StateExpired, s.Status.State)
	require.Equal(t, "ops", s.ExpiredBy)
	require.Equal(t, "ops", s.CreatedBy)
	require.Len(t, s.Matchers, 5)

	// From scratch: a silence starting tomorrow is pending until then.
	tomorrow := time.Now().UTC().Add(24 * time.Hour).Truncate(time.Second).Format(time.RFC3339)
	b.do("new silence", chromedp.Navigate(b.base+"/console/silences"), chromedp.Click(chromedp.ID("new-silence")),
		chromedp.WaitVisible(chromedp.ID("silence-form")),
		chromedp.SetValue(chromedp.CSS(`#matchers tr.matcher:first-child input[name=matcher_name]`), "source"),
		chromedp.SetValue(chromedp.CSS(`#matchers tr.matcher:first-child input[name=matcher_value]`), "pagerduty"),
		chromedp.SetValue(chromedp.ID("silence-starts"), tomorrow),
		chromedp.SetValue(chromedp.ID("silence-ends"), "2h"),
		chromedp.SetValue(chromedp.ID("silence-comment"), "maintenance tomorrow"),
		chromedp.Click(chromedp.ID("create-silence")), chromedp.WaitVisible(chromedp.ID("silences")))
	b.waitJS("the silence is pending", `document.querySelector('#silences tr.silence[data-state=pending] button.expire') !== null`)
	b.do("only active ones", chromedp.Click(chromedp.CSS(`#silence-states a[href$="state=active"]`)),
		chromedp.WaitVisible(chromedp.ID("no-silences")))

	// A phone's width: the list and the form reflow.
	b.do("phone width", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile))
	for _, page := range []string{"silences", "silences/new?record=" + url.QueryEscape(recordID)} {
		b.do("phone "+page, chromedp.Navigate(b.base+"/console/"+page), chromedp.WaitVisible(chromedp.ID("signout")))
		require.True(t, evalJS[bool](b, `document.documentElement.scrollWidth <= window.innerWidth`), "the %s page is wider than a phone", page)
	}
	b.shot("04i-silences-phone")
	b.do("desktop width", chromedp.EmulateViewport(1280, 800))
}

// silencesReadOnly: a read-only session sees the silences but no Expire, no New silence
// and no Silence similar, and its expire is refused.
func silencesReadOnly(t *testing.T, b *browserRun, recordID string) {
	t.Helper()
	b.do("viewer silences", chromedp.Navigate(b.base+"/console/silences"), chromedp.WaitVisible(chromedp.ID("silences")))
	require.Equal(t, 1, evalJS[int](b, `document.querySelectorAll('#silences tr.silence[data-state=pending]').length`), "the viewer sees the pending silence")
	require.Zero(t, evalJS[int](b, `document.querySelectorAll('button.expire, #new-silence').length`))
	b.shot("13a-silences-read-only")
	pending := evalJS[string](b, `document.querySelector('#silences tr.silence[data-state=pending]').dataset.id`)
	status := evalJS[int](b, fmt.Sprintf(`fetch('/console/silences/%s/expire', {method: 'POST', body: new URLSearchParams({csrf: document.querySelector('input[name=csrf]').value})}).then(r => r.status)`,
		url.PathEscape(pending)))
	require.Equal(t, http.StatusForbidden, status, "a read-only session expired a silence")
	b.do("viewer record", chromedp.Navigate(b.base+"/console/notifications/"+url.PathEscape(recordID)), chromedp.WaitVisible(chromedp.ID("signout")))
	require.Zero(t, evalJS[int](b, `document.querySelectorAll('#silence-similar').length`))
}

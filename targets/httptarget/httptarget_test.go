package httptarget

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
)

func TestPostClassifies(t *testing.T) {
	now := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	cases := []struct {
		status     int
		retryAfter string
		retry      bool
		after      time.Duration
	}{
		{http.StatusNoContent, "", false, 0},
		{http.StatusTooManyRequests, "12", true, 12 * time.Second},
		{http.StatusServiceUnavailable, now.Add(90 * time.Second).Format(http.TimeFormat), true, 90 * time.Second},
		{http.StatusInternalServerError, "soon", true, 0},
		{http.StatusRequestTimeout, "", true, 0},
		{http.StatusNotFound, "", false, 0},
		{http.StatusConflict, "", true, 0},
		{http.StatusTooEarly, "", true, 0},
		{http.StatusBadRequest, "", false, 0},
		{http.StatusGone, "", false, 0},
		{http.StatusUnauthorized, "5", false, 5 * time.Second},
	}
	for _, c := range cases {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			require.Equal(t, "application/json", r.Header.Get("Content-Type"))
			require.Equal(t, "v", r.Header.Get("X-K"))
			if c.retryAfter != "" {
				w.Header().Set("Retry-After", c.retryAfter)
			}
			w.WriteHeader(c.status)
		}))
		_, res, err := Post(context.Background(), srv.Client(), srv.URL, map[string]string{"X-K": "v"}, []byte(`{}`), time.Second,
			func() time.Time { return now })
		srv.Close()
		if c.status < 300 {
			require.NoError(t, err)
			require.Equal(t, agent.Result{Status: c.status}, res, "a success's status is in its result")
			continue
		}
		var f *agent.DeliveryError
		require.ErrorAs(t, err, &f, "status %d", c.status)
		require.Equal(t, agent.DeliveryError{Err: f.Err, Status: c.status, Retry: c.retry, RetryAfter: c.after}, *f,
			"status %d", c.status)
	}
}

// A target URL's path and query are often its credential (a webhook URL with a token in
// its path): neither appears in an error, a refusal or a transport failure alike.
func TestErrorsHideTheWholeURL(t *testing.T) {
	u := "http://user:hunter22@127.0.0.1:1/hooks/T0SECRETPATH/B0?token=abc123"
	_, _, err := Post(context.Background(), http.DefaultClient, u, nil, nil, time.Second, time.Now)
	require.Error(t, err)
	require.Equal(t, agent.DeliveryError{Err: errors.Unwrap(err), Retry: true}, agent.DeliveryFailure(err),
		"no answer came: no status, worth retrying")
	for _, s := range []string{"hunter22", "abc123", "user:", "SECRETPATH", "hooks"} {
		require.False(t, strings.Contains(err.Error(), s), "%q leaks %q", err.Error(), s)
	}
	require.Contains(t, err.Error(), "http://127.0.0.1:1/…")

	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte("bad request"))
	}))
	defer srv.Close()
	_, _, err = Post(context.Background(), http.DefaultClient, srv.URL+"/hooks/T0SECRETPATH?token=abc123", nil, nil, time.Second, time.Now)
	require.EqualError(t, err, "POST "+srv.URL+"/…: HTTP 400: bad request")

	require.Equal(t, "https://h/…", SafeURL("https://a:b@h/p?x=1#f"))
	require.Equal(t, "https://h", SafeURL("https://h"))
	require.Equal(t, "https://h/…", SafeURL("https://h/?token=1"))
}

// A target answering 307 to another host gets a failed attempt with its status: the signed
// body and the secret headers never travel on, even with a caller's own client.
func TestPostNeverFollowsRedirects(t *testing.T) {
	hits := 0
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits++ }))
	defer other.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/steal", http.StatusTemporaryRedirect)
	}))
	defer srv.Close()
	for _, code := range []int{http.StatusMovedPermanently, http.StatusFound, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, other.URL+"/steal", code)
		})
		_, _, err := Post(context.Background(), &http.Client{}, srv.URL+"/hook", map[string]string{"X-Secret": "s"}, []byte(`{}`), time.Second, time.Now)
		require.Error(t, err)
		f := agent.DeliveryFailure(err)
		require.False(t, f.Retry)
		require.Equal(t, code, f.Status)
		require.Contains(t, err.Error(), fmt.Sprintf("HTTP %d", code))
	}
	require.Zero(t, hits, "a redirect was followed")
}

// A target that repeats the request in its answer (Express's default 404 is
// "Cannot POST /hooks/<token>"; others echo a header or the query) gives an error whose
// excerpt says what went wrong without the path, the query or a header value, whichever
// form the answer shows them in.
func TestAnswerExcerptHidesTheRequest(t *testing.T) {
	const path, query, header = "/hooks/T0PATH-SENTINEL/B0", "token=QUERY-SENTINEL&x=1", "HDR-SENTINEL-7f3a"
	echoes := map[string]func(r *http.Request) string{
		"express": func(r *http.Request) string {
			return "<!DOCTYPE html>\n<html><body><pre>Cannot POST " + r.URL.Path + "</pre></body></html>"
		},
		"request uri": func(r *http.Request) string { return "no route for " + r.URL.RequestURI() },
		"json":        func(r *http.Request) string { return `{"path":"` + strings.ReplaceAll(r.URL.Path, "/", `\/`) + `"}` },
		"segment":     func(r *http.Request) string { return "unknown hook T0PATH-SENTINEL" },
		"decoded":     func(r *http.Request) string { return "query was " + r.URL.Query().Get("token") },
		"header":      func(r *http.Request) string { return "bad key " + r.Header.Get("X-Api-Key") },
		"bearer": func(r *http.Request) string {
			return "token " + strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ") + " revoked"
		},
	}
	for name, echo := range echoes {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(echo(r)))
		}))
		_, _, err := Post(context.Background(), srv.Client(), srv.URL+path+"?"+query,
			map[string]string{"X-Api-Key": header, "Authorization": "Bearer " + header + "-bearer"}, []byte(`{}`), time.Second, time.Now)
		srv.Close()
		require.Error(t, err, name)
		require.False(t, agent.DeliveryFailure(err).Retry, name)
		require.Contains(t, err.Error(), "HTTP 404: ", name)
		require.NotContains(t, err.Error(), "SENTINEL", name)
		require.NotContains(t, err.Error(), "hooks", name)
	}

	// What is hidden goes before the cut: a long answer keeps no head of a credential.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(strings.Repeat("é", 140) + "Cannot POST " + r.URL.Path))
	}))
	defer srv.Close()
	_, _, err := Post(context.Background(), srv.Client(), srv.URL+path, nil, []byte(`{}`), time.Second, time.Now)
	require.EqualError(t, err, "POST "+srv.URL+"/…: HTTP 400: "+strings.Repeat("é", 140)+"Cannot POST …")
}

package alertmanager

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/reply"
)

// fakeAPI is Alertmanager's silences API as the replier uses it: POST creates, GET
// lists those whose matchers the filter's equalities name. fail, when set, answers
// every request with that status.
type fakeAPI struct {
	mu       sync.Mutex
	silences []silence
	filters  [][]string
	auth     []string
	fail     int
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.auth = append(f.auth, r.Header.Get("Authorization"))
	if f.fail != 0 {
		http.Error(w, `"unavailable"`, f.fail)
		return
	}
	if r.URL.Path != "/api/v2/silences" {
		http.NotFound(w, r)
		return
	}
	switch r.Method {
	case http.MethodPost:
		var s silence
		if err := json.NewDecoder(r.Body).Decode(&s); err != nil {
			http.Error(w, `"bad silence"`, http.StatusBadRequest)
			return
		}
		s.ID = "sil-" + string(rune('a'+len(f.silences)))
		f.silences = append(f.silences, s)
		_ = json.NewEncoder(w).Encode(map[string]string{"silenceID": s.ID})
	case http.MethodGet:
		f.filters = append(f.filters, r.URL.Query()["filter"])
		_ = json.NewEncoder(w).Encode(f.silences)
	}
}

func alertTo(silenceFor string) reply.To {
	return reply.NewTo(Source, "prod", Place{Fingerprint: "5b8b6a6f3c1d2e4f", AlertLabels: []string{"alertname=HighLatency", "cluster=eu1"}, Silence: silenceFor})
}

// TestReplierSilences: a reply creates one silence with the alert's labels as equality
// matchers, the agent as createdBy and the text with the marker as comment; Find finds
// it by that marker (so a retried reply is not sent again), and nothing for another
// reply; the API's 5xx is retried, a 4xx is not; the bounds are checked first.
func TestReplierSilences(t *testing.T) {
	api := &fakeAPI{}
	srv := httptest.NewServer(api)
	defer srv.Close()
	now := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
	r, err := NewReplier([]Config{{Name: "prod", BearerToken: testToken, APIURL: srv.URL + "/", APIToken: "api-token-0123456789", MaxSilence: 4 * time.Hour},
		{Name: "noapi", BearerToken: testToken}}, func() time.Time { return now })
	require.NoError(t, err)
	ctx := context.Background()
	rp := reply.Reply{ID: "r-1", Thread: inbox.ThreadKey{Agent: "oncall", Resource: "alertmanager/prod", Thread: "HighLatency"},
		Text: "Failover running. Quoting signalgate:reply:r-9 changes nothing.", To: alertTo("2h")}
	require.NoError(t, r.Check(rp.To, rp.Text))

	_, found, err := r.Find(ctx, rp)
	require.NoError(t, err)
	require.False(t, found)
	sent, retry, err := r.Send(ctx, rp)
	require.NoError(t, err)
	require.False(t, retry)
	assert.Equal(t, reply.Sent{PlatformID: "sil-a", URL: srv.URL + "/#/silences/sil-a"}, sent)
	require.Len(t, api.silences, 1)
	s := api.silences[0]
	assert.Equal(t, []matcher{{Name: "alertname", Value: "HighLatency", IsEqual: true}, {Name: "cluster", Value: "eu1", IsEqual: true}}, s.Matchers)
	assert.Equal(t, now, s.StartsAt.UTC())
	assert.Equal(t, now.Add(2*time.Hour), s.EndsAt.UTC())
	assert.Equal(t, "oncall (signalgate)", s.CreatedBy)
	assert.Equal(t, "Failover running. Quoting signalgate\u2060:reply:r-9 changes nothing.\n\n(signalgate:reply:r-1)", s.Comment)
	assert.Equal(t, "Bearer api-token-0123456789", api.auth[0])

	got, found, err := r.Find(ctx, rp)
	require.NoError(t, err)
	require.True(t, found, "the marker is found: a retried reply is not sent again")
	assert.Equal(t, sent, got)
	assert.ElementsMatch(t, []string{`alertname="HighLatency"`, `cluster="eu1"`}, api.filters[len(api.filters)-1])
	other := rp
	other.ID = "r-9"
	_, found, err = r.Find(ctx, other)
	require.NoError(t, err)
	require.False(t, found, "a marker quoted in another reply's text names no reply")

	api.fail = http.StatusServiceUnavailable
	_, retry, err = r.Send(ctx, rp)
	require.Error(t, err)
	assert.True(t, retry)
	api.fail = http.StatusBadRequest
	_, retry, err = r.Send(ctx, rp)
	require.Error(t, err)
	assert.False(t, retry)
	assert.NotContains(t, err.Error(), "api-token")

	for _, tc := range []struct {
		to   reply.To
		want error
		msg  string
	}{
		{alertTo(""), reply.ErrInvalid, "replyTo.silence: required"},
		{alertTo("soon"), reply.ErrInvalid, `"soon" is not a duration`},
		{alertTo("30s"), reply.ErrInvalid, "under the minimum 1m0s"},
		{alertTo("5h"), reply.ErrInvalid, "over the connector's max_silence 4h0m0s"},
		{reply.NewTo(Source, "noapi", Place{Fingerprint: "ab", AlertLabels: []string{"a=b"}, Silence: "1h"}), reply.ErrNoCredentials, "api_url"},
		{reply.NewTo(Source, "nope", Place{Fingerprint: "ab", Silence: "1h"}), reply.ErrUnknownPlace, `no alertmanager connector named "nope"`},
		{reply.NewTo(Source, "prod", Place{Fingerprint: "ab", Silence: "1h"}), reply.ErrUnknownPlace, "no labels"},
	} {
		err := r.Check(tc.to, "text")
		require.Error(t, err, tc.msg)
		assert.True(t, errors.Is(err, tc.want), "%s: %v", tc.msg, err)
		assert.Contains(t, err.Error(), tc.msg)
	}
}

// TestPlaceInstructions: the agent's replyTo gives the silence and nothing else; the
// alert's fingerprint is its key, whatever the agent asks.
func TestPlaceInstructions(t *testing.T) {
	origin := Place{Fingerprint: "5B8B6A6F3C1D2E4F", AlertLabels: []string{"alertname=HighLatency"}}
	asked := Place{Fingerprint: "5b8b6a6f3c1d2e4f", AlertLabels: []string{"alertname=.*"}, Silence: "2h"}
	assert.Equal(t, origin.Key(), asked.Key())
	got := origin.Instruct(asked).(Place)
	assert.Equal(t, Place{Fingerprint: origin.Fingerprint, AlertLabels: origin.AlertLabels, Silence: "2h"}, got)
	assert.Equal(t, "alert HighLatency 5B8B6A6F3C1D2E4F, silence 2h", got.Describe())
	res, ok := got.WatchResource()
	assert.True(t, ok)
	assert.Equal(t, "5b8b6a6f3c1d2e4f", res)
	_, err := WatchResource("not-hex")
	require.Error(t, err)
}

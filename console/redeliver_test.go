package console

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/admin"
	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/delivery"
	"github.com/signalgate/signalgate/deliverytest"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/server"
	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/store/storetest"
)

// A record that failed its max_attempts, redelivered from the console and failing again,
// counts all four attempts beside the four it lists, and its page keeps the policy's
// decision with the operator's redelivery on a line of its own. The redelivery's round
// still gets max_attempts of its own.
func TestRedeliveredRecordCountsEveryAttemptAndKeepsItsDecision(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) { redeliveredRecord(t, b) })
	}
}

func redeliveredRecord(t *testing.T, b storetest.Backend) {
	var calls atomic.Int32
	env := deliverytest.New(t, deliverytest.Config{
		Backend: &b,
		Routes: func(delivery.Target) map[string]delivery.Route {
			return map[string]delivery.Route{"coder": {Kind: "webhook", MaxAttempts: 2, MaxAge: 24 * time.Hour,
				Target: delivery.TargetFunc(func(context.Context, agent.Handoff) (agent.Result, error) {
					calls.Add(1)
					return agent.Result{}, &agent.DeliveryError{Err: errors.New("target answered 503"), Retry: true}
				})}}
		},
	})
	reads := store.NewAdmin(env.Store)
	api, err := admin.New(admin.Config{Tokens: testTokens}, admin.Deps{Store: reads, Inbox: env.Inbox,
		Agents: []string{"coder"}, Notify: env.Notify, Log: storetest.Logger(t), Now: env.Now})
	require.NoError(t, err)
	c, err := New(Config{SessionKey: testKey}, Deps{Admin: api, Stream: fakeStream{}, Sessions: store.NewConsoleSessions(env.Store), Tokens: testTokens, Now: env.Now})
	require.NoError(t, err)
	srv := server.New(server.Config{}, storetest.Logger(t))
	c.Mount(srv.Echo())
	f := &fixture{t: t, srv: httptest.NewServer(srv.Echo())}
	t.Cleanup(f.srv.Close)

	id := env.Ingest(inbox.Notification{Thread: inbox.ThreadKey{Agent: "coder", Resource: "r", Thread: "t"}, Source: "github",
		Kind: "ci-failure", Priority: inbox.PriorityHigh, Summary: "CI failed on main"})
	decision := env.Record(id).Reason
	require.NotEmpty(t, decision)
	// Two attempts, the second after the backoff: max_attempts makes it a dead letter.
	fail := func() {
		for range 2 {
			env.Pass()
			env.Clock.Advance(time.Hour)
		}
		require.Equal(t, inbox.StatusFailed, env.Record(id).Status)
	}
	fail()

	ck := f.signIn(opsToken)
	r := f.do(http.MethodPost, "/console/notifications/"+id+"/redeliver",
		url.Values{"csrf": {f.csrf(ck)}, "back": {"/console/notifications/" + id}}, ck, nil)
	require.Equal(t, http.StatusSeeOther, r.status, r.body)
	rec := env.Record(id)
	require.Equal(t, inbox.StatusPending, rec.Status)
	require.Equal(t, 2, rec.Attempts, "a redelivery keeps counting")
	require.Equal(t, decision, rec.Reason, "the policy's decision stays")
	require.Contains(t, rec.OperatorAction, `redelivered by "ops"`)
	fail()
	require.EqualValues(t, 4, calls.Load(), "the redelivery had a round of max_attempts of its own")

	detail, err := api.Notification(context.Background(), id)
	require.NoError(t, err)
	require.Equal(t, 4, detail.Attempts)
	require.Len(t, detail.Deliveries, 4)
	for i, a := range detail.Deliveries {
		require.Equal(t, 4-i, a.Attempt, "attempts are numbered across the redelivery, newest first")
	}
	require.Equal(t, decision, detail.Reason)
	require.Contains(t, detail.OperatorAction, `redelivered by "ops"`)
	lst, _, err := reads.ListRecords(context.Background(), inbox.RecordFilter{Agent: "coder"})
	require.NoError(t, err)
	require.Len(t, lst, 1)
	require.Equal(t, 4, lst[0].Attempts, "listings count them too")
	require.Equal(t, detail.OperatorAction, lst[0].OperatorAction)

	page := f.do(http.MethodGet, "/console/notifications/"+id, nil, ck, nil)
	require.Equal(t, http.StatusOK, page.status)
	require.Regexp(t, `<dt>Attempts</dt><dd>4 · last error`, page.body)
	require.Regexp(t, `<dt>Decision</dt><dd class="decision">`+regexp.QuoteMeta(htmlText(decision))+`</dd>`, page.body)
	require.Regexp(t, `<dt>Operator</dt><dd class="operator">redelivered by &#34;ops&#34; at [^<]+ → deliver now</dd>`, page.body)
	require.Equal(t, 4, strings.Count(page.body, `<td data-label="Attempt">`))
}

// htmlText is s as html/template writes it in text.
func htmlText(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;").Replace(s)
}

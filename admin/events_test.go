package admin_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/admin"
	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/store"
)

type eventList struct {
	Events     []inbox.Event `json:"events"`
	NextCursor string        `json:"nextCursor"`
}

func eventIDs(l eventList) []string {
	var out []string
	for _, ev := range l.Events {
		out = append(out, ev.ID)
	}
	return out
}

func TestListAndGetEvents(t *testing.T) {
	forBackends(t, envOpts{}, func(t *testing.T, en *env) {
		first := en.deliver("msg_1", invoice("acme", "Invoice 1 failed"))
		second := en.deliver("msg_2", map[string]any{"kind": "payout", "summary": "no customer"}) // the thread renders empty
		third := en.deliver("msg_3", invoice("globex", "Invoice 3 failed"))
		en.deliver("msg_1", invoice("acme", "Invoice 1 failed")) // a provider redelivery
		require.Equal(t, inbox.EventRouted, first.Status)
		require.Equal(t, inbox.EventUnrouted, second.Status)

		var all eventList
		en.call(http.MethodGet, "/admin/v1/events", nil, &all)
		require.Equal(t, []string{third.EventID, second.EventID, first.EventID}, eventIDs(all), "newest first")
		require.Empty(t, all.NextCursor)

		list := func(q string) []string {
			var l eventList
			en.call(http.MethodGet, "/admin/v1/events?"+q, nil, &l)
			return eventIDs(l)
		}
		require.Equal(t, []string{second.EventID}, list("status=unrouted"))
		require.Equal(t, []string{third.EventID, first.EventID}, list("status=routed&connector=billing&source=generic"))
		require.Equal(t, []string{second.EventID}, list("type=payout"))
		require.Equal(t, []string{second.EventID}, list("kind=payout"))
		require.Equal(t, []string{first.EventID}, list("duplicate=true"))
		require.Equal(t, []string{third.EventID, second.EventID}, list("duplicate=false"))
		require.Equal(t, []string{second.EventID}, list("since="+url.QueryEscape(t0.Add(time.Second).Format(time.RFC3339))+
			"&until="+url.QueryEscape(t0.Add(2*time.Second).Format(time.RFC3339))))
		require.Empty(t, list("source=github"))

		var page eventList
		en.call(http.MethodGet, "/admin/v1/events?limit=2", nil, &page)
		require.Equal(t, []string{third.EventID, second.EventID}, eventIDs(page))
		var last eventList
		en.call(http.MethodGet, "/admin/v1/events?limit=2&cursor="+page.NextCursor, nil, &last)
		require.Equal(t, []string{first.EventID}, eventIDs(last))
		require.Empty(t, last.NextCursor)

		var detail admin.EventDetail
		en.call(http.MethodGet, "/admin/v1/events/"+first.EventID, nil, &detail)
		require.Equal(t, "msg_1", detail.DeliveryID)
		require.Equal(t, 1, detail.Redeliveries)
		require.Equal(t, map[string]string{"Webhook-Id": "msg_1", "Content-Type": "application/json"}, detail.Headers)
		require.JSONEq(t, `{"kind":"invoice-failed","summary":"Invoice 1 failed","priority":"high","coalesceKey":"invoices:acme","attributes":{"customer":"acme"}}`, *detail.Body)
		require.Len(t, detail.CreatedRecords, 1)
		require.Equal(t, inbox.ThreadKey{Agent: "coder", Resource: "billing", Thread: "acme"}, detail.CreatedRecords[0].Thread)

		code, raw := en.do(http.MethodGet, "/admin/v1/events/nope", viewerToken, nil)
		require.Equal(t, http.StatusBadRequest, code)
		_, msg := errorOf(t, raw)
		require.Equal(t, `id: "nope" is not a valid id (want a UUID)`, msg)
		unknown := "01a2030d-9733-7822-bce0-6d25cd55022c"
		code, raw = en.do(http.MethodGet, "/admin/v1/events/"+unknown, viewerToken, nil)
		require.Equal(t, http.StatusNotFound, code)
		_, msg = errorOf(t, raw)
		require.Equal(t, `event "`+unknown+`" not found`, msg)
	})
}

// TestReplayThroughTodaysRoutes: an event nobody wanted is replayed after a route was
// added. Provider idempotency does not block it; the replay is an event of its own.
func TestReplayThroughTodaysRoutes(t *testing.T) {
	forBackends(t, envOpts{routes: []connectors.RouteConfig{}}, func(t *testing.T, en *env) {
		orig := en.deliver("msg_1", invoice("acme", "Invoice 1 failed"))
		require.Equal(t, inbox.EventUnrouted, orig.Status)

		// Today's config has the billing route.
		d := en.deps
		d.Router = router(t, billingRoutes())
		en.deps = d
		en.newAPI(d)

		var res admin.ReplayResult
		en.call(http.MethodPost, "/admin/v1/events/"+orig.EventID+"/replay", nil, &res)
		require.Equal(t, orig.EventID, res.ReplayOf)
		require.NotEqual(t, orig.EventID, res.EventID)
		require.Equal(t, inbox.EventRouted, res.Status)
		require.Len(t, res.Records, 1)
		require.False(t, res.Records[0].Merged)
		require.Equal(t, inbox.ThreadKey{Agent: "coder", Resource: "billing", Thread: "acme"}, res.Records[0].Thread)
		require.Equal(t, inbox.ActionDeliver, res.Records[0].Decision.Action)

		replay, err := store.NewExplain(en.st).GetEvent(context.Background(), res.EventID)
		require.NoError(t, err)
		require.Equal(t, orig.EventID, replay.ReplayOf)
		require.Empty(t, replay.DeliveryID, "no provider id: a deliberate replay is never a duplicate")
		require.Equal(t, inbox.EventRouted, replay.Status)

		// Replaying again makes another event; its notification coalesces into the
		// pending record the first replay created.
		var again admin.ReplayResult
		en.call(http.MethodPost, "/admin/v1/events/"+orig.EventID+"/replay", nil, &again)
		require.NotEqual(t, res.EventID, again.EventID)
		require.True(t, again.Records[0].Merged)
		require.Equal(t, res.Records[0].RecordID, again.Records[0].RecordID)

		// Once delivered, a replay makes a new record.
		require.NoError(t, store.NewRecords(en.st).SetRecordStatus(context.Background(), res.Records[0].RecordID, inbox.StatusDelivered, en.clock.Now()))
		en.call(http.MethodPost, "/admin/v1/events/"+orig.EventID+"/replay", nil, &again)
		require.False(t, again.Records[0].Merged)
		require.NotEqual(t, res.Records[0].RecordID, again.Records[0].RecordID)

		code, _ := en.do(http.MethodPost, "/admin/v1/events/nope/replay", opsToken, nil)
		require.Equal(t, http.StatusBadRequest, code)
		code, _ = en.do(http.MethodPost, "/admin/v1/events/01a2030d-9733-7822-bce0-6d25cd55022c/replay", opsToken, nil)
		require.Equal(t, http.StatusNotFound, code)
	})
}

// TestReplayUnparseable: an event its connector no longer parses is replayed as an
// invalid event with the reason, so the attempt is on record.
func TestReplayUnparseable(t *testing.T) {
	en := newEnv(t, envOpts{})
	res, err := en.inbox.Ingest(context.Background(), &inbox.Event{Source: "generic", Connector: "gone", Type: "x", Body: []byte(`{}`)}, nil)
	require.NoError(t, err)
	var out admin.ReplayResult
	en.call(http.MethodPost, "/admin/v1/events/"+res.EventID+"/replay", nil, &out)
	require.Equal(t, inbox.EventInvalid, out.Status)
	require.Equal(t, `no generic connector named "gone"`, out.Error)
	require.Empty(t, out.Records)
	stored, err := store.NewExplain(en.st).GetEvent(context.Background(), out.EventID)
	require.NoError(t, err)
	require.Equal(t, inbox.EventInvalid, stored.Status)
	require.Equal(t, res.EventID, stored.ReplayOf)

	res, err = en.inbox.Ingest(context.Background(), &inbox.Event{Source: "agent-api", Connector: "coder", Type: "notification", Body: []byte(`{}`)}, nil)
	require.NoError(t, err)
	en.call(http.MethodPost, "/admin/v1/events/"+res.EventID+"/replay", nil, &out)
	require.Equal(t, "no connector parses agent-api events", out.Error)
}

type replayList struct {
	Replayed   []admin.ReplayResult `json:"replayed"`
	Skipped    int                  `json:"skipped"`
	NextCursor string               `json:"nextCursor"`
}

func TestBulkReplay(t *testing.T) {
	forBackends(t, envOpts{}, func(t *testing.T, en *env) {
		a := en.deliver("msg_1", map[string]any{"kind": "payout", "summary": "first"})
		b := en.deliver("msg_2", map[string]any{"kind": "payout", "summary": "second"})
		en.deliver("msg_3", invoice("acme", "routed, not selected"))
		c := en.deliver("msg_4", map[string]any{"kind": "payout", "summary": "third"})

		var out replayList
		en.call(http.MethodPost, "/admin/v1/events/replay?status=unrouted&limit=2", nil, &out)
		require.Len(t, out.Replayed, 2)
		require.Equal(t, b.EventID, out.Replayed[0].ReplayOf, "oldest first")
		require.Equal(t, c.EventID, out.Replayed[1].ReplayOf)
		require.NotEmpty(t, out.NextCursor)

		var rest replayList
		en.call(http.MethodPost, "/admin/v1/events/replay?status=unrouted&limit=2&cursor="+out.NextCursor, nil, &rest)
		require.Len(t, rest.Replayed, 1)
		require.Equal(t, a.EventID, rest.Replayed[0].ReplayOf)
		require.Empty(t, rest.NextCursor)

		// The replays are unrouted too; they are not replayed again unless asked.
		var again replayList
		en.call(http.MethodPost, "/admin/v1/events/replay?status=unrouted", nil, &again)
		require.Len(t, again.Replayed, 3)
		require.Equal(t, 3, again.Skipped)
		var all replayList
		en.call(http.MethodPost, "/admin/v1/events/replay?status=unrouted&replays=true&limit=500", nil, &all)
		require.Len(t, all.Replayed, 9)
		require.Equal(t, 0, all.Skipped)

		code, raw := en.do(http.MethodPost, "/admin/v1/events/replay?stauts=unrouted", opsToken, nil)
		require.Equal(t, http.StatusBadRequest, code)
		_, msg := errorOf(t, raw)
		require.Contains(t, msg, `unknown query parameter "stauts"`, "a typo must not replay everything")
	})
}

package admin_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/admin"
	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/connectors/email"
	"github.com/signalgate/signalgate/delivery"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/store"
)

type recordList struct {
	Notifications []inbox.Record `json:"notifications"`
	NextCursor    string         `json:"nextCursor"`
}

func recordIDs(l recordList) []string {
	var out []string
	for _, r := range l.Notifications {
		out = append(out, r.ID)
	}
	return out
}

// seed stores three records: acme (high, pending), globex (high, failed after two
// attempts), and initech (low, delivered), each on its own thread.
func seed(t *testing.T, en *env) (acme, globex, initech string) {
	records := store.NewRecords(en.st)
	t.Helper()
	ctx := context.Background()
	rec := func(out string) string {
		recs, _, err := store.NewAdmin(en.st).ListRecords(ctx, inbox.RecordFilter{EventID: out})
		require.NoError(t, err)
		require.Len(t, recs, 1)
		return recs[0].ID
	}
	acme = rec(en.deliver("msg_1", invoice("acme", "Invoice 1 for ACME failed")).EventID)
	globex = rec(en.deliver("msg_2", invoice("globex", "Invoice 2 for Globex failed")).EventID)
	low := invoice("initech", "Initech paid late")
	low["priority"], low["kind"] = "low", "late-payment"
	initech = rec(en.deliver("msg_3", low).EventID)
	require.NoError(t, records.SetRecordStatus(ctx, initech, inbox.StatusDelivered, en.clock.Now()))

	k := inbox.ThreadKey{Agent: "coder", Resource: "billing", Thread: "globex"}
	sig := "sig-globex"
	_, _, err := store.NewFrames(en.st).AppendFrame(ctx, agent.Frame{Event: agent.EventSignal, ID: sig, Thread: k, Behavior: agent.BehaviorWake,
		Signal:    agent.Signal{ID: sig, Type: agent.TypeNotification, TagName: "notification", Contents: "Invoice 2 for Globex failed"},
		RecordIDs: []string{globex}, CreatedAt: en.clock.Now()})
	require.NoError(t, err)
	require.NoError(t, store.NewQueue(en.st).CompleteThread(ctx, "", delivery.Outcome{Thread: k, Now: en.clock.Now(), Attempts: []delivery.Attempt{
		{Thread: k, Target: "webhook", SignalID: sig, RecordIDs: []string{globex}, Attempt: 1, Outcome: delivery.OutcomeRetry,
			StatusCode: 503, Error: "target answered 503", At: en.clock.Now()},
		{Thread: k, Target: "webhook", SignalID: sig, RecordIDs: []string{globex}, Attempt: 2, Outcome: delivery.OutcomeFailed,
			StatusCode: 410, Error: "target answered 410", At: en.clock.Now().Add(time.Minute)},
	}}))
	require.NoError(t, records.SetRecordStatus(ctx, globex, inbox.StatusFailed, en.clock.Now()))
	return acme, globex, initech
}

func TestListAndGetNotifications(t *testing.T) {
	forBackends(t, envOpts{}, func(t *testing.T, en *env) {
		acme, globex, initech := seed(t, en)
		list := func(q string) []string {
			var l recordList
			en.call(http.MethodGet, "/admin/v1/notifications?"+q, nil, &l)
			return recordIDs(l)
		}
		require.Equal(t, []string{initech, globex, acme}, list(""))
		require.Equal(t, []string{globex}, list("status=failed"))
		require.Equal(t, []string{initech, acme}, list("status=pending,delivered"))
		require.Equal(t, []string{initech}, list("priority=low"))
		require.Equal(t, []string{initech}, list("kind=late-payment"))
		require.Equal(t, []string{acme}, list("agent=coder&resource=billing&thread=acme"))
		require.Equal(t, []string{globex}, list("text=GLOBEX"))
		require.Equal(t, []string{initech, globex, acme}, list("source=generic"))
		require.Empty(t, list("agent=support"))

		var d admin.NotificationDetail
		en.call(http.MethodGet, "/admin/v1/notifications/"+globex, nil, &d)
		require.Equal(t, inbox.StatusFailed, d.Status)
		require.Equal(t, "default: high priority, thread idle → deliver now (wakes)", d.Reason)
		require.NotNil(t, d.Event)
		require.Equal(t, "invoice-failed", d.Event.Type)
		require.Len(t, d.Deliveries, 2)
		require.Equal(t, delivery.OutcomeFailed, d.Deliveries[0].Outcome, "newest first")
		require.Equal(t, 410, d.Deliveries[0].StatusCode)
		require.Equal(t, "target answered 410", d.Deliveries[0].Error)
		require.Len(t, d.Signals, 1)
		require.Equal(t, "sig-globex", d.Signals[0].ID)
		// A signal's behavior is "action" on the wire, as in the agent's stream.
		var wire struct {
			Signals []struct {
				Action agent.Behavior `json:"action"`
			} `json:"signals"`
		}
		en.call(http.MethodGet, "/admin/v1/notifications/"+globex, nil, &wire)
		require.Equal(t, agent.BehaviorWake, wire.Signals[0].Action)

		code, raw := en.do(http.MethodGet, "/admin/v1/notifications/nope", viewerToken, nil)
		require.Equal(t, http.StatusBadRequest, code)
		_, msg := errorOf(t, raw)
		require.Equal(t, `id: "nope" is not a valid id (want a UUID)`, msg)
		code, raw = en.do(http.MethodGet, "/admin/v1/notifications/01a2030d-9733-7822-bce0-6d25cd55022c", viewerToken, nil)
		require.Equal(t, http.StatusNotFound, code)
		_, msg = errorOf(t, raw)
		require.Equal(t, `notification "01a2030d-9733-7822-bce0-6d25cd55022c" not found`, msg)
	})
}

func TestDismissAndRedeliver(t *testing.T) {
	forBackends(t, envOpts{}, func(t *testing.T, en *env) {
		acme, globex, initech := seed(t, en)
		en.clock.Advance(time.Hour)

		var rec inbox.Record
		en.call(http.MethodPost, "/admin/v1/notifications/"+globex+"/redeliver", nil, &rec)
		require.Equal(t, inbox.StatusPending, rec.Status)
		require.Equal(t, en.clock.Now(), *rec.DueAt())
		require.Equal(t, "default: high priority, thread idle → deliver now (wakes)", rec.Reason, "the policy's decision stays")
		require.Equal(t, `redelivered by "ops" at `+en.clock.Now().Format(time.RFC3339)+` → deliver now`, rec.OperatorAction)
		require.Equal(t, inbox.ActionDeliver, rec.Action)
		require.Equal(t, []inbox.ThreadKey{{Agent: "coder", Resource: "billing", Thread: "globex"}}, en.notifiedThreads())

		en.call(http.MethodPost, "/admin/v1/notifications/"+initech+"/redeliver", nil, &rec)
		require.Equal(t, inbox.StatusPending, rec.Status, "a delivered record is queued again too")

		code, raw := en.do(http.MethodPost, "/admin/v1/notifications/"+acme+"/redeliver", opsToken, nil)
		require.Equal(t, http.StatusConflict, code)
		_, msg := errorOf(t, raw)
		require.Equal(t, `notification "`+acme+`" is pending: only failed or delivered notifications are redelivered`, msg)

		en.call(http.MethodPost, "/admin/v1/notifications/"+acme+"/dismiss", nil, &rec)
		require.Equal(t, inbox.StatusDismissed, rec.Status)
		en.call(http.MethodPost, "/admin/v1/notifications/"+acme+"/dismiss", nil, &rec)
		require.Equal(t, inbox.StatusDismissed, rec.Status, "dismissing twice is fine")

		_, _, err := store.NewRecords(en.st).TransitionRecord(context.Background(), rec.Thread, acme, inbox.StatusArchived,
			[]inbox.Status{inbox.StatusDismissed}, en.clock.Now())
		require.NoError(t, err)
		code, raw = en.do(http.MethodPost, "/admin/v1/notifications/"+acme+"/dismiss", opsToken, nil)
		require.Equal(t, http.StatusConflict, code, string(raw))

		for _, path := range []string{"/admin/v1/notifications/nope/dismiss", "/admin/v1/notifications/nope/redeliver"} {
			code, _ = en.do(http.MethodPost, path, opsToken, nil)
			require.Equal(t, http.StatusBadRequest, code, path)
		}
		for _, path := range []string{"/admin/v1/notifications/01a2030d-9733-7822-bce0-6d25cd55022c/dismiss", "/admin/v1/notifications/01a2030d-9733-7822-bce0-6d25cd55022c/redeliver"} {
			code, _ = en.do(http.MethodPost, path, opsToken, nil)
			require.Equal(t, http.StatusNotFound, code, path)
		}
	})
}

func TestBulkRedeliverFailed(t *testing.T) {
	forBackends(t, envOpts{}, func(t *testing.T, en *env) {
		ctx := context.Background()
		var failed []string
		for _, c := range []string{"a", "b", "c"} {
			res := en.deliver("msg_"+c, invoice(c, "Invoice for "+c))
			recs, _, err := store.NewAdmin(en.st).ListRecords(ctx, inbox.RecordFilter{EventID: res.EventID})
			require.NoError(t, err)
			require.NoError(t, store.NewRecords(en.st).SetRecordStatus(ctx, recs[0].ID, inbox.StatusFailed, en.clock.Now()))
			failed = append(failed, recs[0].ID)
		}
		type result struct {
			Redelivered []string `json:"redelivered"`
			More        bool     `json:"more"`
		}
		var out result
		en.call(http.MethodPost, "/admin/v1/notifications/redeliver?thread=b", nil, &out)
		require.Equal(t, result{Redelivered: []string{failed[1]}}, out)
		en.call(http.MethodPost, "/admin/v1/notifications/redeliver?limit=1", nil, &out)
		require.Equal(t, result{Redelivered: []string{failed[2]}, More: true}, out, "newest first")
		en.call(http.MethodPost, "/admin/v1/notifications/redeliver", nil, &out)
		require.Equal(t, result{Redelivered: []string{failed[0]}}, out)
		en.call(http.MethodPost, "/admin/v1/notifications/redeliver", nil, &out)
		require.Equal(t, result{Redelivered: []string{}}, out, "nothing failed is left")
		require.Len(t, en.notifiedThreads(), 3)

		code, _ := en.do(http.MethodPost, "/admin/v1/notifications/redeliver?status=pending", opsToken, nil)
		require.Equal(t, http.StatusBadRequest, code, "bulk redelivery only takes failed records")
	})
}

func TestThreadsAndDeliveries(t *testing.T) {
	forBackends(t, envOpts{}, func(t *testing.T, en *env) {
		_, globex, _ := seed(t, en)
		k := inbox.ThreadKey{Agent: "coder", Resource: "billing", Thread: "acme"}
		_, _, err := store.NewRuns(en.st).OpenRun(context.Background(), agent.Run{ID: "run-1", Thread: k, Status: agent.RunOpen,
			Origin: agent.OriginAgent, OpenedAt: en.clock.Now(), LeaseUntil: en.clock.Now().Add(5 * time.Minute)})
		require.NoError(t, err)

		var threads struct {
			Threads []agent.Thread `json:"threads"`
		}
		en.call(http.MethodGet, "/admin/v1/threads?presence=active", nil, &threads)
		require.Len(t, threads.Threads, 1)
		th := threads.Threads[0]
		require.Equal(t, k, th.ThreadKey)
		require.Equal(t, inbox.PresenceActive, th.Presence)
		require.Equal(t, &agent.ActiveRun{RunID: "run-1", Origin: agent.OriginAgent, Since: en.clock.Now(),
			LeaseUntil: en.clock.Now().Add(5 * time.Minute)}, th.ActiveRun)
		require.Equal(t, agent.PendingCounts{High: 1, Total: 1}, th.Pending)
		en.call(http.MethodGet, "/admin/v1/threads?pending=false&limit=10", nil, &threads)
		require.Len(t, threads.Threads, 3)
		en.call(http.MethodGet, "/admin/v1/threads?thread=globex", nil, &threads)
		require.Equal(t, 1, threads.Threads[0].Failed)

		var deliveries struct {
			Deliveries []delivery.Attempt `json:"deliveries"`
			NextCursor string             `json:"nextCursor"`
		}
		en.call(http.MethodGet, "/admin/v1/deliveries?record="+globex+"&limit=1", nil, &deliveries)
		require.Len(t, deliveries.Deliveries, 1)
		require.Equal(t, 2, deliveries.Deliveries[0].Attempt)
		require.NotEmpty(t, deliveries.NextCursor)
		cursor := deliveries.NextCursor
		deliveries.NextCursor = ""
		en.call(http.MethodGet, "/admin/v1/deliveries?record="+globex+"&cursor="+cursor, nil, &deliveries)
		require.Len(t, deliveries.Deliveries, 1)
		require.Equal(t, 1, deliveries.Deliveries[0].Attempt)
		require.Empty(t, deliveries.NextCursor)
		en.call(http.MethodGet, "/admin/v1/deliveries?agent=coder&resource=billing&thread=globex", nil, &deliveries)
		require.Len(t, deliveries.Deliveries, 2)
		en.call(http.MethodGet, "/admin/v1/deliveries?agent=coder&resource=billing&thread=acme", nil, &deliveries)
		require.Empty(t, deliveries.Deliveries)
		en.call(http.MethodGet, "/admin/v1/deliveries?signal=sig-globex", nil, &deliveries)
		require.Len(t, deliveries.Deliveries, 2)

		code, raw := en.do(http.MethodGet, "/admin/v1/deliveries?agent=coder&thread=x", viewerToken, nil)
		require.Equal(t, http.StatusBadRequest, code)
		_, msg := errorOf(t, raw)
		require.Equal(t, "resource: required: a thread is named by agent, resource and thread together", msg)
		code, _ = en.do(http.MethodGet, "/admin/v1/deliveries?record=nope", viewerToken, nil)
		require.Equal(t, http.StatusNotFound, code)
	})
}

type fakePoller struct{ st email.Status }

func (f fakePoller) Status() email.Status { return f.st }

func TestConnectorHealth(t *testing.T) {
	poller := fakePoller{email.Status{Connector: "support", Addr: "imap.example.com:993", Running: true,
		Mailboxes: []email.MailboxStatus{{Mailbox: "INBOX", State: email.StateIdle, Connected: true, IdleActive: true,
			LastPoll: t0, UIDValidity: 7, LastUID: 42}}}}
	en := newEnv(t, envOpts{pollers: []admin.Poller{poller}})
	ok := en.deliver("msg_1", invoice("acme", "fine"))
	bad := en.deliver("msg_2", map[string]any{"kind": "payout", "summary": "no customer"})
	require.NoError(t, store.NewConnectorState(en.st).SetConnectorState(context.Background(), "email/support", "INBOX", "7:42"))

	var out struct {
		Connectors []admin.ConnectorHealth `json:"connectors"`
	}
	en.call(http.MethodGet, "/admin/v1/connectors", nil, &out)
	require.Len(t, out.Connectors, 2)
	billing, support := out.Connectors[0], out.Connectors[1]
	require.Equal(t, admin.ConnectorRef{Source: "generic", Name: "billing"}, billing.ConnectorRef)
	require.Equal(t, bad.EventID, billing.LastEvent.ID)
	require.Equal(t, bad.EventID, billing.LastError.ID)
	require.Equal(t, `route "billing": thread.thread rendered empty`, billing.LastError.Error)
	require.NotEqual(t, ok.EventID, billing.LastError.ID)
	require.Nil(t, support.LastEvent)
	require.Equal(t, poller.st.Mailboxes, support.Mailboxes)
	require.Equal(t, map[string]string{"INBOX": "7:42"}, support.Cursors)
}

// A connector's last backfill pass (its stored state) is part of its health.
func TestConnectorHealthShowsBackfill(t *testing.T) {
	en := newEnv(t, envOpts{})
	until := t0.Add(time.Minute)
	pass := connectors.BackfillPass{At: t0, LagSeconds: 937.5, Ingested: 40, Duplicate: 1, Requests: 41, Busy: 1, RateLimitedUntil: &until}
	raw, err := json.Marshal(pass)
	require.NoError(t, err)
	require.NoError(t, store.NewConnectorState(en.st).SetConnectorState(context.Background(), "generic/billing", connectors.StateBackfillPass, string(raw)))
	var out struct {
		Connectors []admin.ConnectorHealth `json:"connectors"`
	}
	en.call(http.MethodGet, "/admin/v1/connectors", nil, &out)
	require.NotNil(t, out.Connectors[0].Backfill)
	assert.Equal(t, pass.Ingested, out.Connectors[0].Backfill.Ingested)
	assert.True(t, pass.At.Equal(out.Connectors[0].Backfill.At))
	assert.Equal(t, 937.5, out.Connectors[0].Backfill.LagSeconds)
	assert.True(t, until.Equal(*out.Connectors[0].Backfill.RateLimitedUntil))
}

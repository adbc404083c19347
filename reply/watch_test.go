package reply_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/connectors/github"
	"github.com/signalgate/signalgate/connectors/kindstest"
	"github.com/signalgate/signalgate/connectors/slack"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/reply"
	"github.com/signalgate/signalgate/service"
	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/store/storetest"
	"github.com/signalgate/signalgate/watch"
	"github.com/signalgate/signalgate/watch/watchtest"
)

// replyScope: triage may watch Slack through acme, and GitHub through gh (which receives
// events of acme/api).
var replyScope = watchtest.Scope{Allowed: map[string][]string{"triage/slack": {"acme"}, "triage/github": {"gh"}},
	Admits: map[string]watch.Admit{"github": github.AdmitWatch(nil, kindstest.Seen{"gh": {"acme/api"}})}}

// watches is the watch service over f's store, as the gateway wires it.
func (f fixture) watches() *watch.Service {
	return watch.NewService(store.NewWatches(f.st), watch.Config{}.WithDefaults(), kindstest.Resources(), replyScope, f.inbox, service.Base{Now: f.clk.now})
}

// slackItem is a further Slack message as the connector maps it: its replyTo names its
// channel and thread.
func slackItem(channel, threadTS, skip string, at time.Time) connectors.Item {
	return connectors.Item{Kind: "message", Summary: "and another thing", Skip: skip, OccurredAt: at,
		WatchResources: []string{channel + "/" + threadTS, channel},
		Fields:         connectors.Fields{Source: "slack", Connector: "acme", Channel: channel, ThreadTS: threadTS},
		Metadata:       verified(reply.NewTo("slack", "acme", slack.Place{Team: "T1", Channel: channel, ThreadTS: threadTS}))}
}

// A reply sent with watch: true makes its thread hear further messages of that Slack
// thread although no route matches them; a reply without watch does not; a message of
// another thread, or the agent's own reply coming back, is not heard; and a route that
// feeds the same thread too makes one record, not two.
func TestWatchedReplyHearsTheConversation(t *testing.T) {
	each(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		f := setup(t, b, nil)
		watchesStore := store.NewWatches(f.st)
		svc := reply.New(store.NewReplies(f.st), map[string]reply.Sender{"slack": f.slack}, service.Base{Now: f.clk.now}, reply.WithWatches(f.watches()),
			reply.WithProvenance(trust), reply.WithPlaces(kindstest.Places()))
		place := reply.NewTo("slack", "acme", slack.Place{Team: "T1", Channel: "C1", ThreadTS: "1.000100"})
		quiet := inbox.ThreadKey{Agent: "triage", Resource: "acme", Thread: "quiet"}
		f.notify(t, thread, "d1", place)
		f.notify(t, quiet, "d2", place)
		_, err := svc.Queue(ctx, thread, reply.Request{ID: "w1", Text: "looking", Watch: true})
		require.NoError(t, err)
		_, err = svc.Queue(ctx, quiet, reply.Request{ID: "n1", Text: "noted"})
		require.NoError(t, err)
		n, err := svc.RunOnce(ctx)
		require.NoError(t, err)
		require.Equal(t, 2, n)

		noRoute, err := connectors.NewRouter([]connectors.RouteConfig{{Name: "ci",
			Match:  connectors.RouteMatch{Kind: inbox.StringList{"ci-failure"}},
			Thread: connectors.ThreadConfig{Agent: "triage", Resource: "acme", Thread: "ci"}}}, []string{"triage"},
			connectors.WithWatchResources(kindstest.Resources()))
		require.NoError(t, err)
		p := connectors.NewPipeline(noRoute, f.inbox, nil, connectors.WithWatches(watchesStore), connectors.WithClock(f.clk.now))
		ingest := func(p *connectors.Pipeline, delivery string, it connectors.Item) connectors.Outcome {
			t.Helper()
			out, err := p.Ingest(ctx, &inbox.Event{Source: "slack", Connector: "acme", DeliveryID: delivery, Type: "message", Body: []byte(`{}`)},
				[]connectors.Item{it})
			require.NoError(t, err)
			return out
		}
		records := func(k inbox.ThreadKey) int {
			t.Helper()
			rs, _, err := store.NewAdmin(f.st).ListRecords(ctx, inbox.RecordFilter{Agent: k.Agent, Resource: k.Resource, Thread: k.Thread, Limit: 100})
			require.NoError(t, err)
			return len(rs)
		}
		before, beforeQuiet := records(thread), records(quiet)

		out := ingest(p, "e1", slackItem("C1", "1.000100", "", f.clk.now()))
		require.Equal(t, inbox.EventRouted, out.Status)
		require.Equal(t, 1, out.Records)
		require.Equal(t, before+1, records(thread), "the watching thread heard it")
		require.Equal(t, beforeQuiet, records(quiet), "a reply without watch watches nothing")

		require.Equal(t, inbox.EventUnrouted, ingest(p, "e2", slackItem("C1", "2.000200", "", f.clk.now())).Status, "another Slack thread")
		require.Equal(t, inbox.EventIgnored, ingest(p, "e3", slackItem("C1", "1.000100", reply.OwnReason, f.clk.now())).Status, "the agent's own reply")
		require.Equal(t, before+1, records(thread))

		// A route feeding the same thread: one record for the item.
		same, err := connectors.NewRouter([]connectors.RouteConfig{{Name: "slack",
			Match:  connectors.RouteMatch{Source: inbox.StringList{"slack"}},
			Thread: connectors.ThreadConfig{Agent: thread.Agent, Resource: thread.Resource, Thread: thread.Thread}}}, []string{"triage"},
			connectors.WithWatchResources(kindstest.Resources()))
		require.NoError(t, err)
		out = ingest(connectors.NewPipeline(same, f.inbox, nil, connectors.WithWatches(watchesStore), connectors.WithClock(f.clk.now)), "e4", slackItem("C1", "1.000100", "", f.clk.now()))
		require.Equal(t, 1, out.Records, "one record, not two")
	})
}

// flakyWatches fails to record watches while down.
type flakyWatches struct {
	reply.Watches
	down bool
}

func (w *flakyWatches) WatchConversation(ctx context.Context, k inbox.ThreadKey, source, connector, resource, id string) (watch.Watch, bool, error) {
	if w.down {
		return watch.Watch{}, false, errors.New("database is locked")
	}
	return w.Watches.WatchConversation(ctx, k, source, connector, resource, id)
}

// A watch that could not be recorded keeps the reply queued: its next attempt finds the
// post by its marker (no second post) and records the watch then.
func TestReplyWatchNotRecordedIsRetried(t *testing.T) {
	each(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		f := setup(t, b, nil)
		w := &flakyWatches{Watches: f.watches(), down: true}
		svc := reply.New(store.NewReplies(f.st), map[string]reply.Sender{"slack": f.slack}, service.Base{Now: f.clk.now}, reply.WithProvenance(trust),
			reply.WithWatches(w), reply.WithRandom(func() float64 { return 0 }), reply.WithPlaces(kindstest.Places()))
		f.notify(t, thread, "d1", dm)
		_, err := svc.Queue(ctx, thread, reply.Request{ID: "w1", Text: "looking", Watch: true})
		require.NoError(t, err)
		_, err = svc.RunOnce(ctx)
		require.NoError(t, err)
		got, err := svc.Get(ctx, thread, "w1")
		require.NoError(t, err)
		require.Equal(t, reply.StatusQueued, got.Status)
		require.Contains(t, got.LastError, "record the watch")

		w.down = false
		f.clk.add(time.Minute)
		_, err = svc.RunOnce(ctx)
		require.NoError(t, err)
		got, err = svc.Get(ctx, thread, "w1")
		require.NoError(t, err)
		require.Equal(t, reply.StatusSent, got.Status)
		require.Equal(t, 1, f.slack.count("w1"), "found, not posted again")
		resource, _ := kindstest.Places().WatchResource(dm)
		live, err := store.NewWatches(f.st).LiveWatches(ctx, []string{watch.Key(dm.Source, dm.Connector, resource)})
		require.NoError(t, err)
		require.Len(t, live, 1)
		require.Equal(t, thread, live[0].Thread)
		require.Equal(t, "w1", live[0].ReplyID)
	})
}

// A reply with watch: true is refused as the watch API refuses the same watch, before
// anything is queued: an agent refused a GitHub watch does not get one by answering a
// GitHub place of its thread with watch: true. Without watch the reply goes out.
func TestReplyWatchGoesThroughTheWatchScope(t *testing.T) {
	each(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		f := setup(t, b, nil)
		replies := store.NewReplies(f.st)
		ws := f.watches()
		svc := reply.New(replies, map[string]reply.Sender{"slack": f.slack, "github": f.slack}, service.Base{Now: f.clk.now},
			reply.WithWatches(ws), reply.WithProvenance(trust), reply.WithPlaces(kindstest.Places()))
		support := inbox.ThreadKey{Agent: "support", Resource: "acme", Thread: "t1"} // may watch nothing
		f.notify(t, support, "d1", issue)
		resource, _ := kindstest.Places().WatchResource(issue)
		_, _, api := ws.Create(ctx, support, watch.Request{Source: issue.Source, Connector: issue.Connector, Resource: resource})
		require.ErrorIs(t, api, watch.ErrForbidden, "the watch API refuses it")

		_, err := svc.Queue(ctx, support, reply.Request{ID: "w1", Text: "looking", Watch: true})
		require.ErrorIs(t, err, watch.ErrForbidden)
		require.Contains(t, err.Error(), api.Error(), "the watch API's refusal")
		code, ok := reply.Code(err)
		require.True(t, ok)
		require.Equal(t, "forbidden", code)
		_, err = replies.GetReply(ctx, "w1")
		require.ErrorIs(t, err, inbox.ErrNotFound, "nothing queued")

		_, err = svc.Queue(ctx, support, reply.Request{ID: "n1", Text: "looking"})
		require.NoError(t, err)
		_, err = svc.RunOnce(ctx)
		require.NoError(t, err)
		require.Equal(t, 1, f.slack.count("n1"))
		page, err := ws.List(ctx, watch.Filter{Agent: support.Agent, Limit: 10})
		require.NoError(t, err)
		require.Empty(t, page.Watches, "no watch was made")
	})
}

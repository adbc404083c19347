package slack

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/connectors/slack/webapitest"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/reply"
	"github.com/signalgate/signalgate/server"
	"github.com/signalgate/signalgate/service"
	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/store/storetest"
)

// Agent alpha's reply quotes agent beta's marker in its text, and another app in the
// channel posts beta's marker as message metadata; beta's first post meets a transient
// Slack error, so its next attempt looks for an earlier post first. Neither counts:
// only metadata on a message of the gateway's own bot does. Beta's reply is posted and
// recorded under its own message, and alpha's text carries no marker text as posted.
func TestReplyQuotingAnotherRepliesMarkerDoesNotSuppressIt(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			api := webapitest.New(t)
			api.TimestampsFromClock() // Find asks for messages since the reply was created
			st := storetest.Open(t, b)
			cfg := replyConfig(api)
			pol, err := inbox.NewPolicy(inbox.PolicyConfig{})
			require.NoError(t, err)
			clk := newClock()
			in := inbox.NewService(store.NewInbox(st), pol, inbox.WithClock(clk.Now))
			var routes []connectors.RouteConfig
			for _, agent := range []string{"alpha", "beta"} {
				routes = append(routes, connectors.RouteConfig{Name: agent,
					Match:  connectors.RouteMatch{Source: inbox.StringList{"slack"}},
					Thread: connectors.ThreadConfig{Agent: agent, Resource: "slack:{{.Team}}", Thread: "{{.Channel}}"}})
			}
			log := slog.New(slog.DiscardHandler)
			srv := server.New(server.Config{}, log)
			router, err := connectors.NewRouter(routes, []string{"alpha", "beta"})
			require.NoError(t, err)
			handler, err := NewHandler([]Config{cfg}, connectors.NewPipeline(router, in, log), log, clk.Now)
			require.NoError(t, err)
			handler.Mount(srv.Echo())
			h := &harness{t: t, e: srv.Echo(), clock: clk, handler: handler, cfg: cfg}
			rec := h.post(callback(t, "EvQ", messageEvent("C0001", "channel", "1700000000.000100", "who knows?")))
			require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
			require.Equal(t, 2, decodeOutcome(t, rec).Records, "both agents hear it")
			alpha := inbox.ThreadKey{Agent: "alpha", Resource: "slack:" + testTeam, Thread: "C0001"}
			beta := inbox.ThreadKey{Agent: "beta", Resource: "slack:" + testTeam, Thread: "C0001"}

			out := reply.New(store.NewReplies(st), map[string]reply.Sender{"slack": newTestReplier(t, cfg)},
				service.Base{Now: clk.Now}, reply.WithRandom(func() float64 { return 0 }), reply.WithPlaces(reply.Places{{Source: Source, Codec: PlaceCodec}}),
				reply.WithProvenance(agent.ReplyProvenance{Source: {VerifiedBySignature}}))
			run := func() {
				_, err := out.RunOnce(ctx)
				require.NoError(t, err)
			}
			quoted := "Ignore beta. <!-- signalgate:reply:b-1 --> signalgate:reply:b-1"
			_, err = out.Queue(ctx, alpha, reply.Request{ID: "a-1", Text: quoted})
			require.NoError(t, err)
			run()
			// The other app posted within Find's window (the fake's clock ts are later).
			at := time.Now().Add(-time.Minute)
			api.Seed("C0001", webapitest.Message{TS: fmt.Sprintf("%d.%06d", at.Unix(), at.Nanosecond()/1000), ThreadTS: "1700000000.000100", Text: "gotcha",
				BotID: "B0OTHERAPP", Metadata: json.RawMessage(`{"event_type":"` + ReplyEventType + `","event_payload":{"` + ReplyIDKey + `":"b-1"}}`)})
			posted := api.Posted("C0001")
			require.Len(t, posted, 2)
			alphaTS := posted[0].TS
			assert.NotContains(t, strings.ToLower(posted[0].Text), reply.MarkerToken, "marker text neutralised")
			assert.Equal(t, "Ignore beta. &lt;!-- signalgate:reply:b-1 --&gt; signalgate:reply:b-1",
				strings.ReplaceAll(posted[0].Text, "\u2060", ""), "reads as written")

			_, err = out.Queue(ctx, beta, reply.Request{ID: "b-1", Text: "The real answer."})
			require.NoError(t, err)
			api.Fail("chat.postMessage", "internal_error")
			run()
			r, err := out.Get(ctx, beta, "b-1")
			require.NoError(t, err)
			require.Equal(t, reply.StatusQueued, r.Status, "internal_error is retried")
			api.Fail("chat.postMessage", "")

			clk.Add(time.Minute)
			run()
			r, err = out.Get(ctx, beta, "b-1")
			require.NoError(t, err)
			require.Equal(t, reply.StatusSent, r.Status, r.LastError)
			posted = api.Posted("C0001")
			require.Len(t, posted, 3, "beta's reply is posted")
			assert.Equal(t, "The real answer.", posted[2].Text)
			assert.Equal(t, "C0001/"+posted[2].TS, r.PlatformID)
			assert.NotEqual(t, "C0001/"+alphaTS, r.PlatformID)
		})
	}
}

// A reply's text is neutralised after its conversion to mrkdwn, which could otherwise
// join a marker from pieces (an escaped colon), and Check counts the text as posted.
func TestReplierNeutralizesMarkersInText(t *testing.T) {
	api := webapitest.New(t)
	r := newTestReplier(t, replyConfig(api))
	_, _, err := r.Send(context.Background(), threadReply("a-1", `SignalGate:Reply:b-1 and signalgate\:reply:b-2`))
	require.NoError(t, err)
	text := nextCall(t, api).Form.Get("text")
	assert.NotContains(t, strings.ToLower(text), reply.MarkerToken)
	assert.Equal(t, "SignalGate:Reply:b-1 and signalgate:reply:b-2", strings.ReplaceAll(text, "\u2060", ""))

	at := strings.Repeat("x", MaxReplyChars-len(reply.MarkerToken)) + reply.MarkerToken
	require.ErrorIs(t, r.Check(threadReply("a", "").To, at), reply.ErrTooLong)
}

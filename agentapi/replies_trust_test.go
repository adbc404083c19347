package agentapi_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/agentapi"
	"github.com/signalgate/signalgate/connectors/github"
	"github.com/signalgate/signalgate/connectors/kindstest"
	"github.com/signalgate/signalgate/connectors/slack"
	"github.com/signalgate/signalgate/deliverytest"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/reply"
	"github.com/signalgate/signalgate/service"
	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/store/storetest"
	"github.com/signalgate/signalgate/watch"
)

// trustedEnv is an agent API with the outbox (Slack and GitHub places, provenance as
// the kinds table says) and the watch service (watchScope).
func trustedEnv(t *testing.T, b *storetest.Backend, opts ...reply.Option) *deliverytest.Env {
	t.Helper()
	lazy, watches := &lazyReplies{}, &lazyWatches{}
	e := deliverytest.New(t, deliverytest.Config{Backend: b, API: []agentapi.Option{agentapi.WithReplies(lazy), agentapi.WithWatches(watches)}})
	watches.Service = watch.NewService(watchStoreOf(e), watch.Config{}, kindstest.Resources(), watchScope, e.Inbox, service.Base{Now: e.Now})
	vouches := agent.ReplyProvenance{"slack": {"slack-v0", "slack-socket-mode"}, "github": {"hmac-github"}}
	lazy.svc = reply.New(store.NewReplies(e.Store), map[string]reply.Sender{"slack": limited{}, "github": limited{}},
		service.Base{Now: e.Now}, append([]reply.Option{reply.WithProvenance(vouches), reply.WithWatches(watches.Service), reply.WithPlaces(kindstest.Places())}, opts...)...)
	return e
}

// heard stores a notification of thread k from to with provenance by, as a connector
// (or, for a planted one, the store of a gateway that did not check) keeps it.
func heard(e *deliverytest.Env, k inbox.ThreadKey, to reply.To, by string) {
	e.Ingest(inbox.Notification{Thread: k, Source: to.Source, Kind: "message", Summary: "hi",
		Metadata: map[string]any{reply.MetadataKey: to, agent.MetaVerifiedBy: by}})
	e.Clock.Advance(1e9)
}

// An agent's token cannot say where answers go: a notification whose metadata carries
// replyTo is refused naming the field (alone or in a batch), and a replyTo a record of
// the thread carries counts only when the connector kind of the place verified that
// record; the agent's replies go to the thread's own Slack DM, never to the planted
// channel.
func TestAgentCannotPlantWhereAnswersGo(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			e := trustedEnv(t, &b)
			k := coderThread
			dm := reply.NewTo("slack", "acme", slack.Place{Team: "T1", Channel: "D1"})
			exec := map[string]any{"source": "slack", "connector": "acme", "channel": "C0EXECPRIV"}
			heard(e, k, dm, "slack-v0")

			var refusal replyAnswer
			code := e.Do(http.MethodPost, e.ThreadURL(k, "/notifications"), e.Token(k),
				map[string]any{"kind": "note", "summary": "hi", "metadata": map[string]any{"replyTo": exec}}, &refusal)
			require.Equal(t, http.StatusBadRequest, code)
			require.Contains(t, refusal.Error.Message, "metadata.replyTo")
			code = e.Do(http.MethodPost, e.ThreadURL(k, "/notifications"), e.Token(k),
				[]any{map[string]any{"kind": "note", "summary": "fine"}, map[string]any{"kind": "note", "summary": "hi",
					"metadata": map[string]any{"replyTo": map[string]any{"source": "github", "connector": "gh", "repo": "acme/secret", "number": 1}}}}, &refusal)
			require.Equal(t, http.StatusBadRequest, code)
			require.Contains(t, refusal.Error.Message, "[1]: metadata.replyTo")
			var page struct {
				Notifications []inbox.Record `json:"notifications"`
			}
			require.Equal(t, http.StatusOK, e.Do(http.MethodGet, e.ThreadURL(k, "/notifications?status=all"), e.Token(k), nil, &page))
			require.Len(t, page.Notifications, 1, "nothing was stored")

			// Records that name the channel without the Slack connector's word for it.
			channel := reply.NewTo("slack", "acme", slack.Place{Channel: "C0EXECPRIV"})
			for _, by := range []string{agent.VerifiedByAgentToken, "standard-webhooks", "hmac-github", "imap-login", "signalgate", ""} {
				heard(e, k, channel, by)
			}
			code = e.Do(http.MethodPost, e.ThreadURL(k, "/replies"), e.Token(k), map[string]any{"id": "r1", "text": "hi", "replyTo": channel}, &refusal)
			require.Equal(t, http.StatusBadRequest, code)
			require.Equal(t, "unknown_reply_to", refusal.Error.Code)
			var out replyAnswer
			require.Equal(t, http.StatusAccepted, e.Do(http.MethodPost, e.ThreadURL(k, "/replies"), e.Token(k),
				map[string]any{"id": "r2", "text": "hi"}, &out))
			require.Equal(t, dm, out.To, "the newest place the thread's own connector vouched for")
		})
	}
}

// A reply with watch: true is refused exactly as the watch API refuses the same watch:
// support may watch nothing, so answering its GitHub issue with watch: true is 403 and
// queues nothing; without watch the answer is accepted.
func TestReplyWatchIsRefusedAsTheWatchAPIRefusesIt(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			e := trustedEnv(t, &b)
			k := inbox.ThreadKey{Agent: "support", Resource: "acme/api", Thread: "acme/api#7"}
			issue := reply.NewTo("github", "gh", github.Place{Repo: "acme/api", Number: 7})
			heard(e, k, issue, "hmac-github")

			var api, out replyAnswer
			require.Equal(t, http.StatusForbidden, e.Do(http.MethodPost, e.ThreadURL(k, "/watches"), e.Token(k),
				map[string]any{"source": "github", "connector": "gh", "resource": "acme/api#7"}, &api))
			require.Equal(t, http.StatusForbidden, e.Do(http.MethodPost, e.ThreadURL(k, "/replies"), e.Token(k),
				map[string]any{"id": "w1", "text": "looking", "watch": true}, &out))
			require.Equal(t, api.Error.Code, out.Error.Code)
			require.Contains(t, out.Error.Message, api.Error.Message)
			require.Equal(t, http.StatusNotFound, e.Do(http.MethodGet, e.ThreadURL(k, "/replies/w1"), e.Token(k), nil, &out), "nothing queued")
			require.Equal(t, http.StatusAccepted, e.Do(http.MethodPost, e.ThreadURL(k, "/replies"), e.Token(k),
				map[string]any{"id": "r1", "text": "looking"}, &out))
			var ws watch.Page
			require.Equal(t, http.StatusOK, e.Do(http.MethodGet, e.ThreadURL(k, "/watches"), e.Token(k), nil, &ws))
			require.Empty(t, ws.Watches)
		})
	}
}

// approval: true where nobody can approve is refused (409 naming
// approvals.slack_connector), not sent unreviewed.
func TestReplyApprovalWithoutApproversIsRefused(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			e := trustedEnv(t, &b)
			k := coderThread
			heard(e, k, reply.NewTo("slack", "acme", slack.Place{Channel: "D1"}), "slack-v0")
			var out replyAnswer
			require.Equal(t, http.StatusConflict, e.Do(http.MethodPost, e.ThreadURL(k, "/replies"), e.Token(k),
				map[string]any{"id": "a1", "text": "ship it?", "approval": true}, &out))
			require.Equal(t, "no_approvers", out.Error.Code)
			require.Contains(t, out.Error.Message, "approvals.slack_connector")
			require.Equal(t, http.StatusNotFound, e.Do(http.MethodGet, e.ThreadURL(k, "/replies/a1"), e.Token(k), nil, &out), "nothing queued")
		})
	}
}

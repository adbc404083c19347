package agentapi_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/agentapi"
	"github.com/signalgate/signalgate/connectors/kindstest"
	"github.com/signalgate/signalgate/connectors/slack"
	"github.com/signalgate/signalgate/deliverytest"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/reply"
	"github.com/signalgate/signalgate/service"
	"github.com/signalgate/signalgate/store"
)

// lazyReplies is the outbox built once the Env's store exists.
type lazyReplies struct{ svc *reply.Service }

func (l *lazyReplies) Queue(ctx context.Context, k inbox.ThreadKey, req reply.Request) (reply.Reply, error) {
	return l.svc.Queue(ctx, k, req)
}

func (l *lazyReplies) Get(ctx context.Context, k inbox.ThreadKey, id string) (reply.Reply, error) {
	return l.svc.Get(ctx, k, id)
}

// limited is a Sender that only checks: 10 characters at most, and no credentials for
// connector "bare".
type limited struct{}

func (limited) Check(to reply.To, text string) error {
	if to.Connector == "bare" {
		return fmt.Errorf("connectors.slack[bare] has no bot_token: %w", reply.ErrNoCredentials)
	}
	if len(text) > 10 {
		return fmt.Errorf("%d characters, at most 10: %w", len(text), reply.ErrTooLong)
	}
	return nil
}
func (limited) Find(context.Context, reply.Reply) (reply.Sent, bool, error) {
	return reply.Sent{}, false, nil
}
func (limited) Send(context.Context, reply.Reply) (reply.Sent, bool, error) {
	return reply.Sent{}, false, nil
}

// slackVouches: a Slack request signature vouches for a Slack place, as the kinds table says.
var slackVouches = agent.ReplyProvenance{"slack": {"slack-v0"}}

type replyAnswer struct {
	ID     string   `json:"id"`
	Status string   `json:"status"`
	To     reply.To `json:"replyTo"`
	Error  struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func TestReplyAPI(t *testing.T) {
	lazy := &lazyReplies{}
	e := deliverytest.New(t, deliverytest.Config{API: []agentapi.Option{agentapi.WithReplies(lazy)}})
	lazy.svc = reply.New(store.NewReplies(e.Store), map[string]reply.Sender{"slack": limited{}}, service.Base{Now: e.Now},
		reply.WithProvenance(slackVouches), reply.WithPlaces(kindstest.Places()))
	k := coderThread
	dm := reply.NewTo("slack", "acme", slack.Place{Channel: "D1"})
	bare := reply.NewTo("slack", "bare", slack.Place{Channel: "D2"})
	for i, to := range []reply.To{bare, dm} {
		_, err := e.Inbox.Ingest(context.Background(), &inbox.Event{Source: "slack", Connector: to.Connector,
			DeliveryID: fmt.Sprint("d", i), Type: "message", Body: []byte(`{}`)}, []inbox.Notification{{Thread: k,
			Source: "slack", Kind: "message", Summary: "hi", Metadata: map[string]any{reply.MetadataKey: to, agent.MetaVerifiedBy: "slack-v0"}}})
		require.NoError(t, err)
	}
	post := func(body map[string]any) (int, replyAnswer) {
		var out replyAnswer
		code := e.Do(http.MethodPost, e.ThreadURL(k, "/replies"), e.Token(k), body, &out)
		return code, out
	}

	code, out := post(map[string]any{"id": "r1", "text": "on it"})
	require.Equal(t, http.StatusAccepted, code)
	require.Equal(t, "r1", out.ID)
	require.Equal(t, "queued", out.Status)
	require.Equal(t, dm, out.To, "the thread's most recent origin")
	code, out = post(map[string]any{"id": "r1", "text": "on it"})
	require.Equal(t, http.StatusAccepted, code, "the same id again answers the same")
	require.Equal(t, "queued", out.Status)
	code, out = post(map[string]any{"id": "r1", "text": "changed"})
	require.Equal(t, http.StatusConflict, code)
	require.Equal(t, "conflict", out.Error.Code)

	code, out = post(map[string]any{"id": "r2", "text": "hi", "replyTo": map[string]any{"source": "slack", "connector": "acme", "channel": "C-OTHER"}})
	require.Equal(t, http.StatusBadRequest, code, "a place no notification of the thread came from")
	require.Equal(t, "unknown_reply_to", out.Error.Code)
	code, out = post(map[string]any{"id": "r3", "text": "hi", "replyTo": map[string]any{"source": "github", "connector": "acme", "repo": "a/b", "number": 1}})
	require.Equal(t, http.StatusBadRequest, code)
	code, out = post(map[string]any{"id": "x-->", "text": "hi"})
	require.Equal(t, http.StatusBadRequest, code)
	require.Equal(t, "invalid_request", out.Error.Code)
	code, out = post(map[string]any{"id": "r4", "text": strings.Repeat("x", 11)})
	require.Equal(t, http.StatusRequestEntityTooLarge, code)
	require.Equal(t, "too_long", out.Error.Code)
	code, out = post(map[string]any{"id": "r5", "text": "hi", "replyTo": bare})
	require.Equal(t, http.StatusConflict, code)
	require.Equal(t, "no_credentials", out.Error.Code)
	require.Contains(t, out.Error.Message, "bot_token")
	code, out = post(map[string]any{"id": "r6", "text": "hi", "sneaky": true})
	require.Equal(t, http.StatusBadRequest, code, "unknown fields are refused")

	var got replyAnswer
	require.Equal(t, http.StatusOK, e.Do(http.MethodGet, e.ThreadURL(k, "/replies/r1"), e.Token(k), nil, &got))
	require.Equal(t, "queued", got.Status)
	other := inbox.ThreadKey{Agent: k.Agent, Resource: k.Resource, Thread: "other"}
	require.Equal(t, http.StatusNotFound, e.Do(http.MethodGet, e.ThreadURL(other, "/replies/r1"), e.Token(other), nil, &got),
		"another thread's reply is not found")
	require.Equal(t, http.StatusForbidden, e.Do(http.MethodGet, e.ThreadURL(k, "/replies/r1"), deliverytest.SupportToken, nil, &got))
}

func TestReplyAPIOffWithoutSenders(t *testing.T) {
	e := deliverytest.New(t, deliverytest.Config{})
	var out replyAnswer
	require.Equal(t, http.StatusNotFound, e.Do(http.MethodPost, e.ThreadURL(coderThread, "/replies"), e.Token(coderThread),
		map[string]any{"id": "r1", "text": "hi"}, &out))
	require.Equal(t, "replies_disabled", out.Error.Code)
}

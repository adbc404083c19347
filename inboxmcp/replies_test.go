package inboxmcp_test

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/agentapi"
	"github.com/signalgate/signalgate/connectors/kindstest"
	"github.com/signalgate/signalgate/connectors/slack"
	"github.com/signalgate/signalgate/deliverytest"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/inboxmcp"
	"github.com/signalgate/signalgate/reply"
	"github.com/signalgate/signalgate/service"
	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/store/storetest"
)

// checking is a Sender that only checks: 10 characters at most, and no credentials for
// connector "bare".
type checking struct{}

func (checking) Check(to reply.To, text string) error {
	if to.Connector == "bare" {
		return fmt.Errorf("connectors.slack[bare] has no bot_token: %w", reply.ErrNoCredentials)
	}
	if len(text) > 10 {
		return fmt.Errorf("%d characters, at most 10: %w", len(text), reply.ErrTooLong)
	}
	return nil
}
func (checking) Find(context.Context, reply.Reply) (reply.Sent, bool, error) {
	return reply.Sent{}, false, nil
}
func (checking) Send(context.Context, reply.Reply) (reply.Sent, bool, error) {
	return reply.Sent{}, false, nil
}

// replyEnv is the env with the outbox behind both the MCP tools and the agent API.
func replyEnv(t *testing.T, b *storetest.Backend) *env {
	t.Helper()
	lazy := &lazyReplies{}
	e := newEnvWith(t, deliverytest.Config{Backend: b, API: []agentapi.Option{agentapi.WithReplies(lazy)}},
		func(d *deliverytest.Env) inboxmcp.Option {
			lazy.svc = reply.New(store.NewReplies(d.Store), map[string]reply.Sender{"slack": checking{}}, service.Base{Now: d.Now},
				reply.WithProvenance(slackVouches), reply.WithPlaces(kindstest.Places()))
			return inboxmcp.WithReplies(lazy.svc)
		})
	return e
}

type lazyReplies struct{ svc *reply.Service }

func (l *lazyReplies) Queue(ctx context.Context, k inbox.ThreadKey, req reply.Request) (reply.Reply, error) {
	return l.svc.Queue(ctx, k, req)
}

func (l *lazyReplies) Get(ctx context.Context, k inbox.ThreadKey, id string) (reply.Reply, error) {
	return l.svc.Get(ctx, k, id)
}

var (
	dmTo   = reply.NewTo("slack", "acme", slack.Place{Team: "T1", Channel: "D1"})
	bareTo = reply.NewTo("slack", "bare", slack.Place{Channel: "D2"})
)

// slackVouches: a Slack request signature vouches for a Slack place, as the kinds table says.
var slackVouches = agent.ReplyProvenance{"slack": {"slack-v0"}}

// slackNote ingests a Slack notification answering to to, as the Slack connector
// stores it.
func slackNote(e *env, k inbox.ThreadKey, summary string, to reply.To) string {
	id := e.Ingest(inbox.Notification{Thread: k, Source: "slack", Kind: "message", Priority: inbox.PriorityLow, Summary: summary,
		Metadata: map[string]any{reply.MetadataKey: to, agent.MetaVerifiedBy: "slack-v0"}})
	e.Clock.Advance(1e9)
	return id
}

// TestReplyTool: the tool queues replies with the agent API's semantics and answers its
// refusals with the API's codes and messages.
func TestReplyTool(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			e := replyEnv(t, &b)
			replies := store.NewReplies(e.Store)
			cs := session(t, e, deliverytest.CoderToken)
			k := coderThread
			slackNote(e, k, "from a bare connector", bareTo)
			slackNote(e, k, "Jane: can you look?", dmTo)

			var r reply.Reply
			call(t, cs, "reply", args(k, map[string]any{"id": "r1", "text": "on it"}), &r)
			require.Equal(t, "r1", r.ID)
			require.Equal(t, reply.StatusQueued, r.Status)
			require.Equal(t, dmTo, r.To, "the thread's most recent origin")
			stored, err := replies.GetReply(t.Context(), "r1")
			require.NoError(t, err, "on disk when the tool answers")
			require.Equal(t, k, stored.Thread)

			var again reply.Reply
			call(t, cs, "reply", args(k, map[string]any{"id": "r1", "text": "on it"}), &again)
			require.Equal(t, r.ID, again.ID, "the same id and text again is the same reply")
			require.Equal(t, r.CreatedAt, again.CreatedAt)

			var status reply.Reply
			call(t, cs, "reply_status", args(k, map[string]any{"id": "r1"}), &status)
			require.Equal(t, reply.StatusQueued, status.Status)
			require.Equal(t, dmTo, status.To)

			// Every refusal reads as the agent API's answer: code, then message.
			foreign := reply.NewTo("slack", "acme", slack.Place{Channel: "C-ELSEWHERE"})
			for name, tc := range map[string]struct {
				tool   string
				in     map[string]any
				status int
			}{
				"conflict":         {"reply", map[string]any{"id": "r1", "text": "other"}, http.StatusConflict},
				"unknown replyTo":  {"reply", map[string]any{"id": "r2", "text": "x", "replyTo": foreign}, http.StatusBadRequest},
				"too long":         {"reply", map[string]any{"id": "r3", "text": "far too long"}, http.StatusRequestEntityTooLarge},
				"no credentials":   {"reply", map[string]any{"id": "r4", "text": "x", "replyTo": bareTo}, http.StatusConflict},
				"no such reply":    {"reply_status", map[string]any{"id": "nope"}, http.StatusNotFound},
				"id of the syntax": {"reply", map[string]any{"id": "a b", "text": "x"}, http.StatusBadRequest},
			} {
				msg := toolError(t, cs, tc.tool, args(k, tc.in))
				if name == "id of the syntax" {
					require.Contains(t, msg, "validating", "the schema refuses it first")
					continue
				}
				var api replyAnswer
				path := "/replies"
				method := http.MethodPost
				body := any(tc.in)
				if tc.tool == "reply_status" {
					method, path, body = http.MethodGet, "/replies/"+tc.in["id"].(string), nil
				}
				require.Equal(t, tc.status, e.Do(method, e.ThreadURL(k, path), e.Token(k), body, &api), name)
				require.Equal(t, api.Error.Code+": "+api.Error.Message, msg, name)
			}
			require.Contains(t, toolError(t, cs, "reply", args(k, map[string]any{"id": "r5", "text": "x", "replyTo": bareTo})),
				"no_credentials: connectors.slack[bare] has no bot_token")

			// Another thread of the same agent does not see r1; another agent is refused.
			other := inbox.ThreadKey{Agent: k.Agent, Resource: k.Resource, Thread: "elsewhere"}
			require.Equal(t, "not_found: no such reply in this thread", toolError(t, cs, "reply_status", args(other, map[string]any{"id": "r1"})))
			require.Equal(t, `unknown_reply_to: unknown reply destination: no replyTo given and no notification of this thread says where to answer`,
				toolError(t, cs, "reply", args(other, map[string]any{"id": "r6", "text": "x"})))
			msg := toolError(t, cs, "reply", args(k, map[string]any{"id": "r7", "text": "x", "agentId": "support"}))
			require.Equal(t, `forbidden: the token of agent "coder" cannot access agent "support"'s threads`, msg)
			_, err = replies.GetReply(t.Context(), "r7")
			require.ErrorIs(t, err, inbox.ErrNotFound, "a refused call queues nothing")
		})
	}
}

type replyAnswer struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// TestInboxToolsShowReplyTo: every way the agent looks at its inbox shows where an answer
// goes: inbox_list and notification-inbox list carry replyTo (they drop metadata
// otherwise), inbox_read the whole metadata.
func TestInboxToolsShowReplyTo(t *testing.T) {
	e := replyEnv(t, nil)
	cs := session(t, e, deliverytest.CoderToken)
	k := coderThread
	id := slackNote(e, k, "Jane: can you look?", dmTo)
	plain := lowNote(e, k, "CI failed", "")

	var p struct {
		Notifications []struct {
			ID      string    `json:"id"`
			ReplyTo *reply.To `json:"replyTo"`
		} `json:"notifications"`
	}
	call(t, cs, "inbox_list", args(k, nil), &p)
	require.Len(t, p.Notifications, 2)
	require.Equal(t, plain, p.Notifications[0].ID)
	require.Nil(t, p.Notifications[0].ReplyTo, "a notification with nowhere to answer has no replyTo")
	require.Equal(t, id, p.Notifications[1].ID)
	require.Equal(t, &dmTo, p.Notifications[1].ReplyTo)

	p.Notifications = nil
	call(t, cs, "notification-inbox", args(k, map[string]any{"action": "search", "query": "jane"}), &p)
	require.Len(t, p.Notifications, 1)
	require.Equal(t, &dmTo, p.Notifications[0].ReplyTo)

	var read struct {
		Notifications []struct {
			Metadata struct {
				ReplyTo reply.To `json:"replyTo"`
			} `json:"metadata"`
		} `json:"notifications"`
	}
	call(t, cs, "inbox_read", args(k, map[string]any{"ids": []string{id}}), &read)
	require.Len(t, read.Notifications, 1)
	require.Equal(t, dmTo, read.Notifications[0].Metadata.ReplyTo)

	// The agent API's listing passes the metadata through as stored.
	var api struct {
		Notifications []struct {
			ID       string `json:"id"`
			Metadata struct {
				ReplyTo *reply.To `json:"replyTo"`
			} `json:"metadata"`
		} `json:"notifications"`
	}
	require.Equal(t, http.StatusOK, e.Do(http.MethodGet, e.ThreadURL(k, "/notifications?status=all"), e.Token(k), nil, &api))
	require.Len(t, api.Notifications, 2)
	require.Equal(t, id, api.Notifications[1].ID)
	require.Equal(t, &dmTo, api.Notifications[1].Metadata.ReplyTo)
}

// TestReplyToolsListed: with the outbox the reply tools are listed (thread-scoped like
// every tool); without it they are not offered.
func TestReplyToolsListed(t *testing.T) {
	e := replyEnv(t, nil)
	res, err := session(t, e, deliverytest.CoderToken).ListTools(t.Context(), nil)
	require.NoError(t, err)
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		if strings.HasPrefix(tool.Name, "reply") {
			require.Equal(t, tool.Name == "reply_status", tool.Annotations.ReadOnlyHint, tool.Name)
		}
	}
	sort.Strings(names)
	want := append([]string{"reply", "reply_status"}, inboxmcp.ToolNames...)
	sort.Strings(want)
	require.Equal(t, want, names)
}

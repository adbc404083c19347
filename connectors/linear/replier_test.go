package linear

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/reply"
)

func newReplier(t *testing.T, api *standIn, mod func(*Config)) *Replier {
	t.Helper()
	cfg := Config{Name: "acme", WebhookSecret: testSecret, AccessToken: "lin_oauth_token_0123456789", APIURL: api.srv.URL}
	if mod != nil {
		mod(&cfg)
	}
	r, err := NewReplier([]Config{cfg}, func() time.Time { return testNow })
	require.NoError(t, err)
	return r
}

func answer(id, text string, p Place) reply.Reply {
	return reply.Reply{ID: id, Text: text, To: reply.NewTo(Source, "acme", p), CreatedAt: testNow}
}

var (
	sessionPlace = Place{Issue: "ENG-123", IssueID: "2174add1-f7c8-44e3-bbf3-2d60b5ea8bc9", AgentSessionID: "b2f1e7a4-4c39-4a8e-9d57-1e6f0a2c3d48"}
	threadPlace  = Place{Issue: "ENG-123", IssueID: "2174add1-f7c8-44e3-bbf3-2d60b5ea8bc9", ParentCommentID: "c0a3b1d2-5e6f-4a7b-8c9d-0e1f2a3b4c5d"}
)

// TestCommentReplyInThread: an answer to a comment is a comment on the issue whose
// parent is the thread's first comment, created under the answer's derived id, with the
// connector's OAuth token.
func TestCommentReplyInThread(t *testing.T) {
	api := newStandIn(t)
	r := newReplier(t, api, nil)
	sent, retry, err := r.Send(t.Context(), answer("r-1", "Found it: the EU tax lookup times out.", threadPlace))
	require.NoError(t, err)
	assert.False(t, retry)
	id := answerID("acme", "r-1")
	assert.Equal(t, id, sent.PlatformID)
	in := api.comments[id]
	require.NotNil(t, in)
	assert.Equal(t, "c0a3b1d2-5e6f-4a7b-8c9d-0e1f2a3b4c5d", in["parentId"])
	assert.Equal(t, "2174add1-f7c8-44e3-bbf3-2d60b5ea8bc9", in["issueId"])
	assert.Equal(t, "Found it: the EU tax lookup times out.", in["body"])
	assert.Equal(t, "Bearer lin_oauth_token_0123456789", api.calls[0].Auth)

	key := newReplier(t, newStandIn(t), func(c *Config) { c.AccessToken, c.APIKey = "", "lin_api_0123456789" })
	_, _, err = key.Send(t.Context(), answer("r-2", "x", threadPlace))
	require.NoError(t, err)
	assert.Equal(t, "lin_api_0123456789", key.conns["acme"].auth, "an API key is sent bare, as Linear takes it")
}

// TestAgentActivityReply: an answer on an agent session is an agent activity: a
// response by default, or the type the agent asked for; an action names its action and
// takes the text as its parameter.
func TestAgentActivityReply(t *testing.T) {
	api := newStandIn(t)
	r := newReplier(t, api, nil)
	_, _, err := r.Send(t.Context(), answer("r-1", "The fix is up for review.", sessionPlace))
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"type": "response", "body": "The fix is up for review."}, api.activities[answerID("acme", "r-1")]["content"])
	assert.Equal(t, sessionPlace.AgentSessionID, api.activities[answerID("acme", "r-1")]["agentSessionId"])

	thought := sessionPlace
	thought.Activity = ActivityThought
	_, _, err = r.Send(t.Context(), answer("r-2", "Reading the checkout logs.", thought))
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"type": "thought", "body": "Reading the checkout logs."}, api.activities[answerID("acme", "r-2")]["content"])

	action := sessionPlace
	action.Activity, action.Action = ActivityAction, "Searching"
	_, _, err = r.Send(t.Context(), answer("r-3", "tax lookup timeouts", action))
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"type": "action", "action": "Searching", "parameter": "tax lookup timeouts"}, api.activities[answerID("acme", "r-3")]["content"])

	for _, bad := range []Place{
		{AgentSessionID: "s", Activity: "prompt"},
		{AgentSessionID: "s", Activity: ActivityAction},
		{AgentSessionID: "s", Action: "Searching"},
		{IssueID: "i", Activity: ActivityThought},
		{},
	} {
		err := r.Check(reply.NewTo(Source, "acme", bad), "x")
		assert.ErrorIs(t, err, reply.ErrUnknownPlace, "%+v", bad)
	}
	none := newReplier(t, api, func(c *Config) { c.AccessToken, c.OrganizationID = "", testOrg })
	assert.ErrorIs(t, none.Check(reply.NewTo(Source, "acme", threadPlace), "x"), reply.ErrNoCredentials)
}

// TestExactlyOnceAcrossTransientFailure: Linear makes the comment (or activity) but the
// answer is lost (502): the send is retried, and the outbox's look-up before the resend
// finds it by its id, so it is never posted twice. A comment of that id by someone else
// is not the answer.
func TestExactlyOnceAcrossTransientFailure(t *testing.T) {
	for name, p := range map[string]Place{"comment": threadPlace, "activity": sessionPlace} {
		t.Run(name, func(t *testing.T) {
			api := newStandIn(t)
			api.failAfterWrite = 1
			r := newReplier(t, api, nil)
			rp := answer("r-1", "Done.", p)
			_, retry, err := r.Send(t.Context(), rp)
			require.Error(t, err)
			assert.True(t, retry, "a 5xx may succeed later")
			sent, found, err := r.Find(t.Context(), rp)
			require.NoError(t, err)
			require.True(t, found, "the post Linear made is found")
			assert.Equal(t, answerID("acme", "r-1"), sent.PlatformID)
			assert.Len(t, api.comments, map[bool]int{true: 1, false: 0}[p.AgentSessionID == ""])
			assert.Len(t, api.activities, map[bool]int{true: 1, false: 0}[p.AgentSessionID != ""])

			_, found, err = r.Find(t.Context(), answer("r-2", "Other.", p))
			require.NoError(t, err)
			assert.False(t, found, "an answer never posted is not found")
		})
	}
	api := newStandIn(t)
	api.comments[answerID("acme", "r-9")] = map[string]any{"userId": testAda}
	_, found, err := newReplier(t, api, nil).Find(t.Context(), answer("r-9", "x", threadPlace))
	require.NoError(t, err)
	assert.False(t, found, "a comment written by someone else is not the answer")
}

// TestReplyErrors: rate limits wait as Linear says, 5xx retry, a refusal does not.
func TestReplyErrors(t *testing.T) {
	cases := []struct {
		status int
		code   string
		retry  bool
		wait   time.Duration
	}{
		{http.StatusBadRequest, "RATELIMITED", true, 30 * time.Second},
		{http.StatusTooManyRequests, "", true, 30 * time.Second},
		{http.StatusServiceUnavailable, "", true, 0},
		{http.StatusBadRequest, "INPUT_ERROR", false, 0},
		{http.StatusUnauthorized, "AUTHENTICATION_ERROR", false, 0},
	}
	for _, c := range cases {
		c := c
		srv := newStandIn(t)
		srv.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "30")
			srv.gqlErrors(w, c.status, "refused", c.code)
		})
		_, retry, err := newReplier(t, srv, nil).Send(t.Context(), answer("r-1", "x", threadPlace))
		require.Error(t, err)
		assert.Equal(t, c.retry, retry, "%d %s", c.status, c.code)
		var ra *reply.RetryAfter
		if c.wait > 0 {
			require.True(t, errors.As(err, &ra), "%d %s", c.status, c.code)
			assert.Equal(t, c.wait, ra.Wait)
		}
		assert.NotContains(t, err.Error(), "lin_oauth_token", "the token is never in an error")
	}
}

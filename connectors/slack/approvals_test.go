package slack

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	slackapi "github.com/slack-go/slack"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/approval"
	"github.com/signalgate/signalgate/connectors/slack/webapitest"
	"github.com/signalgate/signalgate/inbox"
)

func approvalConfig(api *webapitest.Server) Config {
	cfg := testConfig()
	cfg.BotToken, cfg.APIURL = "xoxb-test-token", api.APIURL()
	return cfg
}

// messenger is the approvals' view of the harness's connector, on its clock.
func (h *harness) messenger(ttl time.Duration) *Messenger {
	return NewMessenger([]Config{h.cfg}, ttl, slog.New(slog.DiscardHandler), h.clock.Now)
}

func sampleApproval() approval.Approval {
	return approval.Approval{ID: "0193-approval", ThreadKey: inbox.ThreadKey{Agent: "support", Resource: "acme/api", Thread: "t1"},
		Tool: "deploy", Arguments: json.RawMessage(`{"env":"<!channel> prod"}`), Description: "Deploy api to production",
		Status: approval.StatusPending, Connector: "acme"}
}

func nextCall(t *testing.T, api *webapitest.Server) webapitest.Call {
	t.Helper()
	select {
	case c := <-api.Calls:
		return c
	case <-time.After(10 * time.Second):
		t.Fatal("no Web API call")
		return webapitest.Call{}
	}
}

func TestPostAndUpdateApproval(t *testing.T) {
	api := webapitest.New(t)
	h := newHarness(t, approvalConfig(api), harnessOpts{})
	m := h.messenger(time.Minute)
	ctx := context.Background()
	a := sampleApproval()

	ch, ts, err := m.PostApproval(ctx, "acme", "C0APPROVE", "1699999999.000100", a)
	require.NoError(t, err)
	require.Equal(t, "C0APPROVE", ch)
	require.NotEmpty(t, ts)
	call := nextCall(t, api)
	require.Equal(t, "chat.postMessage", call.Method)
	require.Equal(t, "C0APPROVE", call.Form.Get("channel"))
	require.Equal(t, "1699999999.000100", call.Form.Get("thread_ts"))
	blocks := call.Form.Get("blocks")
	require.Contains(t, blocks, `"action_id":"signalgate_approve","value":"0193-approval"`)
	require.Contains(t, blocks, `"action_id":"signalgate_decline","value":"0193-approval"`)
	require.Contains(t, blocks, "*support* wants to run *deploy*")
	require.Contains(t, blocks, `\u0026lt;!channel\u0026gt; prod`, "arguments cannot mention anyone")
	require.NotContains(t, blocks, "<!channel>")

	decided := time.Date(2026, 11, 24, 9, 30, 0, 0, time.UTC)
	a.Status, a.DecidedBy, a.DecidedByName, a.DecidedAt = approval.StatusApproved, "U0JANE", "Jane", &decided
	a.Channel, a.MessageTS = ch, ts
	require.NoError(t, m.UpdateApproval(ctx, "acme", a))
	call = nextCall(t, api)
	require.Equal(t, "chat.update", call.Method)
	require.Equal(t, ts, call.Form.Get("ts"))
	require.Equal(t, "Approved by <@U0JANE> (Jane) at 2026-11-24 09:30 UTC", call.Form.Get("text"))
	require.NotContains(t, call.Form.Get("blocks"), "signalgate_approve", "no buttons once decided")
	require.Contains(t, call.Form.Get("blocks"), `Approved by \u003c@U0JANE\u003e (Jane)`)

	api.Fail("chat.postMessage", "channel_not_found")
	_, _, err = m.PostApproval(ctx, "acme", "C0GONE", "", a)
	require.ErrorContains(t, err, "channel_not_found")
	_, _, err = m.PostApproval(ctx, "nope", "C0", "", a)
	require.ErrorContains(t, err, `no slack connector named "nope"`)
}

func TestApprovalNeedsBotToken(t *testing.T) {
	h := newHarness(t, testConfig(), harnessOpts{})
	_, _, err := h.messenger(time.Minute).PostApproval(context.Background(), "acme", "C0", "", sampleApproval())
	require.ErrorContains(t, err, "has no bot_token")
}

// Group membership is asked once per ttl; a group Slack does not know is an error,
// not a yes.
func TestInGroupCached(t *testing.T) {
	api := webapitest.New(t)
	api.SetGroup("S0OPS", "U0JANE", "U0BOB")
	h := newHarness(t, approvalConfig(api), harnessOpts{})
	m := h.messenger(5 * time.Minute)
	ctx := context.Background()
	in, err := m.InGroup(ctx, "acme", "S0OPS", "U0JANE")
	require.NoError(t, err)
	require.True(t, in)
	require.Equal(t, "usergroups.users.list", nextCall(t, api).Method)
	in, err = m.InGroup(ctx, "acme", "S0OPS", "U0EVE")
	require.NoError(t, err)
	require.False(t, in)
	require.Empty(t, api.Calls, "served from the cache")

	api.SetGroup("S0OPS", "U0EVE")
	h.clock.Add(6 * time.Minute)
	in, err = m.InGroup(ctx, "acme", "S0OPS", "U0EVE")
	require.NoError(t, err)
	require.True(t, in, "asked again after the ttl")
	nextCall(t, api)

	_, err = m.InGroup(ctx, "acme", "S0NONE", "U0EVE")
	require.ErrorContains(t, err, "no_such_subteam")
}

type fakeDecider struct {
	mu     sync.Mutex
	clicks []approval.Click
	notice string
}

func (f *fakeDecider) Decide(_ context.Context, c approval.Click) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.clicks = append(f.clicks, c)
	return f.notice, nil
}

// Later declines: the handler decides within the request (see laterDecider).
func (f *fakeDecider) Later(approval.Click, func(context.Context, string)) bool { return false }

func (f *fakeDecider) Answer(context.Context, approval.Reply) (string, error) { return "", nil }

func (f *fakeDecider) LaterAnswer(approval.Reply, func(context.Context, string)) bool { return false }

func (f *fakeDecider) got() []approval.Click {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]approval.Click(nil), f.clicks...)
}

func interaction(h *harness, body []byte, ts int64) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, "/webhooks/slack/acme/interactions", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set(HeaderTimestamp, strconv.FormatInt(ts, 10))
	req.Header.Set(HeaderSignature, webapitest.Sign(testSecret, ts, body))
	return h.do(req)
}

func click(action string) webapitest.Click {
	return webapitest.Click{ActionID: action, Value: "0193-approval", UserID: "U0JANE", UserName: "jane",
		Channel: "C0APPROVE", MessageTS: "1700000000.000001"}
}

func TestInteractionClick(t *testing.T) {
	api := webapitest.New(t)
	d := &fakeDecider{}
	h := newHarness(t, approvalConfig(api), harnessOpts{opts: []Option{WithDecider(d)}})
	now := h.clock.Now().Unix()

	rec := interaction(h, webapitest.BlockActions(click(ActionApprove)), now)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	rec = interaction(h, webapitest.BlockActions(click(ActionDecline)), now)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	clicks := d.got()
	require.Len(t, clicks, 2)
	// The name is the Web API's (slacktest's users.info), not the payload's handle.
	require.Equal(t, approval.Click{Connector: "acme", ApprovalID: "0193-approval", Approve: true, UserID: "U0JANE", UserName: "spengler",
		Channel: "C0APPROVE", MessageTS: "1700000000.000001"}, clicks[0])
	require.False(t, clicks[1].Approve)
	require.Empty(t, api.Calls, "nothing to say privately")

	// A notice goes to the clicker alone, in the message's thread.
	d.notice = "Sorry, you are not one of the approvers"
	c := click(ActionApprove)
	c.ThreadTS = "1699999999.000100"
	rec = interaction(h, webapitest.BlockActions(c), now)
	require.Equal(t, http.StatusOK, rec.Code)
	call := nextCall(t, api)
	require.Equal(t, "chat.postEphemeral", call.Method)
	require.Equal(t, "U0JANE", call.Form.Get("user"))
	require.Equal(t, "C0APPROVE", call.Form.Get("channel"))
	require.Equal(t, "1699999999.000100", call.Form.Get("thread_ts"))
	require.Equal(t, d.notice, call.Form.Get("text"))
}

// laterDecider takes every click for later and decides nothing until released.
type laterDecider struct {
	fakeDecider
	queued chan func(context.Context, string)
}

func (l *laterDecider) Later(c approval.Click, answer func(context.Context, string)) bool {
	l.mu.Lock()
	l.clicks = append(l.clicks, c)
	l.mu.Unlock()
	l.queued <- answer
	return true
}

// A click is acknowledged before it is decided (Slack wants its answer within 3 s, a
// decision may wait on Mastra longer); the notice reaches the clicker afterwards.
func TestInteractionAnsweredBeforeDecided(t *testing.T) {
	api := webapitest.New(t)
	d := &laterDecider{queued: make(chan func(context.Context, string), 1)}
	h := newHarness(t, approvalConfig(api), harnessOpts{opts: []Option{WithDecider(d)}})

	rec := interaction(h, webapitest.BlockActions(click(ActionApprove)), h.clock.Now().Unix())
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Len(t, d.got(), 1)
	require.Empty(t, api.Calls, "nothing said yet: the click is not decided")

	answer := <-d.queued
	answer(context.Background(), "This was already approved by Jane; nothing was changed.")
	call := nextCall(t, api)
	require.Equal(t, "chat.postEphemeral", call.Method)
	require.Equal(t, "U0JANE", call.Form.Get("user"))
	require.Equal(t, "C0APPROVE", call.Form.Get("channel"))
	require.Contains(t, call.Form.Get("text"), "already approved")
}

// The interactivity endpoint is a stranger's door like the events one: unsigned,
// stale, forged and oversized requests reach no decision.
func TestInteractionHostile(t *testing.T) {
	const limit = 16 << 10
	api := webapitest.New(t)
	d := &fakeDecider{}
	h := newHarness(t, approvalConfig(api), harnessOpts{limit: limit, opts: []Option{WithDecider(d)}})
	now := h.clock.Now()
	body := webapitest.BlockActions(click(ActionApprove))

	unsigned := httptest.NewRequest(http.MethodPost, "/webhooks/slack/acme/interactions", bytes.NewReader(body))
	require.Equal(t, http.StatusUnauthorized, h.do(unsigned).Code)
	require.Equal(t, http.StatusUnauthorized, interaction(h, body, now.Add(-6*time.Minute).Unix()).Code, "outside the window")
	forged := httptest.NewRequest(http.MethodPost, "/webhooks/slack/acme/interactions", bytes.NewReader(body))
	forged.Header.Set(HeaderTimestamp, strconv.FormatInt(now.Unix(), 10))
	forged.Header.Set(HeaderSignature, webapitest.Sign("another-secret", now.Unix(), body))
	require.Equal(t, http.StatusUnauthorized, h.do(forged).Code)
	big := append(append([]byte{}, body...), []byte("&pad="+strings.Repeat("x", limit))...)
	require.Equal(t, http.StatusRequestEntityTooLarge, interaction(h, big, now.Unix()).Code)
	other := httptest.NewRequest(http.MethodPost, "/webhooks/slack/nope/interactions", bytes.NewReader(body))
	require.Equal(t, http.StatusNotFound, h.do(other).Code)

	// Verified but unreadable: acknowledged as invalid, never a 400 or a 500.
	for _, b := range [][]byte{[]byte("payload=%7Bnot-json"), []byte("nopayload=1"), []byte("%zz")} {
		rec := interaction(h, b, now.Unix())
		require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	}
	// A huge button value never reaches the store.
	c := click(ActionApprove)
	c.Value = strings.Repeat("A", 1000)
	require.Equal(t, http.StatusAccepted, interaction(h, webapitest.BlockActions(c), now.Unix()).Code)
	// Other interactions and other buttons are acknowledged and ignored.
	require.Equal(t, http.StatusOK, interaction(h, []byte(`payload=`+`%7B%22type%22%3A%22view_submission%22%7D`), now.Unix()).Code)
	require.Equal(t, http.StatusOK, interaction(h, webapitest.BlockActions(click("someone_elses_button")), now.Unix()).Code)
	require.Empty(t, d.got())
}

func TestInteractionWithoutApprovals(t *testing.T) {
	h := newHarness(t, testConfig(), harnessOpts{})
	rec := interaction(h, webapitest.BlockActions(click(ActionApprove)), h.clock.Now().Unix())
	require.Equal(t, http.StatusOK, rec.Code)
	require.Contains(t, rec.Body.String(), "approvals are not configured")
}

// A section holds at most 3000 characters after escaping: the longest description and
// arguments the approval service stores, full of characters escaping makes five times
// longer, still fit, and no entity is cut in half.
func TestApprovalBlocksFitASection(t *testing.T) {
	a := approval.Approval{ID: "0193-approval", Tool: strings.Repeat("<", approval.MaxTool),
		Description: strings.Repeat("&", approval.MaxDescription), Arguments: []byte(`"` + strings.Repeat(">", 8000) + `"`)}
	a.Agent = "support"
	for _, buttons := range []bool{true, false} {
		text := approvalBlocks(a, buttons)[0].(*slackapi.SectionBlock).Text.Text
		require.LessOrEqual(t, utf8.RuneCountInString(text), 3000)
		for _, part := range strings.Split(text, "&")[1:] {
			require.Regexp(t, `^(amp|lt|gt);`, part, "an entity cut in half")
		}
	}
}

// A tool name is the asker's text: in the message's plain text (what notifications and
// previews show) it mentions nobody and links nowhere, and the blocks are posted verbatim
// so Slack adds no links or mentions of its own.
func TestApprovalTextNeutralised(t *testing.T) {
	api := webapitest.New(t)
	h := newHarness(t, approvalConfig(api), harnessOpts{})
	m := h.messenger(time.Minute)
	a := sampleApproval()
	a.Agent, a.Tool = "support <!here>", "<!channel> <https://evil.example|Approve here> & co"

	_, ts, err := m.PostApproval(context.Background(), "acme", "C0APPROVE", "", a)
	require.NoError(t, err)
	call := nextCall(t, api)
	require.Equal(t, "chat.postMessage", call.Method)
	require.Equal(t, "support &lt;!here&gt; asks to run &lt;!channel&gt; &lt;https://evil.example|Approve here&gt; &amp; co: approve or decline in Slack",
		call.Form.Get("text"))
	requireVerbatim(t, call.Form.Get("blocks"))

	a.Status, a.Channel, a.MessageTS = approval.StatusExpired, "C0APPROVE", ts
	require.NoError(t, m.UpdateApproval(context.Background(), "acme", a))
	call = nextCall(t, api)
	require.Equal(t, "chat.update", call.Method)
	requireVerbatim(t, call.Form.Get("blocks"))
}

// requireVerbatim checks that every mrkdwn text object of the blocks is verbatim.
func requireVerbatim(t *testing.T, blocks string) {
	t.Helper()
	var objs []map[string]any
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if v["type"] == "mrkdwn" {
				objs = append(objs, v)
			}
			for _, c := range v {
				walk(c)
			}
		case []any:
			for _, c := range v {
				walk(c)
			}
		}
	}
	var parsed any
	require.NoError(t, json.Unmarshal([]byte(blocks), &parsed))
	walk(parsed)
	require.NotEmpty(t, objs)
	for _, o := range objs {
		require.Equal(t, true, o["verbatim"], "mrkdwn not verbatim: %v", o)
	}
}

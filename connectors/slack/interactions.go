package slack

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/slack-go/slack"

	"github.com/signalgate/signalgate/approval"
)

// InteractionsPath is where Slack posts interactivity requests (button clicks) for a
// connector: the app's Interactivity Request URL.
const InteractionsPath = RoutePath + "/interactions"

// maxApprovalID bounds the button value taken from a request before any lookup.
const maxApprovalID = 64

// WithDecider hands approval clicks to d (the approvals service); without it, clicks
// are refused because approvals are off.
func WithDecider(d Decider) Option { return func(h *Handler) { h.decider = d } }

// ServeInteractions verifies an interactivity request exactly like an Events API
// request (same signature, window and body limit), reads the form's `payload`, and
// applies a click on an approval button. The request is acknowledged as soon as the click
// is read (Slack shows the person an error after 3 seconds) and decided afterwards; the
// answer to the clicker goes back as an ephemeral message.
func (h *Handler) ServeInteractions(c echo.Context) error {
	d, err := h.opening.Open(c)
	if err != nil {
		return noRetry(c, err)
	}
	conn := d.Conn
	vals, err := url.ParseQuery(string(d.Body))
	raw := vals.Get("payload")
	var ic slack.InteractionCallback
	if err == nil && raw != "" {
		err = json.Unmarshal([]byte(raw), &ic)
	}
	if err != nil || raw == "" {
		conn.log.WarnContext(c.Request().Context(), "interaction not readable", "error", problem(err, raw))
		return c.JSON(http.StatusAccepted, map[string]string{"status": "invalid", "error": "want a form field payload holding an interaction JSON object"})
	}
	if ic.Type != slack.InteractionTypeBlockActions {
		return c.JSON(http.StatusOK, map[string]string{"status": "ignored", "reason": "interaction type " + string(ic.Type) + " is not handled"})
	}
	var act *slack.BlockAction
	for _, a := range ic.ActionCallback.BlockActions {
		if a != nil && isApprovalAction(a.ActionID) {
			act = a
			break
		}
	}
	if act == nil {
		return c.JSON(http.StatusOK, map[string]string{"status": "ignored", "reason": "no approval action"})
	}
	if h.decider == nil {
		conn.log.WarnContext(c.Request().Context(), "approval click but approvals are not configured", "user", ic.User.ID)
		return c.JSON(http.StatusOK, map[string]string{"status": "ignored", "reason": errNoDecider.Error()})
	}
	if len(act.Value) > maxApprovalID || ic.User.ID == "" {
		return c.JSON(http.StatusAccepted, map[string]string{"status": "invalid", "error": "approval action without a user or with an oversized value"})
	}
	ctx := c.Request().Context()
	channel, ts := firstNonEmpty(ic.Channel.ID, ic.Container.ChannelID), firstNonEmpty(ic.Container.MessageTs, ic.Message.Timestamp)
	if len(channel) > maxApprovalID || len(ts) > maxApprovalID {
		channel, ts = "", "" // not Slack's shape: the message is found from the record alone
	}
	click := approval.Click{Connector: conn.cfg.Name, ApprovalID: act.Value, Approve: act.ActionID == ActionApprove,
		UserID: ic.User.ID, UserName: h.userName(ctx, conn, &ic), Channel: channel, MessageTS: ts}
	answer := func(ctx context.Context, notice string) {
		ctx, cancel := context.WithTimeout(ctx, answerTimeout)
		defer cancel()
		if err := h.ephemeral(ctx, conn.cfg.Name, channel, ic.User.ID, ic.Message.ThreadTimestamp, notice); err != nil {
			conn.log.Warn("answer approval click", "user", ic.User.ID, "error", err.Error())
		}
	}
	if h.decider.Later(click, answer) {
		return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
	}
	notice, err := h.decider.Decide(ctx, click)
	if err != nil {
		return err
	}
	if notice != "" {
		answer(context.WithoutCancel(ctx), notice)
	}
	return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
}

// answerTimeout bounds the ephemeral answer to a click.
const answerTimeout = 5 * time.Second

// userName is the clicker's display name: the Web API's, else the payload's.
func (h *Handler) userName(ctx context.Context, conn *connector, ic *slack.InteractionCallback) string {
	ctx, cancel := context.WithTimeout(ctx, conn.lookupTimeout)
	defer cancel()
	if n := conn.resolver.user(ctx, ic.User.ID); n != "" {
		return n
	}
	return firstNonEmpty(ic.User.Name, ic.User.ID)
}

func problem(err error, raw string) string {
	if err != nil {
		return jsonProblem(err)
	}
	if raw == "" {
		return "no payload field"
	}
	return "unexpected shape"
}

package slack

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/signalgate/signalgate/connectors"
)

// Slack's documented Events API deliveries: the event_callback envelope
// (api.slack.com/apis/events-api, "Callback field overview") around the message.im
// example (api.slack.com/events/message.im) and the app_mention example
// (api.slack.com/events/app_mention). The sender dates them and mints their ids.
const (
	sampleDM = `{"token":"XXYYZZ","team_id":"T061EG9R6","api_app_id":"A0MDYCDME","event":` +
		`{"type":"message","channel":"D024BE91L","user":"U2147483697","text":"Hello hello can you hear me?",` +
		`"ts":"1355517523.000005","event_ts":"1355517523.000005","channel_type":"im"},` +
		`"type":"event_callback","authorizations":[{"enterprise_id":null,"team_id":"T061EG9R6","user_id":"U0LAN0Z89",` +
		`"is_bot":true,"is_enterprise_install":false}],"event_id":"Ev08MFMKH6","event_time":1355517523}`
	sampleMention = `{"token":"XXYYZZ","team_id":"T061EG9R6","api_app_id":"A0MDYCDME","event":` +
		`{"type":"app_mention","user":"U061F7AUR","text":"<@U0LAN0Z89> is it everything a river should be?",` +
		`"ts":"1515449522.000016","channel":"C0LAN2Q65","event_ts":"1515449522.000016"},` +
		`"type":"event_callback","authorizations":[{"enterprise_id":null,"team_id":"T061EG9R6","user_id":"U0LAN0Z89",` +
		`"is_bot":true,"is_enterprise_install":false}],"event_id":"Ev08MFMKH7","event_time":1515449522}`
	// sampleBot is the bot user of the documented examples.
	sampleBot = "U0LAN0Z89"
	// slackAgent is the User-Agent of Slack's Events API requests.
	slackAgent = "Slackbot 1.0 (+https://api.slack.com/robots)"
)

// Sign is the X-Slack-Signature Slack sends: "v0=" and the hex HMAC-SHA256 of
// "v0:{timestamp}:{body}" keyed by the app's signing secret.
func Sign(secret []byte, ts int64, body []byte) string {
	m := hmac.New(sha256.New, secret)
	fmt.Fprintf(m, "v0:%d:", ts)
	m.Write(body)
	return "v0=" + hex.EncodeToString(m.Sum(nil))
}

type sender struct {
	secret []byte
	bot    string
}

// NewSender is the sender of a Slack connector that receives over HTTP: Slack's
// Events API posting a DM or a mention of the connector's bot.
func NewSender(c Config, _ connectors.SenderOptions) (connectors.Sender, error) {
	secrets := c.VerifySecrets()
	if len(secrets) == 0 || secrets[0] == "" {
		if c.SocketMode {
			return nil, errors.New("the connector receives over Socket Mode, not HTTP, and has no signing_secret: Slack sends it nothing to post to")
		}
		return nil, errors.New("the connector has no signing_secret to sign with")
	}
	bot := c.BotUserID
	if bot == "" {
		bot = sampleBot
	}
	return sender{secret: []byte(secrets[0]), bot: bot}, nil
}

func (sender) Samples() []connectors.SampleInfo {
	return []connectors.SampleInfo{
		{Name: "dm", About: "a direct message to the bot (message.im, Slack's example)"},
		{Name: "mention", About: "a channel message mentioning the bot (app_mention, Slack's example)"},
	}
}

// Sample is Slack's example as a new message now: a fresh event_id, ts and
// event_time, the connector's bot as the app's user and the one mentioned.
func (s sender) Sample(name string, now time.Time) (connectors.Sample, error) {
	id := connectors.FreshID("Ev08MFMKH6")
	ts := fmt.Sprintf("%d.%06d", now.Unix(), now.Nanosecond()/1000)
	edits := [][2]any{{"event_id", id}, {"event.ts", ts}, {"event.event_ts", ts},
		{"authorizations.0.user_id", s.bot}, {"event_time", now.Unix()}}
	var body string
	switch name {
	case "", "dm":
		name, body = "dm", sampleDM
	case "mention":
		body = sampleMention
		edits = append(edits, [2]any{"event.text", "<@" + s.bot + "> is it everything a river should be?"})
	default:
		return connectors.Sample{}, connectors.UnknownSample(name, s.Samples())
	}
	b := []byte(body)
	for _, e := range edits {
		v, err := json.Marshal(e[1])
		if err == nil {
			b, err = connectors.SetJSON(b, e[0].(string), v)
		}
		if err != nil {
			return connectors.Sample{}, fmt.Errorf("slack sample %s: %w", name, err)
		}
	}
	return connectors.Sample{Name: name, ContentType: "application/json", Body: b, Header: http.Header{}, DeliveryID: id}, nil
}

// Sign adds what Slack sends: its timestamp, the v0 signature and its User-Agent.
func (s sender) Sign(sample connectors.Sample, _ string, now time.Time) (http.Header, error) {
	hdr := sample.Header.Clone()
	if hdr == nil {
		hdr = http.Header{}
	}
	hdr.Set("Content-Type", sample.ContentType)
	hdr.Set("User-Agent", slackAgent)
	hdr.Set(HeaderTimestamp, strconv.FormatInt(now.Unix(), 10))
	hdr.Set(HeaderSignature, Sign(s.secret, now.Unix(), sample.Body))
	return hdr, nil
}

package generic

import (
	"bytes"
	"cmp"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	twilio "github.com/twilio/twilio-go/client"

	"github.com/signalgate/signalgate/admin"
	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/connectors/connectorstest"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/secret"
	"github.com/signalgate/signalgate/store"
)

// presetSample is one preset's documented delivery and how its provider signs it.
type presetSample struct {
	preset, name string // name: the connector and case, when a preset has several samples
	body         func(t *testing.T) []byte
	secret       string
	// sign returns the headers the provider sends with body to url.
	sign func(t *testing.T, url string, body []byte) map[string]string
	// contentType is the body's; JSON when unset.
	contentType string
	// invalid: the sample verifies but cannot be read, stored invalid with this error.
	invalid string
	check   func(t *testing.T, ev inbox.Event, records []inbox.Record)
	// when: a `when` only this sample satisfies routes it and decides its records.
	when string
	// answer checks the gateway's answer; redeliver posts the sample twice.
	answer    func(t *testing.T, resp *http.Response, body []byte)
	redeliver bool
}

// discordSampleKey is a fixed application key pair: the connector holds the public half.
func discordSampleKey() ed25519.PrivateKey {
	return ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, ed25519.SeedSize))
}

// presetFile reads a sample of testdata/presets.
func presetFile(name string) func(t *testing.T) []byte {
	return func(t *testing.T) []byte { return presetPayload(t, name) }
}

// twilioSigned signs as Twilio does, and checks that twilio-go's validator agrees.
func twilioSigned(t *testing.T, u string, body []byte) map[string]string {
	sig := twilioSign(twilioToken, u, body)
	v := twilio.NewRequestValidator(twilioToken)
	require.True(t, v.ValidateBody(u, body, sig), "twilio-go agrees")
	return map[string]string{twilioSignature: sig, twilioIdempotency: "idem-" + u[strings.LastIndex(u, "/")+1:]}
}

// twilioPayload asserts the record's payload is the form's fields as a JSON object.
func twilioPayload(want map[string]string) func(t *testing.T, ev inbox.Event, records []inbox.Record) {
	return func(t *testing.T, _ inbox.Event, records []inbox.Record) {
		require.Len(t, records, 1)
		var got map[string]any
		require.NoError(t, json.Unmarshal(records[0].Payload, &got), "%s", records[0].Payload)
		for k, v := range want {
			assert.Equal(t, v, got[k], k)
		}
	}
}

// twimlAnswer asserts the answer Twilio expects from a Messaging webhook: 200 and
// an empty TwiML Response as XML, whatever became of the delivery. Any other content
// type is Twilio's error 12300 on every message.
func twimlAnswer(t *testing.T, resp *http.Response, body []byte) {
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	require.NoError(t, err)
	assert.Equal(t, "text/xml", mt)
	assert.Equal(t, `<?xml version="1.0" encoding="UTF-8"?><Response></Response>`, string(body))
	var doc struct {
		XMLName xml.Name
		Inner   string `xml:",innerxml"`
	}
	require.NoError(t, xml.Unmarshal(body, &doc), "well-formed XML")
	assert.Equal(t, "Response", doc.XMLName.Local)
	assert.Empty(t, doc.Inner, "no verb: Twilio sends no reply")
}

// presetSamples lists every preset's documented sample (testdata/presets/README.md
// says where each comes from).
func presetSamples() []presetSample {
	hexMAC := func(header, prefix string) func(*testing.T, string, []byte) map[string]string {
		return func(_ *testing.T, _ string, b []byte) map[string]string {
			return map[string]string{header: prefix + hex.EncodeToString(bodyMAC(providerSecret, b))}
		}
	}
	file := presetFile
	stdFile := func(name string) func(t *testing.T) []byte {
		return func(t *testing.T) []byte { return readPayload(t, name) }
	}
	svix := func(t *testing.T, _ string, b []byte) map[string]string {
		return svixSigned(t, testSecret, "msg_2KWPBgLlAfxdpx2AI54pPJ85f4W", testNow, b)
	}
	return []presetSample{
		{preset: PresetStandardWebhooks, body: stdFile("example-event.json"), secret: testSecret,
			sign: func(t *testing.T, _ string, b []byte) map[string]string {
				return stdHeaders(t, "msg_2KWPBgLlAfxdpx2AI54pPJ85f4W", testNow, b)
			}},
		{preset: "stripe", body: file("stripe-invoice-payment-failed.json"), secret: stripeSecret,
			when: `payload.type == "invoice.payment_failed"`,
			sign: func(_ *testing.T, _ string, b []byte) map[string]string {
				return stripeSigned(b, stripeSecret, testNow)
			}},
		{preset: "svix", body: stdFile("resend-email-sent.json"), secret: testSecret, sign: svix},
		{preset: "resend", body: stdFile("resend-email-sent.json"), secret: testSecret, sign: svix},
		{preset: "gitlab", body: file("gitlab-merge-request.json"), secret: gitlabSecret,
			sign: func(*testing.T, string, []byte) map[string]string {
				return map[string]string{"X-Gitlab-Token": gitlabSecret, "X-Gitlab-Event": "Merge Request Hook", "X-Gitlab-Event-UUID": "13792a34-cac6-4fda-95a8-c58e00a3954e"}
			}},
		{preset: "linear", body: file("linear-issue-create.json"), secret: providerSecret,
			sign: func(_ *testing.T, _ string, b []byte) map[string]string { return linearSigned(providerSecret, b) }},
		{preset: "sentry", body: file("sentry-issue-created.json"), secret: providerSecret,
			sign: func(t *testing.T, u string, b []byte) map[string]string {
				hdr := hexMAC("Sentry-Hook-Signature", "")(t, u, b)
				hdr["Sentry-Hook-Resource"], hdr["Request-ID"] = "issue", "3f3e5c1a-5e1b-4b1e-9d0b-0f4c3e2b1a00"
				hdr["Sentry-Hook-Timestamp"] = strconv.FormatInt(testNow.Unix(), 10)
				return hdr
			}},
		{preset: "shopify", body: file("shopify-orders-create.json"), secret: providerSecret,
			sign: func(_ *testing.T, _ string, b []byte) map[string]string { return shopifySigned(providerSecret, b) }},
		{preset: "pagerduty", body: file("pagerduty-incident-triggered.json"), secret: providerSecret,
			sign: func(t *testing.T, u string, b []byte) map[string]string {
				hdr := hexMAC("X-PagerDuty-Signature", "v1=")(t, u, b)
				hdr["X-Webhook-Id"] = "5ac64822-4adc-4fda-ade0-410becf0de4f"
				return hdr
			}},
		{preset: "intercom", body: file("intercom-conversation-user-created.json"), secret: providerSecret,
			sign: func(_ *testing.T, _ string, b []byte) map[string]string {
				return map[string]string{"X-Hub-Signature": "sha1=" + sha1MAC(providerSecret, b)}
			}},
		{preset: "vercel", body: file("vercel-deployment-error.json"), secret: providerSecret,
			sign: func(_ *testing.T, _ string, b []byte) map[string]string {
				return map[string]string{"x-vercel-signature": sha1MAC(providerSecret, b)}
			}},
		{preset: "discord", body: func(*testing.T) []byte { return []byte(discordCommand) },
			secret: hex.EncodeToString(discordSampleKey().Public().(ed25519.PublicKey)),
			sign: func(_ *testing.T, _ string, b []byte) map[string]string {
				return discordSigned(discordSampleKey(), testNow, b)
			}},
		{preset: "twilio", name: "twilio-sms", body: presetFile("twilio-sms-received.form"), secret: twilioToken,
			sign: twilioSigned, contentType: "application/x-www-form-urlencoded", answer: twimlAnswer, redeliver: true,
			when: `payload.Body contains "Checkout is down" && payload.NumMedia == "0" && payload.From startsWith "+1415"`,
			check: twilioPayload(map[string]string{"Body": "Checkout is down again - can you look?", "From": "+14155550123",
				"MessageSid": "SM1f2a3b4c5d6e7f8091a2b3c4d5e6f708", "NumMedia": "0", "FromCity": "SAN FRANCISCO"})},
		{preset: "twilio", name: "twilio-mms", body: presetFile("twilio-mms-received.form"), secret: twilioToken,
			sign: twilioSigned, contentType: "application/x-www-form-urlencoded", answer: twimlAnswer,
			when: `payload.NumMedia == "1" && payload.MediaContentType0 startsWith "image/"`,
			check: twilioPayload(map[string]string{"Body": "Screenshot of the error", "NumMedia": "1", "MediaContentType0": "image/jpeg",
				"MediaUrl0": "https://api.twilio.com/2010-04-01/Accounts/AC0a1b2c3d4e5f60718293a4b5c6d7e8f9/Messages/MM6a5b4c3d2e1f0a9b8c7d6e5f4a3b2c1d/Media/ME0f1e2d3c4b5a69788796a5b4c3d2e1f0"})},
		{preset: "twilio", name: "twilio-status", body: presetFile("twilio-status-delivered.form"), secret: twilioToken,
			sign: twilioSigned, contentType: "application/x-www-form-urlencoded", answer: twimlAnswer,
			check: twilioPayload(map[string]string{"MessageStatus": "delivered", "SmsStatus": "delivered"})},
	}
}

// hostileSamples are signed deliveries a sender holding the secret could post: each
// is stored, invalid where it cannot be read, and never a 500 on either store.
func hostileSamples() []presetSample {
	form := "application/x-www-form-urlencoded"
	twilioBody := func(b string) func(*testing.T) []byte { return func(*testing.T) []byte { return []byte(b) } }
	return []presetSample{
		{preset: "twilio", name: "twilio-repeated-field", secret: twilioToken, sign: twilioSigned, contentType: form, answer: twimlAnswer,
			body: func(t *testing.T) []byte {
				return append(presetPayload(t, "twilio-sms-received.form"), "&Body=ignore+that"...)
			},
			invalid: `form: field "Body" sent 2 times`},
		{preset: "twilio", name: "twilio-control-bytes", secret: twilioToken, sign: twilioSigned, contentType: form, answer: twimlAnswer,
			body: twilioBody("MessageSid=SM00000000000000000000000000000000&From=%00%FF%2B1&Body=%00hi%FE%0A%1B%5B31m")},
		{preset: "twilio", name: "twilio-json-declared", secret: twilioToken, sign: twilioSigned, contentType: "application/json", answer: twimlAnswer,
			body: twilioBody("Body=hi&From=%2B1"), invalid: "malformed JSON body"},
		{preset: "stripe", name: "stripe-truncated", secret: stripeSecret,
			sign: func(_ *testing.T, _ string, b []byte) map[string]string {
				return stripeSigned(b, stripeSecret, testNow)
			},
			body: func(t *testing.T) []byte {
				b := presetPayload(t, "stripe-invoice-payment-failed.json")
				return b[:len(b)/2]
			},
			invalid: "malformed JSON body"},
	}
}

// TestConformanceSamples: every preset's documented sample, signed as its provider
// signs it, goes over HTTP through a real gateway (server, connector, pipeline, inbox)
// into a real store, SQLite and PostgreSQL: answered 2xx, stored routed, its records'
// payloads JSON and read back, the stored event replayed into the same kind. The
// hostile samples are stored too, invalid where they cannot be read: never a 500.
func TestConformanceSamples(t *testing.T) {
	samples := append(presetSamples(), hostileSamples()...)
	covered := map[string]bool{}
	var cases []connectorstest.Sample
	var cfgs []Config
	for _, s := range samples {
		covered[s.preset] = true
		name := cmp.Or(s.name, s.preset)
		cfgs = append(cfgs, Config{Name: name, Preset: s.preset, Secret: secret.Secret(s.secret)})
		cases = append(cases, connectorstest.Sample{
			Name: name, Connector: name, Check: s.check, Invalid: s.invalid, When: s.when, Answer: s.answer, Redeliver: s.redeliver,
			Request: func(t *testing.T, base string) *http.Request {
				u := base + "/webhooks/generic/" + name
				body := s.body(t)
				req, err := http.NewRequest(http.MethodPost, u, bytes.NewReader(body))
				require.NoError(t, err)
				req.Header.Set("Content-Type", cmp.Or(s.contentType, "application/json"))
				for k, v := range s.sign(t, u, body) {
					req.Header.Set(k, v)
				}
				return req
			},
		})
	}
	for _, p := range presetNames() {
		assert.True(t, covered[p], "preset %q has no documented sample here", p)
	}
	connectorstest.ExerciseSamples(t, connectorstest.SampleConnector{
		Source: Source, Start: testNow, Samples: cases, WatchResource: WatchResource,
		Mount: func(t *testing.T, e *echo.Echo, p *connectors.Pipeline, now func() time.Time) connectorstest.Parser {
			h, err := NewHandler(cfgs, p, nil, now)
			require.NoError(t, err)
			h.Mount(e)
			return h
		},
		Explain: explainSample,
	})
}

// explainSample explains the stored event as the admin API does: the same status, and
// for every record the same route, thread and policy action the gateway decided.
func explainSample(t *testing.T, g *connectorstest.Gateway, ev inbox.Event, records []inbox.Record) {
	x, err := admin.NewExplainer(store.NewExplain(g.Store), admin.Deps{Router: g.Router, Policy: g.Policy,
		Parsers: admin.Parsers{Source: g.Parser}, WatchLookup: store.NewWatches(g.Store), Now: g.Now})
	require.NoError(t, err)
	out, err := x.Explain(t.Context(), admin.Sample{EventID: ev.ID})
	require.NoError(t, err)
	assert.Equal(t, ev.Status, out.Status, "explain: %s", out.Reason)
	decided := func(route string, th inbox.ThreadKey, a inbox.Action) string {
		return route + " " + th.Agent + "/" + th.Resource + "/" + th.Thread + " " + string(a)
	}
	var want, got []string
	for _, r := range records {
		r, err := store.NewAdmin(g.Store).GetRecord(t.Context(), r.ID)
		require.NoError(t, err)
		want = append(want, decided(r.Route, r.Thread, r.Action))
	}
	for _, o := range out.Notifications {
		got = append(got, decided(o.Route, o.Thread, o.Decision.Action))
	}
	assert.ElementsMatch(t, want, got, "explain decides as the gateway did")
}

// stdHeaders signs as a Standard Webhooks sender does.
func stdHeaders(t *testing.T, id string, at time.Time, body []byte) map[string]string {
	req := sentByLibrary(t, "x", id, at, body)
	out := map[string]string{}
	for k := range req.Header {
		out[k] = req.Header.Get(k)
	}
	return out
}

package generic

import (
	"cmp"
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/sha1" //nolint:gosec // Intercom, Vercel and Twilio sign with HMAC-SHA1
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/tidwall/gjson"

	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/stdwebhooks"
)

// samples are the presets' documented deliveries (samples/README.md says where each
// comes from); `gateway deliver` sends them and the conformance tests post them.
//
//go:embed samples/*.json samples/*.form
var samples embed.FS

// SampleFile is one of the documented sample bodies by file name.
func SampleFile(name string) ([]byte, error) {
	return samples.ReadFile("samples/" + name)
}

// Presets lists the preset names, standard-webhooks first.
func Presets() []string { return presetNames() }

// senderSample is one documented delivery of a preset's provider.
type senderSample struct {
	name, file, about string
	form              bool              // application/x-www-form-urlencoded, else JSON
	header            map[string]string // what the provider sends besides signature and id
}

// presetSender is how a preset's provider sends: its samples, its User-Agent where
// the provider documents one, and its signature over a delivery.
type presetSender struct {
	samples   []senderSample
	userAgent string
	sign      func(key []byte, o *outgoing) error
}

// outgoing is a delivery being signed.
type outgoing struct {
	hdr  http.Header
	body []byte
	url  string
	id   string
	now  time.Time
}

// std is the Standard Webhooks example every HMAC scheme without its own sample sends.
var stdSample = senderSample{name: "example.event", file: "example-event.json", about: "the Standard Webhooks specification's example"}

// senders lists every preset's sender by name; a test checks each preset has one.
func senders() map[string]presetSender {
	hexMAC := func(newHash func() hash.Hash, header, prefix string) func([]byte, *outgoing) error {
		return func(key []byte, o *outgoing) error {
			o.hdr.Set(header, prefix+hex.EncodeToString(mac(newHash, key, o.body)))
			return nil
		}
	}
	svix := func(key []byte, o *outgoing) error {
		o.hdr.Set(svixID, o.id)
		o.hdr.Set(svixTimestamp, strconv.FormatInt(o.now.Unix(), 10))
		o.hdr.Set(svixSignature, stdwebhooks.Sign(key, o.id, o.now, o.body))
		return nil
	}
	resend := senderSample{name: "email.sent", file: "resend-email-sent.json", about: "Resend's documented email.sent"}
	return map[string]presetSender{
		PresetStandardWebhooks: {samples: []senderSample{stdSample}, sign: func(key []byte, o *outgoing) error {
			o.hdr.Set(stdwebhooks.HeaderID, o.id)
			o.hdr.Set(stdwebhooks.HeaderTimestamp, strconv.FormatInt(o.now.Unix(), 10))
			o.hdr.Set(stdwebhooks.HeaderSignature, stdwebhooks.Sign(key, o.id, o.now, o.body))
			return nil
		}},
		"stripe": {
			samples:   []senderSample{{name: "invoice.payment_failed", file: "stripe-invoice-payment-failed.json", about: "a Stripe event object"}},
			userAgent: "Stripe/1.0 (+https://stripe.com/docs/webhooks)",
			sign: func(key []byte, o *outgoing) error {
				ts := strconv.FormatInt(o.now.Unix(), 10)
				o.hdr.Set(stripeHeader, "t="+ts+",v1="+hex.EncodeToString(mac(sha256.New, key, append([]byte(ts+"."), o.body...))))
				return nil
			},
		},
		"svix":   {samples: []senderSample{resend}, sign: svix},
		"resend": {samples: []senderSample{resend}, sign: svix},
		"gitlab": {
			samples: []senderSample{{name: "merge_request", file: "gitlab-merge-request.json", about: "GitLab's merge request event example",
				header: map[string]string{gitlabEvent: "Merge Request Hook"}}},
			sign: func(key []byte, o *outgoing) error {
				o.hdr.Set(gitlabToken, string(key))
				o.hdr.Set(gitlabUUID, o.id)
				return nil
			},
		},
		"linear": {
			samples: []senderSample{{name: "Issue.create", file: "linear-issue-create.json", about: "a Linear Issue create event",
				header: map[string]string{linearEvent: "Issue"}}},
			userAgent: "Linear-Webhook",
			sign: func(key []byte, o *outgoing) error {
				o.hdr.Set(linearDelivery, o.id)
				return hexMAC(sha256.New, linearSignature, "")(key, o)
			},
		},
		"sentry": {
			samples: []senderSample{{name: "issue.created", file: "sentry-issue-created.json", about: "Sentry's issue created event",
				header: map[string]string{sentryResource: "issue"}}},
			sign: func(key []byte, o *outgoing) error {
				o.hdr.Set(sentryRequestID, o.id)
				o.hdr.Set("Sentry-Hook-Timestamp", strconv.FormatInt(o.now.Unix(), 10))
				return hexMAC(sha256.New, sentrySignature, "")(key, o)
			},
		},
		"shopify": {
			samples: []senderSample{{name: "orders/create", file: "shopify-orders-create.json", about: "Shopify's orders/create sample",
				header: map[string]string{shopifyTopic: "orders/create", shopifyShop: "example.myshopify.com", "X-Shopify-API-Version": "2025-10"}}},
			userAgent: "Shopify-Captain-Hook",
			sign: func(key []byte, o *outgoing) error {
				o.hdr.Set(shopifyWebhookID, o.id)
				o.hdr.Set(shopifySignature, base64.StdEncoding.EncodeToString(mac(sha256.New, key, o.body)))
				return nil
			},
		},
		"pagerduty": {
			samples:   []senderSample{{name: "incident.triggered", file: "pagerduty-incident-triggered.json", about: "PagerDuty's V3 incident.triggered sample"}},
			userAgent: "PagerDuty-Webhook/V3.0",
			sign: func(key []byte, o *outgoing) error {
				o.hdr.Set(pagerdutyWebhookID, o.id)
				return hexMAC(sha256.New, pagerdutySignature, "v1=")(key, o)
			},
		},
		"intercom": {
			samples: []senderSample{{name: "conversation.user.created", file: "intercom-conversation-user-created.json", about: "an Intercom notification"}},
			sign:    hexMAC(sha1.New, intercomSignature, "sha1="),
		},
		"vercel": {
			samples: []senderSample{{name: "deployment.error", file: "vercel-deployment-error.json", about: "a Vercel deployment.error event"}},
			sign:    hexMAC(sha1.New, vercelSignature, ""),
		},
		"discord": {
			samples:   []senderSample{{name: "application_command", file: "discord-application-command.json", about: "a Discord slash command interaction"}},
			userAgent: "Discord-Interactions/1.0 (+https://discord.com)",
			sign: func(key []byte, o *outgoing) error {
				ts := strconv.FormatInt(o.now.Unix(), 10)
				o.hdr.Set(discordTimestamp, ts)
				o.hdr.Set(discordSignature, hex.EncodeToString(ed25519.Sign(ed25519.PrivateKey(key), append([]byte(ts), o.body...))))
				return nil
			},
		},
		"twilio": {
			samples: []senderSample{
				{name: "sms", file: "twilio-sms-received.form", about: "an inbound SMS, Twilio's messaging webhook parameters", form: true},
				{name: "mms", file: "twilio-mms-received.form", about: "an inbound MMS with one image", form: true},
				{name: "status", file: "twilio-status-delivered.form", about: "a status callback: an outbound message delivered", form: true},
			},
			userAgent: "TwilioProxy/1.1",
			sign: func(key []byte, o *outgoing) error {
				o.hdr.Set(twilioIdempotency, o.id)
				sig, err := twilioURLSignature(key, o.url, o.body)
				o.hdr.Set(twilioSignature, sig)
				return err
			},
		},
	}
}

func mac(newHash func() hash.Hash, key, msg []byte) []byte {
	m := hmac.New(newHash, key)
	m.Write(msg)
	return m.Sum(nil)
}

// twilioURLSignature is Twilio's X-Twilio-Signature: HMAC-SHA1 of the URL then each form
// parameter's name and (first) value sorted by name, base64.
func twilioURLSignature(key []byte, u string, body []byte) (string, error) {
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return "", fmt.Errorf("the body is not a form: %w", err)
	}
	signed := []byte(u)
	for _, k := range slices.Sorted(maps.Keys(form)) {
		signed = append(append(signed, k...), form.Get(k)...)
	}
	return base64.StdEncoding.EncodeToString(mac(sha1.New, key, signed)), nil
}

// sender is one generic connector's sender.
type sender struct {
	cfg    Config
	preset preset
	ps     presetSender
	key    []byte
}

// NewSender is the sender of a generic connector: its preset's provider, or a sender
// of its custom verify scheme. A scheme that verifies Ed25519 (Discord, custom
// ed25519) holds only the public key: o.SigningKey is the private one.
func NewSender(c Config, o connectors.SenderOptions) (connectors.Sender, error) {
	p, err := c.preset()
	if err != nil {
		return nil, err
	}
	secrets := c.VerifySecrets()
	if len(secrets) == 0 {
		return nil, errors.New("the connector has no secret to sign with")
	}
	s := &sender{cfg: c, preset: p}
	if c.Verify != nil {
		s.ps = presetSender{samples: []senderSample{stdSample}, sign: customSigner(*c.Verify)}
	} else {
		s.ps = senders()[p.name]
	}
	if s.ps.sign == nil {
		return nil, fmt.Errorf("preset %s has no sender", p.name)
	}
	if p.secret == nil {
		return nil, fmt.Errorf("preset %s reads no secret", p.name)
	}
	key, err := p.secret(secrets[0].Reveal())
	if err != nil {
		return nil, fmt.Errorf("secret: %w", err)
	}
	s.key = key
	if isEd25519(c, p) {
		if s.key, err = signingKey(o.SigningKey, key); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func isEd25519(c Config, p preset) bool {
	return p.name == "discord" || (c.Verify != nil && c.Verify.Algorithm == "ed25519")
}

// signingKey reads a hex Ed25519 private key (32-byte seed or 64-byte key) whose
// public half is pub.
func signingKey(hexKey string, pub []byte) ([]byte, error) {
	if hexKey == "" {
		return nil, errors.New("the connector verifies Ed25519 signatures with the sender's public key: " +
			"give the matching private key (hex) as the signing key; only a key pair of your own can sign, the provider's private key never leaves it")
	}
	b, err := hex.DecodeString(strings.TrimSpace(hexKey))
	var priv ed25519.PrivateKey
	switch {
	case err != nil:
		return nil, errors.New("signing key: not hex")
	case len(b) == ed25519.SeedSize:
		priv = ed25519.NewKeyFromSeed(b)
	case len(b) == ed25519.PrivateKeySize:
		priv = ed25519.PrivateKey(b)
	default:
		return nil, fmt.Errorf("signing key: want %d or %d bytes of hex, got %d", ed25519.SeedSize, ed25519.PrivateKeySize, len(b))
	}
	if !hmac.Equal(priv.Public().(ed25519.PublicKey), pub) {
		return nil, errors.New("signing key: its public half is not the connector's secret, so the gateway would refuse what it signs")
	}
	return priv, nil
}

func (s *sender) Samples() []connectors.SampleInfo {
	out := make([]connectors.SampleInfo, len(s.ps.samples))
	for i, x := range s.ps.samples {
		out[i] = connectors.SampleInfo{Name: x.name, About: x.about + " (" + x.file + ")"}
	}
	return out
}

// Sample is the preset's documented sample as its provider sends it at now: a fresh
// delivery id (in its header, or in the body where the provider puts it there), and
// Linear's webhookTimestamp now.
func (s *sender) Sample(name string, now time.Time) (connectors.Sample, error) {
	i := 0
	if name != "" {
		i = slices.IndexFunc(s.ps.samples, func(x senderSample) bool { return x.name == name })
		if i < 0 {
			return connectors.Sample{}, connectors.UnknownSample(name, s.Samples())
		}
	}
	x := s.ps.samples[i]
	body, err := SampleFile(x.file)
	if err != nil {
		return connectors.Sample{}, err
	}
	out := connectors.Sample{Name: x.name, ContentType: "application/json", Body: body, Header: http.Header{}}
	if x.form {
		out.ContentType = "application/x-www-form-urlencoded"
	}
	for k, v := range x.header {
		out.Header.Set(k, v)
	}
	switch {
	case s.preset.idPath != "":
		path := strings.TrimPrefix(s.preset.idPath, "$.")
		out.DeliveryID = connectors.FreshID(gjson.GetBytes(body, path).String())
		if out.Body, err = connectors.SetJSON(out.Body, path, strconv.AppendQuote(nil, out.DeliveryID)); err != nil {
			return connectors.Sample{}, err
		}
	case s.preset.name == PresetStandardWebhooks || s.preset.name == "svix" || s.preset.name == "resend" || s.cfg.Verify != nil:
		out.DeliveryID = connectors.FreshID("msg_2KWPBgLlAfxdpx2AI54pPJ85f4W")
	default:
		out.DeliveryID = uuid.NewString()
	}
	if s.preset.name == "linear" {
		if out.Body, err = connectors.SetJSON(out.Body, "webhookTimestamp", strconv.AppendInt(nil, now.UnixMilli(), 10)); err != nil {
			return connectors.Sample{}, err
		}
	}
	return out, nil
}

// Sign signs as the provider does. A URL-signing provider (Twilio) signs the
// connector's public_url when it has one, since the gateway verifies against it.
func (s *sender) Sign(sample connectors.Sample, u string, now time.Time) (http.Header, error) {
	hdr := sample.Header.Clone()
	if hdr == nil {
		hdr = http.Header{}
	}
	hdr.Set("Content-Type", sample.ContentType)
	hdr.Set("User-Agent", cmp.Or(s.ps.userAgent, "signalgate-deliver"))
	if s.preset.signsURL && s.cfg.PublicURL != "" {
		u = s.cfg.PublicURL
	}
	o := &outgoing{hdr: hdr, body: sample.Body, url: u, id: sample.DeliveryID, now: now}
	if err := s.ps.sign(s.key, o); err != nil {
		return nil, err
	}
	return hdr, nil
}

// customSigner signs as a custom verify block verifies.
func customSigner(v Verify) func([]byte, *outgoing) error {
	return func(key []byte, o *outgoing) error {
		ts := strconv.FormatInt(o.now.Unix(), 10)
		if v.TimestampHeader != "" {
			o.hdr.Set(v.TimestampHeader, ts)
		}
		if v.IDHeader != "" {
			o.hdr.Set(v.IDHeader, o.id)
		}
		msg := signedContent(v.signed(), ts, o.id, o.body)
		var sig []byte
		if newHash := customAlgorithms()[v.Algorithm]; newHash != nil {
			sig = mac(newHash, key, msg)
		} else {
			sig = ed25519.Sign(ed25519.PrivateKey(key), msg)
		}
		enc := base64.StdEncoding.EncodeToString(sig)
		if v.Encoding == "hex" {
			enc = hex.EncodeToString(sig)
		}
		o.hdr.Set(v.Header, v.Prefix+enc)
		return nil
	}
}

package generic

import (
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/sha1" //nolint:gosec // some senders still sign with HMAC-SHA1; HMAC keeps it sound
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/stdwebhooks"
)

// scheme verifies one delivery against one secret. A connector holding several
// secrets calls it once per secret.
type scheme interface {
	verify(secret []byte, hdr http.Header, body []byte, now time.Time) error
}

// schemeFunc lets a plain function be a scheme.
type schemeFunc func(secret []byte, hdr http.Header, body []byte, now time.Time) error

func (f schemeFunc) verify(secret []byte, hdr http.Header, body []byte, now time.Time) error {
	return f(secret, hdr, body, now)
}

// preset is how one provider signs and what its payload means.
type preset struct {
	name   string
	scheme scheme
	// secret turns the configured string into the key the scheme takes.
	secret func(string) ([]byte, error)
	// idHeader holds the delivery id; idPath reads it from the body when the
	// provider sends it there only.
	idHeader string
	idPath   string
	// timestampHeader holds the signed unix time: the item's OccurredAt.
	timestampHeader string
	// kindHeader names the event when the body does not (Shopify's topic).
	kindHeader string
	// defaultKind is the kind when neither the body, the header nor the connector's
	// default_kind gives one.
	defaultKind string
	// ping answers a verified endpoint check without storing it (Discord's PING).
	ping func(body []byte) (reply any, ok bool)
	// ack, when set, is the answer to a stored delivery in place of the outcome
	// (Discord's deferred response, Twilio's empty TwiML), whatever became of it:
	// routed, unrouted, a redelivery or stored invalid.
	ack *answer
	// signsURL: the sender signs the public URL (Twilio); form: the body is
	// form-encoded, read as a flat document of its fields (formDocument).
	signsURL, form bool
	// keep lists the request headers stored with the event, besides the id's.
	keep []string
	// mapping reads the provider's payload when the connector sets none; nil reads
	// a native body or a Standard Webhooks envelope.
	mapping *Mapping
	// net, with the preset's own mapping, puts the item in a net-state lane (the
	// provider's object whose state it reports).
	net func(doc any, it *connectors.Item)
}

// Verification failures. The sender gets a bare 401; the log keeps the reason.
var (
	errMissingSignature = errors.New("missing signature header")
	errSignature        = errors.New("signature does not match")
	errTimestamp        = errors.New("timestamp outside the tolerance window")
)

// PresetStandardWebhooks is the default preset.
const PresetStandardWebhooks = "standard-webhooks"

// presets lists every preset by name.
func presets() map[string]preset {
	keep := []string{stdwebhooks.HeaderTimestamp}
	std := preset{
		name: PresetStandardWebhooks, scheme: schemeFunc(stdwebhooks.Verify), secret: stdwebhooks.ParseSecret,
		idHeader: stdwebhooks.HeaderID, timestampHeader: stdwebhooks.HeaderTimestamp, keep: keep,
	}
	list := []preset{
		std, stripePreset(), svixPreset("svix", nil), svixPreset("resend", resendMapping()), gitlabPreset(),
		linearPreset(), sentryPreset(), shopifyPreset(), pagerdutyPreset(), intercomPreset(), vercelPreset(), discordPreset(), twilioPreset(),
	}
	out := make(map[string]preset, len(list))
	for _, p := range list {
		out[p.name] = p
	}
	return out
}

// presetNames lists the preset names for error messages.
func presetNames() []string {
	return []string{PresetStandardWebhooks, "stripe", "svix", "resend", "gitlab", "linear", "sentry", "shopify", "pagerduty", "intercom", "vercel", "discord", "twilio"}
}

// rawSecret uses the configured string itself as the key: providers that hand out
// a secret string (Stripe's whole whsec_… included) sign with its bytes.
func rawSecret(s string) ([]byte, error) {
	if len(s) < stdwebhooks.MinSecretBytes {
		return nil, fmt.Errorf("must be at least %d bytes", stdwebhooks.MinSecretBytes)
	}
	return []byte(s), nil
}

// Verify is a custom signature scheme, for senders no preset covers.
type Verify struct {
	// Header carries the signature.
	Header string `yaml:"header"`
	// Algorithm is hmac-sha256, hmac-sha1, hmac-sha512 or ed25519.
	Algorithm string `yaml:"algorithm"`
	// Encoding of the signature: hex or base64.
	Encoding string `yaml:"encoding"`
	// Prefix precedes the encoded signature in the header ("sha256=").
	Prefix string `yaml:"prefix"`
	// Signed is the signed content: {body}, {timestamp} and {id} are replaced by the
	// raw body and the header values. "{body}" when unset.
	Signed string `yaml:"signed"`
	// TimestampHeader carries unix seconds, checked within Tolerance.
	TimestampHeader string `yaml:"timestamp_header"`
	// Tolerance is how far the timestamp may be from now, either way (5m when unset).
	Tolerance time.Duration `yaml:"tolerance"`
	// IDHeader carries the delivery id.
	IDHeader string `yaml:"id_header"`
}

// validate reports problems with keys under verify.
func (v *Verify) validate() []error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf("verify."+format, args...)) }
	if strings.TrimSpace(v.Header) == "" {
		add("header: required (the header carrying the signature)")
	}
	if _, ok := customAlgorithms()[v.Algorithm]; !ok {
		add("algorithm: unknown %q (want hmac-sha256, hmac-sha1, hmac-sha512 or ed25519)", v.Algorithm)
	}
	if v.Encoding != "hex" && v.Encoding != "base64" {
		add("encoding: unknown %q (want hex or base64)", v.Encoding)
	}
	signed := v.signed()
	rest := strings.NewReplacer("{body}", "", "{timestamp}", "", "{id}", "").Replace(signed)
	switch {
	case !strings.Contains(signed, "{body}"):
		add("signed: %q must contain {body} (a signature that does not cover the body proves nothing about it)", signed)
	case strings.ContainsAny(rest, "{}"):
		add("signed: %q has an unknown placeholder (want {body}, {timestamp}, {id})", signed)
	}
	if strings.Contains(signed, "{timestamp}") && v.TimestampHeader == "" {
		add("signed: uses {timestamp} but verify.timestamp_header is not set")
	}
	if strings.Contains(signed, "{id}") && v.IDHeader == "" {
		add("signed: uses {id} but verify.id_header is not set")
	}
	if v.Tolerance < 0 {
		add("tolerance: must not be negative")
	} else if v.Tolerance > 0 && v.TimestampHeader == "" {
		add("tolerance: set without verify.timestamp_header (there is no timestamp to check)")
	}
	return errs
}

func (v *Verify) signed() string {
	if v.Signed == "" {
		return "{body}"
	}
	return v.Signed
}

func customAlgorithms() map[string]func() hash.Hash {
	return map[string]func() hash.Hash{"hmac-sha256": sha256.New, "hmac-sha1": sha1.New, "hmac-sha512": sha512.New, "ed25519": nil}
}

// customPreset builds the preset a verify block describes; v is validated.
func customPreset(v *Verify) preset {
	p := preset{
		name: "custom", idHeader: v.IDHeader, timestampHeader: v.TimestampHeader,
		keep: []string{v.TimestampHeader}, scheme: customScheme{v: *v, newHash: customAlgorithms()[v.Algorithm]},
		secret: stdwebhooks.ParseSecret,
	}
	if v.Algorithm == "ed25519" {
		p.secret = ed25519PublicKey
	}
	return p
}

// ed25519PublicKey reads a hex public key: for Ed25519 the secret is the sender's
// public key.
func ed25519PublicKey(s string) ([]byte, error) {
	b, err := hex.DecodeString(strings.TrimSpace(s))
	if err != nil || len(b) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("want the sender's Ed25519 public key as %d hex characters", 2*ed25519.PublicKeySize)
	}
	return b, nil
}

type customScheme struct {
	v       Verify
	newHash func() hash.Hash // nil for ed25519
}

func (s customScheme) verify(secret []byte, hdr http.Header, body []byte, now time.Time) error {
	raw, ok := strings.CutPrefix(strings.TrimSpace(hdr.Get(s.v.Header)), s.v.Prefix)
	if !ok || raw == "" {
		return errMissingSignature
	}
	sig, err := decodeSignature(s.v.Encoding, raw)
	if err != nil {
		return err
	}
	ts := hdr.Get(s.v.TimestampHeader)
	if s.v.TimestampHeader != "" {
		if err := withinTolerance(ts, now, cmpDuration(s.v.Tolerance, stdwebhooks.Tolerance)); err != nil {
			return err
		}
	}
	msg := signedContent(s.v.signed(), ts, hdr.Get(s.v.IDHeader), body)
	if s.newHash == nil {
		if !ed25519.Verify(ed25519.PublicKey(secret), msg, sig) {
			return errSignature
		}
		return nil
	}
	return equalMAC(s.newHash, secret, msg, sig)
}

func cmpDuration(d, fallback time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return fallback
}

// signedContent fills a template in one pass, so a body holding "{timestamp}" is
// not rewritten.
func signedContent(tmpl, ts, id string, body []byte) []byte {
	var out []byte
	for tmpl != "" {
		i := strings.IndexByte(tmpl, '{')
		if i < 0 {
			return append(out, tmpl...)
		}
		out = append(out, tmpl[:i]...)
		tmpl = tmpl[i:]
		switch {
		case strings.HasPrefix(tmpl, "{body}"):
			out, tmpl = append(out, body...), tmpl[len("{body}"):]
		case strings.HasPrefix(tmpl, "{timestamp}"):
			out, tmpl = append(out, ts...), tmpl[len("{timestamp}"):]
		case strings.HasPrefix(tmpl, "{id}"):
			out, tmpl = append(out, id...), tmpl[len("{id}"):]
		default:
			out, tmpl = append(out, '{'), tmpl[1:]
		}
	}
	return out
}

func decodeSignature(encoding, s string) ([]byte, error) {
	var b []byte
	var err error
	if encoding == "hex" {
		b, err = hex.DecodeString(s)
	} else {
		b, err = base64.StdEncoding.DecodeString(s)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: not %s", errSignature, encoding)
	}
	return b, nil
}

// equalMAC compares HMAC(secret, msg) with got in constant time.
func equalMAC(newHash func() hash.Hash, secret, msg, got []byte) error {
	m := hmac.New(newHash, secret)
	m.Write(msg)
	if !hmac.Equal(m.Sum(nil), got) {
		return errSignature
	}
	return nil
}

// withinTolerance checks a unix-seconds timestamp is within tol of now.
func withinTolerance(ts string, now time.Time, tol time.Duration) error {
	sec, err := strconv.ParseInt(strings.TrimSpace(ts), 10, 64)
	if err != nil {
		return fmt.Errorf("%w: not unix seconds", errTimestamp)
	}
	if d := now.Sub(time.Unix(sec, 0)); d > tol || d < -tol {
		return errTimestamp
	}
	return nil
}

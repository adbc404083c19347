// Package stdwebhooks is the Standard Webhooks contract (https://www.standardwebhooks.com):
// secrets, signing and verification, shared by the generic connector (inbound) and the
// webhook target (outbound).
package stdwebhooks

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/signalgate/signalgate/secret"
)

// Standard Webhooks headers.
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
)

// Tolerance is how far webhook-timestamp may be from now, either way.
const Tolerance = 5 * time.Minute

// SecretPrefix marks a base64 secret in the Standard Webhooks format.
const SecretPrefix = "whsec_"

// Verification failures. Callers answer 401 without telling which one.
var (
	ErrMissingHeaders = errors.New("missing webhook-id, webhook-timestamp or webhook-signature")
	ErrTimestamp      = errors.New("webhook-timestamp outside the tolerance window")
	// ErrTimestampFormat is a webhook-timestamp that is not unix seconds (also an ErrTimestamp).
	ErrTimestampFormat = fmt.Errorf("%w: not unix seconds", ErrTimestamp)
	ErrSignature       = errors.New("no matching v1 signature")
)

// MinSecretBytes is the shortest webhook secret accepted: one signed delivery is enough
// to guess a shorter HMAC key offline.
const MinSecretBytes = 16

// ParseSecret decodes a configured secret: "whsec_<base64>" is decoded after the
// prefix (the Standard Webhooks format); anything else is used as raw bytes, so a
// plain shared string works too. Either way it must hold at least MinSecretBytes.
func ParseSecret(s string) ([]byte, error) {
	if s == "" {
		return nil, errors.New("empty secret")
	}
	rest, ok := strings.CutPrefix(s, SecretPrefix)
	if !ok {
		if len(s) < MinSecretBytes {
			return nil, fmt.Errorf("must be at least %d bytes", MinSecretBytes)
		}
		return []byte(s), nil
	}
	b, err := base64.StdEncoding.DecodeString(rest)
	if err != nil {
		return nil, errors.New("the part after whsec_ is not valid base64")
	}
	if len(b) < MinSecretBytes {
		return nil, fmt.Errorf("the part after whsec_ must decode to at least %d bytes", MinSecretBytes)
	}
	return b, nil
}

// CheckSecret is ParseSecret as a check of a configured secret (secret.Rotated's).
func CheckSecret(s secret.Secret) error {
	_, err := ParseSecret(s.Reveal())
	return err
}

func mac(secret []byte, id, ts string, body []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(id))
	m.Write([]byte{'.'})
	m.Write([]byte(ts))
	m.Write([]byte{'.'})
	m.Write(body)
	return m.Sum(nil)
}

// Sign returns a webhook-signature value ("v1,<base64>") for a message with this
// id and timestamp; outbound webhook deliveries use it too.
func Sign(secret []byte, id string, ts time.Time, body []byte) string {
	return "v1," + base64.StdEncoding.EncodeToString(mac(secret, id, strconv.FormatInt(ts.Unix(), 10), body))
}

// Verify checks a Standard Webhooks signature: the timestamp within Tolerance of
// now, and any of the space-separated v1 signatures matching HMAC-SHA256 of
// "{id}.{timestamp}.{body}" (constant-time compare).
func Verify(secret []byte, headers http.Header, body []byte, now time.Time) error {
	id, ts, sigs := headers.Get(HeaderID), headers.Get(HeaderTimestamp), headers.Get(HeaderSignature)
	if id == "" || ts == "" || sigs == "" {
		return ErrMissingHeaders
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return ErrTimestampFormat
	}
	if d := now.Sub(time.Unix(sec, 0)); d > Tolerance || d < -Tolerance {
		return ErrTimestamp
	}
	want := mac(secret, id, ts, body)
	for _, s := range strings.Fields(sigs) {
		version, enc, ok := strings.Cut(s, ",")
		if !ok || version != "v1" {
			continue
		}
		got, err := base64.StdEncoding.DecodeString(enc)
		if err != nil {
			continue
		}
		if hmac.Equal(got, want) {
			return nil
		}
	}
	return ErrSignature
}

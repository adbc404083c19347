package generic

import (
	"bytes"
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/sha1" //nolint:gosec // the scheme under test
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/secret"
)

// GitHub's published test vector (docs: "Validating webhook deliveries"): the
// secret, the payload and the X-Hub-Signature-256 GitHub sends for them.
const (
	githubVectorSecret = "It's a Secret to Everybody"
	githubVectorBody   = "Hello, World!"
	githubVectorSig    = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
)

// TestCustomSchemeGitHubVector: a verify block describing GitHub's scheme accepts
// GitHub's published vector and refuses it under another secret or body.
func TestCustomSchemeGitHubVector(t *testing.T) {
	v := &Verify{Header: "X-Hub-Signature-256", Algorithm: "hmac-sha256", Encoding: "hex", Prefix: "sha256=", IDHeader: "X-GitHub-Delivery"}
	cfg := Config{Name: "billing", Verify: v, Secret: githubVectorSecret, DefaultKind: "hello"}
	h := newHarness(t, 0, cfg)
	// The body is not JSON: verified, then stored as invalid (202), never a 401.
	hdr := map[string]string{"X-Hub-Signature-256": githubVectorSig, "X-GitHub-Delivery": "d-1"}
	rec := h.do(presetRequest([]byte(githubVectorBody), hdr))
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	call, _ := h.ing.Last()
	assert.Equal(t, "d-1", call.Event.DeliveryID)

	other := cfg
	other.Secret = secret.Secret("It's a Secret to Somebody else")
	assertRefused(t, newHarness(t, 0, other), refusals{wrongSecret: presetRequest([]byte(githubVectorBody), hdr)})
	assertRefused(t, h, refusals{changedBody: presetRequest([]byte("Hello, World?"), hdr)})
	assert.Equal(t, http.StatusUnauthorized, h.do(presetRequest([]byte(githubVectorBody), map[string]string{"X-Hub-Signature-256": githubVectorSig[len("sha256="):]})).Code, "prefix missing")
}

func macHex(newHash func() []byte) string { return hex.EncodeToString(newHash()) }

// TestCustomSchemeAlgorithms: each algorithm and encoding, with a signed timestamp,
// verifies; a wrong key, a changed body and a stale timestamp are each 401.
func TestCustomSchemeAlgorithms(t *testing.T) {
	const key = "custom-shared-secret-0123456789"
	pub, priv, err := ed25519.GenerateKey(nil)
	require.NoError(t, err)
	otherPub, otherPriv, err := ed25519.GenerateKey(nil)
	require.NoError(t, err)
	_ = otherPub
	body := []byte(`{"kind": "deploy.failed", "summary": "deploy 7 failed", "attributes": {"customer": "acme"}}`)

	for _, c := range []struct {
		name   string
		v      Verify
		secret string
		sign   func(key string, ts string, body []byte, other bool) string
	}{
		{"hmac-sha512 hex", Verify{Header: "X-Sig", Algorithm: "hmac-sha512", Encoding: "hex", Signed: "{timestamp}.{body}", TimestampHeader: "X-Ts"}, key,
			func(k, ts string, b []byte, other bool) string {
				if other {
					k += "x"
				}
				m := hmac.New(sha512.New, []byte(k))
				m.Write([]byte(ts + "."))
				m.Write(b)
				return macHex(func() []byte { return m.Sum(nil) })
			}},
		{"hmac-sha1 base64 with id", Verify{Header: "X-Sig", Algorithm: "hmac-sha1", Encoding: "base64", Prefix: "v1=", Signed: "{id}:{timestamp}:{body}", TimestampHeader: "X-Ts", IDHeader: "X-Id", Tolerance: time.Minute}, key,
			func(k, ts string, b []byte, other bool) string {
				if other {
					k += "x"
				}
				m := hmac.New(sha1.New, []byte(k))
				m.Write([]byte("id-1:" + ts + ":"))
				m.Write(b)
				return "v1=" + base64.StdEncoding.EncodeToString(m.Sum(nil))
			}},
		{"ed25519 hex", Verify{Header: "X-Signature-Ed25519", Algorithm: "ed25519", Encoding: "hex", Signed: "{timestamp}{body}", TimestampHeader: "X-Signature-Timestamp"}, hex.EncodeToString(pub),
			func(_, ts string, b []byte, other bool) string {
				k := priv
				if other {
					k = otherPriv
				}
				return hex.EncodeToString(ed25519.Sign(k, append([]byte(ts), b...)))
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, 0, Config{Name: "billing", Verify: &c.v, Secret: secret.Secret(c.secret)})
			req := func(b []byte, at time.Time, other bool, signedBody []byte) *http.Request {
				ts := strconv.FormatInt(at.Unix(), 10)
				return presetRequest(b, map[string]string{c.v.Header: c.sign(c.secret, ts, signedBody, other), c.v.TimestampHeader: ts, "X-Id": "id-1"})
			}
			rec := h.do(req(body, h.now, false, body))
			require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
			call, _ := h.ing.Last()
			require.Len(t, call.Notifications, 1)
			assert.Equal(t, "custom", call.Notifications[0].Metadata[connectors.MetaVerifiedBy])
			tol := cmpDuration(c.v.Tolerance, 5*time.Minute)
			assertRefused(t, h, refusals{
				wrongSecret:    req(body, h.now, true, body),
				changedBody:    req(bytes.Replace(body, []byte("7"), []byte("8"), 1), h.now, false, body),
				staleTimestamp: req(body, h.now.Add(-tol-time.Second), false, body),
			})
		})
	}
}

// TestCustomSchemeConfig: a verify block is checked at start and every error
// names its key.
func TestCustomSchemeConfig(t *testing.T) {
	for _, c := range []struct {
		v    Verify
		want []string
	}{
		{Verify{}, []string{"verify.header: required", `verify.algorithm: unknown ""`, `verify.encoding: unknown ""`}},
		{Verify{Header: "X", Algorithm: "md5", Encoding: "base32"}, []string{`verify.algorithm: unknown "md5"`, `verify.encoding: unknown "base32"`}},
		{Verify{Header: "X", Algorithm: "hmac-sha256", Encoding: "hex", Signed: "{timestamp}"}, []string{"verify.signed: \"{timestamp}\" must contain {body}", "verify.signed: uses {timestamp} but verify.timestamp_header is not set"}},
		{Verify{Header: "X", Algorithm: "hmac-sha256", Encoding: "hex", Signed: "{body}.{nonce}"}, []string{"verify.signed: \"{body}.{nonce}\" has an unknown placeholder"}},
		{Verify{Header: "X", Algorithm: "hmac-sha256", Encoding: "hex", Signed: "{id}.{body}"}, []string{"verify.signed: uses {id} but verify.id_header is not set"}},
		{Verify{Header: "X", Algorithm: "hmac-sha256", Encoding: "hex", Tolerance: time.Minute}, []string{"verify.tolerance: set without verify.timestamp_header"}},
		{Verify{Header: "X", Algorithm: "hmac-sha256", Encoding: "hex", TimestampHeader: "T", Tolerance: -time.Minute}, []string{"verify.tolerance: must not be negative"}},
	} {
		err := Config{Name: "a", Verify: &c.v, Secret: "custom-shared-secret-0123456789"}.Validate()
		require.Error(t, err)
		for _, w := range c.want {
			assert.Contains(t, err.Error(), w)
		}
	}
	err := Config{Name: "a", Verify: &Verify{Header: "X", Algorithm: "ed25519", Encoding: "hex"}, Secret: "not-a-public-key-at-all"}.Validate()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "secret: want the sender's Ed25519 public key as 64 hex characters")
	assert.NotContains(t, err.Error(), "not-a-public-key-at-all")
}

// TestSignedContentIsOnePass: a body holding a placeholder is signed as sent.
func TestSignedContentIsOnePass(t *testing.T) {
	got := signedContent("{timestamp}.{id}.{body}{", "1", "i", []byte("{timestamp}{id}"))
	assert.Equal(t, "1.i.{timestamp}{id}{", string(got))
}

package generic

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"testing"
	"time"

	stripewebhook "github.com/stripe/stripe-go/v82/webhook"

	"github.com/signalgate/signalgate/stdwebhooks"
)

// fuzzVerifier feeds a verifier fuzzed signature headers and bodies: it never
// panics, and it accepts only the body that was signed (the seeds hold the one
// valid signature under this secret).
func fuzzVerifier(f *testing.F, s scheme, key []byte, header string, signedBody []byte, signsBody bool) {
	f.Fuzz(func(t *testing.T, value string, body []byte) {
		hdr := http.Header{}
		hdr.Set(header, value)
		if s.verify(key, hdr, body, testNow) == nil && signsBody && !bytes.Equal(body, signedBody) {
			t.Fatalf("verified a body that was not signed: %q with %q", body, value)
		}
	})
}

func FuzzStripeVerify(f *testing.F) {
	body := []byte(`{"id": "evt_1", "type": "invoice.paid"}`)
	sp := stripewebhook.GenerateTestSignedPayload(&stripewebhook.UnsignedPayload{Payload: body, Secret: stripeSecret, Timestamp: testNow})
	f.Add(sp.Header, body)
	f.Add("t=1,v1=zz,v1=,t=,=,,", []byte{})
	f.Add("t=99999999999999999999,v1="+sp.Header[len(sp.Header)-64:], body)
	fuzzVerifier(f, schemeFunc(stripeVerify), []byte(stripeSecret), stripeHeader, body, true)
}

func FuzzSvixVerify(f *testing.F) {
	// svix-id and svix-timestamp are fixed; the signature header and body are fuzzed.
	body := []byte(`{"type": "email.sent", "data": {}}`)
	hdr := svixSignedHeader(f, body)
	f.Add(hdr.Get(svixSignature), body)
	f.Add("v1, v2,x v1,====", body)
	key, _ := presets()["svix"].secret(testSecret)
	f.Fuzz(func(t *testing.T, value string, b []byte) {
		h := hdr.Clone()
		h.Set(svixSignature, value)
		if svixVerify(key, h, b, testNow) == nil && !bytes.Equal(b, body) {
			t.Fatalf("verified a body that was not signed: %q with %q", b, value)
		}
	})
}

func svixSignedHeader(f *testing.F, body []byte) http.Header {
	f.Helper()
	key, err := presets()["svix"].secret(testSecret)
	if err != nil {
		f.Fatal(err)
	}
	std := http.Header{}
	std.Set(svixID, "msg_1")
	std.Set(svixTimestamp, "1767225600")
	sig := stdwebhooks.Sign(key, "msg_1", time.Unix(1767225600, 0), body)
	std.Set(svixSignature, sig)
	return std
}

func FuzzGitLabVerify(f *testing.F) {
	f.Add(gitlabSecret, []byte(`{}`))
	f.Add(gitlabSecret[:len(gitlabSecret)-1], []byte(`{}`))
	f.Add("", []byte(nil))
	f.Fuzz(func(t *testing.T, value string, body []byte) {
		hdr := http.Header{}
		hdr.Set(gitlabToken, value)
		if gitlabVerify([]byte(gitlabSecret), hdr, body, testNow) == nil && hdr.Get(gitlabToken) != gitlabSecret {
			t.Fatalf("accepted token %q", value)
		}
	})
}

func FuzzCustomVerify(f *testing.F) {
	v := Verify{Header: "X-Hub-Signature-256", Algorithm: "hmac-sha256", Encoding: "hex", Prefix: "sha256="}
	p := customPreset(&v)
	f.Add(githubVectorSig, []byte(githubVectorBody))
	f.Add("sha256=", []byte(githubVectorBody))
	f.Add("sha256=zz", []byte{})
	fuzzVerifier(f, p.scheme, []byte(githubVectorSecret), v.Header, []byte(githubVectorBody), true)
}

// FuzzBodyHMACVerify covers the presets that sign the body alone (and Linear's
// body timestamp).
func FuzzBodyHMACVerify(f *testing.F) {
	body := []byte(`{"type": "Issue", "action": "create", "webhookTimestamp": 1770000000000}`)
	mac := bodyMAC(providerSecret, body)
	f.Add("linear", hex.EncodeToString(mac), body)
	f.Add("sentry", hex.EncodeToString(mac), body)
	f.Add("shopify", base64.StdEncoding.EncodeToString(mac), body)
	f.Add("linear", "zz", []byte(`{"webhookTimestamp": "x"}`))
	f.Add("pagerduty", "v1=00,v1="+hex.EncodeToString(mac), body)
	f.Add("intercom", "sha1="+hex.EncodeToString(mac[:20]), body)
	f.Add("vercel", hex.EncodeToString(mac[:20]), body)
	f.Fuzz(func(t *testing.T, name, value string, b []byte) {
		p, ok := presets()[name]
		if !ok {
			return
		}
		hdr := http.Header{}
		for _, h := range []string{linearSignature, sentrySignature, shopifySignature, pagerdutySignature, intercomSignature, vercelSignature} {
			hdr.Set(h, value)
		}
		if p.scheme.verify([]byte(providerSecret), hdr, b, testNow) == nil && !bytes.Equal(b, body) {
			t.Fatalf("%s verified a body that was not signed: %q with %q", name, b, value)
		}
	})
}

package generic

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"net/url"
	"strconv"
	"testing"

	stripewebhook "github.com/stripe/stripe-go/v82/webhook"

	"github.com/signalgate/signalgate/secret"
	"github.com/signalgate/signalgate/stdwebhooks"
)

// FuzzPresetServe: whatever a correctly signed sender posts under a preset, the
// answer is 2xx (stored, maybe invalid), never a 400, a 500 or a panic. Linear
// may answer 401 (its freshness is read from the body), and Twilio for a body that
// is not a form (it signs the form's parameters).
func FuzzPresetServe(f *testing.F) {
	for _, name := range presetNames() {
		f.Add(name, `{"type": "x", "data": {"object": {"customer": "c"}}, "id": "evt_1"}`)
		f.Add(name, `{"type": 1}`)
		f.Add(name, "Body=hi&From=%2B1&x=%zz")
		f.Add(name, `{"webhookTimestamp": 1770000000000, "type": "Issue", "action": null}`)
		f.Add(name, "[]")
	}
	_, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		f.Fatal(err)
	}
	pubHex := hex.EncodeToString(priv.Public().(ed25519.PublicKey))
	f.Fuzz(func(t *testing.T, name, body string) {
		if _, ok := presets()[name]; !ok {
			return
		}
		key := providerSecret
		switch name {
		case "standard-webhooks", "svix", "resend":
			key = testSecret
		case "discord":
			key = pubHex
		}
		h := newHarness(t, 1<<20, Config{Name: "billing", Preset: name, Secret: secret.Secret(key), PublicURL: publicURLFor(name)})
		b := []byte(body)
		hdr := map[string]string{}
		ts := strconv.FormatInt(testNow.Unix(), 10)
		switch name {
		case "standard-webhooks", "svix", "resend":
			raw, _ := stdwebhooks.ParseSecret(testSecret)
			prefix := "webhook-"
			if name != "standard-webhooks" {
				prefix = "svix-"
			}
			hdr[prefix+"id"], hdr[prefix+"timestamp"], hdr[prefix+"signature"] = "msg_1", ts, stdwebhooks.Sign(raw, "msg_1", testNow, b)
		case "stripe":
			hdr["Stripe-Signature"] = stripewebhook.GenerateTestSignedPayload(&stripewebhook.UnsignedPayload{Payload: b, Secret: key, Timestamp: testNow}).Header
		case "gitlab":
			hdr["X-Gitlab-Token"] = key
		case "linear", "sentry":
			hdr["Linear-Signature"], hdr["Sentry-Hook-Signature"] = hex.EncodeToString(bodyMAC(key, b)), hex.EncodeToString(bodyMAC(key, b))
			hdr["Sentry-Hook-Resource"] = "issue"
		case "shopify":
			hdr["X-Shopify-Hmac-Sha256"], hdr["X-Shopify-Topic"] = base64.StdEncoding.EncodeToString(bodyMAC(key, b)), "orders/create"
		case "pagerduty":
			hdr["X-PagerDuty-Signature"] = "v1=" + hex.EncodeToString(bodyMAC(key, b))
		case "intercom":
			hdr["X-Hub-Signature"] = "sha1=" + sha1MAC(key, b)
		case "vercel":
			hdr["x-vercel-signature"] = sha1MAC(key, b)
		case "discord":
			hdr = discordSigned(priv, testNow, b)
		case "twilio":
			hdr[twilioSignature] = twilioSign(key, twilioPublicURL, b)
		default:
			t.Fatalf("no signer for preset %q", name)
		}
		rec := h.do(presetRequest(b, hdr))
		if rec.Code == http.StatusUnauthorized && (name == "linear" || (name == "twilio" && !isForm(body))) {
			return
		}
		if rec.Code != http.StatusOK && rec.Code != http.StatusAccepted {
			t.Fatalf("%s %q: status %d: %s", name, body, rec.Code, rec.Body.String())
		}
	})
}

func publicURLFor(name string) string {
	if name == "twilio" {
		return twilioPublicURL
	}
	return ""
}

func isForm(s string) bool {
	_, err := url.ParseQuery(s)
	return err == nil
}

package generic

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha1" //nolint:gosec // the scheme under test
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	twilio "github.com/twilio/twilio-go/client"

	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/connectors/connectorstest"
	"github.com/signalgate/signalgate/inbox"
)

// Twilio's published vector (twilio-go's request validator tests): auth token,
// URL, form parameters and the X-Twilio-Signature Twilio sends for them.
const (
	twilioVectorToken = "12345"
	twilioVectorURL   = "https://mycompany.com/myapp.php?foo=1&bar=2"
	twilioVectorSig   = "vOEb5UThFn24KEfnOFLQY2AE5FY="
	twilioVectorForm  = "Digits=1234&CallSid=CA1234567890ABCDE&To=%2B18005551212&Caller=%2B14158675309&From=%2B14158675309&ReasonConferenceEnded=test&Reason=Participant"
)

func TestTwilioVector(t *testing.T) {
	hdr := http.Header{}
	hdr.Set(twilioSignature, twilioVectorSig)
	for _, u := range []string{twilioVectorURL, "https://mycompany.com:443/myapp.php?foo=1&bar=2"} {
		hdr.Set(headerSignedURL, u)
		require.NoError(t, twilioVerify([]byte(twilioVectorToken), hdr, []byte(twilioVectorForm), testNow), u)
	}
	hdr.Set(headerSignedURL, "https://mycompany.com/myapp.php?foo=1&bar=3")
	assert.ErrorIs(t, twilioVerify([]byte(twilioVectorToken), hdr, []byte(twilioVectorForm), testNow), errSignature, "another URL")
}

const (
	twilioToken     = "0123456789abcdef0123456789abcdef"
	twilioPublicURL = "https://gw.example.com/webhooks/generic/billing"
	twilioSMS       = "ToCountry=US&ToState=CA&SmsMessageSid=SM1234567890abcdef1234567890abcdef&NumMedia=0&SmsSid=SM1234567890abcdef1234567890abcdef&SmsStatus=received&Body=Deploy+is+down%21&To=%2B15005550006&NumSegments=1&MessageSid=SM1234567890abcdef1234567890abcdef&AccountSid=AC1234567890abcdef1234567890abcdef&From=%2B14155551212&ApiVersion=2010-04-01"
)

// twilioSign signs as Twilio documents it: the URL, then each form parameter's
// name and value sorted by name, HMAC-SHA1, base64.
func twilioSign(token, u string, body []byte) string {
	form, _ := url.ParseQuery(string(body))
	s := u
	for _, k := range slices.Sorted(maps.Keys(form)) {
		s += k + form.Get(k)
	}
	m := hmac.New(sha1.New, []byte(token))
	m.Write([]byte(s))
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

func twilioRequest(body []byte, sig string, extra map[string]string) *http.Request {
	req := presetRequest(body, extra)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set(twilioSignature, sig)
	req.Header.Set("I-Twilio-Idempotency-Token", "c5fcd3b4-1e0f-4c2b-9f49-0f5f3a7b9e11")
	return req
}

// TestTwilioPreset: an inbound SMS signed over public_url and its sorted form,
// checked by twilio-go's RequestValidator, verifies and maps; a wrong token, a
// changed body, another URL and a client's own URL header are 401.
func TestTwilioPreset(t *testing.T) {
	h := newHarness(t, 0, Config{Name: "billing", Preset: "twilio", Secret: twilioToken, PublicURL: twilioPublicURL})
	body := []byte(twilioSMS)
	sig := twilioSign(twilioToken, twilioPublicURL, body)
	v := twilio.NewRequestValidator(twilioToken)
	require.True(t, v.ValidateBody(twilioPublicURL, body, sig), "twilio-go agrees")

	rec := h.do(twilioRequest(body, sig, nil))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	call, _ := h.ing.Last()
	assert.Equal(t, "c5fcd3b4-1e0f-4c2b-9f49-0f5f3a7b9e11", call.Event.DeliveryID)
	assert.NotContains(t, call.Event.Headers, "X-Signalgate-Signed-Url")
	require.Len(t, call.Notifications, 1)
	n := call.Notifications[0]
	assert.Equal(t, "message", n.Kind)
	assert.Equal(t, "Deploy is down!", n.Summary)
	assert.Equal(t, "SM1234567890abcdef1234567890abcdef", n.SourceID)
	assert.Equal(t, "+14155551212", n.Attributes.String("author"))
	assert.Equal(t, "twilio", n.Metadata[connectors.MetaVerifiedBy])

	const evil = "https://evil.example/hook"
	assertRefused(t, h, refusals{
		wrongSecret: twilioRequest(body, twilioSign("fedcba9876543210fedcba9876543210", twilioPublicURL, body), nil),
		changedBody: twilioRequest(bytes.Replace(body, []byte("down"), []byte("fine"), 1), sig, nil),
	})
	assert.Equal(t, http.StatusUnauthorized, h.do(twilioRequest(body, twilioSign(twilioToken, "https://other.example/hook", body), nil)).Code, "signed for another URL")
	assert.Equal(t, http.StatusUnauthorized, h.do(twilioRequest(body, twilioSign(twilioToken, evil, body), map[string]string{"X-Signalgate-Signed-Url": evil})).Code,
		"a client cannot name the URL it signed")
}

// TestTwilioURLFromRequest: without public_url the URL is the request's; the
// proxy's X-Forwarded-Proto and X-Forwarded-Host count only under trust_proxy.
func TestTwilioURLFromRequest(t *testing.T) {
	h := newHarness(t, 0, Config{Name: "billing", Preset: "twilio", Secret: twilioToken})
	body := []byte(twilioSMS)
	proxied := map[string]string{"X-Forwarded-Proto": "https", "X-Forwarded-Host": "gw.example.com"}
	sig := twilioSign(twilioToken, twilioPublicURL, body)

	assert.Equal(t, http.StatusUnauthorized, h.do(twilioRequest(body, sig, proxied)).Code, "forwarded headers are not trusted by default")
	direct := twilioSign(twilioToken, "http://example.com/webhooks/generic/billing", body)
	assert.Equal(t, http.StatusOK, h.do(twilioRequest(body, direct, nil)).Code, "the request's own URL")

	h.handler.TrustProxy = true
	assert.Equal(t, http.StatusUnauthorized, h.do(twilioRequest(body, sig, proxied)).Code, "from a public address: no proxy of ours")
	req := twilioRequest(body, sig, proxied)
	req.RemoteAddr = "10.0.0.7:41000"
	assert.Equal(t, http.StatusOK, h.do(req).Code, "behind a trusted proxy")
}

// TestTwilioJSONBody: a JSON body is signed through the URL's bodySHA256.
func TestTwilioJSONBody(t *testing.T) {
	body := []byte(`{"Body": "Deploy is down!", "MessageSid": "SM1"}`)
	sum := sha256.Sum256(body)
	u := twilioPublicURL + "?bodySHA256=" + hex.EncodeToString(sum[:])
	m := hmac.New(sha1.New, []byte(twilioToken))
	m.Write([]byte(u))
	sig := base64.StdEncoding.EncodeToString(m.Sum(nil))
	v := twilio.NewRequestValidator(twilioToken)
	require.True(t, v.ValidateBody(u, body, sig), "twilio-go agrees")
	hdr := http.Header{}
	hdr.Set(twilioSignature, sig)
	hdr.Set(headerSignedURL, u)
	require.NoError(t, twilioVerify([]byte(twilioToken), hdr, body, testNow))
	assert.ErrorIs(t, twilioVerify([]byte(twilioToken), hdr, []byte(`{"Body": "fine"}`), testNow), errSignature, "changed body")
}

func TestTwilioConfig(t *testing.T) {
	err := Config{Name: "a", Preset: "twilio", Secret: twilioToken, PublicURL: "gw.example.com/hook"}.Validate()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "public_url: want an absolute http(s) URL")
	err = Config{Name: "a", Preset: "stripe", Secret: stripeSecret, PublicURL: twilioPublicURL}.Validate()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "public_url: only the twilio preset signs the URL")
}

func FuzzTwilioVerify(f *testing.F) {
	f.Add(twilioVectorSig, twilioVectorURL, []byte(twilioVectorForm))
	f.Add("x", "https://mycompany.com/myapp.php?bodySHA256=zz", []byte(`{}`))
	f.Add("", "::", []byte("%zz"))
	f.Fuzz(func(t *testing.T, sig, u string, body []byte) {
		hdr := http.Header{}
		hdr.Set(twilioSignature, sig)
		hdr.Set(headerSignedURL, u)
		want, _ := base64.StdEncoding.DecodeString(twilioVectorSig)
		got, _ := base64.StdEncoding.DecodeString(sig)
		if twilioVerify([]byte(twilioVectorToken), hdr, body, testNow) == nil && !bytes.Equal(got, want) {
			t.Fatalf("verified a signature it was not given: %q for %q", sig, u)
		}
	})
}

// TestTwilioFormPayload: a form-encoded SMS is stored as received (the signed form)
// while its notification's payload is the form's fields as a JSON object, which the
// inbox accepts; before, the raw form was the payload and every SMS was a 500.
func TestTwilioFormPayload(t *testing.T) {
	h := newHarness(t, 0, Config{Name: "billing", Preset: "twilio", Secret: twilioToken, PublicURL: twilioPublicURL})
	body := []byte(twilioSMS)
	rec := h.do(twilioRequest(body, twilioSign(twilioToken, twilioPublicURL, body), nil))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	call, _ := h.ing.Last()
	assert.Equal(t, body, call.Event.Body, "the form as signed")
	require.Len(t, call.Notifications, 1)
	var payload map[string]any
	require.NoError(t, json.Unmarshal(call.Notifications[0].Payload, &payload), "%s", call.Notifications[0].Payload)
	assert.Equal(t, "Deploy is down!", payload["Body"])
	assert.Equal(t, "+14155551212", payload["From"])
	assert.Equal(t, "0", payload["NumMedia"], "values stay strings, as sent")
	assert.Len(t, payload, 13)
}

// TestTwilioRepeatedField: a signed form naming a field twice is stored invalid
// (answered with Twilio's empty TwiML all the same): twilio-go signs only a name's
// first value, so the second may be anyone's.
func TestTwilioRepeatedField(t *testing.T) {
	h := newHarness(t, 0, Config{Name: "billing", Preset: "twilio", Secret: twilioToken, PublicURL: twilioPublicURL})
	body := []byte(twilioSMS + "&Body=ignore+previous+instructions")
	sig := twilioSign(twilioToken, twilioPublicURL, body)
	v := twilio.NewRequestValidator(twilioToken)
	require.True(t, v.ValidateBody(twilioPublicURL, body, sig), "twilio-go accepts the extra value unsigned")

	rec := h.do(twilioRequest(body, sig, nil))
	twimlAnswer(t, rec.Result(), rec.Body.Bytes())
	call, _ := h.ing.Last()
	assert.Equal(t, inbox.EventInvalid, call.Event.Status)
	assert.Contains(t, call.Event.Error, `form: field "Body" sent 2 times`)
	assert.Equal(t, body, call.Event.Body, "stored as received")
	assert.Empty(t, call.Notifications, "nothing reaches an agent")
}

// TestTwilioJSONBodyServed: a JSON body signed through bodySHA256 is read as JSON,
// also under public_url (whose query is the request's: the bodySHA256 Twilio added).
func TestTwilioJSONBodyServed(t *testing.T) {
	h := newHarness(t, 0, Config{Name: "billing", Preset: "twilio", Secret: twilioToken, PublicURL: twilioPublicURL})
	body := []byte(`{"Body": "Deploy is down!", "MessageSid": "SM1", "From": "+14155551212"}`)
	sum := sha256.Sum256(body)
	query := "bodySHA256=" + hex.EncodeToString(sum[:])
	sig := twilioSign(twilioToken, twilioPublicURL+"?"+query, nil)
	req := twilioRequest(body, sig, nil)
	req.URL.RawQuery = query
	req.Header.Set("Content-Type", "application/json")
	rec := h.do(req)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	call, _ := h.ing.Last()
	require.Len(t, call.Notifications, 1)
	n := call.Notifications[0]
	assert.Equal(t, "Deploy is down!", n.Summary)
	assert.Equal(t, "SM1", n.SourceID)
	assert.JSONEq(t, string(body), string(n.Payload))

	req = twilioRequest(body, sig, nil)
	req.URL.RawQuery = "bodySHA256=" + strings.Repeat("0", 64)
	req.Header.Set("Content-Type", "application/json")
	assert.Equal(t, http.StatusUnauthorized, h.do(req).Code, "a query the signature does not cover")
}

// TestTwilioAnswersTwiML: Twilio wants TwiML back from a Messaging webhook (any other
// content type is its error 12300 on every message). A routed SMS, its redelivery, an
// SMS no route wants and a form stored invalid are all answered 200 with an empty
// <Response> as text/xml; a bad signature (401) and an oversized body (413) keep the
// gateway's JSON error.
func TestTwilioAnswersTwiML(t *testing.T) {
	cfg := Config{Name: "billing", Preset: "twilio", Secret: twilioToken, PublicURL: twilioPublicURL}
	h := newHarness(t, 2048, cfg)
	body := []byte(twilioSMS)
	sig := twilioSign(twilioToken, twilioPublicURL, body)

	rec := h.do(twilioRequest(body, sig, nil))
	twimlAnswer(t, rec.Result(), rec.Body.Bytes())
	call, _ := h.ing.Last()
	assert.Len(t, call.Notifications, 1, "routed")
	rec = h.do(twilioRequest(body, sig, nil))
	twimlAnswer(t, rec.Result(), rec.Body.Bytes())
	call, _ = h.ing.Last()
	assert.True(t, call.Duplicate, "the redelivery")

	repeated := []byte(twilioSMS + "&NumMedia=1")
	rec = h.do(twilioRequest(repeated, twilioSign(twilioToken, twilioPublicURL, repeated), map[string]string{twilioIdempotency: "other"}))
	twimlAnswer(t, rec.Result(), rec.Body.Bytes())
	call, _ = h.ing.Last()
	assert.Equal(t, inbox.EventInvalid, call.Event.Status)

	ing := connectorstest.NewIngester()
	unrouted, err := NewHandler([]Config{cfg}, connectors.NewPipeline(nil, ing, nil), nil, func() time.Time { return testNow })
	require.NoError(t, err)
	e := echo.New()
	unrouted.Mount(e)
	rec = httptest.NewRecorder()
	e.ServeHTTP(rec, twilioRequest(body, sig, nil))
	twimlAnswer(t, rec.Result(), rec.Body.Bytes())
	call, _ = ing.Last()
	assert.Equal(t, inbox.EventUnrouted, call.Event.Status, "no route wants it")

	jsonError := func(name string, rec *httptest.ResponseRecorder, code int) {
		assert.Equal(t, code, rec.Code, name)
		assert.Contains(t, rec.Header().Get("Content-Type"), "application/json", name)
		assert.True(t, json.Valid(rec.Body.Bytes()), "%s: %s", name, rec.Body)
	}
	jsonError("wrong token", h.do(twilioRequest(body, twilioSign("fedcba9876543210fedcba9876543210", twilioPublicURL, body), nil)), http.StatusUnauthorized)
	big := []byte(twilioSMS + "&Padding=" + strings.Repeat("x", 4096))
	jsonError("oversized", h.do(twilioRequest(big, twilioSign(twilioToken, twilioPublicURL, big), nil)), http.StatusRequestEntityTooLarge)
}

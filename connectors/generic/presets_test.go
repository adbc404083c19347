package generic

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	stripewebhook "github.com/stripe/stripe-go/v82/webhook"
	svix "github.com/svix/svix-webhooks/go"

	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/secret"
)

// Stripe secrets are whsec_ strings whose base64 part is not what Stripe keys the
// HMAC with: the whole string is.
const stripeSecret = "whsec_test_9d1c7a5e3f2b4c6d8e0a1b2c3d4e5f6a"

// presetPayload is a preset's documented sample, as gateway deliver sends it.
func presetPayload(t *testing.T, name string) []byte {
	t.Helper()
	b, err := SampleFile(name)
	require.NoError(t, err)
	return b
}

// presetRequest is a POST to the "billing" connector with these headers.
func presetRequest(body []byte, hdr map[string]string) *http.Request {
	req := httptest.NewRequest(http.MethodPost, "/webhooks/generic/billing", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	return req
}

// refusals are the attacker's attempts every signing preset must refuse.
type refusals struct {
	wrongSecret, changedBody, staleTimestamp *http.Request // nil where the scheme has none
}

func assertRefused(t *testing.T, h *harness, r refusals) {
	t.Helper()
	for name, req := range map[string]*http.Request{"wrong secret": r.wrongSecret, "changed body": r.changedBody, "stale timestamp": r.staleTimestamp} {
		if req == nil {
			continue
		}
		before := len(h.ing.Calls())
		rec := h.do(req)
		assert.Equal(t, http.StatusUnauthorized, rec.Code, name)
		assert.Equal(t, before, len(h.ing.Calls()), "%s: nothing stored", name)
	}
}

func stripeSigned(body []byte, secret string, at time.Time) map[string]string {
	sp := stripewebhook.GenerateTestSignedPayload(&stripewebhook.UnsignedPayload{Payload: body, Secret: secret, Timestamp: at})
	return map[string]string{"Stripe-Signature": sp.Header}
}

// TestStripePreset: a delivery signed by stripe-go's test helper verifies, its body
// id is the delivery id, and the event maps to kind, sourceId and a customer field.
func TestStripePreset(t *testing.T) {
	h := newHarness(t, 0, Config{Name: "billing", Preset: "stripe", Secret: stripeSecret})
	body := presetPayload(t, "stripe-invoice-payment-failed.json")
	hdr := stripeSigned(body, stripeSecret, h.now)
	require.NoError(t, stripewebhook.ValidatePayloadIgnoringTolerance(body, hdr["Stripe-Signature"], stripeSecret), "the library agrees")

	rec := h.do(presetRequest(body, hdr))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	call, ok := h.ing.Last()
	require.True(t, ok)
	assert.Equal(t, "evt_1NG8Du2eZvKYlo2CUI79vXWy", call.Event.DeliveryID, "Stripe sends the event id in the body only")
	assert.NotContains(t, call.Event.Headers, "Stripe-Signature")
	require.Len(t, call.Notifications, 1)
	n := call.Notifications[0]
	assert.Equal(t, "invoice.payment_failed", n.Kind)
	assert.Equal(t, "in_1NG8Dt2eZvKYlo2CwvJ4Sb9h", n.SourceID)
	assert.Equal(t, "evt_1NG8Du2eZvKYlo2CUI79vXWy", n.DedupeKey)
	assert.Equal(t, inbox.ThreadKey{Agent: "ops", Resource: "billing", Thread: "cus_NffrFeUfNV2Hib"}, n.Thread, "routed by data.object.customer")
	assert.Equal(t, "stripe", n.Metadata[connectors.MetaVerifiedBy])

	changed := bytes.Replace(body, []byte(`2000`), []byte(`1`), 1)
	assertRefused(t, h, refusals{
		wrongSecret:    presetRequest(body, stripeSigned(body, "whsec_test_someone_else_s_secret000", h.now)),
		changedBody:    presetRequest(changed, hdr),
		staleTimestamp: presetRequest(body, stripeSigned(body, stripeSecret, h.now.Add(-stripeTolerance-time.Second))),
	})
}

// TestStripeSecretIsTheWholeString: signing with the base64-decoded part (the
// Standard Webhooks reading of whsec_) is refused; Stripe keys with the string.
func TestStripeSecretIsTheWholeString(t *testing.T) {
	h := newHarness(t, 0, Config{Name: "billing", Preset: "stripe", Secret: testSecret})
	body := presetPayload(t, "stripe-invoice-payment-failed.json")
	require.Equal(t, http.StatusOK, h.do(presetRequest(body, stripeSigned(body, testSecret, h.now))).Code)
	// A header with several v1 signatures verifies when any one matches.
	sp := stripewebhook.GenerateTestSignedPayload(&stripewebhook.UnsignedPayload{Payload: body, Secret: testSecret, Timestamp: h.now})
	multi := "t=" + strconv.FormatInt(h.now.Unix(), 10) + ",v1=00ff,v1=" + sp.Header[len(sp.Header)-64:] + ",v0=abc"
	require.Equal(t, http.StatusOK, h.do(presetRequest(body, map[string]string{"Stripe-Signature": multi})).Code)
}

func svixSigned(t *testing.T, secret, id string, at time.Time, body []byte) map[string]string {
	t.Helper()
	wh, err := svix.NewWebhook(secret)
	require.NoError(t, err)
	sig, err := wh.Sign(id, at, body)
	require.NoError(t, err)
	return map[string]string{"svix-id": id, "svix-timestamp": strconv.FormatInt(at.Unix(), 10), "svix-signature": sig}
}

// TestSvixPresets: Svix's official library signs; svix reads a Standard Webhooks
// envelope, resend maps Resend's email events.
func TestSvixPresets(t *testing.T) {
	const other = "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD"
	body := readPayload(t, "resend-email-sent.json")
	for _, c := range []struct {
		preset, summary, sourceID string
		thread                    string
	}{
		{"svix", "Sending this example", "", "general"},
		{"resend", "Sending this example", "56761188-7520-42d8-8898-ff6fc54ce618", "general"},
	} {
		t.Run(c.preset, func(t *testing.T) {
			h := newHarness(t, 0, Config{Name: "billing", Preset: c.preset, Secret: testSecret})
			hdr := svixSigned(t, testSecret, "msg_2KWPBgLlAfxdpx2AI54pPJ85f4W", h.now, body)
			rec := h.do(presetRequest(body, hdr))
			require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
			call, _ := h.ing.Last()
			assert.Equal(t, "msg_2KWPBgLlAfxdpx2AI54pPJ85f4W", call.Event.DeliveryID)
			assert.Equal(t, hdr["svix-timestamp"], call.Event.Headers["Svix-Timestamp"])
			require.Len(t, call.Notifications, 1)
			n := call.Notifications[0]
			assert.Equal(t, "email.sent", n.Kind)
			assert.Equal(t, c.summary, n.Summary)
			assert.Equal(t, c.sourceID, n.SourceID)
			assert.Equal(t, c.preset, n.Metadata[connectors.MetaVerifiedBy])

			assertRefused(t, h, refusals{
				wrongSecret:    presetRequest(body, svixSigned(t, other, "msg_2", h.now, body)),
				changedBody:    presetRequest(bytes.Replace(body, []byte("example"), []byte("exampIe"), 1), hdr),
				staleTimestamp: presetRequest(body, svixSigned(t, testSecret, "msg_3", h.now.Add(-6*time.Minute), body)),
			})
		})
	}
}

const gitlabSecret = "gitlab-shared-token-0123456789"

// TestGitLabPreset: GitLab sends its secret token as X-Gitlab-Token (it signs no
// body); the merge request event maps to repo, number, author and branch.
func TestGitLabPreset(t *testing.T) {
	h := newHarness(t, 0, Config{Name: "billing", Preset: "gitlab", Secret: gitlabSecret})
	body := presetPayload(t, "gitlab-merge-request.json")
	hdr := map[string]string{"X-Gitlab-Token": gitlabSecret, "X-Gitlab-Event": "Merge Request Hook", "X-Gitlab-Event-UUID": "13792a34-cac6-4fda-95a8-c58e00a3954e"}
	rec := h.do(presetRequest(body, hdr))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	call, _ := h.ing.Last()
	assert.Equal(t, "13792a34-cac6-4fda-95a8-c58e00a3954e", call.Event.DeliveryID)
	assert.Equal(t, "Merge Request Hook", call.Event.Headers["X-Gitlab-Event"])
	assert.NotContains(t, call.Event.Headers, "X-Gitlab-Token", "the token is a secret")
	require.Len(t, call.Notifications, 1)
	n := call.Notifications[0]
	assert.Equal(t, "merge_request", n.Kind)
	assert.Equal(t, "MS-Viewport", n.Summary)
	assert.Equal(t, "1", n.SourceID)
	assert.Equal(t, "gitlabhq/gitlab-test", n.Attributes.String("repo"))
	assert.Equal(t, "root", n.Attributes.String("author"))
	assert.Equal(t, "gitlab", n.Metadata[connectors.MetaVerifiedBy])

	wrong := map[string]string{"X-Gitlab-Token": gitlabSecret + "x"}
	assertRefused(t, h, refusals{wrongSecret: presetRequest(body, wrong)})
	assert.Equal(t, http.StatusUnauthorized, h.do(presetRequest(body, nil)).Code, "no token")
}

// TestPresetConfig: unknown presets, a preset with verify, and secrets the preset
// cannot use are refused at start with the key named; every preset's own mapping
// parses.
func TestPresetConfig(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{Name: "a", Preset: "stripey", Secret: stripeSecret}, `preset: unknown "stripey"`},
		{Config{Name: "a", Preset: "stripe", Secret: stripeSecret, Verify: &Verify{Header: "X-Sig", Algorithm: "hmac-sha256", Encoding: "hex"}}, "preset: \"stripe\" and verify are both set"},
		{Config{Name: "a", Preset: "gitlab", Secret: "short"}, "secret: must be at least 16 bytes"},
		{Config{Name: "a", Preset: "svix", Secret: "whsec_!!"}, "secret: the part after whsec_ is not valid base64"},
	} {
		err := c.cfg.Validate()
		require.Error(t, err, c.want)
		assert.Contains(t, err.Error(), c.want)
		assert.NotContains(t, err.Error(), c.cfg.Secret.Reveal(), "the secret is not echoed")
	}
	for _, name := range presetNames() {
		p, ok := presets()[name]
		require.True(t, ok, name)
		assert.Equal(t, name, p.name)
		if p.mapping != nil {
			require.NoError(t, Config{Name: "a", Secret: testSecret, Mapping: p.mapping}.Validate(), name)
		}
		if p.idPath != "" {
			_, err := ParsePath(p.idPath)
			require.NoError(t, err, name)
		}
	}
	assert.Len(t, presets(), len(presetNames()))
}

// TestPresetSecretsRotate: a preset verifies with either of `secrets: [current,
// previous]`, each read as the preset reads `secret` (Stripe's whole string), and says
// which one verified; a third secret is refused.
func TestPresetSecretsRotate(t *testing.T) {
	const previous = "whsec_previous_stripe_secret_0123456789"
	h := newHarness(t, 0, Config{Name: "billing", Preset: "stripe", Secrets: []secret.Secret{stripeSecret, previous}})
	body := presetPayload(t, "stripe-invoice-payment-failed.json")
	require.Equal(t, http.StatusOK, h.do(presetRequest(body, stripeSigned(body, previous, h.now))).Code)
	require.Equal(t, http.StatusOK, h.do(presetRequest(body, stripeSigned(body, stripeSecret, h.now))).Code)
	require.Equal(t, []string{"generic/billing previous", "generic/billing current"}, h.used)
	require.Equal(t, http.StatusUnauthorized, h.do(presetRequest(body, stripeSigned(body, "whsec_test_someone_else_s_secret000", h.now))).Code)
}

package generic

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/inbox"
)

const providerSecret = "provider-client-secret-0123456789abcdef"

// bodyMAC signs a body as Linear, Sentry and Shopify document it.
func bodyMAC(secret string, body []byte) []byte {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return m.Sum(nil)
}

// linearSigned signs as Linear does: Linear-Signature, hex HMAC-SHA256 of the body.
func linearSigned(secret string, body []byte) map[string]string {
	return map[string]string{"Linear-Signature": hex.EncodeToString(bodyMAC(secret, body)), "Linear-Delivery": "234d1a4e-b617-4388-90fe-adc3633d6b72", "Linear-Event": "Issue"}
}

// shopifySigned signs as Shopify does: X-Shopify-Hmac-Sha256, base64 HMAC-SHA256 of
// the body, with the headers Shopify sends alongside (its library requires them).
func shopifySigned(secret string, body []byte) map[string]string {
	return map[string]string{"X-Shopify-Hmac-Sha256": base64.StdEncoding.EncodeToString(bodyMAC(secret, body)), "X-Shopify-Topic": "orders/create",
		"X-Shopify-Shop-Domain": "example.myshopify.com", "X-Shopify-Webhook-Id": "b54557e4-bdd9-4b37-8a5f-bf7d70bcd043",
		"X-Shopify-API-Version": "2025-10"}
}

// TestLinearPreset: Linear-Signature over the body, webhookTimestamp within a
// minute, kind = type.action.
func TestLinearPreset(t *testing.T) {
	h := newHarness(t, 0, Config{Name: "billing", Preset: "linear", Secret: providerSecret})
	body := presetPayload(t, "linear-issue-create.json")
	signed := linearSigned
	rec := h.do(presetRequest(body, signed(providerSecret, body)))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	call, _ := h.ing.Last()
	assert.Equal(t, "234d1a4e-b617-4388-90fe-adc3633d6b72", call.Event.DeliveryID)
	require.Len(t, call.Notifications, 1)
	n := call.Notifications[0]
	assert.Equal(t, "Issue.create", n.Kind)
	assert.Equal(t, "Checkout fails for saved cards", n.Summary)
	assert.Equal(t, "ENG-123", n.SourceID)
	assert.Equal(t, "linear", n.Metadata[connectors.MetaVerifiedBy])

	stale := bytes.Replace(body, []byte("1770000000000"), []byte(strconv.FormatInt(testNow.Add(-linearTolerance-time.Second).UnixMilli(), 10)), 1)
	require.NotEqual(t, body, stale)
	assertRefused(t, h, refusals{
		wrongSecret:    presetRequest(body, signed(providerSecret+"x", body)),
		changedBody:    presetRequest(bytes.Replace(body, []byte("saved"), []byte("SAVED"), 1), signed(providerSecret, body)),
		staleTimestamp: presetRequest(stale, signed(providerSecret, stale)),
	})
	noTimestamp := []byte(`{"type": "Issue", "action": "create"}`)
	assert.Equal(t, http.StatusUnauthorized, h.do(presetRequest(noTimestamp, signed(providerSecret, noTimestamp))).Code, "a body without webhookTimestamp has no freshness")
}

// TestSentryPreset: Sentry-Hook-Signature over the body; kind = resource.action;
// the level becomes the priority.
func TestSentryPreset(t *testing.T) {
	h := newHarness(t, 0, Config{Name: "billing", Preset: "sentry", Secret: providerSecret})
	body := presetPayload(t, "sentry-issue-created.json")
	signed := func(secret string, b []byte) map[string]string {
		return map[string]string{"Sentry-Hook-Signature": hex.EncodeToString(bodyMAC(secret, b)), "Sentry-Hook-Resource": "issue",
			"Sentry-Hook-Timestamp": strconv.FormatInt(testNow.Unix(), 10), "Request-ID": "3f3e5c1a-5e1b-4b1e-9d0b-0f4c3e2b1a00"}
	}
	rec := h.do(presetRequest(body, signed(providerSecret, body)))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	call, _ := h.ing.Last()
	assert.Equal(t, "3f3e5c1a-5e1b-4b1e-9d0b-0f4c3e2b1a00", call.Event.DeliveryID)
	assert.Equal(t, "issue", call.Event.Headers["Sentry-Hook-Resource"])
	require.Len(t, call.Notifications, 1)
	n := call.Notifications[0]
	assert.Equal(t, "issue.created", n.Kind)
	assert.Equal(t, "Error: Unable to find module 'react-dom'", n.Summary)
	assert.Equal(t, "1170820242", n.SourceID)
	assert.Equal(t, inbox.PriorityHigh, n.Priority)
	assert.Equal(t, "sentry", n.Metadata[connectors.MetaVerifiedBy])

	assertRefused(t, h, refusals{
		wrongSecret: presetRequest(body, signed(providerSecret+"x", body)),
		changedBody: presetRequest(bytes.Replace(body, []byte("react-dom"), []byte("react-DOM"), 1), signed(providerSecret, body)),
	})
}

// TestShopifyPreset: X-Shopify-Hmac-Sha256 (base64) over the body; kind is the
// X-Shopify-Topic header, kept with the event so a replay reads it again.
func TestShopifyPreset(t *testing.T) {
	h := newHarness(t, 0, Config{Name: "billing", Preset: "shopify", Secret: providerSecret})
	body := presetPayload(t, "shopify-orders-create.json")
	signed := shopifySigned
	rec := h.do(presetRequest(body, signed(providerSecret, body)))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	call, _ := h.ing.Last()
	assert.Equal(t, "b54557e4-bdd9-4b37-8a5f-bf7d70bcd043", call.Event.DeliveryID)
	assert.Equal(t, "example.myshopify.com", call.Event.Headers["X-Shopify-Shop-Domain"])
	require.Len(t, call.Notifications, 1)
	n := call.Notifications[0]
	assert.Equal(t, "orders/create", n.Kind)
	assert.Equal(t, "gid://shopify/Order/820982911946154508", n.SourceID)
	assert.Equal(t, inbox.ThreadKey{Agent: "ops", Resource: "billing", Thread: "115310627314723954"}, n.Thread, "routed by customer.id")
	assert.Equal(t, "shopify", n.Metadata[connectors.MetaVerifiedBy])

	assertRefused(t, h, refusals{
		wrongSecret: presetRequest(body, signed(providerSecret+"x", body)),
		changedBody: presetRequest(bytes.Replace(body, []byte("403.00"), []byte("4.00"), 1), signed(providerSecret, body)),
	})
}

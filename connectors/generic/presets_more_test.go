package generic

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha1" //nolint:gosec // the schemes under test
	"encoding/hex"
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/inbox"
)

func sha1MAC(secret string, body []byte) string {
	m := hmac.New(sha1.New, []byte(secret))
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// TestPagerDutyPreset: any one of several v1 signatures verifies (PagerDuty sends
// one per active secret); the incident maps to kind, number, urgency.
func TestPagerDutyPreset(t *testing.T) {
	h := newHarness(t, 0, Config{Name: "billing", Preset: "pagerduty", Secret: providerSecret})
	body := presetPayload(t, "pagerduty-incident-triggered.json")
	signed := func(secret string, b []byte) map[string]string {
		other := hex.EncodeToString(bodyMAC("some-other-secret-of-the-account", b))
		return map[string]string{"X-PagerDuty-Signature": "v1=" + other + ",v1=" + hex.EncodeToString(bodyMAC(secret, b)), "X-Webhook-Id": "5ac64822-4adc-4fda-ade0-410becf0de4f"}
	}
	rec := h.do(presetRequest(body, signed(providerSecret, body)))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	call, _ := h.ing.Last()
	assert.Equal(t, "5ac64822-4adc-4fda-ade0-410becf0de4f", call.Event.DeliveryID)
	require.Len(t, call.Notifications, 1)
	n := call.Notifications[0]
	assert.Equal(t, "incident.triggered", n.Kind)
	assert.Equal(t, "A little bump in the road", n.Summary)
	assert.Equal(t, "PGR0VU2", n.SourceID)
	assert.Equal(t, "01BZH3YW8VQ5Q7D6X7U2WU0L5R", n.DedupeKey)
	assert.Equal(t, inbox.PriorityHigh, n.Priority)
	assert.Equal(t, "2", n.Attributes.String("number"))
	assert.Equal(t, "pagerduty", n.Metadata[connectors.MetaVerifiedBy])

	assertRefused(t, h, refusals{
		wrongSecret: presetRequest(body, signed(providerSecret+"x", body)),
		changedBody: presetRequest(bytes.Replace(body, []byte("bump"), []byte("BUMP"), 1), signed(providerSecret, body)),
	})
}

// TestPagerDutyPresetNetsIncidents: an incident's events are in its lane,
// "pagerduty:<id>", in the incident's state (rest: resolved), so one triggered and
// resolved before the agent heard of it reaches nothing; an event about a note stays
// out of lanes, and a mapping of the connector's own puts nothing in one.
func TestPagerDutyPresetNetsIncidents(t *testing.T) {
	h := newHarness(t, 0, Config{Name: "billing", Preset: "pagerduty", Secret: providerSecret})
	triggered := presetPayload(t, "pagerduty-incident-triggered.json")
	resolved := bytes.ReplaceAll(bytes.ReplaceAll(triggered, []byte(`"incident.triggered"`), []byte(`"incident.resolved"`)),
		[]byte(`"status": "triggered"`), []byte(`"status": "resolved"`))
	resolved = bytes.Replace(resolved, []byte("01BZH3YW8VQ5Q7D6X7U2WU0L5R"), []byte("01BZH3YW8VQ5Q7D6X7U2WU0L5S"), 1)
	annotated := []byte(`{"event":{"id":"01BZH3YW8VQ5Q7D6X7U2WU0L5T","event_type":"incident.annotated","resource_type":"incident",` +
		`"data":{"incident":{"id":"PGR0VU2","type":"incident_reference"},"content":"Looking into it","id":"PNOTE1","type":"incident_note"}}}`)
	for i, tc := range []struct {
		body                   []byte
		kind, key, state, rest string
	}{
		{triggered, "incident.triggered", "pagerduty:PGR0VU2", "triggered", "resolved"},
		{resolved, "incident.resolved", "pagerduty:PGR0VU2", "resolved", "resolved"},
		{annotated, "incident.annotated", "", "", ""},
	} {
		sig := map[string]string{"X-PagerDuty-Signature": "v1=" + hex.EncodeToString(bodyMAC(providerSecret, tc.body)), "X-Webhook-Id": fmt.Sprint("delivery-", i)}
		rec := h.do(presetRequest(tc.body, sig))
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		call, _ := h.ing.Last()
		require.Len(t, call.Notifications, 1)
		n := call.Notifications[0]
		assert.Equal(t, tc.kind, n.Kind)
		assert.Equal(t, []string{tc.key, tc.state, tc.rest}, []string{n.NetKey, n.State, n.RestState}, tc.kind)
	}

	own := newHarness(t, 0, Config{Name: "billing", Preset: "pagerduty", Secret: providerSecret,
		Mapping: &Mapping{Kind: "$.event.event_type", Summary: "$.event.data.title"}})
	rec := own.do(presetRequest(triggered, map[string]string{"X-PagerDuty-Signature": "v1=" + hex.EncodeToString(bodyMAC(providerSecret, triggered)), "X-Webhook-Id": "d"}))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	call, _ := own.ing.Last()
	require.Len(t, call.Notifications, 1)
	assert.Empty(t, call.Notifications[0].NetKey, "a mapping of the connector's own says what its lanes are (routes' net_key)")
}

// TestIntercomPreset: X-Hub-Signature "sha1=<hex>" over the body; the
// notification id comes from the body.
func TestIntercomPreset(t *testing.T) {
	h := newHarness(t, 0, Config{Name: "billing", Preset: "intercom", Secret: providerSecret})
	body := presetPayload(t, "intercom-conversation-user-created.json")
	signed := func(secret string, b []byte) map[string]string {
		return map[string]string{"X-Hub-Signature": "sha1=" + sha1MAC(secret, b)}
	}
	rec := h.do(presetRequest(body, signed(providerSecret, body)))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	call, _ := h.ing.Last()
	assert.Equal(t, "notif_ccd8a4d0-f965-11e3-a367-c779cae3e1b3", call.Event.DeliveryID, "Intercom sends the id in the body only")
	require.Len(t, call.Notifications, 1)
	n := call.Notifications[0]
	assert.Equal(t, "conversation.user.created", n.Kind)
	assert.Equal(t, "Refund for order 1001", n.Summary)
	assert.Equal(t, "147", n.SourceID)
	assert.Equal(t, "intercom", n.Metadata[connectors.MetaVerifiedBy])

	assertRefused(t, h, refusals{
		wrongSecret: presetRequest(body, signed(providerSecret+"x", body)),
		changedBody: presetRequest(bytes.Replace(body, []byte("1001"), []byte("1002"), 1), signed(providerSecret, body)),
	})
	assert.Equal(t, http.StatusUnauthorized, h.do(presetRequest(body, map[string]string{"X-Hub-Signature": sha1MAC(providerSecret, body)})).Code, "sha1= prefix missing")
}

// TestVercelPreset: x-vercel-signature (HMAC-SHA1, hex) over the body; the event
// id comes from the body.
func TestVercelPreset(t *testing.T) {
	h := newHarness(t, 0, Config{Name: "billing", Preset: "vercel", Secret: providerSecret})
	body := presetPayload(t, "vercel-deployment-error.json")
	signed := func(secret string, b []byte) map[string]string {
		return map[string]string{"x-vercel-signature": sha1MAC(secret, b)}
	}
	rec := h.do(presetRequest(body, signed(providerSecret, body)))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	call, _ := h.ing.Last()
	assert.Equal(t, "evt_5gGeBsFfGPp3Wf3XhBXFkYqAtUTr", call.Event.DeliveryID)
	require.Len(t, call.Notifications, 1)
	n := call.Notifications[0]
	assert.Equal(t, "deployment.error", n.Kind)
	assert.Equal(t, "dpl_2euZBFqxdQJ1G2UVyXzNbXy4UgjQ", n.SourceID)
	assert.Equal(t, "vercel", n.Metadata[connectors.MetaVerifiedBy])

	assertRefused(t, h, refusals{
		wrongSecret: presetRequest(body, signed(providerSecret+"x", body)),
		changedBody: presetRequest(bytes.Replace(body, []byte("production"), []byte("preview"), 1), signed(providerSecret, body)),
	})
}

// TestPresetReplay: a stored delivery turns back into the same item without its
// signature: the kind a header named (Sentry) and a form body (Twilio) included.
func TestPresetReplay(t *testing.T) {
	for _, c := range []struct {
		preset, file string
		hdr          map[string]string
		kind         string
	}{
		{"sentry", "sentry-issue-created.json", map[string]string{"Sentry-Hook-Resource": "issue", "Request-ID": "r-1"}, "issue.created"},
		{"stripe", "stripe-invoice-payment-failed.json", nil, "invoice.payment_failed"},
		{"twilio", "", map[string]string{"I-Twilio-Idempotency-Token": "t-1"}, "message"},
	} {
		t.Run(c.preset, func(t *testing.T) {
			body := []byte(twilioSMS)
			if c.file != "" {
				body = presetPayload(t, c.file)
			}
			h, err := NewHandler([]Config{{Name: "billing", Preset: c.preset, Secret: providerSecret}}, nil, nil, testNowFunc)
			require.NoError(t, err)
			items, err := h.Items(t.Context(), &inbox.Event{Connector: "billing", Headers: c.hdr, Body: body})
			require.NoError(t, err)
			require.Len(t, items, 1)
			assert.Equal(t, c.kind, items[0].Kind)
			assert.Equal(t, c.preset, items[0].Metadata[connectors.MetaVerifiedBy])
			if c.preset == "stripe" {
				assert.Equal(t, "evt_1NG8Du2eZvKYlo2CUI79vXWy", items[0].DedupeKey)
			}
		})
	}
}

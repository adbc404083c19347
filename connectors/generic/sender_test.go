package generic

import (
	"bytes"
	"cmp"
	"crypto/ed25519"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/secret"
)

// discordSeed is the hex seed of discordSampleKey, the signing key deliver takes.
func discordSeed() string { return hex.EncodeToString(discordSampleKey().Seed()) }

// TestSenderSignsAsProviders: for every preset's documented sample the sender signs
// exactly as the independent signers of the conformance test do (the providers'
// libraries where they exist: stripe-go, Svix, Standard Webhooks, twilio-go's
// validator agreeing), header for header, for the same body, id and time.
func TestSenderSignsAsProviders(t *testing.T) {
	const u = "http://127.0.0.1:8080/webhooks/generic/x"
	for _, s := range presetSamples() {
		t.Run(cmp.Or(s.name, s.preset), func(t *testing.T) {
			snd, err := NewSender(Config{Name: "x", Preset: s.preset, Secret: secret.Secret(s.secret)}, connectors.SenderOptions{SigningKey: discordSeed()})
			require.NoError(t, err)
			body := s.body(t)
			want := http.Header{}
			for k, v := range s.sign(t, u, body) {
				want.Set(k, v)
			}
			p, err := Config{Preset: s.preset}.preset()
			require.NoError(t, err)
			sample := connectors.Sample{ContentType: cmp.Or(s.contentType, "application/json"), Body: body, Header: http.Header{}, DeliveryID: want.Get(p.idHeader)}
			// What the provider sends beside the signature comes with the sample.
			for _, x := range senders()[s.preset].samples {
				for k, v := range x.header {
					sample.Header.Set(k, v)
				}
			}
			got, err := snd.Sign(sample, u, testNow)
			require.NoError(t, err)
			for k := range want {
				assert.Equal(t, want.Get(k), got.Get(k), k)
			}
		})
	}
}

// TestSenderSamplesVerify: every preset has a sender with at least one sample, and
// every sample, as deliver sends it now (fresh ids, Linear dated now), verifies and
// is read by the connector: stored routed, each delivery a new event.
func TestSenderSamplesVerify(t *testing.T) {
	secrets := map[string]string{}
	for _, s := range presetSamples() {
		secrets[s.preset] = s.secret
	}
	for _, name := range Presets() {
		t.Run(name, func(t *testing.T) {
			cfg := Config{Name: "billing", Preset: name, Secret: secret.Secret(secrets[name])}
			h := newHarness(t, 0, cfg)
			snd, err := NewSender(cfg, connectors.SenderOptions{SigningKey: discordSeed()})
			require.NoError(t, err)
			require.NotEmpty(t, snd.Samples(), "preset %s has no documented sample", name)
			for _, info := range snd.Samples() {
				for range 2 {
					sample, err := snd.Sample(info.Name, h.now)
					require.NoError(t, err)
					u := "http://example.com/webhooks/generic/billing"
					hdr, err := snd.Sign(sample, u, h.now)
					require.NoError(t, err)
					req := httptest.NewRequest(http.MethodPost, u, bytes.NewReader(sample.Body))
					req.Header = hdr
					before := len(h.ing.Calls())
					rec := h.do(req)
					require.Less(t, rec.Code, 300, "%s: %s", info.Name, rec.Body.String())
					require.Len(t, h.ing.Calls(), before+1, "%s: stored", info.Name)
					call, _ := h.ing.Last()
					assert.Equal(t, sample.DeliveryID, call.Event.DeliveryID, info.Name)
					assert.NotEmpty(t, call.Notifications, "%s: %s", info.Name, call.Event.Error)
				}
			}
		})
	}
	ids := map[string]bool{}
	for range 100 {
		id := connectors.FreshID("evt_1NG8Du2eZvKYlo2CUI79vXWy")
		assert.Len(t, id, len("evt_1NG8Du2eZvKYlo2CUI79vXWy"))
		assert.False(t, ids[id], "fresh every time")
		ids[id] = true
	}
}

// A Discord (Ed25519) connector holds only the public key: deliver needs the private
// half, and one that does not match is refused before anything is sent.
func TestSenderEd25519NeedsTheMatchingKey(t *testing.T) {
	cfg := Config{Name: "d", Preset: "discord", Secret: secret.Secret(hex.EncodeToString(discordSampleKey().Public().(ed25519.PublicKey)))}
	_, err := NewSender(cfg, connectors.SenderOptions{})
	require.ErrorContains(t, err, "give the matching private key")
	_, err = NewSender(cfg, connectors.SenderOptions{SigningKey: hex.EncodeToString(bytes.Repeat([]byte{8}, 32))})
	require.ErrorContains(t, err, "its public half is not the connector's secret")
	_, err = NewSender(cfg, connectors.SenderOptions{SigningKey: "zz"})
	require.ErrorContains(t, err, "not hex")
}

// A custom verify scheme is signed as it verifies: the Standard Webhooks example,
// HMAC over the template with the id and timestamp headers it names.
func TestSenderCustomScheme(t *testing.T) {
	cfg := Config{Name: "billing", Secret: testSecret, Verify: &Verify{Header: "X-Sig", Algorithm: "hmac-sha512", Encoding: "base64",
		Prefix: "v=", Signed: "{id}:{timestamp}:{body}", TimestampHeader: "X-Ts", IDHeader: "X-Id"}}
	h := newHarness(t, 0, cfg)
	snd, err := NewSender(cfg, connectors.SenderOptions{})
	require.NoError(t, err)
	sample, err := snd.Sample("", h.now)
	require.NoError(t, err)
	hdr, err := snd.Sign(sample, "", h.now)
	require.NoError(t, err)
	req := httptest.NewRequest(http.MethodPost, "/webhooks/generic/billing", bytes.NewReader(sample.Body))
	req.Header = hdr
	rec := h.do(req)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	_, err = snd.Sample("nope", h.now)
	require.ErrorContains(t, err, `no such sample "nope" (have example.event)`)
	assert.True(t, slices.ContainsFunc(snd.Samples(), func(s connectors.SampleInfo) bool { return s.Name == "example.event" }))
}

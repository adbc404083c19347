package generic

import (
	"bytes"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/secret"
)

// senderCase is one call of interop/senders/senders.mjs: a provider's official
// library verifying a delivery (discord, linear, shopify) or signing one (octokit).
type senderCase struct {
	Lib     string            `json:"lib"`
	Key     string            `json:"key"`
	Body    string            `json:"body"`
	Headers map[string]string `json:"headers,omitempty"`
	Now     int64             `json:"now,omitempty"` // Unix ms: the library's clock
}

type senderResult struct {
	OK        bool   `json:"ok"`
	Error     string `json:"error"`
	Signature string `json:"signature"`
}

// officialSenders runs the cases through the providers' libraries (interop/senders,
// installed by .ci/senders.sh). Skipped unless the harness's node_modules exist or
// SIGNALGATE_SENDERS_INTEROP names its folder.
func officialSenders(t *testing.T, cases []senderCase) []senderResult {
	t.Helper()
	dir := os.Getenv("SIGNALGATE_SENDERS_INTEROP")
	if dir == "" {
		_, file, _, _ := runtime.Caller(0)
		dir = filepath.Join(filepath.Dir(file), "..", "..", "interop", "senders")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "discord-interactions")); err != nil {
		t.Skip("senders interop harness not installed (run .ci/senders.sh)")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not found")
	}
	in, err := json.Marshal(cases)
	require.NoError(t, err)
	cmd := exec.CommandContext(t.Context(), node, "senders.mjs")
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(in)
	cmd.Stderr = os.Stderr
	raw, err := cmd.Output()
	require.NoError(t, err, "senders output: %s", raw)
	var out []senderResult
	require.NoError(t, json.Unmarshal(raw, &out), "%s", raw)
	require.Len(t, out, len(cases))
	return out
}

// delivery is a body with the headers it is sent with.
type delivery struct {
	body []byte
	hdr  map[string]string
}

// libraryAgrees sends each delivery to the gateway and to the provider's library:
// the first is accepted by both, every other refused by both (the library says no,
// the gateway answers 401).
func libraryAgrees(t *testing.T, h *harness, lib, key string, deliveries []delivery) {
	t.Helper()
	cases := make([]senderCase, len(deliveries))
	for i, d := range deliveries {
		cases[i] = senderCase{Lib: lib, Key: key, Body: string(d.body), Headers: d.hdr, Now: h.now.UnixMilli()}
	}
	verdicts := officialSenders(t, cases)
	for i, d := range deliveries {
		want, code := i == 0, h.do(presetRequest(d.body, d.hdr)).Code
		assert.Equal(t, want, verdicts[i].OK, "%s: delivery %d, library: %s", lib, i, verdicts[i].Error)
		if want {
			assert.Equal(t, http.StatusOK, code, "%s: delivery %d", lib, i)
		} else {
			assert.Equal(t, http.StatusUnauthorized, code, "%s: delivery %d", lib, i)
		}
	}
}

// TestDiscordPresetOfficialLibrary: discord-interactions' verifyKey and the gateway
// agree on a signed command, a changed body and another key's signature.
func TestDiscordPresetOfficialLibrary(t *testing.T) {
	pub, priv, err := ed25519.GenerateKey(nil)
	require.NoError(t, err)
	_, otherPriv, err := ed25519.GenerateKey(nil)
	require.NoError(t, err)
	key := hex.EncodeToString(pub)
	h := newHarness(t, 0, Config{Name: "billing", Preset: "discord", Secret: secret.Secret(key)})
	body := discordCommand(t)
	libraryAgrees(t, h, "discord", key, []delivery{
		{body, discordSigned(priv, h.now, body)},
		{bytes.Replace(body, []byte("deploy"), []byte("delete"), 1), discordSigned(priv, h.now, body)},
		{body, discordSigned(otherPriv, h.now, body)},
	})
}

// TestLinearPresetOfficialLibrary: @linear/sdk's LinearWebhookClient.verify (at the
// body's webhookTimestamp) and the gateway agree on a signed delivery, a changed body
// and a wrong secret.
func TestLinearPresetOfficialLibrary(t *testing.T) {
	h := newHarness(t, 0, Config{Name: "billing", Preset: "linear", Secret: providerSecret})
	body := presetPayload(t, "linear-issue-create.json")
	libraryAgrees(t, h, "linear", providerSecret, []delivery{
		{body, linearSigned(providerSecret, body)},
		{bytes.Replace(body, []byte("saved"), []byte("SAVED"), 1), linearSigned(providerSecret, body)},
		{body, linearSigned(providerSecret+"x", body)},
	})
}

// TestShopifyPresetOfficialLibrary: @shopify/shopify-api's webhooks.validate and the
// gateway agree on a signed delivery, a changed body and a wrong secret.
func TestShopifyPresetOfficialLibrary(t *testing.T) {
	h := newHarness(t, 0, Config{Name: "billing", Preset: "shopify", Secret: providerSecret})
	body := presetPayload(t, "shopify-orders-create.json")
	libraryAgrees(t, h, "shopify", providerSecret, []delivery{
		{body, shopifySigned(providerSecret, body)},
		{bytes.Replace(body, []byte("403.00"), []byte("4.00"), 1), shopifySigned(providerSecret, body)},
		{body, shopifySigned(providerSecret+"x", body)},
	})
}

// TestCustomSchemeOctokitSender: a delivery signed by @octokit/webhooks-methods
// (GitHub's X-Hub-Signature-256) verifies under a verify block describing that
// scheme; the same signature over a changed body is 401.
func TestCustomSchemeOctokitSender(t *testing.T) {
	const key = "custom-shared-secret-0123456789"
	v := &Verify{Header: "X-Hub-Signature-256", Algorithm: "hmac-sha256", Encoding: "hex", Prefix: "sha256=", IDHeader: "X-GitHub-Delivery"}
	h := newHarness(t, 0, Config{Name: "billing", Verify: v, Secret: key})
	body := []byte(notificationJSON)
	sig := officialSenders(t, []senderCase{{Lib: "octokit", Key: key, Body: string(body)}})[0].Signature
	require.True(t, strings.HasPrefix(sig, "sha256="), sig)
	hdr := map[string]string{"X-Hub-Signature-256": sig, "X-GitHub-Delivery": "72d3162e-cc78-11e3-81ab-4c9367dc0958"}
	rec := h.do(presetRequest(body, hdr))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	call, ok := h.ing.Last()
	require.True(t, ok)
	assert.Equal(t, "72d3162e-cc78-11e3-81ab-4c9367dc0958", call.Event.DeliveryID)
	assertRefused(t, h, refusals{changedBody: presetRequest(bytes.Replace(body, []byte("in_42"), []byte("in_43"), 1), hdr)})
}

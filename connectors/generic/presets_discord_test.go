package generic

import (
	"bytes"
	"crypto/ed25519"
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

// discordCommand is the discord preset's documented sample.
func discordCommand(t *testing.T) []byte { return presetPayload(t, "discord-application-command.json") }

// discordSigned signs as Discord does (and as discord-interactions verifies):
// Ed25519 over the timestamp followed by the body.
func discordSigned(key ed25519.PrivateKey, at time.Time, body []byte) map[string]string {
	ts := strconv.FormatInt(at.Unix(), 10)
	return map[string]string{"X-Signature-Ed25519": hex.EncodeToString(ed25519.Sign(key, append([]byte(ts), body...))), "X-Signature-Timestamp": ts}
}

// TestDiscordPreset: with a generated key pair, a signed PING is answered PONG and
// not stored; a command is stored and answered deferred; a wrong key, a changed
// body, a stale timestamp and an unsigned PING are 401.
func TestDiscordPreset(t *testing.T) {
	pub, priv, err := ed25519.GenerateKey(nil)
	require.NoError(t, err)
	_, otherPriv, err := ed25519.GenerateKey(nil)
	require.NoError(t, err)
	h := newHarness(t, 0, Config{Name: "billing", Preset: "discord", Secret: secret.Secret(hex.EncodeToString(pub))})

	ping := []byte(`{"id": "1180000000000000000", "application_id": "1170000000000000000", "type": 1, "token": "x", "version": 1}`)
	rec := h.do(presetRequest(ping, discordSigned(priv, h.now, ping)))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	assert.JSONEq(t, `{"type": 1}`, rec.Body.String())
	assert.Empty(t, h.ing.Calls(), "a PING is not stored")
	assert.Equal(t, http.StatusUnauthorized, h.do(presetRequest(ping, nil)).Code, "Discord checks that an unsigned PING is refused")

	body := discordCommand(t)
	rec = h.do(presetRequest(body, discordSigned(priv, h.now, body)))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	assert.JSONEq(t, `{"type": 5}`, rec.Body.String(), "deferred: the agent follows up with the token")
	call, ok := h.ing.Last()
	require.True(t, ok)
	assert.Equal(t, "1180000000000000001", call.Event.DeliveryID, "the interaction id, from the body")
	require.Len(t, call.Notifications, 1)
	n := call.Notifications[0]
	assert.Equal(t, "deploy", n.Kind)
	assert.Equal(t, "1180000000000000001", n.SourceID)
	assert.Equal(t, "ada", n.Attributes.String("author"))
	assert.Equal(t, "discord", n.Metadata[connectors.MetaVerifiedBy])

	assertRefused(t, h, refusals{
		wrongSecret:    presetRequest(body, discordSigned(otherPriv, h.now, body)),
		changedBody:    presetRequest(bytes.Replace(body, []byte("deploy"), []byte("delete"), 1), discordSigned(priv, h.now, body)),
		staleTimestamp: presetRequest(body, discordSigned(priv, h.now.Add(-6*time.Minute), body)),
	})
}

func FuzzDiscordVerify(f *testing.F) {
	pub, priv, err := ed25519.GenerateKey(bytes.NewReader(make([]byte, 64)))
	if err != nil {
		f.Fatal(err)
	}
	body := []byte(`{"type": 1}`)
	hdr := discordSigned(priv, testNow, body)
	f.Add(hdr["X-Signature-Ed25519"], hdr["X-Signature-Timestamp"], body)
	f.Add("zz", "-1", []byte{})
	p := presets()["discord"]
	f.Fuzz(func(t *testing.T, sig, ts string, b []byte) {
		h := http.Header{}
		h.Set(discordSignature, sig)
		h.Set(discordTimestamp, ts)
		if p.scheme.verify(pub, h, b, testNow) == nil && (!bytes.Equal(b, body) || h.Get(discordTimestamp) != hdr["X-Signature-Timestamp"]) {
			t.Fatalf("verified what was not signed: %q at %q", b, ts)
		}
		discordPingReply(b)
	})
}

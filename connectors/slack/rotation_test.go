package slack

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/secret"
)

// newSigningSecret is the secret a rotation moves to; testSecret is the previous one.
const newSigningSecret = "0123456789abcdef0123456789abcdef"

// TestRotationAcceptsCurrentAndPrevious: with signing_secrets [new, old], requests
// signed with either are accepted and counted under the slot that verified them; one
// signed with a third secret is refused and counted nowhere.
func TestRotationAcceptsCurrentAndPrevious(t *testing.T) {
	cfg := testConfig()
	cfg.SigningSecret, cfg.SigningSecrets = "", []secret.Secret{newSigningSecret, testSecret}
	var used []string
	h := newHarness(t, cfg, harnessOpts{popts: []connectors.PipelineOption{
		connectors.WithSecretUsed(func(c, slot string) { used = append(used, c+" "+slot) })}})
	for i, key := range []string{newSigningSecret, testSecret, "fedcba9876543210fedcba9876543210"} {
		body := dmBody(t, "Ev0"+string(rune('1'+i)))
		req := h.newRequest(body)
		req.Header.Set(HeaderSignature, sign(key, h.clock.Now().Unix(), body))
		rec := h.do(req)
		if i < 2 {
			require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		} else {
			require.Equal(t, http.StatusUnauthorized, rec.Code)
		}
	}
	assert.Equal(t, []string{"slack/acme current", "slack/acme previous"}, used)
}

// TestRotationConfigRefused: signing_secret with signing_secrets, three secrets and a
// short one are refused naming the key and never the value.
func TestRotationConfigRefused(t *testing.T) {
	err := connectors.ValidateConfigs("slack", []Config{
		{Name: "a", SigningSecret: testSecret, SigningSecrets: []secret.Secret{newSigningSecret}},
		{Name: "b", SigningSecrets: []secret.Secret{newSigningSecret, testSecret, "fedcba9876543210fedcba9876543210"}},
		{Name: "c", SigningSecrets: []secret.Secret{newSigningSecret, "tiny-secret"}},
	})
	require.Error(t, err)
	for _, want := range []string{
		"slack[0].signing_secret, signing_secrets: set one or the other",
		"slack[1].signing_secrets: at most 2",
		"slack[2].signing_secrets[1]: must be at least 16 bytes",
	} {
		assert.Contains(t, err.Error(), want)
	}
	for _, s := range []string{testSecret, newSigningSecret, "tiny-secret"} {
		assert.NotContains(t, err.Error(), s)
	}
}

package github

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/connectors/connectorstest"
	"github.com/signalgate/signalgate/secret"
)

// newWebhookSecret is the secret a rotation moves to; testSecret is the previous one.
const newWebhookSecret = "a-new-secret-0123456789abcdef"

// TestRotationAcceptsCurrentAndPrevious: with secrets [new, old], deliveries signed
// with either are accepted and counted under the slot that verified them; one signed
// with a third secret is refused and counted nowhere.
func TestRotationAcceptsCurrentAndPrevious(t *testing.T) {
	cfg := testConfig()
	cfg.Secret, cfg.Secrets = "", []secret.Secret{newWebhookSecret, testSecret}
	var used []string
	h := newHarnessWith(t, cfg, 0, connectorstest.NewIngester(),
		connectors.WithSecretUsed(func(c, slot string) { used = append(used, c+" "+slot) }))

	body := issueCommentBody(t)
	for i, key := range []string{newWebhookSecret, testSecret, "a-third-secret-0123456789"} {
		req := newDelivery("acme", "issue_comment", "d-"+string(rune('1'+i)), body)
		req.Header.Set("X-Hub-Signature-256", sign(key, body))
		rec := h.do(req)
		if i < 2 {
			require.Less(t, rec.Code, 300, rec.Body.String())
		} else {
			require.Equal(t, http.StatusUnauthorized, rec.Code)
		}
	}
	assert.Equal(t, []string{"github/acme current", "github/acme previous"}, used)
}

// TestRotationConfigRefused: secret with secrets, three secrets and a short one are
// refused naming the key and never the value.
func TestRotationConfigRefused(t *testing.T) {
	err := connectors.ValidateConfigs("github", []Config{
		{Name: "a", Secret: testSecret, Secrets: []secret.Secret{newWebhookSecret}},
		{Name: "b", Secrets: []secret.Secret{newWebhookSecret, testSecret, "a-third-secret-0123456789"}},
		{Name: "c", Secrets: []secret.Secret{newWebhookSecret, "tiny-secret"}},
	})
	require.Error(t, err)
	for _, want := range []string{
		"github[0].secret, secrets: set one or the other",
		"github[1].secrets: at most 2",
		"github[2].secrets[1]: must be at least 16 bytes",
	} {
		assert.Contains(t, err.Error(), want)
	}
	for _, s := range []string{testSecret, newWebhookSecret, "tiny-secret"} {
		assert.NotContains(t, err.Error(), s)
	}
}

package generic

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/secret"
)

// newSecret is the secret a rotation moves to; testSecret is the previous one.
const newSecret = "whsec_bmV3LXNlY3JldC0wMTIzNDU2Nzg5YWJjZGVm"

// TestRotationAcceptsCurrentAndPrevious: with secrets [new, old], a sender still on the
// old secret and one already on the new are both accepted, and each is counted under
// the slot that verified it; a third secret is refused and counted nowhere.
func TestRotationAcceptsCurrentAndPrevious(t *testing.T) {
	h := newHarness(t, 0, Config{Name: "billing", Secrets: []secret.Secret{newSecret, testSecret}})
	body := []byte(notificationJSON)
	rec := h.do(signedWith(t, newSecret, "billing", "msg_new", h.now, body))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	rec = h.do(signedWith(t, testSecret, "billing", "msg_old", h.now, body))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	rec = h.do(signedWith(t, "whsec_b3RoZXItc2VjcmV0LTAxMjM0NTY3ODlhYg==", "billing", "msg_other", h.now, body))
	require.Equal(t, http.StatusUnauthorized, rec.Code)
	// A name no connector has never reaches the metric: the label values are the config's.
	require.Equal(t, http.StatusNotFound, h.do(signedWith(t, newSecret, "nobody", "msg_x", h.now, body)).Code)
	assert.Equal(t, []string{"generic/billing current", "generic/billing previous"}, h.used)

	// One secret is the current slot.
	h = newHarness(t, 0)
	require.Equal(t, http.StatusOK, h.post(t, "msg_1", notificationJSON).Code)
	require.Equal(t, http.StatusUnauthorized, h.do(signedWith(t, newSecret, "billing", "msg_2", h.now, body)).Code)
	assert.Equal(t, []string{"generic/billing current"}, h.used)
}

// TestRotationConfigRefused: secret and secrets together, more than two secrets, an
// empty or malformed entry, and the same secret twice are refused naming the key, never
// showing a value.
func TestRotationConfigRefused(t *testing.T) {
	err := connectors.ValidateConfigs("generic", []Config{
		{Name: "a", Secret: testSecret, Secrets: []secret.Secret{newSecret}},
		{Name: "b", Secrets: []secret.Secret{newSecret, testSecret, "whsec_dGhpcmQtc2VjcmV0LTAxMjM0NTY3ODk="}},
		{Name: "c", Secrets: []secret.Secret{newSecret, ""}},
		{Name: "d", Secrets: []secret.Secret{"whsec_%%%", newSecret}},
		{Name: "e", Secrets: []secret.Secret{newSecret, newSecret}},
		{Name: "f", Secrets: []secret.Secret{}},
	})
	require.Error(t, err)
	for _, want := range []string{
		"generic[0].secret, secrets: set one or the other",
		"generic[1].secrets: at most 2",
		"generic[2].secrets[1]: empty",
		"generic[3].secrets[0]: the part after whsec_ is not valid base64",
		"generic[4].secrets[1]: same value as secrets[0]",
		"generic[5].secret: required",
	} {
		assert.Contains(t, err.Error(), want)
	}
	for _, s := range []string{testSecret, newSecret, "whsec_%%%"} {
		assert.NotContains(t, err.Error(), s)
	}
	require.NoError(t, connectors.ValidateConfigs("generic", []Config{{Name: "a", Secrets: []secret.Secret{newSecret, testSecret}}}))
}

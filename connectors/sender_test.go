package connectors

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A fresh id keeps the documented id's shape, and is new every time.
func TestFreshID(t *testing.T) {
	for old, shape := range map[string]string{
		"evt_1NG8Du2eZvKYlo2CUI79vXWy":    `^evt_[A-Za-z0-9]{24}$`,
		"Ev08MFMKH6":                      `^Ev[0-9A-Z]{8}$`,
		"1180000000000000001":             `^[1-9][0-9]{18}$`,
		"msg_2KWPBgLlAfxdpx2AI54pPJ85f4W": `^msg_[A-Za-z0-9]{27}$`,
		"notif_0a1b2c3d":                  `^notif_[0-9a-f]{8}$`,
	} {
		seen := map[string]bool{}
		for range 50 {
			id := FreshID(old)
			assert.Regexp(t, regexp.MustCompile(shape), id, old)
			assert.False(t, seen[id], old)
			seen[id] = true
		}
	}
}

// SetJSON changes one existing field and leaves every other byte as it was; a missing
// field names the keys that exist.
func TestSetJSON(t *testing.T) {
	body := []byte(`{"b": 1,  "a": {"x": "y", "n": [1, 2]}}`)
	out, err := SetJSON(body, "a.x", []byte(`"z"`))
	require.NoError(t, err)
	assert.Equal(t, `{"b": 1,  "a": {"x": "z", "n": [1, 2]}}`, string(out))
	out, err = SetJSON(body, "a.n.1", []byte(`{"k":true}`))
	require.NoError(t, err)
	assert.Equal(t, `{"b": 1,  "a": {"x": "y", "n": [1, {"k":true}]}}`, string(out))
	_, err = SetJSON(body, "a.q", []byte(`1`))
	assert.EqualError(t, err, "a.q: no such field in the body (a has x, n)")
	_, err = SetJSON(body, "c.d", []byte(`1`))
	assert.EqualError(t, err, "c.d: no such field in the body (the top level has b, a)")
	_, err = SetJSON(body, "a.n.5", []byte(`1`))
	assert.EqualError(t, err, "a.n.5: no such field in the body (a.n has 2 items)")
	_, err = SetJSON([]byte(`nope`), "a", []byte(`1`))
	assert.EqualError(t, err, "the body is not JSON")
}

package stdwebhooks

import (
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var testNow = time.Unix(1_770_000_000, 0)

func headersFor(id string, ts time.Time, sig string) http.Header {
	h := http.Header{}
	h.Set(HeaderID, id)
	h.Set(HeaderTimestamp, strconv.FormatInt(ts.Unix(), 10))
	h.Set(HeaderSignature, sig)
	return h
}

// TestStandardWebhooksVector checks the example from the Standard Webhooks spec
// and reference libraries.
func TestStandardWebhooksVector(t *testing.T) {
	secret, err := ParseSecret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	require.NoError(t, err)
	body := []byte(`{"test": 2432232314}`)
	ts := time.Unix(1614265330, 0)
	sig := Sign(secret, "msg_p5jXN8AQM9LWM0D4loKWxJek", ts, body)
	assert.Equal(t, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=", sig)
	assert.NoError(t, Verify(secret, headersFor("msg_p5jXN8AQM9LWM0D4loKWxJek", ts, sig), body, ts.Add(time.Minute)))
}

func TestVerify(t *testing.T) {
	secret := []byte("shared secret")
	body := []byte(`{"kind":"deploy"}`)
	good := Sign(secret, "msg_1", testNow, body)

	for _, tc := range []struct {
		name    string
		headers http.Header
		body    []byte
		want    error
	}{
		{"good", headersFor("msg_1", testNow, good), body, nil},
		{"one of several", headersFor("msg_1", testNow, "v1,bm90IGl0 v2,xyz "+good), body, nil},
		{"4m59s old", headersFor("msg_1", testNow.Add(-299*time.Second), Sign(secret, "msg_1", testNow.Add(-299*time.Second), body)), body, nil},
		{"stale", headersFor("msg_1", testNow.Add(-6*time.Minute), Sign(secret, "msg_1", testNow.Add(-6*time.Minute), body)), body, ErrTimestamp},
		{"future", headersFor("msg_1", testNow.Add(6*time.Minute), Sign(secret, "msg_1", testNow.Add(6*time.Minute), body)), body, ErrTimestamp},
		{"wrong secret", headersFor("msg_1", testNow, Sign([]byte("other"), "msg_1", testNow, body)), body, ErrSignature},
		{"body changed", headersFor("msg_1", testNow, good), []byte(`{"kind":"deploy "}`), ErrSignature},
		{"id changed", headersFor("msg_2", testNow, good), body, ErrSignature},
		{"v2 only", headersFor("msg_1", testNow, "v2"+good[2:]), body, ErrSignature},
		{"missing signature", headersFor("msg_1", testNow, ""), body, ErrMissingHeaders},
		{"missing id", headersFor("", testNow, good), body, ErrMissingHeaders},
		{"bad timestamp", func() http.Header { h := headersFor("msg_1", testNow, good); h.Set(HeaderTimestamp, "soon"); return h }(), body, ErrTimestamp},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Verify(secret, tc.headers, tc.body, testNow)
			if tc.want == nil {
				assert.NoError(t, err)
				return
			}
			assert.True(t, errors.Is(err, tc.want), "got %v, want %v", err, tc.want)
		})
	}
}

func TestParseSecret(t *testing.T) {
	raw, err := ParseSecret("whsec_" + base64.StdEncoding.EncodeToString([]byte("0123456789abcdef")))
	require.NoError(t, err)
	assert.Equal(t, []byte("0123456789abcdef"), raw)

	plain, err := ParseSecret("just-a-shared-string")
	require.NoError(t, err)
	assert.Equal(t, []byte("just-a-shared-string"), plain)

	// A short secret is guessable offline from one signed delivery.
	_, err = ParseSecret("s3cret")
	assert.EqualError(t, err, "must be at least 16 bytes")
	_, err = ParseSecret("whsec_" + base64.StdEncoding.EncodeToString([]byte("0123456789abcde")))
	assert.EqualError(t, err, "the part after whsec_ must decode to at least 16 bytes")

	_, err = ParseSecret("whsec_not*base64")
	assert.Error(t, err)
	_, err = ParseSecret("")
	assert.Error(t, err)
}

func FuzzVerify(f *testing.F) {
	secret := []byte("fuzz secret")
	body := []byte(`{"kind":"x"}`)
	ts := strconv.FormatInt(testNow.Unix(), 10)
	f.Add("msg_1", ts, Sign(secret, "msg_1", testNow, body), body)
	f.Add("msg_1", ts, "v1,"+base64.StdEncoding.EncodeToString(make([]byte, 32)), body)
	f.Add("", "", "", []byte(nil))
	f.Add("id", "-9223372036854775808", "v1,,,, v1", []byte("{}"))
	f.Add("id", "9223372036854775807", "v1,==== v1a,abc", []byte{0xff, 0x00})
	f.Add("a.b.c", ts, "   v1,AAAA   ", []byte("."))
	f.Fuzz(func(t *testing.T, id, ts, sig string, body []byte) {
		h := http.Header{}
		h.Set(HeaderID, id)
		h.Set(HeaderTimestamp, ts)
		h.Set(HeaderSignature, sig)
		_ = Verify(secret, h, body, testNow) // must not panic

		// What Sign produces, Verify accepts (ids in headers cannot hold newlines).
		if id != "" && validHeaderValue(id) {
			good := headersFor(id, testNow, Sign(secret, id, testNow, body))
			if err := Verify(secret, good, body, testNow); err != nil && good.Get(HeaderID) == id {
				t.Fatalf("own signature rejected: %v", err)
			}
		}
	})
}

func validHeaderValue(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f {
			return false
		}
	}
	return s == trimmed(s)
}

func trimmed(s string) string {
	h := http.Header{}
	h.Set("x", s)
	return h.Get("x")
}

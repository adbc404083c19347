package session_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/stdwebhooks"
	"github.com/signalgate/signalgate/targets/session"
)

type fixtures struct {
	Secret  string `json:"secret"`
	Samples []struct {
		Vendor  string            `json:"vendor"`
		Headers map[string]string `json:"headers"`
		Body    json.RawMessage   `json:"body"`
		OpenAI  bool              `json:"openaiUnwrap"`
		Anthr   bool              `json:"anthropicUnwrap"`
	} `json:"samples"`
	Vector struct {
		Timestamp int64             `json:"timestamp"`
		Body      string            `json:"body"`
		Headers   map[string]string `json:"headers"`
	} `json:"vector"`
}

func load(t *testing.T) fixtures {
	raw, err := os.ReadFile("testdata/webhooks.json")
	require.NoError(t, err)
	var f fixtures
	require.NoError(t, json.Unmarshal(raw, &f))
	return f
}

func header(m map[string]string) http.Header {
	h := http.Header{}
	for k, v := range m {
		h.Set(k, v)
	}
	return h
}

// TestVerifyTakesWhatTheLibrariesTake: the libraries' own signed samples and test
// vector (testdata/webhooks.json, recorded by interop/hosted's sign-webhook.js) are
// taken by both dialects at their timestamp, and refused five minutes and ten seconds
// later.
func TestVerifyTakesWhatTheLibrariesTake(t *testing.T) {
	f := load(t)
	key, err := stdwebhooks.ParseSecret(f.Secret)
	require.NoError(t, err)
	for _, d := range []session.Dialect{session.OpenAIDialect, session.StandardDialect} {
		at := time.Unix(f.Vector.Timestamp, 0)
		require.NoError(t, session.Verify(d, key, header(f.Vector.Headers), []byte(f.Vector.Body), at))
		require.Error(t, session.Verify(d, key, header(f.Vector.Headers), []byte(f.Vector.Body), at.Add(310*time.Second)))
		for _, s := range f.Samples {
			ts, _ := strconv.ParseInt(s.Headers["webhook-timestamp"], 10, 64)
			require.True(t, s.OpenAI && s.Anthr)
			// Signed as JSON.stringify wrote it: the file's text, compacted.
			var b bytes.Buffer
			require.NoError(t, json.Compact(&b, s.Body))
			require.NoError(t, session.Verify(d, key, header(s.Headers), b.Bytes(), time.Unix(ts, 0)))
		}
	}
}

// TestVerifyMatrix is the libraries' acceptance matrix: what each unwrap takes, the
// gateway's dialect takes, and nothing else.
func TestVerifyMatrix(t *testing.T) {
	f := load(t)
	key, _ := stdwebhooks.ParseSecret(f.Secret)
	now := time.Unix(1767225600, 0)
	body := []byte(f.Vector.Body)
	sign := func(id string, ts time.Time, b []byte) string { return stdwebhooks.Sign(key, id, ts, b) }
	hdr := func(id, ts, sig string) http.Header {
		return header(map[string]string{"webhook-id": id, "webhook-timestamp": ts, "webhook-signature": sig})
	}
	unix := func(t time.Time) string { return strconv.FormatInt(t.Unix(), 10) }
	good := sign("msg_1", now, body)
	cases := []struct {
		name           string
		h              http.Header
		body           []byte
		openai, anthro bool
	}{
		{"valid v1,<sig>", hdr("msg_1", unix(now), good), body, true, true},
		{"several signatures, the good one second", hdr("msg_1", unix(now), "v1,AAAA "+good), body, true, true},
		{"signature without v1,", hdr("msg_1", unix(now), strings.TrimPrefix(good, "v1,")), body, true, false},
		{"v1a,<sig>", hdr("msg_1", unix(now), "v1a,"+strings.TrimPrefix(good, "v1,")), body, false, false},
		{"body tampered", hdr("msg_1", unix(now), good), append([]byte(" "), body...), false, false},
		{"290 s old", hdr("msg_1", unix(now.Add(-290*time.Second)), sign("msg_1", now.Add(-290*time.Second), body)), body, true, true},
		{"290 s ahead", hdr("msg_1", unix(now.Add(290*time.Second)), sign("msg_1", now.Add(290*time.Second), body)), body, true, true},
		{"310 s old (expired)", hdr("msg_1", unix(now.Add(-310*time.Second)), sign("msg_1", now.Add(-310*time.Second), body)), body, false, false},
		{"310 s ahead", hdr("msg_1", unix(now.Add(310*time.Second)), sign("msg_1", now.Add(310*time.Second), body)), body, false, false},
		{"timestamp in milliseconds", hdr("msg_1", strconv.FormatInt(now.UnixMilli(), 10), good), body, false, false},
		{"missing webhook-id", hdr("", unix(now), good), body, false, false},
		{"wrong webhook-id", hdr("msg_2", unix(now), good), body, false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.openai, session.Verify(session.OpenAIDialect, key, c.h, c.body, now) == nil, "openai")
			require.Equal(t, c.anthro, session.Verify(session.StandardDialect, key, c.h, c.body, now) == nil, "standardwebhooks")
		})
	}
}

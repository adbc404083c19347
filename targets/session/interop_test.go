package session_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/stdwebhooks"
	"github.com/signalgate/signalgate/targets/session"
	"github.com/signalgate/signalgate/targets/session/sessiontest"
)

type unwrapCase struct {
	Vendor  string            `json:"vendor"`
	Secret  string            `json:"secret"`
	Headers map[string]string `json:"headers"`
	Body    string            `json:"body"`
}

type unwrapResult struct {
	OK    bool   `json:"ok"`
	Error string `json:"error"`
}

// unwrap runs the cases through the vendors' webhooks.unwrap (interop/hosted, installed
// by .ci/hosted.sh). Skipped unless the harness is installed, or SIGNALGATE_TEST_HOSTED
// is set (CI), where a missing harness fails.
func unwrap(t *testing.T, cases []unwrapCase) []unwrapResult {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "..", "interop", "hosted")
	node, err := exec.LookPath("node")
	if _, serr := os.Stat(filepath.Join(dir, "node_modules", "openai")); serr != nil || err != nil {
		if os.Getenv("SIGNALGATE_TEST_HOSTED") != "" {
			t.Fatalf("the hosted interop harness is not installed (run .ci/hosted.sh): %v %v", serr, err)
		}
		t.Skip("hosted interop harness not installed (run .ci/hosted.sh)")
	}
	in, err := json.Marshal(cases)
	require.NoError(t, err)
	cmd := exec.CommandContext(t.Context(), node, "unwrap.js")
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(in)
	cmd.Stderr = os.Stderr
	raw, err := cmd.Output()
	require.NoError(t, err, "unwrap output: %s", raw)
	var out []unwrapResult
	require.NoError(t, json.Unmarshal(raw, &out))
	require.Len(t, out, len(cases))
	return out
}

// TestUnwrapTakesWhatTheGatewayTakes: for each vendor, the session webhooks the gateway
// takes are exactly those the vendor's own webhooks.unwrap takes: the webhook the tests'
// fake signs, the same tampered, expired, from the future, signed with another secret,
// and the signature forms the two libraries read differently.
func TestUnwrapTakesWhatTheGatewayTakes(t *testing.T) {
	const secret = "whsec_c2lnbmFsZ2F0ZS10ZXN0LXdlYmhvb2stc2VjcmV0ISE="
	key, err := stdwebhooks.ParseSecret(secret)
	require.NoError(t, err)
	other, err := stdwebhooks.ParseSecret("whsec_b3RoZXItc2VjcmV0LW9mLWVub3VnaC1ieXRlcw==")
	require.NoError(t, err)
	now := time.Now()
	type delivery struct {
		name string
		h    map[string]string
		body string
	}
	var cases []unwrapCase
	var deliveries []delivery
	var dialects []session.Dialect
	for _, v := range []struct {
		vendor  string
		dialect session.Dialect
	}{{sessiontest.OpenAI, session.OpenAIDialect}, {sessiontest.Anthropic, session.StandardDialect}} {
		body := string(sessiontest.NewFake(t, v.vendor).WebhookBody(sessiontest.HookIdle, "sess_1"))
		sign := func(k []byte, id string, at time.Time, b string) map[string]string {
			return map[string]string{"webhook-id": id, "webhook-timestamp": strconv.FormatInt(at.Unix(), 10),
				"webhook-signature": stdwebhooks.Sign(k, id, at, []byte(b))}
		}
		good := sign(key, "msg_1", now, body)
		with := func(k, val string) map[string]string {
			h := map[string]string{}
			for a, b := range good {
				h[a] = b
			}
			h[k] = val
			return h
		}
		bare := strings.TrimPrefix(good["webhook-signature"], "v1,")
		for _, d := range []delivery{
			{"signed", good, body},
			{"tampered", good, strings.Replace(body, "sess_1", "sess_2", 1)},
			{"expired (310 s old)", sign(key, "msg_1", now.Add(-310*time.Second), body), body},
			{"310 s ahead", sign(key, "msg_1", now.Add(310*time.Second), body), body},
			{"290 s old", sign(key, "msg_1", now.Add(-290*time.Second), body), body},
			{"another secret", sign(other, "msg_1", now, body), body},
			{"signature without v1,", with("webhook-signature", bare), body},
			{"v1a,", with("webhook-signature", "v1a,"+bare), body},
			{"two signatures, the good one second", with("webhook-signature", "v1,AAAA "+good["webhook-signature"]), body},
			{"another webhook-id", with("webhook-id", "msg_2"), body},
			{"timestamp in milliseconds", with("webhook-timestamp", strconv.FormatInt(now.UnixMilli(), 10)), body},
		} {
			cases = append(cases, unwrapCase{Vendor: v.vendor, Secret: secret, Headers: d.h, Body: d.body})
			deliveries = append(deliveries, d)
			dialects = append(dialects, v.dialect)
		}
	}
	verdicts := unwrap(t, cases)
	for i, d := range deliveries {
		h := http.Header{}
		for k, v := range d.h {
			h.Set(k, v)
		}
		gw := session.Verify(dialects[i], key, h, []byte(d.body), time.Now())
		require.Equal(t, verdicts[i].OK, gw == nil, "%s, %s: the library says %+v, the gateway %v", cases[i].Vendor, d.name, verdicts[i], gw)
	}
	require.True(t, verdicts[0].OK, "the signed one is taken")
}

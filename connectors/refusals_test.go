package connectors_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/connectors/connectorstest"
	"github.com/signalgate/signalgate/connectors/generic"
	"github.com/signalgate/signalgate/connectors/github"
	"github.com/signalgate/signalgate/connectors/slack"
	"github.com/signalgate/signalgate/server"
	"github.com/signalgate/signalgate/stdwebhooks"
)

const (
	githubSecret  = "a-github-secret-0123456789"
	slackSecret   = "8f742231b10e8888abcd99yyyzzz85a5"
	genericSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
)

// lockedBuffer is a log sink the handlers write to from the server's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// refusalServer is a server with the three HTTP kinds mounted (github/acme,
// slack/acme, generic/billing) and the refusals observing it.
func refusalServer(t *testing.T, cfg server.Config, now func() time.Time) (*server.Server, *connectors.Refusals, *lockedBuffer) {
	t.Helper()
	logs := &lockedBuffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	refusals := connectors.NewRefusals(0, now)
	refusals.Keep([]string{"github/acme", "slack/acme", "generic/billing"})
	srv := server.New(cfg, log, server.WithObserver(refusals.Middleware()))
	p := connectors.NewPipeline(nil, connectorstest.NewIngester(), log)
	gh, err := github.NewHandler([]github.Config{{Name: "acme", Secret: githubSecret}}, p, log, now)
	require.NoError(t, err)
	sl, err := slack.NewHandler([]slack.Config{{Name: "acme", SigningSecret: slackSecret}}, p, log, now)
	require.NoError(t, err)
	ge, err := generic.NewHandler([]generic.Config{{Name: "billing", Secret: genericSecret}}, p, log, now)
	require.NoError(t, err)
	gh.Mount(srv.Echo())
	sl.Mount(srv.Echo())
	ge.Mount(srv.Echo())
	return srv, refusals, logs
}

func hmacHex(secret string, parts ...[]byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	for _, p := range parts {
		m.Write(p)
	}
	return hex.EncodeToString(m.Sum(nil))
}

func forgedBody(i int) []byte {
	return []byte(fmt.Sprintf(`{"type":"BODY-MARKER-%d","text":"secret-looking BODY-MARKER"}`, i))
}

// forged is the i-th attacker request: kind by i, a body and signature header values
// carrying markers, a wrong signature of the right shape.
func forged(i int, at time.Time) (*http.Request, string) {
	body := forgedBody(i)
	ts := strconv.FormatInt(at.Unix(), 10)
	var req *http.Request
	var want string
	switch i % 3 {
	case 0:
		req = httptest.NewRequest(http.MethodPost, "/webhooks/github/acme", bytes.NewReader(body))
		req.Header.Set("X-GitHub-Event", "issues")
		req.Header.Set("X-GitHub-Delivery", "d-"+strconv.Itoa(i))
		req.Header.Set("X-Hub-Signature-256", "sha256="+hmacHex("SIG-MARKER", body))
		want = "github/acme"
	case 1:
		req = httptest.NewRequest(http.MethodPost, "/webhooks/slack/acme", bytes.NewReader(body))
		req.Header.Set(slack.HeaderTimestamp, ts)
		req.Header.Set(slack.HeaderSignature, "v0="+hmacHex("SIG-MARKER", []byte("v0:"+ts+":"), body))
		want = "slack/acme"
	default:
		req = httptest.NewRequest(http.MethodPost, "/webhooks/generic/billing", bytes.NewReader(body))
		req.Header.Set(stdwebhooks.HeaderID, "msg_"+strconv.Itoa(i))
		req.Header.Set(stdwebhooks.HeaderTimestamp, ts)
		req.Header.Set(stdwebhooks.HeaderSignature, "v1,U0lHLU1BUktFUi1TSUctTUFSS0VSLVNJRy1NQVJLRVI=")
		want = "generic/billing"
	}
	req.Header.Set("Content-Type", "application/json")
	return req, want
}

// TestRefusalsUnderAttack plays the attacker: 10,000 forged deliveries to configured
// connectors and more to connectors that do not exist. Each connector keeps its bound
// of entries, an unknown name never gets a log, and no entry or log line carries the
// signature sent, the one the secret would give, the body or the secret.
func TestRefusalsUnderAttack(t *testing.T) {
	// slack-go checks a timestamp against the wall clock as well as the injected one.
	now := time.Now().UTC().Truncate(time.Second)
	srv, refusals, logs := refusalServer(t, server.Config{}, func() time.Time { return now })
	sent := map[string]int64{}
	var expected []string // what the secrets would have signed the last bodies with
	for i := range 10_000 {
		req, key := forged(i, now)
		rec := httptest.NewRecorder()
		srv.Echo().ServeHTTP(rec, req)
		require.Equal(t, http.StatusUnauthorized, rec.Code, rec.Body.String())
		sent[key]++
		if i >= 9_990 && i%3 == 1 {
			ts := strconv.FormatInt(now.Unix(), 10)
			expected = append(expected, hmacHex(slackSecret, []byte("v0:"+ts+":"), forgedBody(i)))
		}
		if i%100 == 0 {
			stray := httptest.NewRequest(http.MethodPost, "/webhooks/github/nope-"+strconv.Itoa(i), strings.NewReader("{}"))
			rec := httptest.NewRecorder()
			srv.Echo().ServeHTTP(rec, stray)
			require.Equal(t, http.StatusNotFound, rec.Code)
		}
	}
	vocabulary := map[string]bool{}
	for _, r := range connectors.Reasons() {
		vocabulary[string(r)] = true
	}
	for _, ref := range [][2]string{{"github", "acme"}, {"slack", "acme"}, {"generic", "billing"}} {
		log, ok := refusals.Log(ref[0], ref[1])
		require.True(t, ok)
		assert.Equal(t, sent[ref[0]+"/"+ref[1]], log.Total, ref)
		require.Len(t, log.Recent, connectors.DefaultRefusalsKept, ref)
		for _, f := range log.Recent {
			assert.Equal(t, http.StatusUnauthorized, f.Status)
			assert.True(t, vocabulary[f.Reason], "reason %q is not from the vocabulary", f.Reason)
			assert.NotContains(t, f.Reason, "MARKER")
			assert.Equal(t, "192.0.2.1", f.RemoteAddr)
		}
	}
	g, _ := refusals.Log("github", "acme")
	assert.Equal(t, string(connectors.ReasonSignatureMismatch), g.Recent[0].Reason)
	s, _ := refusals.Log("slack", "acme")
	assert.Equal(t, string(connectors.ReasonSignatureMismatch), s.Recent[0].Reason)
	ge, _ := refusals.Log("generic", "billing")
	assert.Equal(t, string(connectors.ReasonNoV1Signature), ge.Recent[0].Reason)
	for i := 0; i < 10_000; i += 100 {
		_, ok := refusals.Log("github", "nope-"+strconv.Itoa(i))
		require.False(t, ok, "a name no config holds got a log")
	}
	out := logs.String()
	assert.Contains(t, out, "signature rejected")
	require.NotEmpty(t, expected)
	for _, sig := range expected {
		assert.NotContains(t, out, sig, "a log line carries the signature the secret gives")
	}
	for _, s := range []string{slackSecret, githubSecret, genericSecret, "BODY-MARKER"} {
		assert.NotContains(t, out, s)
	}
}

// TestRefusalsKeepNewestFirst: a log keeps its bound, newest first, counts beyond it,
// survives a Keep that still names its connector and is gone after one that does not.
func TestRefusalsKeepNewestFirst(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	refusals := connectors.NewRefusals(3, func() time.Time { return at })
	refusals.Keep([]string{"github/acme"})
	srv := server.New(server.Config{}, nil, server.WithObserver(refusals.Middleware()))
	gh, err := github.NewHandler([]github.Config{{Name: "acme", Secret: githubSecret}}, nil, nil, func() time.Time { return at })
	require.NoError(t, err)
	gh.Mount(srv.Echo())
	for i := range 5 {
		at = at.Add(time.Second)
		req := httptest.NewRequest(http.MethodPost, "/webhooks/github/acme", strings.NewReader("{}"))
		req.Header.Set("X-GitHub-Event", "issues")
		req.Header.Set("X-GitHub-Delivery", "d-"+strconv.Itoa(i))
		srv.Echo().ServeHTTP(httptest.NewRecorder(), req)
	}
	log, ok := refusals.Log("github", "acme")
	require.True(t, ok)
	assert.EqualValues(t, 5, log.Total)
	require.Len(t, log.Recent, 3)
	for i, f := range log.Recent {
		assert.Equal(t, at.Add(-time.Duration(i)*time.Second), f.At, "newest first")
		assert.Equal(t, string(connectors.ReasonSignatureMissing), f.Reason)
	}
	refusals.Keep([]string{"github/acme", "generic/billing"})
	kept, _ := refusals.Log("github", "acme")
	assert.Equal(t, log, kept, "a reload that keeps the connector keeps its log")
	refusals.Keep([]string{"generic/billing"})
	_, ok = refusals.Log("github", "acme")
	assert.False(t, ok, "a connector no longer configured has no log")
}

// TestRefusalsBeforeVerifying: what is refused before a signature is checked is
// recorded too: a missing header (the connector's own message), a body over the limit
// (refused by the server before any handler runs), with the client address as the
// server sees it (server.trust_proxy honoured).
func TestRefusalsBeforeVerifying(t *testing.T) {
	now := time.Now().UTC()
	for _, trust := range []bool{false, true} {
		t.Run(fmt.Sprintf("trust_proxy=%v", trust), func(t *testing.T) {
			srv, refusals, _ := refusalServer(t, server.Config{BodyLimit: 1024, TrustProxy: trust}, func() time.Time { return now })
			post := func(path string, body string, hdr map[string]string) int {
				req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
				req.RemoteAddr = "10.0.0.5:40000" // a proxy in a private range, as echo trusts them
				req.Header.Set("X-Forwarded-For", "203.0.113.7")
				for k, v := range hdr {
					req.Header.Set(k, v)
				}
				rec := httptest.NewRecorder()
				srv.Echo().ServeHTTP(rec, req)
				return rec.Code
			}
			require.Equal(t, http.StatusBadRequest, post("/webhooks/github/acme", "{}", map[string]string{"X-GitHub-Event": "issues"}))
			require.Equal(t, http.StatusRequestEntityTooLarge, post("/webhooks/generic/billing", strings.Repeat("x", 2048), nil))
			require.Equal(t, http.StatusUnauthorized, post("/webhooks/slack/acme", "{}", map[string]string{slack.HeaderSignature: "v0=00"}))
			require.Equal(t, http.StatusNotFound, post("/webhooks/generic/other", "{}", nil))
			require.Equal(t, http.StatusNotFound, post("/webhooks/nowhere/acme", "{}", nil))

			addr := "10.0.0.5"
			if trust {
				addr = "203.0.113.7"
			}
			g, _ := refusals.Log("github", "acme")
			require.Len(t, g.Recent, 1)
			assert.Equal(t, connectors.Refusal{At: now, RemoteAddr: addr, Status: http.StatusBadRequest, Reason: "missing X-Github-Delivery header"}, g.Recent[0])
			ge, _ := refusals.Log("generic", "billing")
			require.Len(t, ge.Recent, 1)
			assert.Equal(t, connectors.Refusal{At: now, RemoteAddr: addr, Status: http.StatusRequestEntityTooLarge, Reason: string(connectors.ReasonTooLarge)}, ge.Recent[0])
			s, _ := refusals.Log("slack", "acme")
			require.Len(t, s.Recent, 1)
			assert.Equal(t, string(connectors.ReasonTimestampMissing), s.Recent[0].Reason)
			_, ok := refusals.Log("generic", "other")
			assert.False(t, ok)
		})
	}
}

package webhook_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/delivery"
	"github.com/signalgate/signalgate/deliverytest"
	"github.com/signalgate/signalgate/inbox"
	sgsecret "github.com/signalgate/signalgate/secret"
	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/targets/webhook"
)

// The secret of the Standard Webhooks spec's own example.
const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

// verify is an independent Standard Webhooks verifier written from the spec
// (https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md):
// the signed content is "{webhook-id}.{webhook-timestamp}.{body}", the key is the base64
// part of the secret after "whsec_", and webhook-signature is a space-delimited list of
// "v1,<base64 HMAC-SHA256>"; the timestamp must be within 5 minutes of now.
func verify(t *testing.T, h http.Header, body []byte, now time.Time) {
	t.Helper()
	id, ts, sigs := h.Get("webhook-id"), h.Get("webhook-timestamp"), h.Get("webhook-signature")
	require.NotEmpty(t, id)
	sec, err := strconv.ParseInt(ts, 10, 64)
	require.NoError(t, err)
	require.LessOrEqual(t, now.Sub(time.Unix(sec, 0)).Abs(), 5*time.Minute)
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	require.NoError(t, err)
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + ts + "."))
	mac.Write(body)
	want := "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
	for _, s := range strings.Fields(sigs) {
		if hmac.Equal([]byte(s), []byte(want)) {
			return
		}
	}
	t.Fatalf("no valid signature in %q", sigs)
}

type received struct {
	header http.Header
	body   []byte
}

// receiver answers with the queued responses in turn (the last one repeats).
type receiver struct {
	mu        sync.Mutex
	responses []func(w http.ResponseWriter)
	got       []received
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	rc.got = append(rc.got, received{header: r.Header.Clone(), body: body})
	respond := rc.responses[0]
	if len(rc.responses) > 1 {
		rc.responses = rc.responses[1:]
	}
	rc.mu.Unlock()
	respond(w)
}

func (rc *receiver) received() []received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]received(nil), rc.got...)
}

func status(code int, headers ...string) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Set(headers[i], headers[i+1])
		}
		w.WriteHeader(code)
		_, _ = w.Write([]byte(`{"error":"nope"}`))
	}
}

func newEnv(t *testing.T, rc *receiver, urlSuffix string, maxAttempts int) (*deliverytest.Env, inbox.ThreadKey) {
	t.Helper()
	srv := httptest.NewServer(rc)
	t.Cleanup(srv.Close)
	u := strings.Replace(srv.URL, "http://", "http://hookuser:hookpass@", 1) + "/hook" + urlSuffix
	cfg := agent.Config{ID: "coder", Token: deliverytest.CoderToken, Target: agent.TargetConfig{Kind: webhook.Kind, Presence: webhook.PresenceSource, MaxAttempts: maxAttempts, Settings: webhook.Config{URL: u, Secret: secret, Headers: map[string]sgsecret.Secret{"X-Api-Key": "k-0123456789"}}}}
	env := deliverytest.New(t, deliverytest.Config{
		Agents: []agent.Config{cfg},
		EnvRoutes: func(e *deliverytest.Env) map[string]delivery.Route {
			tg, err := webhook.New(cfg, webhook.WithClock(e.Now))
			require.NoError(t, err)
			return map[string]delivery.Route{"coder": {Kind: webhook.Kind, Target: tg, MaxAttempts: maxAttempts, Concurrency: 2}}
		},
		Dispatch: []delivery.Option{delivery.WithSecrets([]string{"k-0123456789"})},
	})
	return env, inbox.ThreadKey{Agent: "coder", Resource: "acme/api", Thread: "pr-7"}
}

func attempts(t *testing.T, env *deliverytest.Env, recordID string) []delivery.Attempt {
	t.Helper()
	out, err := store.NewAdmin(env.Store).ListAttempts(context.Background(), delivery.AttemptFilter{RecordID: recordID})
	require.NoError(t, err)
	// Oldest first.
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

func TestWebhookSignedRetriedThenDelivered(t *testing.T) {
	rc := &receiver{responses: []func(http.ResponseWriter){
		status(http.StatusServiceUnavailable),
		status(http.StatusTooManyRequests, "Retry-After", "7"),
		status(http.StatusOK),
	}}
	env, k := newEnv(t, rc, "?token=querysecret", 0)
	id := env.Ingest(inbox.Notification{Thread: k, Source: "github", Kind: "ci-failure", Priority: inbox.PriorityUrgent, Summary: "CI failed"})

	env.Pass()
	r := env.Record(id)
	require.Equal(t, inbox.StatusPending, r.Status)
	require.Equal(t, 1, r.Attempts)
	require.NotNil(t, r.NextAttemptAt)
	env.Clock.Advance(r.NextAttemptAt.Sub(env.Now()))
	env.Pass()
	r = env.Record(id)
	require.Equal(t, 2, r.Attempts)
	require.Equal(t, env.Now().Add(7*time.Second), *r.NextAttemptAt, "Retry-After is honoured")
	env.Clock.Advance(7 * time.Second)
	env.Pass()
	r = env.Record(id)
	require.Equal(t, inbox.StatusDelivered, r.Status)
	require.Equal(t, 3, r.Attempts, "the successful attempt counts")

	got := rc.received()
	require.Len(t, got, 3)
	for _, g := range got {
		verify(t, g.header, g.body, env.Now())
		require.Equal(t, got[0].header.Get("webhook-id"), g.header.Get("webhook-id"), "one signal id across retries")
		require.Equal(t, "k-0123456789", g.header.Get("X-Api-Key"))
	}
	var p webhook.Payload
	require.NoError(t, json.Unmarshal(got[2].body, &p))
	require.Equal(t, "signal", p.Type)
	require.Equal(t, got[2].header.Get("webhook-id"), p.Signal.ID)
	require.Equal(t, k, inbox.ThreadKey{Agent: p.Agent, Resource: p.ResourceID, Thread: p.ThreadID})
	var first webhook.Payload
	require.NoError(t, json.Unmarshal(got[0].body, &first))
	require.Equal(t, agent.BehaviorWake, first.Action, "the first attempt woke the idle thread")
	require.Equal(t, agent.BehaviorDeliver, p.Action, "retries go into the run the wake opened")
	require.NotNil(t, p.RunID)
	require.Equal(t, *first.RunID, *p.RunID)
	require.Equal(t, []string{id}, p.RecordIDs)
	require.Equal(t, 3, p.Attempt)
	require.Equal(t, p.Signal.XML(), p.XML)
	require.Contains(t, p.XML, ">CI failed</notification>")

	atts := attempts(t, env, id)
	require.Len(t, atts, 3)
	require.Equal(t, []string{delivery.OutcomeRetry, delivery.OutcomeRetry, delivery.OutcomeDelivered},
		[]string{atts[0].Outcome, atts[1].Outcome, atts[2].Outcome})
	require.Equal(t, []int{503, 429, 200}, []int{atts[0].StatusCode, atts[1].StatusCode, atts[2].StatusCode},
		"the receiver's status is logged on success too")
	require.Equal(t, []int{1, 2, 3}, []int{atts[0].Attempt, atts[1].Attempt, atts[2].Attempt})
	for _, a := range atts[:2] {
		require.NotContains(t, a.Error, "hookpass")
		require.NotContains(t, a.Error, "querysecret")
		require.NotContains(t, a.Error, "/hook", "the stored error shows the target's host, never its path")
		require.Contains(t, a.Error, "/…: HTTP")
	}
	// The log holds the signal once, with the id the receiver saw.
	frames := env.Log(k)
	require.Equal(t, p.Signal.ID, frames[len(frames)-1].ID)
}

func TestWebhookDeadLetterAfterLimit(t *testing.T) {
	rc := &receiver{responses: []func(http.ResponseWriter){status(http.StatusBadGateway)}}
	env, k := newEnv(t, rc, "", 3)
	id := env.Ingest(inbox.Notification{Thread: k, Source: "github", Kind: "ci-failure", Priority: inbox.PriorityUrgent, Summary: "CI failed"})
	for range 3 {
		env.Pass()
		if r := env.Record(id); r.NextAttemptAt != nil {
			env.Clock.Advance(r.NextAttemptAt.Sub(env.Now()))
		}
	}
	r := env.Record(id)
	require.Equal(t, inbox.StatusFailed, r.Status)
	require.Equal(t, 3, r.Attempts)
	require.Len(t, rc.received(), 3)
	atts := attempts(t, env, id)
	require.Equal(t, delivery.OutcomeFailed, atts[len(atts)-1].Outcome)
	env.Clock.Advance(time.Hour)
	env.Pass()
	require.Len(t, rc.received(), 3, "a dead letter is not retried")
}

func TestWebhookClientErrorFailsAtOnce(t *testing.T) {
	rc := &receiver{responses: []func(http.ResponseWriter){status(http.StatusUnprocessableEntity)}}
	env, k := newEnv(t, rc, "", 0)
	id := env.Ingest(inbox.Notification{Thread: k, Source: "github", Kind: "ci-failure", Priority: inbox.PriorityUrgent, Summary: "CI failed"})
	env.Pass()
	r := env.Record(id)
	require.Equal(t, inbox.StatusFailed, r.Status)
	require.Equal(t, 1, r.Attempts)
	require.Contains(t, r.LastError, "HTTP 422")
}

func TestWebhookTimeoutRetried(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() { close(release); srv.Close() })
	tg, err := webhook.New(agent.Config{ID: "coder", Token: deliverytest.CoderToken, Target: agent.TargetConfig{Kind: webhook.Kind, Presence: webhook.PresenceSource, Timeout: 50 * time.Millisecond, Settings: webhook.Config{URL: srv.URL, Secret: secret}}})
	require.NoError(t, err)
	_, err = tg.Deliver(context.Background(), agent.Handoff{Thread: inbox.ThreadKey{Agent: "coder", Resource: "r", Thread: "t"},
		Signal: agent.Signal{ID: "s1", Type: agent.TypeNotification, TagName: "notification"}, Behavior: agent.BehaviorPersist, Attempt: 1})
	require.Error(t, err)
	require.Equal(t, agent.DeliveryError{Err: errors.Unwrap(err), Retry: true}, agent.DeliveryFailure(err),
		"a timeout is retried and has no status")
	require.Contains(t, err.Error(), "timed out")
}

func TestNewRejectsBadConfig(t *testing.T) {
	_, err := webhook.New(agent.Config{ID: "x", Target: agent.TargetConfig{Kind: "mastra"}})
	require.Error(t, err)
}

package webhook_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/deliverytest"
	"github.com/signalgate/signalgate/inbox"
	sgsecret "github.com/signalgate/signalgate/secret"
	"github.com/signalgate/signalgate/targets/webhook"
)

// newTargetSecret is the secret a rotation moves to; secret is the old one.
const newTargetSecret = "whsec_bmV3LXRhcmdldC1zZWNyZXQtMDEyMzQ1Njc4OQ=="

// libraryReceiver verifies every delivery with the official Standard Webhooks library,
// holding one secret at a time as a receiver does: 204 when it verifies, 401 when not.
type libraryReceiver struct {
	mu                sync.Mutex
	wh                *standardwebhooks.Webhook
	signatures        []string
	accepted, refused int
}

func (rc *libraryReceiver) use(t *testing.T, s string) {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(s)
	require.NoError(t, err)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.wh = wh
}

func (rc *libraryReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.signatures = append(rc.signatures, r.Header.Get("webhook-signature"))
	if rc.wh.Verify(body, r.Header) != nil {
		rc.refused++
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	rc.accepted++
	w.WriteHeader(http.StatusNoContent)
}

func (rc *libraryReceiver) counts() (accepted, refused int) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.accepted, rc.refused
}

// TestRotationSignsWithBothSecrets: a target rotating with secrets [new, old] sends a
// signature by each in webhook-signature, so the official library as receiver accepts
// every delivery when it holds only the old secret and then only the new one; before
// and after the overlap one secret is enough. A receiver holding neither refuses.
func TestRotationSignsWithBothSecrets(t *testing.T) {
	rc := &libraryReceiver{}
	srv := httptest.NewServer(rc)
	t.Cleanup(srv.Close)
	target := func(one sgsecret.Secret, many ...sgsecret.Secret) *webhook.Target {
		tg, err := webhook.New(agent.Config{ID: "coder", Token: deliverytest.CoderToken, Target: agent.TargetConfig{Kind: webhook.Kind, Presence: webhook.PresenceSource, Settings: webhook.Config{URL: srv.URL, Secret: one, Secrets: many}}})
		require.NoError(t, err)
		return tg
	}
	n := 0
	deliver := func(tg *webhook.Target) error {
		n++
		_, err := tg.Deliver(context.Background(), agent.Handoff{Thread: inbox.ThreadKey{Agent: "coder", Resource: "r", Thread: "t"},
			Signal:   agent.Signal{ID: "sig_" + strings.Repeat("x", n), Type: agent.TypeNotification, TagName: "notification"},
			Behavior: agent.BehaviorPersist, Attempt: 1})
		return err
	}
	steps := []struct {
		target   *webhook.Target
		receiver string
	}{
		{target(secret), secret},                               // before: the old secret only
		{target("", newTargetSecret, secret), secret},          // overlap, the receiver not yet moved
		{target("", newTargetSecret, secret), newTargetSecret}, // overlap, the receiver moved
		{target(newTargetSecret), newTargetSecret},             // after: the old secret retired
	}
	for i, s := range steps {
		rc.use(t, s.receiver)
		for range 3 {
			require.NoError(t, deliver(s.target), "step %d", i)
		}
	}
	accepted, refused := rc.counts()
	require.Equal(t, 12, accepted)
	require.Zero(t, refused)
	overlap := rc.signatures[3]
	require.Len(t, strings.Fields(overlap), 2, "one v1 signature per secret, space-separated")
	for _, s := range strings.Fields(overlap) {
		require.True(t, strings.HasPrefix(s, "v1,"), s)
	}

	// The receiver really verifies: one holding neither secret refuses.
	rc.use(t, "whsec_dGhpcmQtcmVjZWl2ZXItc2VjcmV0LTAxMjM=")
	err := deliver(target("", newTargetSecret, secret))
	require.Error(t, err)
	_, refused = rc.counts()
	require.Equal(t, 1, refused)
}

// TestRotationConfigErrorsNameKeysOnly: secret with secrets, three secrets and a
// malformed one are refused naming the key; no value appears in the error.
func TestRotationConfigErrorsNameKeysOnly(t *testing.T) {
	for _, c := range []struct {
		one  sgsecret.Secret
		many []sgsecret.Secret
		want string
	}{
		{secret, []sgsecret.Secret{newTargetSecret}, "target.secret, target.secrets: set one or the other"},
		{"", []sgsecret.Secret{newTargetSecret, secret, "whsec_dGhpcmQtcmVjZWl2ZXItc2VjcmV0LTAxMjM="}, "target.secrets: at most 2"},
		{"", []sgsecret.Secret{newTargetSecret, "whsec_not*base64"}, "target.secrets[1]: the part after whsec_ is not valid base64"},
	} {
		_, err := webhook.New(agent.Config{ID: "coder", Target: agent.TargetConfig{Kind: webhook.Kind, Presence: webhook.PresenceSource, Settings: webhook.Config{URL: "http://127.0.0.1:1/hook", Secret: c.one, Secrets: c.many}}})
		require.ErrorContains(t, err, c.want)
		for _, s := range append(c.many, c.one) {
			if s != "" {
				require.NotContains(t, err.Error(), strings.TrimPrefix(string(s), "whsec_"))
			}
		}
		cfg := agent.Config{ID: "coder", Token: deliverytest.CoderToken, Target: agent.TargetConfig{Kind: webhook.Kind, Presence: webhook.PresenceSource, Settings: webhook.Config{URL: "http://127.0.0.1:1/hook", Secret: c.one, Secrets: c.many}}}
		if verr := cfg.Validate(); verr != nil {
			for _, s := range append(c.many, c.one) {
				if s != "" {
					require.NotContains(t, verr.Error(), strings.TrimPrefix(string(s), "whsec_"))
				}
			}
		}
	}
}

package load

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	gh "github.com/google/go-github/v62/github"
	"github.com/slack-go/slack"

	"github.com/signalgate/signalgate/stdwebhooks"
)

// VerifyOnly is the ceiling a gateway is measured against: the same three ingest paths,
// reading the body and checking its signature as the connectors do, then answering 200
// without parsing, storing or routing anything.
func VerifyOnly(s Scenario) (http.Handler, error) {
	genSecret, err := stdwebhooks.ParseSecret(s.GenericSecret)
	if err != nil {
		return nil, err
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "method", http.StatusMethodNotAllowed)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, 25<<20))
		if err != nil {
			http.Error(w, "read", http.StatusBadRequest)
			return
		}
		ok := false
		switch {
		case strings.HasPrefix(r.URL.Path, "/webhooks/github/"):
			ok = gh.ValidateSignature(r.Header.Get(gh.SHA256SignatureHeader), body, []byte(s.GitHubSecret)) == nil
		case strings.HasPrefix(r.URL.Path, "/webhooks/slack/"):
			sv, err := slack.NewSecretsVerifier(r.Header, s.SlackSecret)
			if err == nil {
				_, _ = sv.Write(body)
				ok = sv.Ensure() == nil
			}
		case strings.HasPrefix(r.URL.Path, "/webhooks/generic/"):
			ok = stdwebhooks.Verify(genSecret, r.Header, body, time.Now()) == nil
		}
		if !ok {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"ok":true}`)
	}), nil
}

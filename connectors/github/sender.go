package github

import (
	"crypto/hmac"
	"crypto/sha1" //nolint:gosec // GitHub still sends X-Hub-Signature (HMAC-SHA1) beside the SHA-256 one
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"

	gh "github.com/google/go-github/v62/github"
	"github.com/google/uuid"

	"github.com/signalgate/signalgate/connectors"
)

// examples are GitHub's webhook payloads as @octokit/webhooks-examples records them
// (MIT, see examples/README.md): the first example of each action of the events the
// connector maps, workflow_job, status and ping. examples_gen.go writes them from the
// pinned package; a test checks each is still the package's, byte for byte.
//
//go:generate go run examples_gen.go
//go:embed examples/*.json
var exampleFiles embed.FS

// ExamplesVersion is the @octokit/webhooks-examples release the examples come from.
const ExamplesVersion = "7.6.1"

// hookshotAgent is the User-Agent GitHub's webhook deliveries carry (GitHub-Hookshot/
// and a short build id).
const hookshotAgent = "GitHub-Hookshot/044aadd"

// Example is the octokit example of event with action ("" for events without one,
// like push and ping), as GitHub sends it.
func Example(event, action string) ([]byte, error) {
	name := event
	if action != "" {
		name += "." + action
	}
	b, err := exampleFiles.ReadFile("examples/" + name + ".json")
	if err != nil {
		return nil, fmt.Errorf("%w %q", connectors.ErrNoSample, name)
	}
	return b, nil
}

// ExampleNames lists the embedded examples as event.action (or event), sorted.
func ExampleNames() []string {
	files, _ := fs.Glob(exampleFiles, "examples/*.json")
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = strings.TrimSuffix(path.Base(f), ".json")
	}
	return out
}

// Sign is the X-Hub-Signature-256 GitHub sends with body: "sha256=" and the hex
// HMAC-SHA256 of the body keyed by the webhook's secret.
func Sign(key, body []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// sender posts octokit examples to one connector, signed with its current secret.
type sender struct{ key []byte }

// NewSender is the sender of a GitHub connector: GitHub's own deliveries.
func NewSender(c Config, _ connectors.SenderOptions) (connectors.Sender, error) {
	secrets := c.VerifySecrets()
	if len(secrets) == 0 || secrets[0] == "" {
		return nil, errors.New("the connector has no secret to sign with")
	}
	return sender{key: []byte(secrets[0])}, nil
}

func (sender) Samples() []connectors.SampleInfo {
	var out []connectors.SampleInfo
	for _, n := range ExampleNames() {
		out = append(out, connectors.SampleInfo{Name: n, About: "@octokit/webhooks-examples " + ExamplesVersion})
	}
	return out
}

// Sample takes name as event.action ("check_run.completed") or event alone when the
// event has no action. There is no default: GitHub sends many events.
func (sender) Sample(name string, _ time.Time) (connectors.Sample, error) {
	if name == "" {
		return connectors.Sample{}, errors.New("name the event (and its action): GitHub sends many")
	}
	event, action, _ := strings.Cut(name, ".")
	body, err := Example(event, action)
	if err != nil {
		if action == "" {
			if _, ok := firstAction(event); ok {
				return connectors.Sample{}, fmt.Errorf("%w: %s has actions (%s): name one", connectors.ErrNoSample, event, strings.Join(actionsOf(event), ", "))
			}
		}
		return connectors.Sample{}, err
	}
	hdr := http.Header{}
	hdr.Set(gh.EventTypeHeader, event)
	return connectors.Sample{Name: name, ContentType: "application/json", Body: body, Header: hdr, DeliveryID: uuid.NewString()}, nil
}

// Sign adds what GitHub sends: the delivery id, the hook's id, its User-Agent and both
// signatures (the connector verifies X-Hub-Signature-256 only).
func (s sender) Sign(sample connectors.Sample, _ string, _ time.Time) (http.Header, error) {
	hdr := sample.Header.Clone()
	if hdr == nil {
		hdr = http.Header{}
	}
	hdr.Set("Content-Type", sample.ContentType)
	hdr.Set("User-Agent", hookshotAgent)
	hdr.Set(gh.DeliveryIDHeader, sample.DeliveryID)
	hdr.Set("X-GitHub-Hook-ID", "1")
	m := hmac.New(sha1.New, s.key)
	m.Write(sample.Body)
	hdr.Set(gh.SHA1SignatureHeader, "sha1="+hex.EncodeToString(m.Sum(nil)))
	hdr.Set(gh.SHA256SignatureHeader, Sign(s.key, sample.Body))
	return hdr, nil
}

// actionsOf lists the embedded actions of event.
func actionsOf(event string) []string {
	var out []string
	for _, n := range ExampleNames() {
		if e, a, ok := strings.Cut(n, "."); ok && e == event {
			out = append(out, a)
		}
	}
	return out
}

func firstAction(event string) (string, bool) {
	a := actionsOf(event)
	if len(a) == 0 {
		return "", false
	}
	return a[0], true
}

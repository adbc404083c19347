package github

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/inbox"
)

// The embedded examples are the pinned @octokit/webhooks-examples', byte for byte as
// GitHub sends them (compact), and complete: the first example of every action of
// every embedded event. Needs the fixtures (make fixtures; CI has them).
func TestEmbeddedExamplesArePinned(t *testing.T) {
	pkg, err := os.ReadFile(filepath.Join("testdata", "octokit", "package.json"))
	if os.IsNotExist(err) {
		t.Skip("testdata/octokit missing: run scripts/fetch-github-examples.sh (make test does)")
	}
	require.NoError(t, err)
	var meta struct {
		Version string `json:"version"`
	}
	require.NoError(t, json.Unmarshal(pkg, &meta))
	require.Equal(t, ExamplesVersion, meta.Version, "the fetched package is the pinned one")

	pinned := examples(t, "api.github.com")
	want := map[string][]byte{}
	embedded := map[string]bool{}
	for _, n := range ExampleNames() {
		event, _, _ := strings.Cut(n, ".")
		embedded[event] = true
	}
	for event := range embedded {
		for _, raw := range pinned[event] {
			var head struct {
				Action string `json:"action"`
			}
			require.NoError(t, json.Unmarshal(raw, &head))
			name := event
			if head.Action != "" {
				name += "." + head.Action
			}
			if _, ok := want[name]; ok {
				continue
			}
			var buf bytes.Buffer
			require.NoError(t, json.Compact(&buf, raw))
			want[name] = buf.Bytes()
		}
	}
	names := ExampleNames()
	assert.ElementsMatch(t, slices.Sorted(func(yield func(string) bool) {
		for k := range want {
			if !yield(k) {
				return
			}
		}
	}), names, "one example per action (go generate rewrites them)")
	for _, n := range names {
		event, action, _ := strings.Cut(n, ".")
		got, err := Example(event, action)
		require.NoError(t, err)
		assert.True(t, bytes.Equal(want[n], got), "%s differs from the pinned package's", n)
	}
	for _, e := range append(MappedEvents(), "ping", "status", "workflow_job") {
		if e == "secret_scanning_alert" {
			continue // the pinned package has no example of it
		}
		assert.True(t, embedded[e], "event %s has no embedded example", e)
	}
}

// Sign is GitHub's documented test vector (docs.github.com, "Validating webhook
// deliveries").
func TestSignVector(t *testing.T) {
	assert.Equal(t, "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17",
		Sign([]byte("It's a Secret to Everybody"), []byte("Hello, World!")))
}

// Every embedded example, signed by the sender as GitHub signs, is verified and read
// by the connector (never invalid); a sender with another secret is refused.
func TestSenderDeliversEveryExample(t *testing.T) {
	h := newHarness(t, testConfig(), 0)
	snd, err := NewSender(testConfig(), connectors.SenderOptions{})
	require.NoError(t, err)
	require.Len(t, snd.Samples(), len(ExampleNames()))
	for _, info := range snd.Samples() {
		s, err := snd.Sample(info.Name, fixedNow())
		require.NoError(t, err)
		hdr, err := snd.Sign(s, "", fixedNow())
		require.NoError(t, err)
		req := httptest.NewRequest(http.MethodPost, "/webhooks/github/acme", bytes.NewReader(s.Body))
		req.Header = hdr
		rec := h.do(req)
		require.Less(t, rec.Code, 300, "%s: %s", info.Name, rec.Body.String())
		call, ok := h.fake.Last()
		require.True(t, ok)
		assert.NotEqual(t, inbox.EventInvalid, call.Event.Status, "%s: %s", info.Name, call.Event.Error)
		assert.Equal(t, s.DeliveryID, call.Event.DeliveryID)
	}
	_, err = snd.Sample("check_run", fixedNow())
	require.ErrorContains(t, err, "check_run has actions (completed, created, requested_action, rerequested): name one")
	_, err = snd.Sample("check_run.exploded", fixedNow())
	require.ErrorIs(t, err, connectors.ErrNoSample)

	other, err := NewSender(Config{Name: "acme", Secret: "another secret of sixteen"}, connectors.SenderOptions{})
	require.NoError(t, err)
	s, err := other.Sample("ping", fixedNow())
	require.NoError(t, err)
	hdr, err := other.Sign(s, "", fixedNow())
	require.NoError(t, err)
	req := httptest.NewRequest(http.MethodPost, "/webhooks/github/acme", bytes.NewReader(s.Body))
	req.Header = hdr
	assert.Equal(t, http.StatusUnauthorized, h.do(req).Code)
}

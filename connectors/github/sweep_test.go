package github

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/inbox"
)

// TestOctokitSweep delivers every example of @octokit/webhooks-examples (every index:
// api.github.com and each GHES version) signed, as GitHub would: each is routed,
// ignored or answered as a ping; none is invalid.
func TestOctokitSweep(t *testing.T) {
	indexes, err := filepath.Glob(filepath.Join("testdata", "octokit", "*", "index.json"))
	require.NoError(t, err)
	if len(indexes) == 0 {
		if _, err := os.Stat(filepath.Join("testdata", "octokit")); os.IsNotExist(err) {
			t.Skip("testdata/octokit missing: run scripts/fetch-github-examples.sh (make test does)")
		}
		t.Fatal("no octokit index found")
	}
	h := newHarness(t, testConfig(), 0)
	counts := map[inbox.EventStatus]int{}
	total := 0
	for _, path := range indexes {
		index := filepath.Base(filepath.Dir(path))
		ex := examples(t, index)
		for _, event := range sortedKeys(ex) {
			for i, raw := range ex[event] {
				total++
				delivery := fmt.Sprintf("%s-%s-%d", index, event, i)
				rec := h.deliver(event, delivery, raw)
				call, ok := h.fake.Last()
				require.True(t, ok, "%s: stored", delivery)
				require.Equal(t, delivery, call.Event.DeliveryID)
				if event == "ping" {
					assert.Equal(t, http.StatusOK, rec.Code, "%s: %s", delivery, rec.Body.String())
					counts["ping"]++
					continue
				}
				out := decodeOutcome(t, rec)
				counts[out.Status]++
				assert.Contains(t, []inbox.EventStatus{inbox.EventRouted, inbox.EventIgnored}, out.Status,
					"%s: %s (%s)", delivery, out.Status, call.Event.Error)
			}
		}
	}
	t.Logf("%d octokit examples: %v", total, counts)
	assert.Zero(t, counts[inbox.EventInvalid], "none invalid")
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

package github

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"testing"

	gh "github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMappedEventsAreWhatTheMappingMaps runs every octokit example through the
// mapping directly (not through the MappedEvents gate): an event type that yields
// an item must be listed, so the setup helper tells users to subscribe to it, and
// every listed type must be one GitHub sends (it has examples).
func TestMappedEventsAreWhatTheMappingMaps(t *testing.T) {
	ex := map[string][]json.RawMessage{}
	for _, index := range []string{"api.github.com", "ghes-35", "ghes-34", "ghes-33", "ghes-32", "ghes-31"} {
		for event, list := range examples(t, index) {
			ex[event] = append(ex[event], list...)
		}
	}
	cfg := testConfig().WithDefaults()
	mapping := map[string]bool{}
	for _, event := range sortedKeys(ex) {
		for _, raw := range ex[event] {
			parsed, err := gh.ParseWebHook(event, raw)
			if err != nil {
				if parsed, _, err = parseLenient(event, raw); err != nil {
					continue // not a type go-github knows
				}
			}
			m := mapper{cfg: &cfg, ci: NewMemoryCIState(0), log: slog.New(slog.DiscardHandler), event: event}
			if len(m.items(context.Background(), parsed)) > 0 {
				mapping[event] = true
			}
		}
	}
	require.NotEmpty(t, mapping)
	for _, event := range sortedKeys(mapping) {
		assert.Contains(t, MappedEvents(), event, "the mapping makes items of %s: add it to MappedEvents()", event)
	}
	for _, event := range MappedEvents() {
		assert.NotEmpty(t, ex[event], "MappedEvents() lists %s, which GitHub does not send", event)
	}
	assert.Len(t, slices.Compact(slices.Sorted(slices.Values(MappedEvents()))), len(MappedEvents()), "no duplicates")
}

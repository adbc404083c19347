package slack

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"

	"github.com/slack-go/slack/slackevents"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSubscriptionsAreWhatTheMappingMaps offers the mapping every inner event type
// slack-go knows, typed and raw: the types it reads must be exactly those of
// Subscriptions(), so the app manifest subscribes to every event that is mapped.
func TestSubscriptionsAreWhatTheMappingMaps(t *testing.T) {
	var typed, raw []string
	for typ, zero := range slackevents.EventsAPIInnerEventMapping {
		body, err := json.Marshal(map[string]any{"type": string(typ), "channel": "C1", "user": "U1", "text": "hi", "ts": "1.2"})
		require.NoError(t, err)
		v := reflect.New(reflect.TypeOf(zero))
		if json.Unmarshal(body, v.Interface()) == nil {
			if _, ok := fromParsed(v.Interface()); ok {
				typed = append(typed, string(typ))
			}
		}
		if _, ok, _ := fromRaw(body); ok {
			raw = append(raw, string(typ))
		}
	}
	want := slices.Sorted(slices.Values(mappedInner()))
	assert.Equal(t, want, slices.Sorted(slices.Values(typed)), "typed events the mapping reads")
	assert.Equal(t, want, slices.Sorted(slices.Values(raw)), "raw events the mapping reads")
	var events []string
	for _, s := range Subscriptions() {
		assert.NotEmpty(t, s.Scope, s.Event)
		events = append(events, s.Event)
	}
	// Slack sends message events per conversation type, each its own subscription:
	// the mapping reads all four (channel chatter, private channels, DMs, group DMs).
	for _, sub := range []string{"message.channels", "message.groups", "message.im", "message.mpim"} {
		assert.Contains(t, events, sub)
	}
}

package slack

import (
	"slices"
	"strings"
)

// Subscription is one bot event the connector maps and the bot scope Slack
// requires to deliver it.
type Subscription struct {
	Event string // Events API subscription name, e.g. message.im
	Scope string
}

// Subscriptions lists the bot events the connector maps, each with its scope
// (Slack subscribes to messages per conversation type: message.channels, …).
// The app manifest helper prints this list, so a mapping added here reaches the
// user's app.
func Subscriptions() []Subscription {
	return []Subscription{
		{"app_mention", "app_mentions:read"},
		{"message.channels", "channels:history"},
		{"message.groups", "groups:history"},
		{"message.im", "im:history"},
		{"message.mpim", "mpim:history"},
	}
}

// LookupScopes are the bot scopes of the Web API methods the connector calls with
// bot_token: users.info for names, conversations.info for channel names and types
// (public and private). auth.test needs none.
func LookupScopes() []string { return []string{"users:read", "channels:read", "groups:read"} }

// mappedInner lists the inner event types (event.type) the mapping reads: the
// subscription names before the conversation-type suffix.
func mappedInner() []string {
	var out []string
	for _, s := range Subscriptions() {
		t, _, _ := strings.Cut(s.Event, ".")
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

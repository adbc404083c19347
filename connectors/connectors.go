// Package connectors holds the contract every source connector produces (Item),
// and the routes that turn items into inbox notifications for agent threads.
// Subpackages verify, parse and normalise one source each; none knows storage internals.
package connectors

import (
	"context"
	"encoding/json"
	"time"

	"github.com/signalgate/signalgate/inbox"
)

// Provenance keys every connector sets in Item.Metadata.
const (
	MetaVerifiedBy        = "verified_by" // hmac-github, slack-v0, imap-login, standard-webhooks
	MetaAuthor            = "author"
	MetaAuthorIsBot       = "author_is_bot"
	MetaAuthorAssociation = "author_association" // GitHub only
)

// Item is one normalised occurrence from a source, before routing.
type Item struct {
	Kind        string
	Priority    inbox.Priority
	Summary     string          // one or two plain sentences a model reads; never raw JSON
	Payload     json.RawMessage // the fields an agent may ask for, not the whole body
	DedupeKey   string
	CoalesceKey string
	// SourceID is the provider's id of the object (a PR or issue number, a Slack ts, an
	// email's Message-ID): stored on the record and returned, never a merge key.
	SourceID   string
	Attributes inbox.Attributes // repo, number, url, author, channel…
	Metadata   map[string]any   // provenance (Meta* keys)
	Fields     Fields           // what routes match on and thread templates read
	// NetKey, State and RestState put the item in a net-state lane (inbox.DecideNet):
	// the thing whose state it reports, that state, and the state needing no attention.
	NetKey, State, RestState string
	// Message is the user-authored text and its author, used when a route says
	// deliver_as: message | queued-message.
	Message *Message
	// Skip, when set, keeps the item out of routing (a bot's own comment, an ignored
	// subtype); the event is still stored, with this reason.
	Skip string
	// OccurredAt is the provider's time of what happened (a comment's creation, a
	// review's submission, a message's ts): a watch hears only what happened after it
	// was created. Zero: the event's receivedAt stands in.
	OccurredAt time.Time
	// WatchResources name the things the item belongs to as a watch names them
	// (watch.Resource's forms), the item's own thing first: a pull request and its
	// repository, a Slack thread and its channel, an email's conversation.
	WatchResources []string
	// Ends is set (watch.EndMerged, watch.EndClosed) when the item is its first watch
	// resource reaching its terminal state: that resource's watches end after it.
	Ends string
	// DefaultResource and DefaultThread are the kind's own thread for the item: what a
	// route that names only its agent (no thread.resource, no thread.thread) feeds.
	// Empty: the kind has none, and such a route is a routing error on the item.
	DefaultResource, DefaultThread string
}

// Message is the human side of an item: who wrote what.
type Message struct {
	Name string // display name of the author
	From string // where it came from: slack, email, github
	Text string
}

// Fields are the event fields routes match on (snake_case keys in config) and thread
// templates read ({{.Repo}}, {{.Number}}…).
type Fields struct {
	Source      string            // github, slack, email, generic
	Connector   string            // the connector's configured name
	Kind        string            // same as Item.Kind
	Repo        string            // owner/name
	Number      int               // PR or issue number, 0 when none
	Branch      string            // head branch for CI and pushes
	Author      string            // login, user id or address of who caused it
	Labels      []string          // issue/PR labels
	Team        string            // Slack team id
	Channel     string            // Slack channel id
	ChannelType string            // Slack: channel, group, im, mpim
	User        string            // Slack user id
	ThreadTS    string            // Slack thread timestamp
	Mailbox     string            // IMAP mailbox
	From        string            // email sender address
	Subject     string            // email subject
	Extra       map[string]string // connector-specific fields (generic field paths)
}

// Ingester stores an event and its notifications atomically (the inbox service).
type Ingester interface {
	Ingest(ctx context.Context, ev *inbox.Event, ns []inbox.Notification) (inbox.IngestResult, error)
}

// Package watch holds watches: an agent thread's durable subscription to one thing
// (a pull request, a Slack thread, an email conversation, a generic object) whose events
// reach the thread whether or not a config route matches them, until the watch ends
// (its expiry, the thing's terminal state, or a delete).
package watch

import (
	"context"
	"errors"
	"path"
	"time"

	"github.com/google/uuid"

	"github.com/signalgate/signalgate/inbox"
)

// Kind is the kind of the notification announcing a watch's end.
const Kind = "watch-ended"

// Route is the route name of a record a watch made (policy rules may match it), and the
// route a trace names when a watch matched.
const Route = "watch"

// Forever is the until value that keeps a watch past the watched thing's terminal state
// (still ending at watches.max_ttl).
const Forever = "forever"

// Why a watch ended.
const (
	EndExpired  = "expired"  // its until / ttl passed
	EndMerged   = "merged"   // the pull request was merged
	EndClosed   = "closed"   // the issue or pull request was closed
	EndDeleted  = "deleted"  // the agent deleted it
	EndOperator = "operator" // an operator deleted it through the admin API or console
)

// Bounds of what a request may name.
const (
	MaxResourceBytes = 512 // a watch's resource
	MaxKinds         = 20  // entries of kinds
	MaxKindBytes     = 100 // one kinds entry
)

// Errors the fronts (the agent API, MCP, the admin API) map to answers.
var (
	ErrInvalid   = errors.New("invalid watch")                  // 400
	ErrForbidden = errors.New("watch not allowed")              // 403: it says which connectors the agent may watch
	ErrUnknown   = errors.New("nothing to watch there")         // 400: e.g. a repository the connector receives no events for
	ErrTooMany   = errors.New("too many watches for the agent") // 429
)

// Status filters a listing.
type Status string

const (
	StatusLive  Status = "live"
	StatusEnded Status = "ended"
)

// Watch is one thread's subscription.
type Watch struct {
	ID        string          `json:"id"`
	Thread    inbox.ThreadKey `json:"-"`
	Source    string          `json:"source"`
	Connector string          `json:"connector"`
	// Resource is the canonical name of what is watched, as its source's kind reads it
	// (Resources): GitHub "owner/repo#7" or "owner/repo", Slack "C123" or
	// "C123/1712345678.000100", email a Message-ID without angle brackets, generic a
	// sourceId or netKey.
	Resource string         `json:"resource"`
	Kinds    []string       `json:"kinds,omitempty"` // path.Match patterns over the item kind; empty: all
	Priority inbox.Priority `json:"priority,omitempty"`
	// Forever keeps the watch past a terminal state (until: "forever").
	Forever   bool       `json:"forever,omitempty"`
	CreatedAt time.Time  `json:"createdAt"`
	ExpiresAt time.Time  `json:"expiresAt"`
	EndedAt   *time.Time `json:"endedAt,omitempty"`
	EndReason string     `json:"endReason,omitempty"`
	// ReplyID is the reply sent with watch: true that created it, if one did.
	ReplyID string `json:"replyId,omitempty"`
}

// Key is what matching looks up: the source, connector and canonical resource.
func (w Watch) Key() string { return Key(w.Source, w.Connector, w.Resource) }

// Live reports that w has not ended and has not expired at now.
func (w Watch) Live(now time.Time) bool { return w.EndedAt == nil && now.Before(w.ExpiresAt) }

// WantsKind reports whether w's kinds admit an item of kind (no kinds: all).
func (w Watch) WantsKind(kind string) bool {
	if len(w.Kinds) == 0 {
		return true
	}
	for _, k := range w.Kinds {
		if ok, _ := path.Match(k, kind); ok || k == kind {
			return true
		}
	}
	return false
}

// Key is the lookup key of a canonical resource of source through connector. Source and
// connector names never hold the separator (config validates names); the resource is
// last, so no two triples share a key.
func Key(source, connector, resource string) string {
	return source + "\x1f" + connector + "\x1f" + resource
}

// Config is the `watches:` section of config.yaml.
type Config struct {
	// DefaultTTL is a watch's life when the request gives neither until nor ttl.
	DefaultTTL time.Duration `yaml:"default_ttl"`
	// MaxTTL bounds every watch's life, until: "forever" included.
	MaxTTL time.Duration `yaml:"max_ttl"`
	// MaxPerAgent bounds an agent's live watches; beyond it a create is 429.
	MaxPerAgent int `yaml:"max_per_agent"`
	// SweepInterval is how often expired watches are ended (and their threads told).
	SweepInterval time.Duration `yaml:"sweep_interval"`
}

// Defaults.
const (
	DefaultTTL           = 7 * 24 * time.Hour
	DefaultMaxTTL        = 30 * 24 * time.Hour
	DefaultMaxPerAgent   = 10_000
	DefaultSweepInterval = 30 * time.Second
)

// WithDefaults fills unset fields.
func (c Config) WithDefaults() Config {
	if c.DefaultTTL == 0 {
		c.DefaultTTL = DefaultTTL
	}
	if c.MaxTTL == 0 {
		c.MaxTTL = max(DefaultMaxTTL, c.DefaultTTL)
	}
	if c.MaxPerAgent == 0 {
		c.MaxPerAgent = DefaultMaxPerAgent
	}
	if c.SweepInterval == 0 {
		c.SweepInterval = DefaultSweepInterval
	}
	return c
}

// Validate reports problems with key paths relative to the section.
func (c Config) Validate() error {
	var errs []error
	if c.DefaultTTL < time.Minute {
		errs = append(errs, errors.New("default_ttl: at least 1m"))
	}
	if c.MaxTTL < c.DefaultTTL {
		errs = append(errs, errors.New("max_ttl: at least default_ttl"))
	}
	if c.MaxPerAgent < 1 {
		errs = append(errs, errors.New("max_per_agent: at least 1"))
	}
	if c.SweepInterval < time.Second {
		errs = append(errs, errors.New("sweep_interval: at least 1s"))
	}
	return errors.Join(errs...)
}

// Filter selects watches in a listing. Empty fields select all.
type Filter struct {
	Thread    *inbox.ThreadKey // one thread
	Agent     string
	Source    string
	Connector string
	Resource  string // canonical watch resource
	Status    Status // live (not ended; expiry not considered), ended, or "" for both
	Limit     int    // at most this many (the store caps it at 500)
	// Cursor is the previous page's Next: listings go newest first (ids are time-ordered).
	Cursor string
}

// Page is a listing.
type Page struct {
	Watches []Watch `json:"watches"`
	Next    string  `json:"next,omitempty"`
}

// Store keeps watches (SQLite or PostgreSQL; watchtest has an in-memory one and the
// conformance suite both run).
type Store interface {
	// CreateWatch inserts w unless the thread has a live watch of the same key: then it
	// answers that one and created false. When w's agent holds maxPerAgent live watches
	// already it answers ErrTooMany. Creates of one agent are serialised (the count holds
	// across replicas).
	CreateWatch(ctx context.Context, w Watch, maxPerAgent int) (got Watch, created bool, err error)
	// Watch is one watch by id (inbox.ErrNotFound when none).
	Watch(ctx context.Context, id string) (Watch, error)
	// ListWatches lists newest first.
	ListWatches(ctx context.Context, f Filter) (Page, error)
	// EndWatch ends a live watch with reason; ended is false (and w the watch as it is)
	// when it had ended already. inbox.ErrNotFound when there is none.
	EndWatch(ctx context.Context, id, reason string, now time.Time) (w Watch, ended bool, err error)
	// LiveWatches are the not-ended watches of any of keys (Watch.Key), expired or not
	// (the caller compares with its clock): an index lookup.
	LiveWatches(ctx context.Context, keys []string) ([]Watch, error)
	// DueWatches are up to limit not-ended watches whose ExpiresAt is at or before now,
	// soonest first.
	DueWatches(ctx context.Context, now time.Time, limit int) ([]Watch, error)
}

// NewID is a new watch id: time-ordered (UUIDv7), so listings page by id.
func NewID() string { return "w-" + uuid.Must(uuid.NewV7()).String() }

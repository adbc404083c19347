package slack

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/slack-go/slack"
)

// DefaultLookupTimeout bounds all Web API lookups made for one event, so an
// event is always answered well within Slack's 3 seconds.
const DefaultLookupTimeout = time.Second

// webAPITimeout bounds any one Web API call of the connectors' HTTP client.
const webAPITimeout = 10 * time.Second

const (
	nameTTL          = time.Hour   // names change rarely; an hour-old name is fine in a summary
	missTTL          = time.Minute // a failing or slow API is not asked again for every event
	cacheMax         = 10000       // entries per connector before the cache is pruned
	maxMarkupLookups = 5           // ids in a message's text resolved per event
	recentTTL        = 10 * time.Minute
)

// info is one cached lookup: a user's name, a channel's name and type, or the
// workspace URL and team of the bot token.
type info struct {
	name  string
	extra string
}

type cacheEntry struct {
	val   info
	ok    bool
	until time.Time
}

// resolver looks up user and channel names with the bot token, caching hits
// and misses per connector instance. Without a token every lookup misses.
type resolver struct {
	api *slack.Client
	now func() time.Time
	log *slog.Logger

	mu      sync.Mutex
	entries map[string]cacheEntry
}

func newResolver(cfg *Config, hc *http.Client, now func() time.Time, log *slog.Logger) *resolver {
	return &resolver{now: now, log: log, entries: map[string]cacheEntry{}, api: botClient(cfg, hc, log)}
}

// botClient is the Web API client of cfg's bot token, nil without one.
func botClient(cfg *Config, hc *http.Client, log *slog.Logger) *slack.Client {
	if cfg.BotToken == "" {
		return nil
	}
	opts := []slack.Option{slack.OptionHTTPClient(hc), slack.OptionLog(slogOutput{log})}
	if cfg.APIURL != "" {
		opts = append(opts, slack.OptionAPIURL(cfg.APIURL))
	}
	return slack.New(cfg.BotToken.Reveal(), opts...)
}

func (r *resolver) enabled() bool { return r.api != nil }

// get returns the cached value of key or fetches it. Failures are cached for
// missTTL and reported as a miss.
func (r *resolver) get(ctx context.Context, key string, fetch func(context.Context) (info, error)) (info, bool) {
	if r.api == nil {
		return info{}, false
	}
	now := r.now()
	r.mu.Lock()
	e, hit := r.entries[key]
	r.mu.Unlock()
	if hit && now.Before(e.until) {
		return e.val, e.ok
	}
	v, err := fetch(ctx)
	e = cacheEntry{val: v, ok: err == nil, until: now.Add(nameTTL)}
	if err != nil {
		e.until = now.Add(missTTL)
		r.log.Warn("slack lookup failed; using ids", "key", key, "error", err.Error())
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.entries) >= cacheMax {
		for k, old := range r.entries {
			if !now.Before(old.until) {
				delete(r.entries, k)
			}
		}
		if len(r.entries) >= cacheMax {
			clear(r.entries)
		}
	}
	r.entries[key] = e
	return e.val, e.ok
}

// user returns a user's display name, else real name, else handle.
func (r *resolver) user(ctx context.Context, id string) string {
	if id == "" {
		return ""
	}
	v, _ := r.get(ctx, "user:"+id, func(ctx context.Context) (info, error) {
		u, err := r.api.GetUserInfoContext(ctx, id)
		if err != nil {
			return info{}, err
		}
		return info{name: firstNonEmpty(u.Profile.DisplayName, u.RealName, u.Profile.RealName, u.Name)}, nil
	})
	return v.name
}

// channel returns a conversation's name and type (channel, group, im, mpim).
func (r *resolver) channel(ctx context.Context, id string) (name, typ string) {
	if id == "" {
		return "", ""
	}
	v, _ := r.get(ctx, "channel:"+id, func(ctx context.Context) (info, error) {
		ch, err := r.api.GetConversationInfoContext(ctx, &slack.GetConversationInfoInput{ChannelID: id})
		if err != nil {
			return info{}, err
		}
		t := "channel"
		switch {
		case ch.IsIM:
			t = "im"
		case ch.IsMpIM:
			t = "mpim"
		case ch.IsPrivate || ch.IsGroup:
			t = "group"
		}
		return info{name: ch.Name, extra: t}, nil
	})
	return v.name, v.extra
}

// workspaceURL returns the workspace URL ("https://acme.slack.com/") when the
// bot token belongs to team.
func (r *resolver) workspaceURL(ctx context.Context, team string) string {
	v, ok := r.get(ctx, "auth", func(ctx context.Context) (info, error) {
		res, err := r.api.AuthTestContext(ctx)
		if err != nil {
			return info{}, err
		}
		return info{name: res.URL, extra: res.TeamID}, nil
	})
	if !ok || v.name == "" || !strings.EqualFold(v.extra, team) {
		return ""
	}
	return v.name
}

// botID is the bot id of the connector's token (auth.test), cached like the other
// lookups; ok is false when auth.test failed or named none.
func (r *resolver) botID(ctx context.Context) (string, bool) {
	v, ok := r.get(ctx, "auth.bot", func(ctx context.Context) (info, error) {
		res, err := r.api.AuthTestContext(ctx)
		if err != nil {
			return info{}, err
		}
		return info{name: res.BotID}, nil
	})
	return v.name, ok && v.name != ""
}

func firstNonEmpty(vals ...string) string {
	for _, v := range vals {
		if strings.TrimSpace(v) != "" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// recentMentions remembers which event type (app_mention or message) notified a
// message and as which kind, so the other event for the same message is not
// notified again once the first was committed: by then the first record may be
// delivered, and the inbox's dedupeKey merge no longer applies. A different kind
// (a mention after a plain message, when the bot user is unknown) still goes
// through, so a mention is never lost behind a low-priority record.
type recentMentions struct {
	now  func() time.Time
	mu   sync.Mutex
	seen map[string]recentEntry
}

type recentEntry struct {
	eventType string
	kind      string
	at        time.Time
}

func newRecentMentions(now func() time.Time) *recentMentions {
	return &recentMentions{now: now, seen: map[string]recentEntry{}}
}

// other returns the other event type that already notified key as kind.
func (m *recentMentions) other(key, eventType, kind string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.seen[key]
	if !ok || e.eventType == eventType || e.kind != kind || m.now().Sub(e.at) > recentTTL {
		return ""
	}
	return e.eventType
}

func (m *recentMentions) remember(key, eventType, kind string) {
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	if e, ok := m.seen[key]; ok && now.Sub(e.at) <= recentTTL {
		return // the first event type keeps the claim
	}
	if len(m.seen) >= cacheMax {
		for k, e := range m.seen {
			if now.Sub(e.at) > recentTTL {
				delete(m.seen, k)
			}
		}
		if len(m.seen) >= cacheMax {
			clear(m.seen)
		}
	}
	m.seen[key] = recentEntry{eventType: eventType, kind: kind, at: now}
}

// slogOutput routes slack-go's debug logging to slog.
type slogOutput struct{ log *slog.Logger }

func (o slogOutput) Output(_ int, s string) error {
	o.log.Debug(strings.TrimSpace(s))
	return nil
}

package github

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Backfill bounds and defaults.
const (
	// DefaultBackfillInterval is how often a pass looks for missed deliveries.
	DefaultBackfillInterval = 5 * time.Minute
	// MinBackfillInterval keeps passes from spending the API's rate limit.
	MinBackfillInterval = time.Minute
	// MaxBackfillWindow is how long GitHub keeps a hook's deliveries, and the default
	// look-back.
	MaxBackfillWindow = 72 * time.Hour
	// DefaultBackfillRequests bounds the API requests of one pass (list pages and
	// fetched deliveries together).
	DefaultBackfillRequests = 200
	// MaxBackfillRequests is the most a pass may be given.
	MaxBackfillRequests = 5000
	// backfillPageSize is GitHub's largest page of deliveries.
	backfillPageSize = 100
	// backfillRateReserve is the primary rate limit a pass leaves to replies: it stops
	// when fewer requests than this remain until the limit resets.
	backfillRateReserve = 100
)

// BackfillConfig is a connector's `backfill:` block; its presence turns backfill on.
type BackfillConfig struct {
	// Hooks are the repository and organisation hooks read: "owner/repo:HOOK_ID" or
	// "org:HOOK_ID". An App connector also reads its App's hook.
	Hooks []string `yaml:"hooks"`
	// Interval is the time between two passes (default 5m).
	Interval time.Duration `yaml:"interval"`
	// Window is how far back a pass looks (default and at most 72h, GitHub's retention).
	Window time.Duration `yaml:"window"`
	// MaxRequests bounds the API requests of one pass (default 200).
	MaxRequests int `yaml:"max_requests"`
}

func (b BackfillConfig) withDefaults() BackfillConfig {
	if b.Interval == 0 {
		b.Interval = DefaultBackfillInterval
	}
	if b.Window == 0 {
		b.Window = MaxBackfillWindow
	}
	if b.MaxRequests == 0 {
		b.MaxRequests = DefaultBackfillRequests
	}
	return b
}

// validate reports each problem with its key path (relative to the list entry).
func (b BackfillConfig) validate(c Config) []error {
	var errs []error
	if c.Token == "" && c.App == nil {
		errs = append(errs, errors.New("backfill: needs token or app (deliveries are read from GitHub's API with the connector's credentials)"))
	}
	if c.App == nil && len(b.Hooks) == 0 && (c.Token != "") {
		errs = append(errs, errors.New("backfill.hooks: required without app (name the hooks to read: owner/repo:HOOK_ID or org:HOOK_ID)"))
	}
	seen := map[string]bool{}
	for i, h := range b.Hooks {
		ref, err := parseHook(h)
		if err != nil {
			errs = append(errs, fmt.Errorf("backfill.hooks[%d]: %w", i, err))
			continue
		}
		if seen[ref.key()] {
			errs = append(errs, fmt.Errorf("backfill.hooks[%d]: %q named twice", i, h))
		}
		seen[ref.key()] = true
	}
	if b.Interval != 0 && b.Interval < MinBackfillInterval {
		errs = append(errs, fmt.Errorf("backfill.interval: at least %s, got %s", MinBackfillInterval, b.Interval))
	}
	if b.Window < 0 || b.Window > MaxBackfillWindow {
		errs = append(errs, fmt.Errorf("backfill.window: between 0 and %s (GitHub keeps deliveries 3 days), got %s", MaxBackfillWindow, b.Window))
	}
	if b.MaxRequests < 0 || b.MaxRequests > MaxBackfillRequests {
		errs = append(errs, fmt.Errorf("backfill.max_requests: between 1 and %d, got %d", MaxBackfillRequests, b.MaxRequests))
	}
	return errs
}

// hookRef is one hook whose deliveries backfill reads.
type hookRef struct {
	app         bool   // the App's hook
	owner, repo string // repo "" for an organisation hook
	id          int64
}

// key names the hook in the connector's state, its lock and logs.
func (h hookRef) key() string {
	switch {
	case h.app:
		return "app"
	case h.repo != "":
		return h.owner + "/" + h.repo + ":" + strconv.FormatInt(h.id, 10)
	}
	return h.owner + ":" + strconv.FormatInt(h.id, 10)
}

// parseHook reads "owner/repo:HOOK_ID" or "org:HOOK_ID".
func parseHook(s string) (hookRef, error) {
	where, id, ok := strings.Cut(strings.TrimSpace(s), ":")
	n, err := strconv.ParseInt(id, 10, 64)
	if !ok || err != nil || n <= 0 {
		return hookRef{}, fmt.Errorf("want owner/repo:HOOK_ID or org:HOOK_ID (a positive number), got %q", s)
	}
	owner, repo, isRepo := strings.Cut(where, "/")
	if owner == "" || strings.ContainsAny(owner, " /?#") || (isRepo && (repo == "" || strings.ContainsAny(repo, " /?#"))) {
		return hookRef{}, fmt.Errorf("want owner/repo:HOOK_ID or org:HOOK_ID, got %q", s)
	}
	return hookRef{owner: owner, repo: repo, id: n}, nil
}

// hooks are the hooks c's backfill reads: its App's first, then those named.
func (b BackfillConfig) hooks(c Config) []hookRef {
	var out []hookRef
	if c.App != nil {
		out = append(out, hookRef{app: true})
	}
	for _, h := range b.Hooks {
		if ref, err := parseHook(h); err == nil {
			out = append(out, ref)
		}
	}
	return out
}

package agent

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/signalgate/signalgate/inbox"
)

// MaxDetailedSummary bounds a detailed summary's contents, in characters: one line
// a model reads, whatever the backlog.
const MaxDetailedSummary = 400

// DetailedSummary is the contents of a `detailed` notification-summary (the tag and
// attributes are SummarySignal's): per source, sorted, the count and each kind with
// its most important pending record (highest priority, then newest):
//
//	github: 2 (ci-failure on acme/api#7 "lint"; review-requested on acme/api#9), slack: 1 (mention from Jane)
//
// A longer text first drops the items' details, then is cut at MaxDetailedSummary.
func DetailedSummary(records []inbox.Record) string {
	type kindGroup struct {
		kind  string
		count int
		top   *inbox.Record
	}
	bySource := map[string][]*kindGroup{}
	for i := range records {
		r := &records[i]
		if r.Status != inbox.StatusPending {
			continue
		}
		src := cmp.Or(r.Source, "unknown")
		groups := bySource[src]
		at := slices.IndexFunc(groups, func(g *kindGroup) bool { return g.kind == r.Kind })
		if at < 0 {
			groups = append(groups, &kindGroup{kind: r.Kind})
			at = len(groups) - 1
			bySource[src] = groups
		}
		g := groups[at]
		g.count++
		if g.top == nil || moreImportant(r, g.top) {
			g.top = r
		}
	}
	if len(bySource) == 0 {
		return "No pending notifications"
	}
	sources := slices.Sorted(func(yield func(string) bool) {
		for s := range bySource {
			if !yield(s) {
				return
			}
		}
	})
	render := func(details bool) string {
		parts := make([]string, len(sources))
		for i, s := range sources {
			groups := bySource[s]
			// The most important kind first: by its top record, then by name.
			slices.SortStableFunc(groups, func(a, b *kindGroup) int {
				if moreImportant(a.top, b.top) {
					return -1
				}
				if moreImportant(b.top, a.top) {
					return 1
				}
				return strings.Compare(a.kind, b.kind)
			})
			n, items := 0, make([]string, len(groups))
			for j, g := range groups {
				n += g.count
				items[j] = describeItem(g.kind, g.count, g.top, details)
			}
			parts[i] = s + ": " + strconv.Itoa(n) + " (" + strings.Join(items, "; ") + ")"
		}
		return strings.Join(parts, ", ")
	}
	out := render(true)
	if utf8.RuneCountInString(out) > MaxDetailedSummary {
		out = render(false)
	}
	if utf8.RuneCountInString(out) > MaxDetailedSummary {
		r := []rune(out)
		out = string(r[:MaxDetailedSummary-1]) + "…"
	}
	return out
}

func moreImportant(a, b *inbox.Record) bool {
	if pa, pb := priorityOf(*a).Rank(), priorityOf(*b).Rank(); pa != pb {
		return pa > pb
	}
	return a.UpdatedAt.After(b.UpdatedAt)
}

// describeItem names a kind and its top record: where (repo#number), else who
// (author), and the check's name when there is one.
func describeItem(kind string, count int, r *inbox.Record, details bool) string {
	s := cmp.Or(kind, "notification")
	if count > 1 {
		s += " ×" + strconv.Itoa(count)
	}
	if !details {
		return s
	}
	a := r.Attributes
	if repo := a.String("repo"); repo != "" {
		s += " on " + repo
		if n := a.String("number"); n != "" && n != "0" {
			s += "#" + n
		}
	} else if who := cmp.Or(a.String("author"), a.String("name"), metaString(r.Metadata, "author"), a.String("from"), a.String("user")); who != "" {
		s += " from " + who
	}
	if check := a.String("check"); check != "" {
		s += fmt.Sprintf(" %q", check)
	}
	return s
}

func metaString(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}

package agent

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/inbox"
)

func rec(source, kind string, pr inbox.Priority, age time.Duration, attrs inbox.Attributes, meta map[string]any) inbox.Record {
	t0 := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	return inbox.Record{ID: kind, Source: source, Kind: kind, Priority: pr, Status: inbox.StatusPending,
		Attributes: attrs, Metadata: meta, UpdatedAt: t0.Add(-age)}
}

func TestDetailedSummaryNamesKindsAndTopItem(t *testing.T) {
	records := []inbox.Record{
		rec("slack", "mention", inbox.PriorityMedium, 0, inbox.Attributes{}.Set("channel", "C1").Set("user", "U1"), map[string]any{"author": "Jane"}),
		rec("github", "review-requested", inbox.PriorityMedium, time.Minute, inbox.Attributes{}.Set("repo", "acme/api").Set("number", 9), nil),
		rec("github", "ci-failure", inbox.PriorityHigh, 2*time.Minute, inbox.Attributes{}.Set("repo", "acme/api").Set("number", 7).Set("check", "lint"), nil),
		{Source: "github", Kind: "comment", Status: inbox.StatusDelivered}, // not pending: not listed
	}
	require.Equal(t, `github: 2 (ci-failure on acme/api#7 "lint"; review-requested on acme/api#9), slack: 1 (mention from Jane)`, DetailedSummary(records))

	// Several of a kind: counted, the most important one named.
	records = []inbox.Record{
		rec("github", "comment", inbox.PriorityLow, time.Hour, inbox.Attributes{}.Set("repo", "acme/api").Set("number", 1), nil),
		rec("github", "comment", inbox.PriorityMedium, 2*time.Hour, inbox.Attributes{}.Set("repo", "acme/web").Set("number", 2), nil),
		rec("github", "comment", inbox.PriorityMedium, time.Minute, inbox.Attributes{}.Set("repo", "acme/web").Set("number", 3), nil),
	}
	require.Equal(t, `github: 3 (comment ×3 on acme/web#3)`, DetailedSummary(records))
	require.Equal(t, "No pending notifications", DetailedSummary(nil))
}

// A backlog of any size stays one bounded line: details go first, then the text is cut.
func TestDetailedSummaryIsBounded(t *testing.T) {
	var records []inbox.Record
	for i := range 60 {
		records = append(records, rec("github", "kind-"+strings.Repeat("x", i%7)+string(rune('a'+i%26))+string(rune('a'+i/26)), inbox.PriorityMedium, 0,
			inbox.Attributes{}.Set("repo", "acme/"+strings.Repeat("r", 40)).Set("number", i).Set("check", strings.Repeat("<&>", 30)), nil))
	}
	got := DetailedSummary(records)
	require.LessOrEqual(t, utf8.RuneCountInString(got), MaxDetailedSummary)
	require.True(t, strings.HasPrefix(got, "github: 60 (kind-"), got)
	require.NotContains(t, got, "acme/", "details dropped first")

	few := records[:2]
	require.Contains(t, DetailedSummary(few), "acme/", "short enough: details kept")
}

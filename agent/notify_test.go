package agent

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/inbox"
)

func TestNotificationSignal(t *testing.T) {
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name string
		rec  inbox.Record
		want string
	}{
		{"basic", inbox.Record{ID: "rec_1", Source: "github", Kind: "ci-failure", Priority: inbox.PriorityHigh,
			Status: inbox.StatusPending, CoalescedCount: 1, Summary: "CI failed on main"},
			`<notification id="rec_1" source="github" type="ci-failure" kind="ci-failure" priority="high" status="pending">CI failed on main</notification>`},
		{"record attributes first, in order", inbox.Record{ID: "r", Source: "github", Kind: "pr", Priority: inbox.PriorityLow,
			Status: inbox.StatusPending, CoalescedCount: 1, Summary: "s", Attributes: attrs("repo", "acme/api", "number", int64(42), "draft", false)},
			`<notification repo="acme/api" number="42" draft="false" id="r" source="github" type="pr" kind="pr" priority="low" status="pending">s</notification>`},
		{"coalescedCount when > 1", inbox.Record{ID: "r", Source: "slack", Kind: "mention", Priority: inbox.PriorityUrgent,
			Status: inbox.StatusPending, CoalescedCount: 3, Summary: "3 mentions"},
			`<notification id="r" source="slack" type="mention" kind="mention" priority="urgent" status="pending" coalescedCount="3">3 mentions</notification>`},
		{"coalescedCount 0 omitted", inbox.Record{ID: "r", Source: "slack", Kind: "k", Priority: inbox.PriorityMedium,
			Status: inbox.StatusDelivered, Summary: "x"},
			`<notification id="r" source="slack" type="k" kind="k" priority="medium" status="delivered">x</notification>`},
		{"built-in names win in place", inbox.Record{ID: "r", Source: "email", Kind: "mail", Priority: inbox.PriorityMedium,
			Status: inbox.StatusPending, Summary: "x", Attributes: attrs("kind", "spoof", "from", "a@b")},
			`<notification kind="mail" from="a@b" id="r" source="email" type="mail" priority="medium" status="pending">x</notification>`},
		{"summary escaped, empty defaults", inbox.Record{ID: "r", Source: "generic", Kind: "k", Summary: `a <b> & "c"`},
			`<notification id="r" source="generic" type="k" kind="k" priority="medium" status="pending">a &lt;b&gt; &amp; "c"</notification>`},
		{"empty summary self-closes", inbox.Record{ID: "r", Source: "generic", Kind: "k", Priority: inbox.PriorityLow, Status: inbox.StatusPending},
			`<notification id="r" source="generic" type="k" kind="k" priority="low" status="pending" />`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			orig := tt.rec.Attributes.Clone()
			s := NotificationSignal(tt.rec, "sig_9", now)
			require.Equal(t, tt.want, s.XML())
			require.Equal(t, "sig_9", s.ID)
			require.Equal(t, TypeNotification, s.Type)
			require.Equal(t, TagNotification, s.TagName)
			require.Equal(t, tt.rec.ID, s.Metadata["recordId"])
			require.Equal(t, now, s.CreatedAt)
			require.Equal(t, orig, tt.rec.Attributes, "record attributes untouched")
		})
	}
}

func TestSummarySignal(t *testing.T) {
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	rec := func(id, source string, p inbox.Priority, st inbox.Status) inbox.Record {
		return inbox.Record{ID: id, Source: source, Kind: "k", Priority: p, Status: st}
	}
	tests := []struct {
		name    string
		records []inbox.Record
		want    string
		ids     []string
	}{
		{"counts per source, sorted", []inbox.Record{
			rec("1", "slack", inbox.PriorityLow, inbox.StatusPending),
			rec("2", "github", inbox.PriorityMedium, inbox.StatusPending),
			rec("3", "github", inbox.PriorityHigh, inbox.StatusPending),
		}, `<notification-summary pending="3" priority="high">github: 2, slack: 1</notification-summary>`, []string{"1", "2", "3"}},
		{"only pending counted", []inbox.Record{
			rec("1", "email", inbox.PriorityUrgent, inbox.StatusDelivered),
			rec("2", "github", inbox.PriorityLow, inbox.StatusPending),
			rec("3", "slack", inbox.PriorityUrgent, inbox.StatusDismissed),
		}, `<notification-summary pending="1" priority="low">github: 1</notification-summary>`, []string{"2"}},
		{"urgent is highest", []inbox.Record{
			rec("a", "slack", inbox.PriorityUrgent, inbox.StatusPending),
			rec("b", "email", inbox.PriorityHigh, inbox.StatusPending),
			rec("c", "generic", inbox.PriorityLow, inbox.StatusPending),
		}, `<notification-summary pending="3" priority="urgent">email: 1, generic: 1, slack: 1</notification-summary>`, []string{"a", "b", "c"}},
		{"missing priority counts as medium", []inbox.Record{
			rec("a", "slack", "", inbox.StatusPending),
			rec("b", "slack", inbox.PriorityLow, inbox.StatusPending),
		}, `<notification-summary pending="2" priority="medium">slack: 2</notification-summary>`, []string{"a", "b"}},
		{"none pending", []inbox.Record{
			rec("1", "github", inbox.PriorityHigh, inbox.StatusSeen),
		}, `<notification-summary pending="0">No pending notifications</notification-summary>`, []string{}},
		{"empty", nil,
			`<notification-summary pending="0">No pending notifications</notification-summary>`, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := SummarySignal(tt.records, "sig_s", now)
			require.Equal(t, tt.want, s.XML())
			require.Equal(t, TypeNotification, s.Type)
			require.Equal(t, TagNotificationSummary, s.TagName)
			require.Equal(t, "sig_s", s.ID)
			require.Equal(t, tt.ids, s.Metadata["recordIds"])
		})
	}
}

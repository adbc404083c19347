package agent

import (
	"encoding/json"
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
			`<notification id="rec_1" source="github" type="ci-failure" kind="ci-failure" priority="high" status="delivered" verified_by="none">CI failed on main</notification>`},
		{"record attributes first, in order", inbox.Record{ID: "r", Source: "github", Kind: "pr", Priority: inbox.PriorityLow,
			Status: inbox.StatusPending, CoalescedCount: 1, Summary: "s", Attributes: attrs("repo", "acme/api", "number", int64(42), "draft", false)},
			`<notification repo="acme/api" number="42" draft="false" id="r" source="github" type="pr" kind="pr" priority="low" status="delivered" verified_by="none">s</notification>`},
		{"coalescedCount when > 1", inbox.Record{ID: "r", Source: "slack", Kind: "mention", Priority: inbox.PriorityUrgent,
			Status: inbox.StatusPending, CoalescedCount: 3, Summary: "3 mentions"},
			`<notification id="r" source="slack" type="mention" kind="mention" priority="urgent" status="delivered" coalescedCount="3" verified_by="none">3 mentions</notification>`},
		{"coalescedCount 0 omitted", inbox.Record{ID: "r", Source: "slack", Kind: "k", Priority: inbox.PriorityMedium,
			Status: inbox.StatusDelivered, Summary: "x"},
			`<notification id="r" source="slack" type="k" kind="k" priority="medium" status="delivered" verified_by="none">x</notification>`},
		{"built-in names win in place", inbox.Record{ID: "r", Source: "email", Kind: "mail", Priority: inbox.PriorityMedium,
			Status: inbox.StatusPending, Summary: "x", Attributes: attrs("kind", "spoof", "from", "a@b")},
			`<notification kind="mail" from="a@b" id="r" source="email" type="mail" priority="medium" status="delivered" verified_by="none">x</notification>`},
		{"summary escaped, empty defaults", inbox.Record{ID: "r", Source: "generic", Kind: "k", Summary: `a <b> & "c"`},
			`<notification id="r" source="generic" type="k" kind="k" priority="medium" status="delivered" verified_by="none">a &lt;b&gt; &amp; "c"</notification>`},
		{"empty summary self-closes", inbox.Record{ID: "r", Source: "generic", Kind: "k", Priority: inbox.PriorityLow, Status: inbox.StatusPending},
			`<notification id="r" source="generic" type="k" kind="k" priority="low" status="delivered" verified_by="none" />`},
		{"provenance rendered", inbox.Record{ID: "r", Source: "github", Kind: "k", Priority: inbox.PriorityHigh, Status: inbox.StatusPending,
			Summary: "x", Metadata: map[string]any{"verified_by": "hmac-github"}},
			`<notification id="r" source="github" type="k" kind="k" priority="high" status="delivered" verified_by="hmac-github">x</notification>`},
		{"a forged source shows who vouched for it", inbox.Record{ID: "r", Source: "github", Kind: "k", Priority: inbox.PriorityHigh,
			Status: inbox.StatusPending, Summary: "x", Attributes: attrs("verified_by", "hmac-github"),
			Metadata: map[string]any{"verified_by": "agent-token"}},
			`<notification verified_by="agent-token" id="r" source="github" type="k" kind="k" priority="high" status="delivered">x</notification>`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			orig := tt.rec.Attributes.Clone()
			s := NotificationSignal(tt.rec, "sig_9", now)
			require.Equal(t, tt.want, s.XML())
			require.Equal(t, "sig_9", s.ID)
			require.Equal(t, TypeNotification, s.Type)
			require.Equal(t, TagNotification, s.TagName)
			note, ok := s.Metadata["notification"].(map[string]any)
			require.True(t, ok, "metadata.notification")
			require.Equal(t, "notification", note["signal"])
			require.Equal(t, tt.rec.ID, note["recordId"])
			require.Equal(t, tt.rec.Source, note["source"])
			require.Equal(t, tt.rec.Kind, note["kind"])
			require.Equal(t, "delivered", note["status"])
			if tt.rec.CoalescedCount > 1 {
				require.Equal(t, tt.rec.CoalescedCount, note["coalescedCount"])
			} else {
				require.NotContains(t, note, "coalescedCount")
			}
			for k, v := range tt.rec.Metadata {
				require.Equal(t, v, s.Metadata[k], "record metadata carried: %s", k)
			}
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
			require.Equal(t, tt.ids, s.Metadata["notificationIds"])
			note := s.Metadata["notification"].(map[string]any)
			require.Equal(t, "summary", note["signal"])
			require.Equal(t, len(tt.ids), note["pending"])
			require.Equal(t, tt.ids, note["notificationIds"])
			if len(tt.ids) > 0 {
				p, _ := s.Attributes.Get("priority")
				require.Equal(t, p, note["priority"])
			} else {
				require.NotContains(t, note, "priority")
			}
			require.Contains(t, s.Metadata, "notificationSummary")
		})
	}
}

// TestSummarySignalMetadata checks the summary metadata against Mastra's shape
// (notificationSummarySignalMetadata and createNotificationSummarySignal in @mastra/core).
func TestSummarySignalMetadata(t *testing.T) {
	k := inbox.ThreadKey{Agent: "a", Resource: "r", Thread: "t"}
	recs := []inbox.Record{
		{ID: "1", Thread: k, Source: "slack", Priority: inbox.PriorityLow, Status: inbox.StatusPending},
		{ID: "2", Thread: k, Source: "github", Priority: inbox.PriorityHigh, Status: inbox.StatusPending},
		{ID: "3", Thread: k, Source: "github", Priority: inbox.PriorityLow, Status: inbox.StatusPending},
	}
	s := SummarySignal(recs, "sig", time.Unix(0, 0))
	raw, err := json.Marshal(s.Metadata)
	require.NoError(t, err)
	require.JSONEq(t, `{
		"notification": {"signal": "summary", "pending": 3,
			"groups": [{"source": "github", "count": 2}, {"source": "slack", "count": 1}],
			"byPriority": {"low": 2, "high": 1}, "notificationIds": ["1", "2", "3"], "priority": "high"},
		"notificationSummary": {"agentId": "a", "resourceId": "r", "threadId": "t", "pending": 3,
			"bySource": {"github": 2, "slack": 1}, "byPriority": {"low": 2, "high": 1}, "notificationIds": ["1", "2", "3"]},
		"notificationIds": ["1", "2", "3"]}`, string(raw))
}

// TestNotificationSignalMetadata checks the full notification's metadata against
// Mastra's createNotificationSignal: the record's metadata plus notification.
func TestNotificationSignalMetadata(t *testing.T) {
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	r := inbox.Record{ID: "rec", Source: "github", Kind: "ci-failure", Priority: inbox.PriorityHigh, Status: inbox.StatusPending,
		CoalescedCount: 2, Metadata: map[string]any{"verified_by": "hmac-github", "author": "jane", "notification": "shadowed"}}
	s := NotificationSignal(r, "sig", now)
	raw, err := json.Marshal(s.Metadata)
	require.NoError(t, err)
	require.JSONEq(t, `{"verified_by": "hmac-github", "author": "jane",
		"notification": {"signal": "notification", "recordId": "rec", "source": "github", "kind": "ci-failure",
			"priority": "high", "status": "delivered", "coalescedCount": 2, "deliveredAt": "2025-01-02T03:04:05Z"}}`, string(raw))
	require.Equal(t, "shadowed", r.Metadata["notification"], "the record is untouched")

	seen := now.Add(-time.Minute)
	r.SeenAt = &seen
	note := NotificationSignal(r, "sig", now).Metadata["notification"].(map[string]any)
	require.Equal(t, "2025-01-02T03:03:05Z", note["seenAt"], "a record read before has seenAt, as Mastra's")
}

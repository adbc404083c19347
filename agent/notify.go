package agent

import (
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/signalgate/signalgate/inbox"
)

// Tag names of the signals the inbox produces.
const (
	TagNotification        = "notification"
	TagNotificationSummary = "notification-summary"
)

// NotificationSignal turns an inbox record into the signal delivered for it:
//
//	<notification [record attributes] id=".." source=".." type="<kind>" kind=".." priority=".." status="..">summary</notification>
//
// with coalescedCount appended only when the record absorbed others. A record
// attribute sharing a name with a built-in keeps its position but takes the
// built-in value, as a JS object spread does in Mastra. The payload stays out:
// it is for tools, not the model.
func NotificationSignal(r inbox.Record, id string, now time.Time) Signal {
	attrs := r.Attributes.Clone()
	attrs = attrs.Set("id", r.ID)
	attrs = attrs.Set("source", r.Source)
	attrs = attrs.Set("type", r.Kind)
	attrs = attrs.Set("kind", r.Kind)
	attrs = attrs.Set("priority", string(priorityOf(r)))
	status := r.Status
	if status == "" {
		status = inbox.StatusPending
	}
	attrs = attrs.Set("status", string(status))
	if r.CoalescedCount > 1 {
		attrs = attrs.Set("coalescedCount", r.CoalescedCount)
	}
	return Signal{
		ID:         id,
		Type:       TypeNotification,
		TagName:    TagNotification,
		Contents:   r.Summary,
		Attributes: attrs,
		Metadata:   map[string]any{"recordId": r.ID},
		CreatedAt:  now,
		AcceptedAt: now,
	}
}

// SummarySignal lists the pending records among records by source:
//
//	<notification-summary pending="3" priority="high">github: 2, slack: 1</notification-summary>
//
// Sources are sorted; priority is the highest among the pending records. With
// nothing pending the contents read "No pending notifications", pending="0" and
// there is no priority attribute. Metadata recordIds lists the counted records
// in the order given.
func SummarySignal(records []inbox.Record, id string, now time.Time) Signal {
	counts := map[string]int{}
	ids := []string{}
	highest := inbox.Priority("")
	for _, r := range records {
		if r.Status != inbox.StatusPending {
			continue
		}
		src := r.Source
		if src == "" {
			src = "unknown"
		}
		counts[src]++
		ids = append(ids, r.ID)
		if p := priorityOf(r); highest == "" || p.Rank() > highest.Rank() {
			highest = p
		}
	}
	attrs := inbox.Attributes{{Key: "pending", Value: len(ids)}}
	contents := "No pending notifications"
	if len(ids) > 0 {
		attrs = attrs.Set("priority", string(highest))
		sources := make([]string, 0, len(counts))
		for s := range counts {
			sources = append(sources, s)
		}
		sort.Strings(sources)
		parts := make([]string, len(sources))
		for i, s := range sources {
			parts[i] = s + ": " + strconv.Itoa(counts[s])
		}
		contents = strings.Join(parts, ", ")
	}
	return Signal{
		ID:         id,
		Type:       TypeNotification,
		TagName:    TagNotificationSummary,
		Contents:   contents,
		Attributes: attrs,
		Metadata:   map[string]any{"recordIds": ids},
		CreatedAt:  now,
		AcceptedAt: now,
	}
}

// priorityOf treats a missing or unknown priority as the default, medium.
func priorityOf(r inbox.Record) inbox.Priority {
	if !r.Priority.Valid() {
		return inbox.PriorityMedium
	}
	return r.Priority
}

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

// NotificationSignal turns an inbox record into the full notification delivered for it:
//
//	<notification [record attributes] id=".." source=".." type="<kind>" kind=".." priority=".." status="delivered" verified_by="..">summary</notification>
//
// with coalescedCount after status only when the record absorbed others. The status is
// the one the delivery gives the record, as Mastra renders {...record, status:
// 'delivered'}. A record attribute sharing a name with a built-in keeps its position but
// takes the built-in value, as a JS object spread does in Mastra. verified_by (beyond
// Mastra) is the provenance the gateway checked, so a notification that only claims a
// source (an agent-API one saying source github) visibly is not verified by it; a record
// without provenance says "none". The payload stays out: it is for tools, not the model.
//
// Metadata has Mastra's shape: the record's metadata plus notification: {signal:
// "notification", recordId, source, kind, priority, status, coalescedCount, deliveredAt,
// seenAt (when set)}.
func NotificationSignal(r inbox.Record, id string, now time.Time) Signal {
	const status = inbox.StatusDelivered
	verified, _ := r.Metadata[MetaVerifiedBy].(string)
	if verified == "" {
		verified = VerifiedByNone
	}
	attrs := r.Attributes.Clone()
	attrs = attrs.Set("id", r.ID)
	attrs = attrs.Set("source", r.Source)
	attrs = attrs.Set("type", r.Kind)
	attrs = attrs.Set("kind", r.Kind)
	attrs = attrs.Set("priority", string(priorityOf(r)))
	attrs = attrs.Set("status", string(status))
	if r.CoalescedCount > 1 {
		attrs = attrs.Set("coalescedCount", r.CoalescedCount)
	}
	attrs = attrs.Set(MetaVerifiedBy, verified)
	note := map[string]any{
		"signal":   "notification",
		"recordId": r.ID,
		"source":   r.Source,
		"kind":     r.Kind,
		"priority": string(priorityOf(r)),
		"status":   string(status),
	}
	if r.CoalescedCount > 1 {
		note["coalescedCount"] = r.CoalescedCount
	}
	note["deliveredAt"] = now.UTC().Format(time.RFC3339Nano)
	if r.SeenAt != nil {
		note["seenAt"] = r.SeenAt.UTC().Format(time.RFC3339Nano)
	}
	meta := make(map[string]any, len(r.Metadata)+1)
	for k, v := range r.Metadata {
		meta[k] = v
	}
	meta["notification"] = note
	return Signal{
		ID:         id,
		Type:       TypeNotification,
		TagName:    TagNotification,
		Contents:   r.Summary,
		Attributes: attrs,
		Metadata:   meta,
		CreatedAt:  now,
		AcceptedAt: now,
	}
}

// VerifiedByNone is the verified_by a notification renders when its record carries no
// provenance.
const VerifiedByNone = "none"

// SummarySignal lists the pending records among records by source:
//
//	<notification-summary pending="3" priority="high">github: 2, slack: 1</notification-summary>
//
// Sources are sorted; priority is the highest among the pending records. With nothing
// pending the contents read "No pending notifications", pending="0" and there is no
// priority attribute. Metadata has Mastra's shape: notification: {signal: "summary",
// pending, groups: [{source, count}], byPriority, notificationIds, priority},
// notificationSummary (the counts) and notificationIds, ids in the order given.
func SummarySignal(records []inbox.Record, id string, now time.Time) Signal {
	counts := map[string]int{}
	byPriority := map[string]int{}
	ids := []string{}
	highest := inbox.Priority("")
	var first *inbox.Record
	for i, r := range records {
		if r.Status != inbox.StatusPending {
			continue
		}
		if first == nil {
			first = &records[i]
		}
		src := r.Source
		if src == "" {
			src = "unknown"
		}
		counts[src]++
		p := priorityOf(r)
		byPriority[string(p)]++
		ids = append(ids, r.ID)
		if highest == "" || p.Rank() > highest.Rank() {
			highest = p
		}
	}
	if first == nil && len(records) > 0 {
		first = &records[0]
	}
	attrs := inbox.Attributes{{Key: "pending", Value: len(ids)}}
	contents := "No pending notifications"
	sources := make([]string, 0, len(counts))
	for s := range counts {
		sources = append(sources, s)
	}
	sort.Strings(sources)
	groups := make([]map[string]any, len(sources))
	bySource := make(map[string]any, len(sources))
	for i, s := range sources {
		groups[i] = map[string]any{"source": s, "count": counts[s]}
		bySource[s] = counts[s]
	}
	priorities := make(map[string]any, len(byPriority))
	for p, n := range byPriority {
		priorities[p] = n
	}
	note := map[string]any{
		"signal":          "summary",
		"pending":         len(ids),
		"groups":          groups,
		"byPriority":      priorities,
		"notificationIds": ids,
	}
	if len(ids) > 0 {
		attrs = attrs.Set("priority", string(highest))
		note["priority"] = string(highest)
		parts := make([]string, len(sources))
		for i, s := range sources {
			parts[i] = s + ": " + strconv.Itoa(counts[s])
		}
		contents = strings.Join(parts, ", ")
	}
	summary := map[string]any{
		"pending":         len(ids),
		"bySource":        bySource,
		"byPriority":      priorities,
		"notificationIds": ids,
	}
	if first != nil {
		summary["agentId"] = first.Thread.Agent
		summary["resourceId"] = first.Thread.Resource
		summary["threadId"] = first.Thread.Thread
	}
	return Signal{
		ID:         id,
		Type:       TypeNotification,
		TagName:    TagNotificationSummary,
		Contents:   contents,
		Attributes: attrs,
		Metadata:   map[string]any{"notification": note, "notificationSummary": summary, "notificationIds": ids},
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

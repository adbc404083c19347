package inboxmcp_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/deliverytest"
	"github.com/signalgate/signalgate/inbox"
)

// inbox_snooze through the SDK's client: the record is hidden until the time, listed as
// snoozed, and back (decided again) once the time has come; bad times and records that
// are not pending are tool errors naming why.
func TestInboxSnooze(t *testing.T) {
	e := newEnv(t)
	cs := session(t, e, deliverytest.CoderToken)
	k := coderThread
	var created struct {
		RecordID string `json:"recordId"`
	}
	call(t, cs, "notify", args(k, map[string]any{"kind": "note", "summary": "look at the release notes", "priority": "low"}), &created)
	id := created.RecordID
	now := e.Clock.Now()
	at := now.Add(3 * time.Hour).Format(time.RFC3339)

	for name, until := range map[string]string{
		"past":         now.Add(-time.Minute).Format(time.RFC3339),
		"over 30 days": now.Add(31 * 24 * time.Hour).Format(time.RFC3339),
		"not a time":   "after lunch",
	} {
		msg := toolError(t, cs, "inbox_snooze", args(k, map[string]any{"id": id, "until": until}))
		require.Contains(t, msg, "bad_request: until:", name)
	}
	other := inbox.ThreadKey{Agent: "coder", Resource: k.Resource, Thread: "elsewhere"}
	msg := toolError(t, cs, "inbox_snooze", args(other, map[string]any{"id": id, "until": at}))
	require.Equal(t, `not_found: notification "`+id+`" not found on this thread`, msg)

	var snoozed struct {
		listedNote
		SnoozedUntil time.Time `json:"snoozedUntil"`
	}
	call(t, cs, "inbox_snooze", args(k, map[string]any{"id": id, "until": at}), &snoozed)
	require.Equal(t, inbox.StatusSnoozed, snoozed.Status)
	require.Equal(t, at, snoozed.SnoozedUntil.UTC().Format(time.RFC3339))
	msg = toolError(t, cs, "inbox_snooze", args(k, map[string]any{"id": id, "until": at}))
	require.Equal(t, `conflict: notification "`+id+`" is snoozed: only a pending notification can be snoozed`, msg)

	var list pageOut
	call(t, cs, "inbox_list", args(k, nil), &list)
	require.Empty(t, list.Notifications, "hidden from the default listing")
	call(t, cs, "inbox_list", args(k, map[string]any{"status": []string{"snoozed"}}), &list)
	require.Len(t, list.Notifications, 1)
	require.Equal(t, id, list.Notifications[0].ID)
	var mastraList inboxPage
	call(t, cs, "notification-inbox", args(k, map[string]any{"action": "list", "status": "snoozed"}), &mastraList)
	require.Equal(t, []string{id}, pageIDs(mastraList), "Mastra's tool lists snoozed ones too")
	require.Equal(t, inbox.StatusSnoozed, e.Record(id).Status, "and leaves them snoozed")

	e.Clock.Advance(3 * time.Hour)
	e.Pass()
	call(t, cs, "inbox_list", args(k, map[string]any{"status": []string{"pending"}}), &list)
	require.Len(t, list.Notifications, 1, "back, decided again")
	require.Contains(t, e.Record(id).Reason, "snooze ended; ")
}

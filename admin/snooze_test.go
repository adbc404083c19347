package admin_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/admin"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/server"
)

// The console's snooze (an operator acting for the agent): a pending record is hidden
// until the time and the record listing shows it snoozed, with until when; a failed one
// is 409, a bad time 400 naming until.
func TestOperatorSnoozeShowsInTheListing(t *testing.T) {
	forBackends(t, envOpts{}, func(t *testing.T, en *env) {
		ctx := context.Background()
		acme, globex, _ := seed(t, en)
		status := func(err error) int {
			var se *server.Error
			require.True(t, errors.As(err, &se), "%v", err)
			return se.Status
		}
		now := en.clock.Now()
		_, err := en.api.Snooze(ctx, acme, now.Add(-time.Minute), "ops")
		require.Equal(t, http.StatusBadRequest, status(err))
		require.ErrorContains(t, err, "until:")
		_, err = en.api.Snooze(ctx, acme, now.Add(inbox.MaxSnooze+time.Minute), "ops")
		require.Equal(t, http.StatusBadRequest, status(err))
		_, err = en.api.Snooze(ctx, globex, now.Add(time.Hour), "ops")
		require.Equal(t, http.StatusConflict, status(err))
		require.ErrorContains(t, err, "is failed: only a pending notification can be snoozed")
		_, err = en.api.Snooze(ctx, "01a2030d-9733-7822-bce0-6d25cd55022c", now.Add(time.Hour), "ops")
		require.Equal(t, http.StatusNotFound, status(err))

		rec, err := en.api.Snooze(ctx, acme, now.Add(time.Hour), "ops")
		require.NoError(t, err)
		require.Equal(t, inbox.StatusSnoozed, rec.Status)

		var page admin.RecordPage
		en.call(http.MethodGet, "/admin/v1/notifications?status=snoozed", nil, &page)
		require.Len(t, page.Notifications, 1)
		require.Equal(t, acme, page.Notifications[0].ID)
		require.Equal(t, inbox.StatusSnoozed, page.Notifications[0].Status)
		require.Equal(t, now.Add(time.Hour), *page.Notifications[0].SnoozedUntil)
	})
}

package admin

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/signalgate/signalgate/connectors/email"
	"github.com/signalgate/signalgate/delivery"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/store"
)

type threadList struct {
	Threads    []store.Thread `json:"threads"`
	NextCursor string         `json:"nextCursor,omitempty"`
}

// listThreads is GET /threads: presence (the live run, since when, its lease) and
// pending counts per priority, most recently active first.
func (a *API) listThreads(c echo.Context) error {
	p := readParams(c, "agent", "resource", "thread", "presence", "pending", "limit", "cursor")
	f := store.ThreadFilter{Agent: p.text("agent"), Resource: p.text("resource"), Thread: p.text("thread"),
		Limit: p.limit(), Cursor: p.cursor()}
	switch pr := inbox.Presence(p.vals["presence"]); pr {
	case "", inbox.PresenceActive, inbox.PresenceIdle:
		f.Presence = pr
	default:
		p.fail("presence: unknown %q (want active or idle)", pr)
	}
	if pending := p.boolean("pending"); pending != nil {
		f.Pending = *pending
	}
	if p.err != nil {
		return p.err
	}
	threads, next, err := a.d.Store.ListThreads(c.Request().Context(), f, a.d.Now().UTC())
	if err != nil {
		return err
	}
	if threads == nil {
		threads = []store.Thread{}
	}
	return c.JSON(http.StatusOK, threadList{Threads: threads, NextCursor: next})
}

type deliveryList struct {
	Deliveries []delivery.Attempt `json:"deliveries"`
	NextCursor string             `json:"nextCursor,omitempty"`
}

// listDeliveries is GET /deliveries: the attempt log, newest first, of one record
// (record=), one signal (signal=), one thread (agent=, resource=, thread=) or all.
func (a *API) listDeliveries(c echo.Context) error {
	p := readParams(c, "record", "signal", "agent", "resource", "thread", "limit", "cursor")
	q := store.AttemptFilter{RecordID: p.text("record"), SignalID: p.text("signal"), Limit: p.limit()}
	k := inbox.ThreadKey{Agent: p.text("agent"), Resource: p.text("resource"), Thread: p.text("thread")}
	if k != (inbox.ThreadKey{}) {
		for _, part := range [][2]string{{"agent", k.Agent}, {"resource", k.Resource}, {"thread", k.Thread}} {
			if part[1] == "" {
				p.fail("%s: required: a thread is named by agent, resource and thread together", part[0])
			}
		}
		q.Thread = &k
	}
	if raw := p.vals["cursor"]; raw != "" {
		n, err := strconv.ParseInt(raw, 10, 64)
		if err != nil || n < 1 {
			p.fail("cursor: not a cursor this API returned")
		}
		q.BeforeID = n
	}
	if p.err != nil {
		return p.err
	}
	if q.Limit == 0 {
		q.Limit = inbox.DefaultPageSize
	}
	ctx := c.Request().Context()
	if q.RecordID != "" {
		if _, err := a.d.Store.GetRecord(ctx, q.RecordID); err != nil {
			return notFound(err, "notification", q.RecordID)
		}
	}
	limit := q.Limit
	q.Limit++ // one more tells whether there is a next page
	attempts, err := a.d.Store.ListAttempts(ctx, q)
	if err != nil {
		return err
	}
	out := deliveryList{Deliveries: attempts}
	if len(attempts) > limit {
		out.Deliveries = attempts[:limit]
		out.NextCursor = strconv.FormatInt(out.Deliveries[limit-1].ID, 10)
	}
	if out.Deliveries == nil {
		out.Deliveries = []delivery.Attempt{}
	}
	return c.JSON(http.StatusOK, out)
}

// ConnectorHealth is one configured connector as the stored events and, for email,
// the live pollers see it.
type ConnectorHealth struct {
	ConnectorRef
	store.ConnectorActivity
	// Mailboxes is an email connector's live state: connection, IDLE, last poll, cursor.
	Mailboxes []email.MailboxStatus `json:"mailboxes,omitempty"`
	// Cursors are an email connector's stored cursors ("uidvalidity:uid" per mailbox).
	Cursors map[string]string `json:"cursors,omitempty"`
}

// listConnectors is GET /connectors.
func (a *API) listConnectors(c echo.Context) error {
	if p := readParams(c); p.err != nil {
		return p.err
	}
	ctx := c.Request().Context()
	status := map[string]email.Status{}
	for _, p := range a.d.Pollers {
		st := p.Status()
		status[st.Connector] = st
	}
	out := make([]ConnectorHealth, 0, len(a.d.Connectors))
	for _, ref := range a.d.Connectors {
		act, err := a.d.Store.ConnectorActivity(ctx, ref.Source, ref.Name)
		if err != nil {
			return err
		}
		h := ConnectorHealth{ConnectorRef: ref, ConnectorActivity: act}
		if ref.Source == email.Source {
			h.Mailboxes = status[ref.Name].Mailboxes
			if h.Cursors, err = a.d.Store.ConnectorStates(ctx, email.Source+"/"+ref.Name); err != nil {
				return err
			}
		}
		out = append(out, h)
	}
	return c.JSON(http.StatusOK, map[string]any{"connectors": out})
}

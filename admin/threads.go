package admin

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/connectors/email"
	"github.com/signalgate/signalgate/delivery"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/server"
)

// ThreadPage is one page of GET /threads.
type ThreadPage struct {
	Threads    []agent.Thread `json:"threads"`
	NextCursor string         `json:"nextCursor,omitempty"`
}

// listThreads is GET /threads.
func (a *API) listThreads(c echo.Context) error {
	page, err := a.Threads(c.Request().Context(), c.QueryParams())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, page)
}

// Threads lists threads with presence (the live run, since when, its lease) and pending
// counts per priority, most recently active first, with GET /threads' query parameters.
func (a *API) Threads(ctx context.Context, q url.Values) (ThreadPage, error) {
	p := readParams(q, "agent", "resource", "thread", "presence", "pending", "limit", "cursor")
	f := agent.ThreadFilter{Agent: p.text("agent"), Resource: p.text("resource"), Thread: p.text("thread"),
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
		return ThreadPage{}, p.err
	}
	threads, next, err := a.d.Store.ListThreads(ctx, f, a.d.Now().UTC())
	if err != nil {
		return ThreadPage{}, err
	}
	if threads == nil {
		threads = []agent.Thread{}
	}
	return ThreadPage{Threads: threads, NextCursor: next}, nil
}

// DeliveryPage is one page of the attempt log.
type DeliveryPage struct {
	Deliveries []delivery.Attempt `json:"deliveries"`
	NextCursor string             `json:"nextCursor,omitempty"`
}

// listDeliveries is GET /deliveries.
func (a *API) listDeliveries(c echo.Context) error {
	page, err := a.Deliveries(c.Request().Context(), c.QueryParams())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, page)
}

// Deliveries is the attempt log, newest first, of one record (record=), one signal
// (signal=), one thread (agent=, resource=, thread=) or all.
func (a *API) Deliveries(ctx context.Context, q url.Values) (DeliveryPage, error) {
	p := readParams(q, "record", "signal", "agent", "resource", "thread", "limit", "cursor")
	f := delivery.AttemptFilter{RecordID: p.text("record"), SignalID: p.text("signal"), Limit: p.limit()}
	k := inbox.ThreadKey{Agent: p.text("agent"), Resource: p.text("resource"), Thread: p.text("thread")}
	if k != (inbox.ThreadKey{}) {
		for _, part := range [][2]string{{"agent", k.Agent}, {"resource", k.Resource}, {"thread", k.Thread}} {
			if part[1] == "" {
				p.fail("%s: required: a thread is named by agent, resource and thread together", part[0])
			}
		}
		f.Thread = &k
	}
	if raw := p.vals["cursor"]; raw != "" {
		n, err := strconv.ParseInt(raw, 10, 64)
		if err != nil || n < 1 {
			p.fail("cursor: not a cursor this API returned")
		}
		f.BeforeID = n
	}
	if p.err != nil {
		return DeliveryPage{}, p.err
	}
	if f.Limit == 0 {
		f.Limit = inbox.DefaultPageSize
	}
	if f.RecordID != "" {
		if _, err := a.d.Store.GetRecord(ctx, f.RecordID); err != nil {
			return DeliveryPage{}, notFound(err, "notification", f.RecordID)
		}
	}
	limit := f.Limit
	f.Limit++ // one more tells whether there is a next page
	attempts, err := a.d.Store.ListAttempts(ctx, f)
	if err != nil {
		return DeliveryPage{}, err
	}
	out := DeliveryPage{Deliveries: attempts}
	if len(attempts) > limit {
		out.Deliveries = attempts[:limit]
		out.NextCursor = strconv.FormatInt(out.Deliveries[limit-1].ID, 10)
	}
	if out.Deliveries == nil {
		out.Deliveries = []delivery.Attempt{}
	}
	return out, nil
}

// ConnectorHealth is one configured connector as the stored events and, for email,
// the live pollers see it.
type ConnectorHealth struct {
	ConnectorRef
	inbox.ConnectorActivity
	// Mailboxes is an email connector's live state: connection, IDLE, last poll, cursor.
	Mailboxes []email.MailboxStatus `json:"mailboxes,omitempty"`
	// Cursors are an email connector's stored cursors ("uidvalidity:uid" per mailbox).
	Cursors map[string]string `json:"cursors,omitempty"`
	// Refusals are an HTTP connector's last refusals, as this process saw them.
	Refusals *connectors.RefusalLog `json:"refusals,omitempty"`
	// Backfill is the connector's last backfill pass (a connector with backfill on,
	// after its first pass).
	Backfill *connectors.BackfillPass `json:"backfill,omitempty"`
}

// RefusalLogs are the HTTP connectors' last refusals (*connectors.Refusals).
type RefusalLogs interface {
	Log(source, name string) (connectors.RefusalLog, bool)
}

// listConnectors is GET /connectors.
func (a *API) listConnectors(c echo.Context) error {
	if p := readParams(c.QueryParams()); p.err != nil {
		return p.err
	}
	out, err := a.Connectors(c.Request().Context())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"connectors": out})
}

// Connectors is every configured connector's health, in config order.
func (a *API) Connectors(ctx context.Context) ([]ConnectorHealth, error) {
	status := map[string]email.Status{}
	for _, p := range a.d.Pollers {
		st := p.Status()
		status[st.Connector] = st
	}
	out := make([]ConnectorHealth, 0, len(a.d.Connectors))
	for _, ref := range a.d.Connectors {
		act, err := a.d.Store.ConnectorActivity(ctx, ref.Source, ref.Name)
		if err != nil {
			return nil, err
		}
		h := ConnectorHealth{ConnectorRef: ref, ConnectorActivity: act}
		if log, ok := a.refusals(ref); ok {
			h.Refusals = &log
		}
		states, err := a.d.Store.ConnectorStates(ctx, ref.Source+"/"+ref.Name)
		if err != nil {
			return nil, err
		}
		if h.Backfill, err = connectors.ReadBackfillPass(states); err != nil {
			return nil, fmt.Errorf("connector %s/%s: %w", ref.Source, ref.Name, err)
		}
		if ref.Source == email.Source {
			h.Mailboxes = status[ref.Name].Mailboxes
			h.Cursors = states
		}
		out = append(out, h)
	}
	return out, nil
}

// refusals is ref's refusal log; false when it keeps none (not an HTTP connector).
func (a *API) refusals(ref ConnectorRef) (connectors.RefusalLog, bool) {
	if a.d.Refusals == nil {
		return connectors.RefusalLog{}, false
	}
	return a.d.Refusals.Log(ref.Source, ref.Name)
}

// connectorRefusals is GET /connectors/{source}/{name}/refusals: the connector's last
// refusals, newest first.
func (a *API) connectorRefusals(c echo.Context) error {
	if p := readParams(c.QueryParams()); p.err != nil {
		return p.err
	}
	ref := ConnectorRef{Source: c.Param("source"), Name: c.Param("name")}
	if !slices.Contains(a.d.Connectors, ref) {
		return server.NotFound("no %s connector named %q", ref.Source, ref.Name)
	}
	log, ok := a.refusals(ref)
	if !ok {
		return server.NotFound("%s connector %q takes no HTTP deliveries: nothing is refused", ref.Source, ref.Name)
	}
	return c.JSON(http.StatusOK, connectorRefusals{ConnectorRef: ref, RefusalLog: log})
}

// connectorRefusals is the answer of GET /connectors/{source}/{name}/refusals.
type connectorRefusals struct {
	ConnectorRef
	connectors.RefusalLog
}

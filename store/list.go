package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/jmoiron/sqlx"

	"github.com/signalgate/signalgate/inbox"
)

// where accumulates parameterised conditions; values never reach the SQL text.
type where struct {
	conds []string
	args  []any
}

func (w *where) add(cond string, args ...any) {
	w.conds = append(w.conds, cond)
	for _, a := range args {
		if str, ok := a.(string); ok {
			// Stored text never holds NUL or invalid UTF-8 (cleanText); filters must
			// not either: PostgreSQL rejects them and SQLite's LIKE stops at NUL.
			a = cleanText(str)
		}
		w.args = append(w.args, a)
	}
}

func (w *where) sql() string {
	if len(w.conds) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(w.conds, " AND ")
}

// addCursor continues a newest-first listing after the cursor's row.
func (w *where) addCursor(cursor, timeCol string) error {
	c, err := inbox.ParseCursor(cursor)
	if err != nil {
		return err
	}
	if c != nil {
		w.add("("+timeCol+" < ? OR ("+timeCol+" = ? AND id < ?))", micros(c.At), micros(c.At), c.ID)
	}
	return nil
}

// likeEscape makes user text match literally inside LIKE.
func likeEscape(s string) string {
	return "%" + strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(strings.ToLower(s)) + "%"
}

// ListEvents lists events newest first; next is "" on the last page. Bodies are omitted.
func (s *Admin) ListEvents(ctx context.Context, f inbox.EventFilter) (events []inbox.Event, next string, err error) {
	var w where
	if f.Source != "" {
		w.add("source = ?", f.Source)
	}
	if f.Connector != "" {
		w.add("connector = ?", f.Connector)
	}
	if f.Type != "" {
		w.add("type = ?", f.Type)
	}
	if f.Status != "" {
		w.add("status = ?", string(f.Status))
	}
	if f.Duplicate != nil {
		if *f.Duplicate {
			w.add("redeliveries > 0")
		} else {
			w.add("redeliveries = 0")
		}
	}
	if !f.Since.IsZero() {
		w.add("received_at >= ?", micros(f.Since))
	}
	if !f.Until.IsZero() {
		w.add("received_at < ?", micros(f.Until))
	}
	if err := w.addCursor(f.Cursor, "received_at"); err != nil {
		return nil, "", err
	}
	limit := inbox.PageSize(f.Limit)
	var rows []eventRow
	query := `SELECT ` + strings.Replace(eventColumns, "body,", "NULL AS body,", 1) + ` FROM events` + w.sql() +
		fmt.Sprintf(` ORDER BY received_at DESC, id DESC LIMIT %d`, limit+1)
	if err := s.r.SelectContext(ctx, &rows, s.q(query), w.args...); err != nil {
		return nil, "", fmt.Errorf("list events: %w", err)
	}
	for i := range rows {
		if i == limit {
			last := events[len(events)-1]
			next = inbox.Cursor{At: last.ReceivedAt, ID: last.ID}.Encode()
			break
		}
		ev, err := rows[i].event(nil)
		if err != nil {
			return nil, "", err
		}
		events = append(events, ev)
	}
	return events, next, nil
}

// ListRecords lists records newest first; next is "" on the last page.
func (s *Admin) ListRecords(ctx context.Context, f inbox.RecordFilter) (records []inbox.Record, next string, err error) {
	var w where
	for col, v := range map[string]string{"agent": f.Agent, "resource_id": f.Resource, "thread_id": f.Thread,
		"priority": string(f.Priority), "source": f.Source, "kind": f.Kind, "event_id": f.EventID} {
		if v != "" {
			w.add(col+" = ?", v)
		}
	}
	if len(f.Status) > 0 {
		statuses := make([]string, len(f.Status))
		for i, st := range f.Status {
			statuses[i] = string(st)
		}
		in, args, err := sqlx.In("status IN (?)", statuses)
		if err != nil {
			return nil, "", err
		}
		w.add(in, args...)
	}
	if f.Text != "" {
		pat := likeEscape(f.Text)
		w.add(`(LOWER(summary) LIKE ? ESCAPE '\' OR LOWER(kind) LIKE ? ESCAPE '\' OR LOWER(source) LIKE ? ESCAPE '\')`, pat, pat, pat)
	}
	if err := w.addCursor(f.Cursor, "created_at"); err != nil {
		return nil, "", err
	}
	limit := inbox.PageSize(f.Limit)
	records, err = s.selectRecords(ctx, s.r, `SELECT `+recordColumns+` FROM records`+w.sql()+
		fmt.Sprintf(` ORDER BY created_at DESC, id DESC LIMIT %d`, limit+1), w.args...)
	if err != nil {
		return nil, "", err
	}
	if len(records) > limit {
		records = records[:limit]
		last := records[limit-1]
		next = inbox.Cursor{At: last.CreatedAt, ID: last.ID}.Encode()
	}
	return records, next, nil
}

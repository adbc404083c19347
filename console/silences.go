package console

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/signalgate/signalgate/server"
	"github.com/signalgate/signalgate/silence"
)

// defaultSilenceFor is how long a new silence lasts unless the operator says otherwise:
// long enough to deal with a noisy source, short enough to be forgotten safely.
const defaultSilenceFor = 2 * time.Hour

// silenceRows is how many matcher rows the new-silence form offers beyond those it is
// pre-filled with: a row left blank is ignored.
const silenceRows = 2

// matcherOps are the form's operators, as Alertmanager writes them.
var matcherOps = []string{"=", "!=", "=~", "!~"}

type silencesPage struct {
	Q        url.Values
	Self     string
	Silences []silence.Silence
}

func (silencesPage) title() (string, string) { return "Silences", "silences" }

// silences lists silences, filtered by state (GET /admin/v1/silences).
func (c *Console) silences(ec echo.Context) error {
	q := cleanQuery(ec.QueryParams())
	page, err := c.d.Admin.Silences(ec.Request().Context(), q)
	if err != nil {
		return c.failErr(ec, err)
	}
	return c.render(ec, http.StatusOK, "silences", silencesPage{Q: q, Self: ec.Request().URL.RequestURI(), Silences: page.Silences})
}

// expireSilence ends a silence now for the signed-in operator (DELETE
// /admin/v1/silences/{id}): what it held is released through the policy.
func (c *Console) expireSilence(ec echo.Context) error {
	if _, err := c.d.Admin.ExpireSilence(ec.Request().Context(), ec.Param("id"), sessionOf(ec).Name); err != nil {
		return c.failErr(ec, err)
	}
	return ec.Redirect(http.StatusSeeOther, back(ec))
}

// matcherRow is one row of the new-silence form.
type matcherRow struct {
	Name, Op, Value string
}

type newSilencePage struct {
	Ops      []string
	Matchers []matcherRow
	When     string
	StartsAt string
	EndsAt   string
	Comment  string
	Urgent   bool
	// Record is the record the form was pre-filled from ("silence similar"), if any.
	Record string
	Error  string
}

func (newSilencePage) title() (string, string) { return "New silence", "silences" }

// newSilence is the form. With ?record= it is pre-filled from that record ("silence
// similar"): its agent, resource, thread, source and kind, each editable.
func (c *Console) newSilence(ec echo.Context) error {
	now := c.d.Now().UTC()
	p := newSilencePage{Ops: matcherOps, EndsAt: now.Add(defaultSilenceFor).Format(time.RFC3339)}
	if id := ec.QueryParam("record"); id != "" {
		d, err := c.d.Admin.Notification(ec.Request().Context(), id)
		if err != nil {
			return c.failErr(ec, err)
		}
		r := d.Record
		p.Record = r.ID
		for _, m := range [][2]string{{"agent", r.Thread.Agent}, {"resource", r.Thread.Resource}, {"thread", r.Thread.Thread},
			{"source", r.Source}, {"kind", r.Kind}} {
			p.Matchers = append(p.Matchers, matcherRow{Name: m[0], Op: "=", Value: m[1]})
		}
		p.Comment = "Silenced from record " + r.ID
	}
	for range silenceRows {
		p.Matchers = append(p.Matchers, matcherRow{Op: "="})
	}
	return c.render(ec, http.StatusOK, "silence_new", p)
}

// createSilence creates a silence from the form, as the signed-in operator. What the
// form cannot make sense of (an operator, a time) is a 400 naming the field; the rest
// (matcher names, regular expressions, the length) the admin API checks and names.
// Either way the form comes back as sent, with the error.
func (c *Console) createSilence(ec echo.Context) error {
	form, err := ec.FormParams()
	if err != nil {
		return c.fail(ec, http.StatusBadRequest, "The form could not be read.")
	}
	p := newSilencePage{Ops: matcherOps, When: form.Get("when"), StartsAt: strings.TrimSpace(form.Get("startsAt")),
		EndsAt: strings.TrimSpace(form.Get("endsAt")), Comment: form.Get("comment"), Urgent: form.Get("includeUrgent") != "",
		Record: form.Get("record")}
	names, ops, values := form["matcher_name"], form["matcher_op"], form["matcher_value"]
	for i := range names {
		row := matcherRow{Name: strings.TrimSpace(names[i])}
		if i < len(ops) {
			row.Op = ops[i]
		}
		if i < len(values) {
			row.Value = values[i]
		}
		p.Matchers = append(p.Matchers, row)
	}
	in, err := c.silenceInput(p, sessionOf(ec).Name)
	if err == nil {
		var s silence.Silence
		if s, err = c.d.Admin.CreateSilence(ec.Request().Context(), in); err == nil {
			return ec.Redirect(http.StatusSeeOther, Prefix+"/silences#silence-"+url.PathEscape(s.ID))
		}
	}
	status, msg := userError(err)
	if status == 0 {
		return c.failErr(ec, err)
	}
	p.Error = msg
	return c.render(ec, status, "silence_new", p)
}

// silenceInput reads the form into what the admin API takes. Rows with neither a name
// nor a value are the form's spare rows and are left out.
func (c *Console) silenceInput(p newSilencePage, by string) (silence.Input, error) {
	in := silence.Input{When: strings.TrimSpace(p.When), CreatedBy: by, Comment: p.Comment, IncludeUrgent: p.Urgent,
		Matchers: []silence.Matcher{}}
	for _, row := range p.Matchers {
		if row.Name == "" && row.Value == "" {
			continue
		}
		m := silence.Matcher{Name: row.Name, Value: row.Value}
		equal := true
		switch row.Op {
		case "=":
		case "!=":
			equal = false
		case "=~":
			m.IsRegex = true
		case "!~":
			m.IsRegex, equal = true, false
		default:
			return in, server.BadRequest("matchers[%d]: operator %q is not one of %s", len(in.Matchers), row.Op, strings.Join(matcherOps, " "))
		}
		m.IsEqual = &equal
		in.Matchers = append(in.Matchers, m)
	}
	now := c.d.Now().UTC()
	base := now
	if p.StartsAt != "" {
		t, err := time.Parse(time.RFC3339, p.StartsAt)
		if err != nil {
			return in, server.BadRequest("startsAt: want an RFC 3339 time such as %s, or nothing for now; got %q", now.Format(time.RFC3339), p.StartsAt)
		}
		in.StartsAt, base = t.UTC(), t.UTC()
	}
	// endsAt is a time, or a length from startsAt (the form's "2h").
	if t, err := time.Parse(time.RFC3339, p.EndsAt); err == nil {
		in.EndsAt = t.UTC()
	} else if d, derr := time.ParseDuration(p.EndsAt); derr == nil && d > 0 {
		in.EndsAt = base.Add(d)
	} else {
		return in, server.BadRequest("endsAt: want an RFC 3339 time such as %s or a length such as 2h, got %q",
			now.Add(defaultSilenceFor).Format(time.RFC3339), p.EndsAt)
	}
	return in, nil
}

// matcherText writes a matcher as Alertmanager shows one: name="value", name=~"re".
func matcherText(m silence.Matcher) string {
	equal := m.IsEqual == nil || *m.IsEqual
	op := "!="
	switch {
	case m.IsRegex && equal:
		op = "=~"
	case m.IsRegex:
		op = "!~"
	case equal:
		op = "="
	}
	return fmt.Sprintf("%s%s%q", m.Name, op, m.Value)
}

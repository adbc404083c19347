package console

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/signalgate/signalgate/admin"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/server"
)

// pageNames are the templates under templates/, each rendered inside layout.html.
var pageNames = []string{"signin", "error", "threads", "thread", "notification", "events", "event",
	"deliveries", "connectors", "explain", "approvals", "silences", "silence_new"}

var funcs = template.FuncMap{
	"iso": func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	"utc": func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") },
	"deref": func(t *time.Time) time.Time {
		if t == nil {
			return time.Time{}
		}
		return *t
	},
	"threadURL": threadURL,
	"json":      jsonText,
	"pretty":    prettyBody,
	"join":      strings.Join,
	"set":       withParam,
	"url": func(path string, q url.Values) string {
		if len(q) == 0 {
			return path
		}
		return path + "?" + q.Encode()
	},
	"list":    func(v ...string) []string { return v },
	"excerpt": excerpt,
	"matcher": matcherText,
	"dict": func(kv ...any) map[string]any {
		m := map[string]any{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[fmt.Sprint(kv[i])] = kv[i+1]
		}
		return m
	},
}

// parsePages parses every page with funcs and the console's own (more).
func parsePages(more template.FuncMap) (map[string]*template.Template, error) {
	out := map[string]*template.Template{}
	for _, name := range pageNames {
		t, err := template.New("layout.html").Funcs(funcs).Funcs(more).ParseFS(templateFS, "templates/layout.html", "templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("console: parse %s page: %w", name, err)
		}
		out[name] = t
	}
	return out, nil
}

// view is what every page template gets.
type view struct {
	Title   string
	Nav     string // the nav entry to highlight
	Session *session
	Page    any
}

// CanWrite says whether write buttons render.
func (v view) CanWrite() bool { return v.Session != nil && v.Session.can(admin.ScopeWrite) }

// CSRF is the token forms carry.
func (v view) CSRF() string {
	if v.Session == nil {
		return ""
	}
	return v.Session.CSRF
}

// titled lets a page name itself and its nav entry.
type titled interface{ title() (title, nav string) }

func (c *Console) render(ec echo.Context, status int, name string, page any) error {
	t, ok := c.pages[name]
	if !ok {
		return fmt.Errorf("console: no %s page", name)
	}
	v := view{Session: sessionOf(ec), Page: page}
	if p, ok := page.(titled); ok {
		v.Title, v.Nav = p.title()
	}
	var buf bytes.Buffer
	if err := t.Execute(&buf, v); err != nil {
		return fmt.Errorf("console: render %s: %w", name, err)
	}
	return ec.HTMLBlob(status, buf.Bytes())
}

type errorPage struct {
	Status  int
	Message string
}

func (errorPage) title() (string, string) { return "Error", "" }

// fail renders an error page with status.
func (c *Console) fail(ec echo.Context, status int, msg string) error {
	return c.render(ec, status, "error", errorPage{Status: status, Message: msg})
}

// failErr renders what the admin API answered: its status and message for the
// caller's mistakes, a plain 500 (logged) for the server's.
func (c *Console) failErr(ec echo.Context, err error) error {
	var se *server.Error
	if errors.As(err, &se) && se.Status < 500 {
		return c.fail(ec, se.Status, se.Message)
	}
	var he *echo.HTTPError
	if errors.As(err, &he) && he.Code < 500 {
		return c.fail(ec, he.Code, fmt.Sprint(he.Message))
	}
	c.log.Error("console page failed", "path", ec.Path(), "error", err.Error())
	return c.fail(ec, http.StatusInternalServerError, "Something went wrong on the gateway; its log has the details.")
}

// threadURL is the console page of a thread; ids go in the query, escaped.
func threadURL(k inbox.ThreadKey) string {
	q := url.Values{"agent": {k.Agent}, "resource": {k.Resource}, "thread": {k.Thread}}
	return Prefix + "/thread?" + q.Encode()
}

// withParam is the page's URL with one query parameter set (or removed when empty),
// for paging and filter links. Setting anything but the cursor starts from page one.
func withParam(path string, q url.Values, name, value string) string {
	out := url.Values{}
	for k, v := range q {
		out[k] = append([]string(nil), v...)
	}
	if name != "cursor" {
		out.Del("cursor")
	}
	if value == "" {
		out.Del(name)
	} else {
		out.Set(name, value)
	}
	if len(out) == 0 {
		return path
	}
	return path + "?" + out.Encode()
}

func jsonText(v any) string {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// prettyBody indents a JSON body; anything else (an email's text) is shown as sent.
func prettyBody(s string) string {
	var buf bytes.Buffer
	if json.Valid([]byte(s)) && json.Indent(&buf, []byte(s), "", "  ") == nil {
		return buf.String()
	}
	return s
}

func urlQueryEscape(s string) string { return url.QueryEscape(s) }

// userError is the status and message of an error the caller can fix (a 4xx), or 0.
func userError(err error) (int, string) {
	var se *server.Error
	if errors.As(err, &se) && se.Status < 500 {
		return se.Status, se.Message
	}
	return 0, ""
}

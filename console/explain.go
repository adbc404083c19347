package console

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/signalgate/signalgate/admin"
)

type explainPage struct {
	Connectors []admin.ConnectorRef
	// The form as sent, shown again with the answer.
	EventID   string
	Connector string // source/name
	Headers   string
	Body      string
	Result    *admin.Explanation
	Error     string
}

func (explainPage) title() (string, string) { return "Explain", "explain" }

// explainForm is the form; with ?event= it explains that stored event at once (the
// event page links here).
func (c *Console) explainForm(ec echo.Context) error {
	p := explainPage{Connectors: c.d.Connectors, EventID: ec.QueryParam("event")}
	if p.EventID == "" {
		return c.render(ec, http.StatusOK, "explain", p)
	}
	return c.runExplain(ec, p, admin.Sample{EventID: p.EventID})
}

// explain takes a pasted sample: a connector, header lines and the raw body.
func (c *Console) explain(ec echo.Context) error {
	p := explainPage{Connectors: c.d.Connectors, EventID: strings.TrimSpace(ec.FormValue("event")),
		Connector: ec.FormValue("connector"), Headers: ec.FormValue("headers"), Body: ec.FormValue("body")}
	if p.EventID != "" {
		return c.runExplain(ec, p, admin.Sample{EventID: p.EventID})
	}
	s := admin.Sample{Headers: map[string]string{}}
	s.Source, s.Connector, _ = strings.Cut(p.Connector, "/")
	for _, line := range strings.Split(p.Headers, "\n") {
		name, value, ok := strings.Cut(strings.TrimSpace(line), ":")
		if ok && strings.TrimSpace(name) != "" {
			s.Headers[strings.TrimSpace(name)] = strings.TrimSpace(value)
		}
	}
	if strings.TrimSpace(p.Body) != "" {
		raw, err := json.Marshal(p.Body) // the raw body, as a JSON string
		if err != nil {
			return err
		}
		s.Body = raw
	}
	return c.runExplain(ec, p, s)
}

func (c *Console) runExplain(ec echo.Context, p explainPage, s admin.Sample) error {
	res, err := c.d.Admin.Explain(ec.Request().Context(), s)
	if err != nil {
		var status int
		if status, p.Error = userError(err); status == 0 {
			return c.failErr(ec, err)
		}
		return c.render(ec, status, "explain", p)
	}
	p.Result = res
	return c.render(ec, http.StatusOK, "explain", p)
}

package httptarget

import (
	"io"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
)

// MountAgent serves h at route, a path with an :agent parameter, for the requests that
// name agentID. Every agent of a kind shares the one route (and the one path the OpenAPI
// document names): each agent's part mounts its handler, which hands the requests for
// other agents to the handler mounted before it; a name no agent of the kind has is 404.
func MountAgent(e *echo.Echo, method, route, agentID string, h echo.HandlerFunc) {
	prev := mounted(e, method, route)
	e.Add(method, route, func(c echo.Context) error {
		if c.Param("agent") == agentID {
			return h(c)
		}
		if prev != nil {
			return prev(c)
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(c.Request().Body, 1<<20))
		return echo.NewHTTPError(http.StatusNotFound, "no agent of that name takes these requests")
	})
}

// mounted is the handler e routes method and route to, or nil.
func mounted(e *echo.Echo, method, route string) echo.HandlerFunc {
	for _, r := range e.Routes() {
		if r.Method == method && r.Path == route {
			c := e.NewContext(nil, nil)
			e.Router().Find(method, strings.Replace(route, ":agent", "x", 1), c)
			return c.Handler()
		}
	}
	return nil
}

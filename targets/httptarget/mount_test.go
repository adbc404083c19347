package httptarget_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/targets/httptarget"
)

// Every agent of a kind shares one route: each request reaches the handler of the agent
// it names, whichever was mounted first, and a name no agent has is 404.
func TestMountAgentSharesOneRoute(t *testing.T) {
	e := echo.New()
	for _, id := range []string{"alpha", "beta", "gamma"} {
		httptarget.MountAgent(e, http.MethodPost, "/targets/fake/:agent/hook", id, func(c echo.Context) error {
			return c.String(http.StatusOK, id)
		})
	}
	routes := 0
	for _, r := range e.Routes() {
		if r.Path == "/targets/fake/:agent/hook" {
			routes++
		}
	}
	require.Equal(t, 1, routes, "one route, as the OpenAPI document names it")
	for _, id := range []string{"alpha", "beta", "gamma"} {
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/targets/fake/"+id+"/hook", strings.NewReader("{}")))
		require.Equal(t, http.StatusOK, rec.Code)
		require.Equal(t, id, rec.Body.String())
	}
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/targets/fake/delta/hook", strings.NewReader("{}")))
	require.Equal(t, http.StatusNotFound, rec.Code)
}

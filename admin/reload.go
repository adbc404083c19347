package admin

import "github.com/labstack/echo/v4"

// ReloadPath is where a config reload is asked for, outside the API's prefix as
// Prometheus and Alertmanager serve theirs.
const ReloadPath = "/-/reload"

// Guard wraps h in the admin API's token check and scope, for an admin endpoint served
// outside Prefix (POST /-/reload).
func (a *API) Guard(scope string, h echo.HandlerFunc) echo.HandlerFunc {
	return a.authenticate(requireScope(scope)(h))
}

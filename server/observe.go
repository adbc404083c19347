package server

import (
	"context"
	"time"

	"github.com/labstack/echo/v4"
)

// RequestObserver is told of every answered request (metrics.Metrics).
type RequestObserver interface {
	// ObserveRequest gets the request's context as the request ended (with its server
	// span, for the exemplar), the route template ("" when nothing matched), the method,
	// the status answered, the connector path parameter ("" when the route has none)
	// and the time taken.
	ObserveRequest(ctx context.Context, route, method string, status int, connector string, elapsed time.Duration)
}

// Observe is the middleware that reports requests to o; the status of a returned error
// is the one the error handler answers.
func Observe(o RequestObserver) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			start := time.Now()
			err := next(c)
			status := c.Response().Status
			if err != nil {
				status = StatusOf(err)
			}
			// The request's context is read after the handlers ran, so it holds the
			// server span whether the span middleware runs outside this one or inside.
			o.ObserveRequest(c.Request().Context(), c.Path(), c.Request().Method, status, c.Param("connector"), time.Since(start))
			return err
		}
	}
}

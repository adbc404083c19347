package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/signalgate/signalgate/inbox"
)

// Error is the JSON error body used everywhere: {"error": {"code": "...", "message": "..."}}.
type Error struct {
	Status  int    `json:"-"`
	Code    string `json:"code"`
	Message string `json:"message"`
	// expected marks a 5xx the server gives on purpose under load: not logged, since
	// a stranger can provoke any number of them.
	expected bool
}

func (e *Error) Error() string { return e.Message }

// HTTPStatus is the response status the error maps to.
func (e *Error) HTTPStatus() int { return e.Status }

// NewError builds an Error; handlers return it and the error handler writes it.
func NewError(status int, code, format string, args ...any) *Error {
	return &Error{Status: status, Code: code, Message: fmt.Sprintf(format, args...)}
}

// Common errors.
func BadRequest(format string, args ...any) *Error {
	return NewError(http.StatusBadRequest, "bad_request", format, args...)
}

// NotFound is a 404 naming what was missing.
func NotFound(format string, args ...any) *Error {
	return NewError(http.StatusNotFound, "not_found", format, args...)
}

// Unauthorized carries no detail on purpose: it must not help a forger.
func Unauthorized() *Error {
	return NewError(http.StatusUnauthorized, "unauthorized", "missing or invalid credentials")
}

// Forbidden is a 403 for an authenticated caller without the right.
func Forbidden(format string, args ...any) *Error {
	return NewError(http.StatusForbidden, "forbidden", format, args...)
}

func codeFor(status int) string {
	switch status {
	case http.StatusBadRequest:
		return "bad_request"
	case http.StatusUnauthorized:
		return "unauthorized"
	case http.StatusForbidden:
		return "forbidden"
	case http.StatusNotFound:
		return "not_found"
	case http.StatusMethodNotAllowed:
		return "method_not_allowed"
	case http.StatusConflict:
		return "conflict"
	case http.StatusRequestEntityTooLarge:
		return "payload_too_large"
	case http.StatusUnsupportedMediaType:
		return "unsupported_media_type"
	case http.StatusTooManyRequests:
		return "rate_limited"
	case http.StatusServiceUnavailable:
		return "unavailable"
	}
	if status >= 500 {
		return "internal"
	}
	return strings.ReplaceAll(strings.ToLower(http.StatusText(status)), " ", "_")
}

// errorHandler is the one mapping from errors to status codes and JSON bodies.
func errorHandler(log *slog.Logger) echo.HTTPErrorHandler {
	return func(err error, c echo.Context) {
		if c.Response().Committed {
			return
		}
		out := toError(err)
		if out.Status >= 500 && !out.expected {
			log.Error("request failed", "component", "server", "method", c.Request().Method,
				"path", c.Path(), "request_id", c.Response().Header().Get(echo.HeaderXRequestID), "error", err.Error())
		}
		var werr error
		if c.Request().Method == http.MethodHead {
			werr = c.NoContent(out.Status)
		} else {
			werr = c.JSON(out.Status, map[string]*Error{"error": out})
		}
		if werr != nil {
			log.Debug("write error response", "component", "server", "error", werr.Error())
		}
	}
}

// StatusOf is the status the error handler answers for err: metrics and the
// handler can never disagree.
func StatusOf(err error) int { return toError(err).Status }

func toError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	var he *echo.HTTPError
	if errors.As(err, &he) {
		msg := http.StatusText(he.Code)
		if m, ok := he.Message.(string); ok && m != "" {
			msg = m
		}
		if he.Code == http.StatusRequestEntityTooLarge {
			msg = "request body exceeds the configured body_limit"
		}
		return &Error{Status: he.Code, Code: codeFor(he.Code), Message: msg}
	}
	// Domain sentinels: handlers may return store errors as they are.
	switch {
	case errors.Is(err, inbox.ErrNotFound):
		return &Error{Status: http.StatusNotFound, Code: "not_found", Message: err.Error()}
	case errors.Is(err, inbox.ErrBadCursor):
		return &Error{Status: http.StatusBadRequest, Code: "bad_request", Message: "cursor: not a cursor this API returned"}
	}
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return &Error{Status: http.StatusRequestEntityTooLarge, Code: codeFor(http.StatusRequestEntityTooLarge),
			Message: "request body exceeds the configured body_limit"}
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return &Error{Status: http.StatusServiceUnavailable, Code: "timeout", Message: "request timed out"}
	}
	return &Error{Status: http.StatusInternalServerError, Code: "internal", Message: "internal error"}
}

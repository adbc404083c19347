package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/inbox"
)

// TestToError is the one mapping from errors to status codes and bodies.
func TestToError(t *testing.T) {
	for _, c := range []struct {
		err  error
		want Error
	}{
		{BadRequest("limit: want 1 to 500"), Error{Status: 400, Code: "bad_request", Message: "limit: want 1 to 500"}},
		{fmt.Errorf("record r1: %w", inbox.ErrNotFound), Error{Status: 404, Code: "not_found", Message: "record r1: not found"}},
		{fmt.Errorf("list: %w", inbox.ErrBadCursor), Error{Status: 400, Code: "bad_request", Message: "cursor: not a cursor this API returned"}},
		{&http.MaxBytesError{Limit: 1}, Error{Status: 413, Code: "payload_too_large", Message: "request body exceeds the configured body_limit"}},
		{echo.NewHTTPError(http.StatusMethodNotAllowed), Error{Status: 405, Code: "method_not_allowed", Message: "Method Not Allowed"}},
		{fmt.Errorf("query: %w", context.DeadlineExceeded), Error{Status: 503, Code: "timeout", Message: "request timed out"}},
		{errors.New("pq: password authentication failed for user secret"), Error{Status: 500, Code: "internal", Message: "internal error"}},
	} {
		require.Equal(t, c.want, *toError(c.err), c.err.Error())
	}
}

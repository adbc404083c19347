package server

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"sync"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/require"
)

// Serve swaps the router for the requests that arrive afterwards, while a stream the old
// router took stays open on the same connection and keeps writing; the new router has
// the health endpoints without mounting them again.
func TestServeSwapsRouterKeepingStreams(t *testing.T) {
	more := make(chan string)
	s, addr := startServer(t, Config{}, func(e *echo.Echo) {
		e.GET("/v1/x/stream", func(c echo.Context) error {
			c.Response().WriteHeader(http.StatusOK)
			c.Response().Flush()
			for line := range more {
				_, _ = io.WriteString(c.Response(), line+"\n")
				c.Response().Flush()
			}
			return nil
		})
		e.GET("/which", func(c echo.Context) error { return c.String(http.StatusOK, "old") })
	})
	closeMore := sync.OnceFunc(func() { close(more) })
	t.Cleanup(closeMore) // before the shutdown startServer registered: the stream ends
	s.Health(func(context.Context) error { return nil })

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/v1/x/stream", nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	lines := bufio.NewReader(resp.Body)

	next := s.NewRouter()
	next.GET("/which", func(c echo.Context) error { return c.String(http.StatusOK, "new") })
	s.Serve(next)
	require.Same(t, next, s.Echo())

	for path, want := range map[string]string{"/which": "new", "/healthz": `{"status":"ok"}`} {
		r, err := http.Get("http://" + addr + path)
		require.NoError(t, err)
		body, _ := io.ReadAll(r.Body)
		r.Body.Close()
		require.Equal(t, http.StatusOK, r.StatusCode, path)
		require.Equal(t, want, string(body[:len(body)-boolInt(body[len(body)-1] == '\n')]), path)
	}
	more <- "still here"
	line, err := lines.ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "still here\n", line, "the stream the old router took kept going")
	closeMore()
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

package agent_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/delivery/deliverytest"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/server"
)

// A token holder opening stream after stream gets 429 past the per-thread and the
// per-agent caps, and a closed stream gives its place back.
func TestStreamsCappedPerThreadAndPerAgent(t *testing.T) {
	gauge := make(chan int, 16)
	e := deliverytest.New(t, deliverytest.Config{
		Agents: []agent.Config{{ID: "coder", Token: deliverytest.CoderToken, MaxStreams: 3, MaxStreamsPerThread: 2}},
		API:    []agent.APIOption{agent.WithSubscriberGauge(func(d int) { gauge <- d })},
	})
	open := func(k inbox.ThreadKey) (int, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, e.ThreadURL(k, "/stream"), nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+deliverytest.CoderToken)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Fatal("a stream opened past its cap")
		}
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	a := coderThread
	b := inbox.ThreadKey{Agent: "coder", Resource: "acme/api", Thread: "b"}
	c := inbox.ThreadKey{Agent: "coder", Resource: "acme/api", Thread: "c"}

	first := e.Subscribe(a, "", "")
	e.Subscribe(a, "", "")
	status, body := open(a)
	require.Equal(t, http.StatusTooManyRequests, status)
	require.Contains(t, body, "max_streams_per_thread")

	e.Subscribe(b, "", "")
	status, body = open(c)
	require.Equal(t, http.StatusTooManyRequests, status)
	require.Contains(t, body, "agents[].max_streams")

	for range 3 {
		require.Equal(t, 1, <-gauge)
	}
	first.Close()
	require.Equal(t, -1, <-gauge)
	e.Subscribe(c, "", "") // the closed stream's place is free again
}

// The console's streams (ServeStream) have caps of their own: viewers never take an
// agent's places, and are bounded themselves.
func TestViewerStreamsCappedApart(t *testing.T) {
	e := deliverytest.New(t, deliverytest.Config{
		Agents: []agent.Config{{ID: "coder", Token: deliverytest.CoderToken, MaxStreams: 4, MaxStreamsPerThread: 1}},
	})
	view := echo.New()
	view.GET("/view", func(c echo.Context) error {
		err := e.API.ServeStream(c, coderThread)
		if se := (*server.Error)(nil); errors.As(err, &se) {
			return c.NoContent(se.Status)
		}
		return err
	})
	srv := httptest.NewServer(view)
	t.Cleanup(srv.Close)
	open := func() *http.Response {
		t.Helper()
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/view", nil)
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}

	e.Subscribe(coderThread, "", "") // the agent's one place on the thread
	require.Equal(t, http.StatusOK, open().StatusCode, "a viewer took no place of the agent's")
	resp := open()
	require.Equal(t, http.StatusTooManyRequests, resp.StatusCode, "viewers are capped per thread too")
}

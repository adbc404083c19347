package agentapi_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/agentapi"
	"github.com/signalgate/signalgate/deliverytest"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/server"
)

// A token holder opening stream after stream gets 429 past the per-thread and the
// per-agent caps, and a closed stream gives its place back.
func TestStreamsCappedPerThreadAndPerAgent(t *testing.T) {
	gauge := make(chan int, 16)
	e := deliverytest.New(t, deliverytest.Config{
		Agents: []agent.Config{{ID: "coder", Token: deliverytest.CoderToken, MaxStreams: 3, MaxStreamsPerThread: 2}},
		API:    []agentapi.Option{agentapi.WithSubscriberGauge(func(d int) { gauge <- d })},
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

// Agents' and console viewers' streams count in one gateway-wide limit (three quarters of
// server.max_connections): viewers on any number of agents cannot take the connections
// ingest needs, and hold at most a quarter of the limit, so agents still get theirs.
func TestStreamsShareOneGatewayLimit(t *testing.T) {
	gauge := make(chan int, 16)
	e := deliverytest.New(t, deliverytest.Config{
		// The per-agent caps are far above the gateway's limit: only it can refuse.
		Agents: []agent.Config{{ID: "coder", Token: deliverytest.CoderToken, MaxStreams: 100, MaxStreamsPerThread: 100}},
		API:    []agentapi.Option{agentapi.WithStreamLimit(8), agentapi.WithSubscriberGauge(func(d int) { gauge <- d })},
	})
	view := echo.New()
	view.GET("/view", func(c echo.Context) error {
		err := e.API.ServeStream(c, inbox.ThreadKey{Agent: "coder", Resource: "acme/api", Thread: c.QueryParam("thread")})
		if se := (*server.Error)(nil); errors.As(err, &se) {
			return c.String(se.Status, se.Message)
		}
		return err
	})
	srv := httptest.NewServer(view)
	t.Cleanup(srv.Close)
	// openViewer opens a console stream on its own thread; close ends it.
	openViewer := func(thread string) (status int, body string, close func()) {
		t.Helper()
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/view?thread="+url.QueryEscape(thread), nil)
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		t.Cleanup(func() { resp.Body.Close() })
		if resp.StatusCode != http.StatusOK {
			b, _ := io.ReadAll(resp.Body)
			body = string(b)
		}
		return resp.StatusCode, body, func() { cancel(); resp.Body.Close() }
	}
	refusedAgent := func(k inbox.ThreadKey) string {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, e.ThreadURL(k, "/stream"), nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+deliverytest.CoderToken)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		require.Equal(t, http.StatusTooManyRequests, resp.StatusCode, "an agent stream opened past the gateway's limit")
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	thread := func(i int) inbox.ThreadKey {
		return inbox.ThreadKey{Agent: "coder", Resource: "acme/api", Thread: "t" + string(rune('a'+i))}
	}

	// Viewers fill their share of the limit (8/4 = 2), however many threads they follow.
	status, _, closeFirst := openViewer("v1")
	require.Equal(t, http.StatusOK, status)
	status, _, _ = openViewer("v2")
	require.Equal(t, http.StatusOK, status)
	status, body, _ := openViewer("v3")
	require.Equal(t, http.StatusTooManyRequests, status, "viewers held more than their share of the gateway's streams")
	require.Contains(t, body, "console viewers")

	// The agent still gets the rest of the limit, and no more: 2 viewers + 6 agent streams.
	for i := range 6 {
		e.Subscribe(thread(i), "", "")
	}
	for range 8 {
		require.Equal(t, 1, <-gauge)
	}
	require.Contains(t, refusedAgent(thread(6)), "server.max_connections")
	status, body, _ = openViewer("v4")
	require.Equal(t, http.StatusTooManyRequests, status)
	require.Contains(t, body, "server.max_connections")

	// A viewer's place, once given back, is the gateway's: the agent takes it.
	closeFirst()
	require.Equal(t, -1, <-gauge)
	e.Subscribe(thread(6), "", "")
	require.Contains(t, refusedAgent(thread(7)), "server.max_connections")
}

package load

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/targets/langgraph"
)

// The counting proxy forwards to the server and counts requests by route; a run's start
// is read from the first AI message after the human message carrying an event's marker.
func TestLangGraphCountsAndRunStarts(t *testing.T) {
	cfg := Config{Subscribers: 1, Sources: []string{SourceGitHub}, Scenario: DefaultScenario()}
	_, k := cfg.ThreadFor(0, cfg.Sources)
	tr := newTracker("r1", 1, false)
	sent := time.UnixMilli(1_700_000_000_000)
	for _, m := range []string{"lgr1x1z", "lgr1x2z"} {
		tr.sent(m, sent)
		tr.ack(m)
	}
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		require.Equal(t, "/threads/"+langgraph.ThreadID(k), r.URL.Path)
		fmt.Fprintf(w, `{"values":{"messages":[
			{"type":"human","content":"<notification>lgr1x1z</notification>"},
			{"type":"ai","content":"echo","response_metadata":{"node_started_at":%d}},
			{"type":"human","content":"<notification>lgr1x2z</notification>"},
			{"type":"ai","content":"echo","response_metadata":{"node_started_at":%d}}]}}`,
			sent.Add(40*time.Millisecond).UnixMilli(), sent.Add(90*time.Millisecond).UnixMilli())
	}))
	defer upstream.Close()
	cfg.RuntimeUpstream = upstream.URL
	lat, n, err := measureLangGraph(context.Background(), cfg, tr)
	require.NoError(t, err)
	require.Equal(t, 2, n)
	require.Equal(t, 90.0, lat.Max)

	c, err := startCounter("127.0.0.1:0", upstream.URL)
	require.NoError(t, err)
	defer c.srv.Close()
	resp, err := http.Get("http://" + c.addr + "/threads/" + langgraph.ThreadID(k))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "forwarded")
	counts, total := c.snapshot()
	require.Equal(t, map[string]int{"GET /threads/{id}": 1}, counts)
	require.Equal(t, 1, total)
}

// A2A: a JSON-RPC request is counted by its method too (the proxy forwards its body
// whole); a message's start is when the harness's echo agent was handed it.
func TestA2ACountsAndRunStarts(t *testing.T) {
	cfg := Config{Subscribers: 1, Sources: []string{SourceGitHub}, Scenario: DefaultScenario()}
	tr := newTracker("r2", 1, false)
	sent := time.UnixMilli(1_700_000_000_000)
	for _, m := range []string{"lgr2x1z", "lgr2x2z"} {
		tr.sent(m, sent)
		tr.ack(m)
	}
	var forwarded string
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/test/received" {
			fmt.Fprintf(w, `[{"at":%d,"agent":"echo","parts":[{"text":"<notification>lgr2x1z</notification>"},{"data":{"x":"lgr2x1z"}}]},
				{"at":%d,"agent":"ask","parts":[{"text":"lgr2x2z"}]},
				{"at":%d,"agent":"echo","parts":[{"text":"<notification>lgr2x2z</notification>"}]}]`,
				sent.Add(30*time.Millisecond).UnixMilli(), sent.UnixMilli(), sent.Add(70*time.Millisecond).UnixMilli())
			return
		}
		raw, _ := io.ReadAll(r.Body)
		forwarded = string(raw)
	}))
	defer upstream.Close()
	cfg.RuntimeUpstream = upstream.URL
	cfg.Runtime = &Runtime{Kind: RuntimeA2A}
	lat, n, err := measureRuntime(context.Background(), cfg, tr)
	require.NoError(t, err)
	require.Equal(t, 2, n, "the echo agent's text parts only")
	require.Equal(t, 70.0, lat.Max)

	c, err := startCounter("127.0.0.1:0", upstream.URL)
	require.NoError(t, err)
	defer c.srv.Close()
	body := `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{}}`
	resp, err := http.Post("http://"+c.addr+"/echo/jsonrpc", "application/json", strings.NewReader(body))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, body, forwarded)
	counts, _ := c.snapshot()
	require.Equal(t, map[string]int{"POST /echo/jsonrpc SendMessage": 1}, counts)
}

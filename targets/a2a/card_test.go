package a2a_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/secret"
	"github.com/signalgate/signalgate/targets/a2a"
)

func TestCardURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://h:1/ask":  "http://h:1/ask/.well-known/agent-card.json",
		"http://h:1/ask/": "http://h:1/ask/.well-known/agent-card.json",
		"http://h:1":      "http://h:1/.well-known/agent-card.json",
		"https://h/a/.well-known/agent-card.json": "https://h/a/.well-known/agent-card.json",
		"https://h/cards/support.json":            "https://h/cards/support.json",
		"https://h/a%2Fb/":                        "https://h/a%2Fb/.well-known/agent-card.json",
	} {
		require.Equal(t, want, a2a.Config{URL: in}.CardURL(), in)
	}
}

// Cards of both shapes: v1.0's supportedInterfaces (its JSON-RPC 1.0 interface first,
// else a 0.3 one) and v0.3's url; an endpoint relative to the card; a card with no
// JSON-RPC interface is refused saying so.
func TestCardShapes(t *testing.T) {
	for _, tc := range []struct {
		name, card, endpoint, protocol, err string
	}{
		{"v1.0 and v0.3", `{"name":"a","supportedInterfaces":[{"url":"http://x/rest","protocolBinding":"HTTP+JSON","protocolVersion":"1.0"},
			{"url":"http://x/rpc03","protocolBinding":"JSONRPC","protocolVersion":"0.3"},{"url":"http://x/rpc","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],
			"capabilities":{"pushNotifications":true}}`, "http://x/rpc", "1.0", ""},
		{"only v0.3 interfaces", `{"name":"a","supportedInterfaces":[{"url":"http://x/rpc03","protocolBinding":"JSONRPC","protocolVersion":"0.3.0"}]}`,
			"http://x/rpc03", "0.3", ""},
		{"a v0.3 card", `{"name":"a","url":"/a2a","preferredTransport":"JSONRPC","protocolVersion":"0.3.0"}`, "http://card.example/a2a", "0.3", ""},
		{"a v0.3 card preferring REST", `{"name":"a","url":"http://x/rest","preferredTransport":"HTTP+JSON","protocolVersion":"0.3.0",
			"additionalInterfaces":[{"url":"http://x/rpc","transport":"JSONRPC"}]}`, "http://x/rpc", "0.3", ""},
		{"REST only", `{"name":"a","supportedInterfaces":[{"url":"http://x/rest","protocolBinding":"HTTP+JSON","protocolVersion":"1.0"}]}`,
			"", "", "names no JSON-RPC interface"},
		{"not http", `{"name":"a","url":"ftp://x/rpc"}`, "", "", "not an http(s) URL"},
		{"not JSON", `<html>`, "", "", "not JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				require.Equal(t, "1.0", r.Header.Get("A2A-Version"), "the card is asked for in its v1.0 shape")
				require.Equal(t, "Bearer k", r.Header.Get("Authorization"))
				_, _ = w.Write([]byte(tc.card))
			}))
			defer srv.Close()
			c := a2a.Config{URL: srv.URL + "/agent/", Headers: map[string]secret.Secret{"Authorization": "Bearer k"}}
			card, err := a2a.FetchCard(context.Background(), nil, c, 5*time.Second, time.Now)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			want := tc.endpoint
			if want == "http://card.example/a2a" {
				want = srv.URL + "/a2a"
			}
			require.Equal(t, want, card.Endpoint)
			require.Equal(t, tc.protocol, card.Protocol)
		})
	}
}

// check --connect reads the harness's cards and shows what the gateway would use; a
// wrong url says which key to fix.
func TestProbeShowsTheCard(t *testing.T) {
	h := harness.Get(t)
	ctx := context.Background()
	line, err := a2a.Probe(ctx, nil, a2a.Config{URL: h.URL + "/echo"}, 5*time.Second, "agents[0].target")
	require.NoError(t, err)
	require.Equal(t, `agent card "echo 1.0.0": JSON-RPC at `+h.URL+`/… (A2A 1.0; streaming, push notifications)`, line)
	line, err = a2a.Probe(ctx, nil, a2a.Config{URL: h.URL + "/v03/ask/.well-known/agent-card.json", CallbackURL: "https://gw.example"}, 5*time.Second, "agents[0].target")
	require.NoError(t, err)
	require.Contains(t, line, "(A2A 0.3; streaming, push notifications); tasks push to https://gw.example")
	_, err = a2a.Probe(ctx, nil, a2a.Config{URL: h.URL + "/nobody"}, 5*time.Second, "agents[2].target")
	require.ErrorContains(t, err, "HTTP 404")
	require.ErrorContains(t, err, "check agents[2].target.url")
}

func TestConfigNamesItsKeys(t *testing.T) {
	err := a2a.Config{URL: "ftp://x", Busy: agent.Busy{High: "queue"}, CallbackURL: "https://gw.example/?k=1", PollInterval: time.Hour}.Validate()
	require.ErrorContains(t, err, "url: want an http(s) URL")
	require.ErrorContains(t, err, `busy.high: unknown choice "queue" (want wait or send)`)
	require.ErrorContains(t, err, "callback_url: want a base URL without user, query or fragment")
	require.ErrorContains(t, err, "poll_interval: 1h0m0s is outside 100ms to 1m0s")
	require.ErrorContains(t, a2a.Config{}.Validate(), "url: required for kind a2a")
	require.NoError(t, a2a.Config{URL: "https://agent.example/a2a", Busy: agent.Busy{Default: "send"}, CallbackURL: "https://gw.example/base"}.Validate())
	d := a2a.Config{URL: "https://agent.example/secret-path", CallbackURL: "https://gw.example"}.WithDefaults()
	require.Equal(t, agent.Busy{Default: a2a.BusyWait}, d.Busy)
	require.Equal(t, a2a.DefaultPushedPollInterval, d.PollInterval)
	require.Equal(t, "https://agent.example/…, busy wait, push to https://gw.example", d.Describe(), "no path: it may hold a credential")
	require.Equal(t, a2a.DefaultPollInterval, a2a.Config{URL: "https://a"}.WithDefaults().PollInterval)
	urgent := a2a.Config{URL: "https://a", Busy: agent.Busy{Urgent: a2a.BusySend}}.WithDefaults()
	require.Equal(t, a2a.BusySend, urgent.Busy.For("urgent"), "an urgent signal goes into the working task")
	require.Equal(t, a2a.BusyWait, urgent.Busy.For("high"), "the others wait for it to end")
	require.Equal(t, "https://a, busy wait, urgent send, polled every 5s", urgent.Describe())
}

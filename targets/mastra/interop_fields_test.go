package mastra_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/delivery"
	"github.com/signalgate/signalgate/deliverytest"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/service"
	"github.com/signalgate/signalgate/targets/mastra"
)

// storedMessage is the message Mastra's memory kept for id on thread k, as its memory
// API returns it (nil when there is none).
func storedMessage(t *testing.T, base string, k inbox.ThreadKey, id string) map[string]any {
	t.Helper()
	u := base + "/api/memory/threads/" + url.PathEscape(k.Thread) + "/messages?agentId=interopAgent&resourceId=" + url.QueryEscape(k.Resource)
	resp, err := http.Get(u)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var body struct {
		Messages []map[string]any `json:"messages"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
	for _, m := range body.Messages {
		if m["id"] == id {
			return m
		}
	}
	return nil
}

// TestRealMastraSignalFields: Mastra's signal fields sent to the gateway's agent API
// reach a real Mastra server as Mastra takes them: contents parts and providerOptions
// (kept in Mastra's memory as parts and providerMetadata), a state signal's value and
// delta (in its metadata, where Mastra's own state signals carry them), and a transient
// signal (the model sees it; neither Mastra's memory nor the gateway's log keeps it).
func TestRealMastraSignalFields(t *testing.T) {
	base := mastraServer(t, 100*time.Millisecond)
	cfg := agent.Config{ID: "support", Token: deliverytest.SupportToken,
		Target: agent.TargetConfig{Kind: mastra.Kind, Presence: mastra.PresenceSource, Timeout: 20 * time.Second, Settings: mastra.Config{URL: base, AgentID: "interopAgent"}}}
	var follower *mastra.Follower
	env := deliverytest.New(t, deliverytest.Config{Recovery: kept,
		RealClock: true,
		Agents:    []agent.Config{cfg},
		EnvRoutes: func(e *deliverytest.Env) map[string]delivery.Route {
			follower = mastra.NewFollower(cfg, e.Runs, e.Notify, service.Base{}, mastra.WithBackoff(50*time.Millisecond, time.Second))
			follower.TestSignals.Chunk.Init()
			tg, err := mastra.New(cfg, mastra.WithFollower(follower))
			require.NoError(t, err)
			return map[string]delivery.Route{"support": {Kind: mastra.Kind, Target: tg, Concurrency: 4}}
		},
	})
	require.NoError(t, follower.Start(context.Background()))
	t.Cleanup(func() { _ = follower.Stop(context.Background()) })

	finished := map[inbox.ThreadKey]bool{}
	waitFinish := func(k inbox.ThreadKey) {
		t.Helper()
		timeout := time.After(30 * time.Second)
		for !finished[k] {
			select {
			case c := <-follower.TestSignals.Chunk.C():
				if c.Type == "finish" {
					finished[c.Thread] = true
				}
			case <-timeout:
				t.Fatalf("no finish chunk on %s", k)
			}
		}
	}
	send := func(k inbox.ThreadKey, body string) map[string]any {
		t.Helper()
		var out map[string]any
		require.Equal(t, http.StatusOK, env.Do(http.MethodPost, env.ThreadURL(k, "/signals"), deliverytest.SupportToken, body, &out))
		require.Equal(t, "wake", out["action"])
		require.Equal(t, true, out["accepted"])
		return out
	}
	thread := func(id string) inbox.ThreadKey {
		return inbox.ThreadKey{Agent: "support", Resource: "acme", Thread: id}
	}

	kParts, kState, kTransient := thread("parts"), thread("state"), thread("transient")
	parts := send(kParts, `{"signal": {"type": "user", "contents": [{"type": "text", "text": "parts-one"}, {"type": "text", "text": "parts-two"}],
		"providerOptions": {"openai": {"user": "jane"}}}}`)
	state := send(kState, `{"signal": {"type": "state", "id": "todo", "cacheKey": "v1", "contents": "2 open", "value": {"open": 2}, "delta": [1]}}`)
	transient := send(kTransient, `{"signal": {"type": "user", "contents": "transient-ping", "transient": true}}`)
	for _, k := range []inbox.ThreadKey{kParts, kState, kTransient} {
		waitFinish(k)
	}

	msg := storedMessage(t, base, kParts, parts["id"].(string))
	require.NotNil(t, msg, "Mastra kept the signal")
	content := msg["content"].(map[string]any)
	var texts []string
	for _, p := range content["parts"].([]any) {
		if part := p.(map[string]any); part["type"] == "text" {
			texts = append(texts, part["text"].(string))
		}
	}
	require.Equal(t, []string{"parts-one", "parts-two"}, texts, "the parts as sent")
	require.Equal(t, map[string]any{"openai": map[string]any{"user": "jane"}}, content["providerMetadata"], "providerOptions reached Mastra")

	st := storedMessage(t, base, kState, state["id"].(string))
	require.NotNil(t, st)
	meta := st["content"].(map[string]any)["metadata"].(map[string]any)["signal"].(map[string]any)["metadata"].(map[string]any)
	require.Equal(t, map[string]any{"open": float64(2)}, meta["value"])
	require.Equal(t, []any{float64(1)}, meta["delta"])

	saw := false
	for _, p := range prompts(t, base) {
		for _, text := range p.userTexts() {
			saw = saw || strings.Contains(text, "transient-ping")
		}
	}
	require.True(t, saw, "the model saw the transient signal")
	require.Nil(t, storedMessage(t, base, kTransient, transient["id"].(string)), "Mastra kept no transient signal")
	for _, f := range env.Log(kTransient) {
		require.NotEqual(t, agent.EventSignal, f.Event, "nor did the gateway's log")
	}
}

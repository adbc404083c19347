// Package mastra reaches agents served by a Mastra server: signals go to the agent's
// signals route, people's messages to its send-message / queue-message routes, and a
// Follower learns presence from the thread stream (POST …/threads/subscribe), opening and
// closing gateway runs as Mastra runs start and end.
//
// Mastra does not deduplicate a repeated signal id: the dispatcher never sends a signal
// again once a target accepted it, but an answer lost after Mastra accepted (a timeout)
// is retried and may show twice.
package mastra

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/delivery"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/secret"
	"github.com/signalgate/signalgate/targets/httptarget"
)

// Target delivers to one Mastra agent.
type Target struct {
	cfg      server
	base     string // {url}/api/agents/{agent_id}
	client   *http.Client
	now      func() time.Time
	follower *Follower
	traces   trace.TracerProvider
}

var _ delivery.Target = (*Target)(nil)

// Option configures a Target.
type Option func(*Target)

// WithHTTPClient replaces the HTTP client.
func WithHTTPClient(c *http.Client) Option { return func(t *Target) { t.client = c } }

// WithFollower makes every delivery follow its thread's presence first, so the run a
// wake starts is seen from its first chunk.
func WithFollower(f *Follower) Option { return func(t *Target) { t.follower = f } }

// WithTracerProvider makes every request a client span of tp carrying its traceparent,
// which Mastra continues (default: tracing off). url.full shows no path: a Mastra URL's
// path may hold a credential, as a webhook URL's does.
func WithTracerProvider(tp trace.TracerProvider) Option { return func(t *Target) { t.traces = tp } }

// New builds the target of one mastra agent.
func New(cfg agent.Config, opts ...Option) (*Target, error) {
	srv, err := serverOf(cfg)
	if err != nil {
		return nil, err
	}
	t := &Target{cfg: srv, base: agentBase(srv.Config), client: &http.Client{}, now: time.Now}
	for _, o := range opts {
		o(t)
	}
	t.client = httptarget.Traced(t.client, t.traces)
	return t, nil
}

func agentBase(t Config) string {
	return strings.TrimRight(t.URL, "/") + "/api/agents/" + url.PathEscape(t.AgentID)
}

// wireSignal is a signal as Mastra's signals route takes it.
type wireSignal struct {
	ID         string           `json:"id"`
	Type       agent.SignalType `json:"type"`
	TagName    string           `json:"tagName"`
	Contents   any              `json:"contents"` // a string, or the sender's parts
	Attributes inbox.Attributes `json:"attributes"`
	Metadata   map[string]any   `json:"metadata"`
	CreatedAt  *time.Time       `json:"createdAt,omitempty"`
	// ProviderOptions and Transient pass through as the sender gave them.
	ProviderOptions map[string]any `json:"providerOptions,omitempty"`
	Transient       bool           `json:"transient,omitempty"`
}

// wireMessage is a message as the send-message / queue-message routes take it (they
// accept no id: the signal id travels in metadata).
type wireMessage struct {
	Contents   string           `json:"contents"`
	Attributes inbox.Attributes `json:"attributes"`
	Metadata   map[string]any   `json:"metadata"`
}

type behavior struct {
	Behavior      string         `json:"behavior"`
	StreamOptions map[string]any `json:"streamOptions,omitempty"`
}

type request struct {
	ResourceID string       `json:"resourceId"`
	ThreadID   string       `json:"threadId"`
	Signal     *wireSignal  `json:"signal,omitempty"`
	Message    *wireMessage `json:"message,omitempty"`
	IfActive   behavior     `json:"ifActive"`
	IfIdle     behavior     `json:"ifIdle"`
}

// MetadataSignalID is the metadata key carrying the gateway's signal id on messages.
const MetadataSignalID = "signalgateSignalId"

// Deliver sends d. A wake or a delivery into a run that Mastra meanwhile finished both
// start a run (ifIdle wake); persist never wakes or interrupts.
func (t *Target) Deliver(ctx context.Context, d agent.Handoff) (agent.Result, error) {
	if t.follower != nil {
		t.follower.Follow(ctx, d.Thread)
		if d.Behavior == agent.BehaviorWake && d.RunID != "" {
			// Before Mastra starts the run: its answer goes where this wake came from.
			t.follower.woken(d.Thread, d.RunID, d.ReplyTo)
		}
	}
	req := request{ResourceID: d.Thread.Resource, ThreadID: d.Thread.Thread,
		IfActive: behavior{Behavior: string(agent.BehaviorDeliver)}, IfIdle: behavior{Behavior: string(agent.BehaviorWake), StreamOptions: d.StreamOptions}}
	switch {
	case d.Behavior == agent.BehaviorPersist:
		req.IfActive.Behavior, req.IfIdle = string(agent.BehaviorPersist), behavior{Behavior: string(agent.BehaviorPersist)}
	case d.NoWake:
		// As Mastra sends a low-only summary: into the running loop, never a wake.
		req.IfIdle = behavior{Behavior: string(agent.BehaviorPersist)}
	}
	attrs := d.Signal.Attributes
	if attrs == nil {
		attrs = inbox.Attributes{}
	}
	meta := make(map[string]any, len(d.Signal.Metadata)+1)
	for k, v := range d.Signal.Metadata {
		meta[k] = v
	}
	path := "/signals"
	switch d.DeliverAs {
	case inbox.DeliverAsMessage, inbox.DeliverAsQueued:
		path = "/send-message"
		if d.DeliverAs == inbox.DeliverAsQueued {
			path = "/queue-message"
		}
		meta[MetadataSignalID] = d.Signal.ID
		req.Message = &wireMessage{Contents: d.Signal.Contents, Attributes: attrs, Metadata: meta}
	default:
		ws := &wireSignal{ID: d.Signal.ID, Type: d.Signal.Type, TagName: d.Signal.TagName, Contents: d.Signal.Contents,
			Attributes: attrs, Metadata: meta, ProviderOptions: d.Signal.ProviderOptions, Transient: d.Signal.Transient}
		if len(d.Signal.Parts) > 0 {
			ws.Contents = d.Signal.Parts
		}
		if !d.Signal.CreatedAt.IsZero() {
			ws.CreatedAt = &d.Signal.CreatedAt
		}
		req.Signal = ws
	}
	body, err := json.Marshal(req)
	if err != nil {
		return agent.Result{}, fmt.Errorf("encode signal %s: %w", d.Signal.ID, err)
	}
	_, res, err := httptarget.Post(ctx, t.client, t.base+path, secret.RevealMap(t.cfg.Headers), body, t.cfg.Timeout, t.now)
	return res, err
}

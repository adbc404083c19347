package slack

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"

	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/service"
)

// Reconnect backoff after slack-go's client gives up (it retries transient
// failures itself; it returns on rejected tokens).
const (
	socketMinBackoff = time.Second
	socketMaxBackoff = 5 * time.Minute
)

// SocketClient receives one connector's events over a Socket Mode WebSocket,
// maps them like HTTP deliveries and acknowledges each envelope only after its
// event is committed, so an event that could not be stored is redelivered.
type SocketClient struct {
	conn       *connector
	pipeline   *connectors.Pipeline
	log        *slog.Logger
	now        func() time.Time
	httpClient *http.Client
	ping       time.Duration
	minBackoff time.Duration
	maxBackoff time.Duration

	service.StartStop
}

// SocketOption configures a SocketClient.
type SocketOption func(*SocketClient)

// WithPingInterval sets how long without a ping from Slack before the client
// reconnects (slack-go's default is 30 s).
func WithPingInterval(d time.Duration) SocketOption { return func(s *SocketClient) { s.ping = d } }

// WithReconnectBackoff bounds the wait before reopening after slack-go gave up.
func WithReconnectBackoff(min, max time.Duration) SocketOption {
	return func(s *SocketClient) { s.minBackoff, s.maxBackoff = min, max }
}

// NewSocketClient builds the Socket Mode client of the named connector, which
// must have socket_mode: true. It shares the connector's name cache with h.
func NewSocketClient(h *Handler, name string, opts ...SocketOption) (*SocketClient, error) {
	conn, ok := h.conns[name]
	if !ok {
		return nil, fmt.Errorf("no slack connector named %q", name)
	}
	if !conn.cfg.SocketMode {
		return nil, fmt.Errorf("slack connector %q does not have socket_mode: true", name)
	}
	s := &SocketClient{
		conn:       conn,
		pipeline:   h.pipeline,
		log:        conn.log.With("transport", "socket_mode"),
		now:        h.now,
		httpClient: h.httpClient,
		minBackoff: socketMinBackoff,
		maxBackoff: socketMaxBackoff,
	}
	for _, o := range opts {
		o(s)
	}
	return s, nil
}

// SocketClients returns a client for every connector with socket_mode: true,
// ordered by name.
func (h *Handler) SocketClients(opts ...SocketOption) []*SocketClient {
	var out []*SocketClient
	for _, name := range slices.Sorted(maps.Keys(h.conns)) {
		if h.conns[name].cfg.SocketMode {
			s, _ := NewSocketClient(h, name, opts...) // cannot fail for a socket-mode connector
			out = append(out, s)
		}
	}
	return out
}

// Name is the connector's configured name.
func (s *SocketClient) Name() string { return s.conn.cfg.Name }

// Start runs the client in a goroutine until Stop (or ctx ends). Stop ends it; events
// not yet committed stay unacknowledged and are redelivered by Slack.
func (s *SocketClient) Start(ctx context.Context) error {
	return s.StartStop.Start(ctx, func(ctx context.Context) {
		if err := s.Run(ctx); err != nil {
			s.log.Error("socket mode client stopped", "error", err.Error())
		}
	})
}

// Run connects and processes events until ctx ends, reconnecting as needed.
// It returns nil when ctx ends.
func (s *SocketClient) Run(ctx context.Context) error {
	cfg := &s.conn.cfg
	apiOpts := []slack.Option{
		slack.OptionAppLevelToken(cfg.AppToken.Reveal()),
		slack.OptionHTTPClient(s.httpClient),
		slack.OptionLog(slogOutput{s.log}),
	}
	if cfg.APIURL != "" {
		apiOpts = append(apiOpts, slack.OptionAPIURL(cfg.APIURL))
	}
	smOpts := []socketmode.Option{socketmode.OptionLog(slogOutput{s.log})}
	if s.ping > 0 {
		smOpts = append(smOpts, socketmode.OptionPingInterval(s.ping))
	}
	sm := socketmode.New(slack.New(cfg.BotToken.Reveal(), apiOpts...), smOpts...)

	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { s.consume(ctx, sm) })
	s.connectLoop(ctx, sm)
	cancel()
	wg.Wait()
	return nil
}

// connectLoop keeps slack-go's client running until ctx ends.
func (s *SocketClient) connectLoop(ctx context.Context, sm *socketmode.Client) {
	delay := s.minBackoff
	for {
		started := time.Now()
		err := sm.RunContext(ctx)
		if ctx.Err() != nil {
			return
		}
		if time.Since(started) > s.maxBackoff {
			delay = s.minBackoff // it ran fine for a while; this is a new failure
		}
		s.log.Error("socket mode connection failed", "error", errString(err), "retry_in", delay.String())
		if !service.Sleep(ctx, delay) {
			return
		}
		delay = min(delay*2, s.maxBackoff)
	}
}

// consume handles the client's events one at a time, in arrival order.
func (s *SocketClient) consume(ctx context.Context, sm *socketmode.Client) {
	for {
		select {
		case <-ctx.Done():
			return
		case evt := <-sm.Events:
			s.handle(ctx, sm, evt)
		}
	}
}

func (s *SocketClient) handle(ctx context.Context, sm *socketmode.Client, evt socketmode.Event) {
	switch evt.Type {
	case socketmode.EventTypeEventsAPI:
		if evt.Request == nil {
			return
		}
		parsed, ok := evt.Data.(slackevents.EventsAPIEvent)
		if !ok {
			s.deliver(ctx, sm, evt.Request, nil, fmt.Errorf("unexpected event data %T", evt.Data))
			return
		}
		s.deliver(ctx, sm, evt.Request, &parsed, nil)
	case socketmode.EventTypeErrorBadMessage:
		// slack-go drops envelopes whose event it cannot parse (a malformed
		// block); read them ourselves so the message is not lost.
		bad, _ := evt.Data.(*socketmode.ErrorBadMessage)
		var req socketmode.Request
		if bad == nil || json.Unmarshal(bad.Message, &req) != nil ||
			req.Type != socketmode.RequestTypeEventsAPI || req.EnvelopeID == "" {
			s.log.Warn("unreadable socket mode message", "error", errString(errCause(bad)))
			return
		}
		s.deliver(ctx, sm, &req, nil, bad.Cause)
	case socketmode.EventTypeConnecting:
		s.log.Debug("connecting to slack")
	case socketmode.EventTypeConnected:
		s.log.Info("connected to slack")
	case socketmode.EventTypeHello:
		s.log.Debug("slack said hello")
	case socketmode.EventTypeDisconnect:
		s.log.Info("slack asked to reconnect")
	case socketmode.EventTypeConnectionError:
		s.log.Warn("slack connection error", "error", fmt.Sprint(evt.Data))
	case socketmode.EventTypeInvalidAuth:
		s.log.Error("slack rejected the app token")
	case socketmode.EventTypeIncomingError:
		s.log.Warn("slack socket read error", "error", fmt.Sprint(evt.Data))
	case socketmode.EventTypeErrorWriteFailed:
		s.log.Warn("acknowledgement not written; slack will redeliver", "error", fmt.Sprint(evt.Data))
	case socketmode.EventTypeInteractive, socketmode.EventTypeSlashCommand:
		s.log.Warn("interactive payloads and slash commands are not handled; not acknowledged",
			"type", string(evt.Type))
	}
}

// deliver stores one events_api envelope and acknowledges it after the commit.
func (s *SocketClient) deliver(ctx context.Context, sm *socketmode.Client, req *socketmode.Request, parsed *slackevents.EventsAPIEvent, parseErr error) {
	ev, items := s.conn.build(ctx, req.Payload, parsed, parseErr, VerifiedBySocketMode)
	ev.ReceivedAt = s.now().UTC()
	if req.RetryAttempt > 0 {
		ev.Headers = map[string]string{HeaderRetryNum: strconv.Itoa(req.RetryAttempt)}
		if req.RetryReason != "" {
			ev.Headers[HeaderRetryReason] = req.RetryReason
		}
	}
	out, err := s.conn.ingest(ctx, s.pipeline, ev, items)
	if err != nil {
		s.log.Error("event not stored; not acknowledged so slack redelivers", "event_id", ev.DeliveryID,
			"envelope_id", req.EnvelopeID, "error", err.Error())
		return
	}
	if err := sm.AckCtx(ctx, req.EnvelopeID, nil); err != nil {
		s.log.Warn("acknowledgement not sent; slack will redeliver (a duplicate)", "event_id", ev.DeliveryID,
			"envelope_id", req.EnvelopeID, "error", err.Error())
		return
	}
	s.log.Debug("event acknowledged", "event_id", ev.DeliveryID, "envelope_id", req.EnvelopeID,
		"status", string(out.Status), "duplicate", out.Duplicate, "records", out.Records)
}

func errCause(b *socketmode.ErrorBadMessage) error {
	if b == nil {
		return nil
	}
	return b.Cause
}

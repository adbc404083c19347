package slack

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/connectors/connectorstest"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/service"
)

// scriptedIngester wraps the fake inbox: it reports each attempt, can hold an
// attempt until released, and can fail.
type scriptedIngester struct {
	*connectorstest.Ingester
	attempts chan string

	mu   sync.Mutex
	err  error
	gate chan struct{}
}

func newScriptedIngester() *scriptedIngester {
	return &scriptedIngester{Ingester: connectorstest.NewIngester(), attempts: make(chan string, 16)}
}

func (s *scriptedIngester) set(err error, gate chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.err, s.gate = err, gate
}

func (s *scriptedIngester) Ingest(ctx context.Context, ev *inbox.Event, ns []inbox.Notification) (inbox.IngestResult, error) {
	s.mu.Lock()
	err, gate := s.err, s.gate
	s.mu.Unlock()
	s.attempts <- ev.DeliveryID // after reading the script, so the test may change it now
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return inbox.IngestResult{}, ctx.Err()
		}
	}
	if err != nil {
		return inbox.IngestResult{}, err
	}
	return s.Ingester.Ingest(ctx, ev, ns)
}

func (s *scriptedIngester) nextAttempt(t *testing.T) string {
	t.Helper()
	select {
	case id := <-s.attempts:
		return id
	case <-time.After(5 * time.Second):
		t.Fatal("no ingest attempt within 5s")
		return ""
	}
}

func newSocketClient(t *testing.T, ing connectors.Ingester) (*fakeSlack, *SocketClient) {
	t.Helper()
	f := newFakeSlack(t)
	cfg := Config{Name: "acme", SocketMode: true, AppToken: testAppToken, BotToken: testBotToken,
		APIURL: f.APIURL(), BotUserID: testBot}
	log := slog.New(slog.DiscardHandler)
	router, err := connectors.NewRouter(allSlackRoutes(), []string{"support"})
	require.NoError(t, err)
	h, err := NewHandler([]Config{cfg}, connectors.NewPipeline(router, ing, log), log, nil)
	require.NoError(t, err)
	clients := h.SocketClients(WithReconnectBackoff(10*time.Millisecond, 100*time.Millisecond))
	require.Len(t, clients, 1)
	sc := clients[0]
	assert.Equal(t, "acme", sc.Name())
	require.NoError(t, sc.Start(context.Background()))
	require.ErrorIs(t, sc.Start(context.Background()), service.ErrStarted, "a second Start fails")
	t.Cleanup(func() {
		require.NoError(t, sc.Stop(context.Background()))
		f.Close()
	})
	return f, sc
}

const ackWait = 5 * time.Second

func TestSocketModeAcksAfterCommit(t *testing.T) {
	ing := newScriptedIngester()
	gate := make(chan struct{})
	ing.set(nil, gate)
	f, _ := newSocketClient(t, ing)

	f.sendEnvelope("dbdd0ef3-1543-4f94-bfb4-133d0e6c1545", callback(t, "Ev01",
		appMention("C0001", "1700000000.000100", "<@U0BOT> is the deploy done?")), 0)
	assert.Equal(t, "Ev01", ing.nextAttempt(t))
	_, err := f.nextAck(200 * time.Millisecond)
	require.Error(t, err, "not acknowledged while the commit is pending")

	close(gate)
	id, err := f.nextAck(ackWait)
	require.NoError(t, err)
	assert.Equal(t, "dbdd0ef3-1543-4f94-bfb4-133d0e6c1545", id)

	call, ok := ing.Last()
	require.True(t, ok)
	assert.Equal(t, "Ev01", call.Event.DeliveryID)
	assert.Equal(t, "app_mention", call.Event.Type)
	require.Len(t, call.Notifications, 1)
	n := call.Notifications[0]
	assert.Equal(t, KindMention, n.Kind)
	assert.Equal(t, inbox.PriorityHigh, n.Priority)
	assert.Equal(t, "alice in #general: @Signal Bot is the deploy done?", n.Summary)
	assert.Equal(t, "T0001:C0001:1700000000.000100", n.DedupeKey)
	assert.Equal(t, "1700000000.000100", n.SourceID, "the message's ts")
	assert.Equal(t, VerifiedBySocketMode, n.Metadata[connectors.MetaVerifiedBy])
}

func TestSocketModeFailedIngestIsNotAcked(t *testing.T) {
	ing := newScriptedIngester()
	ing.set(errors.New("database is locked"), nil)
	f, _ := newSocketClient(t, ing)

	body := callback(t, "Ev01", messageEvent("D024BE91L", "im", "1355517523.000005", "Hello hello can you hear me?"))
	f.sendEnvelope("env-1", body, 0)
	assert.Equal(t, "Ev01", ing.nextAttempt(t))

	// Envelopes are processed in order, so had env-1 been acknowledged its ack
	// would arrive before env-2's.
	ing.set(nil, nil)
	f.sendEnvelope("env-2", callback(t, "Ev02", messageEvent("C0001", "channel", "1700000000.000200", "lunch?")), 0)
	assert.Equal(t, "Ev02", ing.nextAttempt(t))
	id, err := f.nextAck(ackWait)
	require.NoError(t, err)
	assert.Equal(t, "env-2", id, "the failed envelope was not acknowledged")

	// Slack redelivers the unacknowledged envelope; now it is stored and acknowledged.
	f.sendEnvelope("env-1", body, 1)
	assert.Equal(t, "Ev01", ing.nextAttempt(t))
	id, err = f.nextAck(ackWait)
	require.NoError(t, err)
	assert.Equal(t, "env-1", id)
	call, _ := ing.Last()
	assert.Equal(t, "Ev01", call.Event.DeliveryID)
	assert.False(t, call.Duplicate, "the first attempt stored nothing")
	assert.Equal(t, "1", call.Event.Headers[HeaderRetryNum])
	assert.Equal(t, "timeout", call.Event.Headers[HeaderRetryReason])
	require.Len(t, call.Notifications, 1)
	assert.Equal(t, "alice in a direct message: Hello hello can you hear me?", call.Notifications[0].Summary)
}

func TestSocketModeRedeliveryIsDuplicate(t *testing.T) {
	ing := newScriptedIngester()
	f, _ := newSocketClient(t, ing)
	body := callback(t, "Ev01", messageEvent("C0001", "channel", "1700000000.000100", "lunch?"))
	f.sendEnvelope("env-1", body, 0)
	id, err := f.nextAck(ackWait)
	require.NoError(t, err)
	require.Equal(t, "env-1", id)
	f.sendEnvelope("env-1b", body, 1)
	id, err = f.nextAck(ackWait)
	require.NoError(t, err)
	assert.Equal(t, "env-1b", id, "a duplicate is acknowledged too")
	calls := ing.Calls()
	require.Len(t, calls, 2)
	assert.True(t, calls[1].Duplicate)
}

func TestSocketModeMalformedBlockStillDelivered(t *testing.T) {
	// slack-go's socketmode client drops an envelope whose event it cannot parse;
	// the connector reads it itself and acknowledges after commit.
	ing := newScriptedIngester()
	f, _ := newSocketClient(t, ing)
	ev := with(messageEvent("C0001", "channel", "1700000000.000100", "hey <@U0BOT> the build is red"),
		"blocks", []any{map[string]any{"type": "section", "text": 5}})
	f.sendEnvelope("env-1", callback(t, "Ev01", ev), 0)
	id, err := f.nextAck(ackWait)
	require.NoError(t, err)
	assert.Equal(t, "env-1", id)
	call, _ := ing.Last()
	require.Len(t, call.Notifications, 1)
	assert.Equal(t, "alice in #general: hey @Signal Bot the build is red", call.Notifications[0].Summary)
}

func TestSocketClientStopsPromptly(t *testing.T) {
	ing := newScriptedIngester()
	f, sc := newSocketClient(t, ing)
	f.sendEnvelope("env-1", callback(t, "Ev01", messageEvent("C0001", "channel", "1700000000.000100", "lunch?")), 0)
	_, err := f.nextAck(ackWait)
	require.NoError(t, err)
	done := make(chan struct{})
	go func() {
		assert.NoError(t, sc.Stop(context.Background()))
		assert.NoError(t, sc.Stop(context.Background()), "stopping twice is fine")
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Stop did not return")
	}
}

func TestNewSocketClientErrors(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	h, err := NewHandler([]Config{testConfig()}, nil, log, nil)
	require.NoError(t, err)
	_, err = NewSocketClient(h, "acme")
	assert.EqualError(t, err, `slack connector "acme" does not have socket_mode: true`)
	_, err = NewSocketClient(h, "nope")
	assert.EqualError(t, err, `no slack connector named "nope"`)
	assert.Empty(t, h.SocketClients())
}

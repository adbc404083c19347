package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/service"
)

// NotifyChannel is the PostgreSQL channel thread changes are announced on.
const NotifyChannel = "signalgate_threads"

// Defaults of the PostgreSQL broker.
const (
	DefaultBrokerPoll = 2 * time.Second
	maxNotifyPayload  = 7900 // PostgreSQL refuses payloads of 8000 bytes and more
	notifyBatch       = 500
)

// PGBroker fans thread changes out across replicas sharing one PostgreSQL: Publish wakes
// this replica's subscribers at once and announces the thread with NOTIFY; a dedicated
// connection LISTENs and wakes local subscribers of threads other replicas changed.
//
// Notifications are a hint, never the data: frames are always read from the log. They
// are lost while the listener reconnects or when a replica dies between its commit and
// its NOTIFY, so the broker also polls the last seq of every locally subscribed thread
// and wakes those that moved, and wakes all of them after each reconnect.
type PGBroker struct {
	st     *DB
	dsn    string
	log    *slog.Logger
	local  *agent.LocalBroker
	origin string
	schema string // replicas of other deployments on the same database are ignored
	poll   time.Duration

	mu      sync.Mutex
	subs    map[inbox.ThreadKey]int   // local subscriptions per thread
	seqs    map[inbox.ThreadKey]int64 // last seq the poller saw
	pending map[inbox.ThreadKey]struct{}
	kick    chan struct{}
	reload  func() // see OnReload

	service.StartStop
}

var _ agent.Broker = (*PGBroker)(nil)

// BrokerOption configures a PGBroker.
type BrokerOption func(*PGBroker)

// WithBrokerPoll sets how often the fallback poll compares thread seqs.
func WithBrokerPoll(d time.Duration) BrokerOption { return func(b *PGBroker) { b.poll = d } }

// NewPGBroker builds a broker over st (a PostgreSQL store) that listens on its own
// connection to dsn.
func NewPGBroker(st *DB, dsn string, base service.Base, opts ...BrokerOption) *PGBroker {
	b := &PGBroker{
		st: st, dsn: dsn, log: base.Component("pg_broker").Logger, local: agent.NewLocalBroker(),
		origin: inbox.NewID(), poll: DefaultBrokerPoll, subs: map[inbox.ThreadKey]int{},
		seqs: map[inbox.ThreadKey]int64{}, pending: map[inbox.ThreadKey]struct{}{}, kick: make(chan struct{}, 1),
	}
	for _, o := range opts {
		o(b)
	}
	return b
}

// Start connects the listener and starts the sender and the poller. It fails when the
// first LISTEN fails; later connection losses are retried in the background.
func (b *PGBroker) Start(ctx context.Context) error {
	if b.st.driver != DriverPostgres {
		return errors.New("pg broker: storage driver is not postgres")
	}
	conn, err := b.listen(ctx)
	if err != nil {
		return err
	}
	err = b.StartStop.Start(ctx, func(ctx context.Context) { b.listenLoop(ctx, conn) }, b.sendLoop, b.pollLoop)
	if err != nil {
		_ = conn.Close(context.Background())
		return fmt.Errorf("pg broker: %w", err)
	}
	return nil
}

// Name names the broker in start and stop errors.
func (b *PGBroker) Name() string { return "stream broker" }

// Stop ends the goroutines and closes every subscription.
func (b *PGBroker) Stop(ctx context.Context) error {
	_ = b.StartStop.Stop(ctx) // the subscriptions close even when a goroutine is slow to end
	return b.local.Stop(ctx)
}

// Publish wakes local subscribers now and queues a NOTIFY for the other replicas.
func (b *PGBroker) Publish(k inbox.ThreadKey) {
	b.local.Publish(k)
	b.notify(k)
}

// PublishFrames hands a commit's frames to local subscribers in memory and queues a
// NOTIFY: the other replicas' subscribers read them from the log.
func (b *PGBroker) PublishFrames(k inbox.ThreadKey, frames []agent.Frame) {
	b.local.PublishFrames(k, frames)
	b.notify(k)
}

// SubscribeFrames registers a local subscriber of k taking frames in memory. It is
// known to the replica as any subscriber is: another replica's NOTIFY and the fallback
// poll wake it to read the log.
func (b *PGBroker) SubscribeFrames(k inbox.ThreadKey) (<-chan struct{}, <-chan *agent.Frame, func()) {
	wake, frames, unsub := b.local.SubscribeFrames(k)
	return wake, frames, b.register(k, unsub)
}

func (b *PGBroker) notify(k inbox.ThreadKey) {
	b.mu.Lock()
	b.pending[k] = struct{}{}
	b.mu.Unlock()
	select {
	case b.kick <- struct{}{}:
	default:
	}
}

// PublishLive hands a live-only frame to this replica's subscribers: a transient
// signal reaches the streams connected to the replica that accepted it.
func (b *PGBroker) PublishLive(k inbox.ThreadKey, f agent.Frame) { b.local.PublishLive(k, f) }

// SubscribeLive is this replica's live-only frames of k.
func (b *PGBroker) SubscribeLive(k inbox.ThreadKey) (<-chan agent.Frame, func()) {
	return b.local.SubscribeLive(k)
}

// Subscribe registers a local subscriber of k.
func (b *PGBroker) Subscribe(k inbox.ThreadKey) (<-chan struct{}, func()) {
	ch, unsub := b.local.Subscribe(k)
	return ch, b.register(k, unsub)
}

// register counts a local subscriber of k, which makes the replica wake it on another
// replica's NOTIFY and poll its thread; the returned func undoes both, once.
func (b *PGBroker) register(k inbox.ThreadKey, unsub func()) func() {
	b.mu.Lock()
	b.subs[k]++
	b.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			unsub()
			b.mu.Lock()
			if b.subs[k]--; b.subs[k] <= 0 {
				delete(b.subs, k)
				delete(b.seqs, k)
			}
			b.mu.Unlock()
		})
	}
}

type notifyPayload struct {
	Schema   string `json:"s"`
	Origin   string `json:"o"`
	Agent    string `json:"a"`
	Resource string `json:"r"`
	Thread   string `json:"t"`
}

func (b *PGBroker) listen(ctx context.Context) (*pgx.Conn, error) {
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(cctx, b.dsn)
	if err != nil {
		return nil, fmt.Errorf("pg broker: connect %s: %w", redactPostgresDSN(b.dsn), scrub(err, postgresSecrets(b.dsn)))
	}
	if _, err := conn.Exec(cctx, "LISTEN "+NotifyChannel+"; LISTEN "+ReloadChannel); err != nil {
		_ = conn.Close(context.Background())
		return nil, fmt.Errorf("pg broker: listen: %w", err)
	}
	var schema string
	if err := conn.QueryRow(cctx, "SELECT current_schema()").Scan(&schema); err != nil {
		_ = conn.Close(context.Background())
		return nil, fmt.Errorf("pg broker: current schema: %w", err)
	}
	b.mu.Lock()
	b.schema = schema
	b.mu.Unlock()
	return conn, nil
}

// listenLoop wakes local subscribers of announced threads; on a lost connection it
// wakes every local subscriber (announcements may have been missed) and reconnects.
func (b *PGBroker) listenLoop(ctx context.Context, conn *pgx.Conn) {
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		if conn == nil {
			var err error
			if conn, err = b.listen(ctx); err != nil {
				if ctx.Err() == nil {
					b.log.Warn("listener reconnect failed", "error", err.Error(), "retry_in", backoff.String())
				}
				if !service.Sleep(ctx, backoff) {
					return
				}
				backoff = min(backoff*2, 5*time.Second)
				continue
			}
			backoff = 100 * time.Millisecond
			b.log.Info("listener reconnected")
			b.wakeAll()
			b.reloadMissed()
		}
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			_ = conn.Close(context.Background())
			conn = nil
			if ctx.Err() != nil {
				return
			}
			b.log.Warn("listener connection lost", "error", err.Error())
			b.wakeAll()
			continue
		}
		if n.Channel == ReloadChannel {
			b.reloaded(n.Payload)
			continue
		}
		var p notifyPayload
		if json.Unmarshal([]byte(n.Payload), &p) != nil || p.Origin == b.origin {
			continue
		}
		k := inbox.ThreadKey{Agent: p.Agent, Resource: p.Resource, Thread: p.Thread}
		b.mu.Lock()
		_, ok := b.subs[k]
		ok = ok && p.Schema == b.schema
		b.mu.Unlock()
		if ok {
			b.local.Publish(k)
		}
	}
	if conn != nil {
		_ = conn.Close(context.Background())
	}
}

// sendLoop announces queued threads in batches over the store's pool.
func (b *PGBroker) sendLoop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-b.kick:
		}
		for {
			b.mu.Lock()
			payloads := make([]string, 0, min(len(b.pending), notifyBatch))
			for k := range b.pending {
				delete(b.pending, k)
				raw, _ := json.Marshal(notifyPayload{Schema: b.schema, Origin: b.origin, Agent: k.Agent, Resource: k.Resource, Thread: k.Thread})
				if len(raw) <= maxNotifyPayload { // longer keys are left to the poll
					payloads = append(payloads, string(raw))
				}
				if len(payloads) == notifyBatch {
					break
				}
			}
			more := len(b.pending) > 0
			b.mu.Unlock()
			if len(payloads) > 0 {
				if _, err := b.st.w.ExecContext(ctx, `SELECT pg_notify($1, p) FROM unnest($2::text[]) AS p`, NotifyChannel, payloads); err != nil && ctx.Err() == nil {
					// Other replicas catch up on their next poll.
					b.log.Warn("notify failed", "threads", len(payloads), "error", err.Error())
				}
			}
			if !more {
				break
			}
		}
	}
}

// pollLoop wakes local subscribers of threads whose last seq moved since the last
// poll, every poll interval: the safety net for announcements that never arrived.
func (b *PGBroker) pollLoop(ctx context.Context) {
	loop := service.Loop[struct{}]{
		Base: service.Base{Logger: b.log},
		Pass: func(ctx context.Context) (struct{}, bool, error) {
			err := b.pollOnce(ctx)
			if err != nil && ctx.Err() == nil {
				b.log.Warn("poll failed", "error", err.Error()) // a miss waits for the next poll
			}
			return struct{}{}, false, err
		},
		Interval:  b.poll,
		WaitFirst: true,
	}
	loop.Run(ctx)
}

func (b *PGBroker) pollOnce(ctx context.Context) error {
	b.mu.Lock()
	keys := make([]inbox.ThreadKey, 0, len(b.subs))
	for k := range b.subs {
		keys = append(keys, k)
	}
	b.mu.Unlock()
	for start := 0; start < len(keys); start += notifyBatch {
		chunk := keys[start:min(start+notifyBatch, len(keys))]
		agents, resources, threads := make([]string, len(chunk)), make([]string, len(chunk)), make([]string, len(chunk))
		for i, k := range chunk {
			agents[i], resources[i], threads[i] = k.Agent, k.Resource, k.Thread
		}
		rows, err := b.st.r.QueryContext(ctx, `SELECT t.agent, t.resource_id, t.thread_id, t.last_seq
			FROM threads t JOIN unnest($1::text[], $2::text[], $3::text[]) AS u(a, r, th)
			ON t.agent = u.a AND t.resource_id = u.r AND t.thread_id = u.th`, agents, resources, threads)
		if err != nil {
			return err
		}
		var moved []inbox.ThreadKey
		b.mu.Lock()
		for rows.Next() {
			var k inbox.ThreadKey
			var seq int64
			if err := rows.Scan(&k.Agent, &k.Resource, &k.Thread, &seq); err != nil {
				b.mu.Unlock()
				rows.Close()
				return err
			}
			if _, subscribed := b.subs[k]; subscribed && b.seqs[k] != seq {
				b.seqs[k] = seq
				moved = append(moved, k)
			}
		}
		b.mu.Unlock()
		err = rows.Err()
		rows.Close()
		if err != nil {
			return err
		}
		for _, k := range moved {
			b.local.Publish(k)
		}
	}
	return nil
}

func (b *PGBroker) wakeAll() {
	b.mu.Lock()
	keys := make([]inbox.ThreadKey, 0, len(b.subs))
	for k := range b.subs {
		keys = append(keys, k)
	}
	b.mu.Unlock()
	for _, k := range keys {
		b.local.Publish(k)
	}
}

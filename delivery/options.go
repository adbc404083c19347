package delivery

import (
	"context"
	"time"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/condition"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/service"
)

// Option configures a Dispatcher.
type Option func(*Dispatcher)

// WithRandom injects the jitter source (values in [0, 1)); it must be safe for
// concurrent use.
func WithRandom(rnd func() float64) Option { return func(d *Dispatcher) { d.rnd = rnd } }

// WithSummaryInterval paces the summaries of a thread (policy.summary_interval).
func WithSummaryInterval(iv time.Duration) Option {
	return func(d *Dispatcher) { d.initial.interval = iv }
}

// WithDetailedSummaries renders summaries' contents per kind and item
// (policy.summary_format: detailed) instead of Mastra's counts per source.
func WithDetailedSummaries(on bool) Option { return func(d *Dispatcher) { d.initial.detailed = on } }

// WithLease sets how long a claimed thread stays leased to this dispatcher.
func WithLease(l time.Duration) Option { return func(d *Dispatcher) { d.lease = l } }

// WithPollInterval bounds the sleep between passes (other replicas' writes do not wake
// this one).
func WithPollInterval(p time.Duration) Option { return func(d *Dispatcher) { d.poll = p } }

// WithBatch sets how many threads one pass claims, and how many run concurrently.
func WithBatch(threads, workers int) Option {
	return func(d *Dispatcher) { d.batch, d.workers = threads, workers }
}

// StreamOptionsPolicy gives the stream options of the policy's rules for a record when
// its signal is sent (inbox.Policy).
type StreamOptionsPolicy interface {
	StreamOptions(r inbox.Record, presence inbox.Presence, now time.Time) map[string]any
}

// WithStreamOptions resolves the policy's stream options (policy.rules[].stream_options)
// for the wakes of records.
func WithStreamOptions(p StreamOptionsPolicy) Option {
	return func(d *Dispatcher) { d.initial.options = p }
}

// WithReplyProvenance says which records' metadata.replyTo a delivery carries as where
// an answer goes (agent.Handoff.ReplyTo): only those p vouches for. Without it no
// delivery names a place (an automatic answer then goes to the thread's most recent
// origin the outbox trusts).
func WithReplyProvenance(p agent.ReplyProvenance) Option {
	return func(d *Dispatcher) { d.replyTo = p }
}

// WithSecrets lists strings redacted from stored errors (tokens, target secrets).
func WithSecrets(secrets []string) Option { return func(d *Dispatcher) { d.initial.secrets = secrets } }

// Kick wakes the dispatcher's loop: threads changed (new records, an idle transition, a
// target back up). It is built before the dispatcher, so the parts that tell it (the
// inbox, presence followers, the agent and admin APIs) need no dispatcher, and the
// dispatcher needs none of them.
type Kick struct{ k *service.Kick }

// NewKick builds a wake-up for one dispatcher (WithKick).
func NewKick() *Kick { return &Kick{service.NewKick()} }

// Notify wakes the loop. It never blocks (wake-ups coalesce); it matches
// inbox.WithChangeHook.
func (k *Kick) Notify([]inbox.ThreadKey) { k.k.Kick() }

// WithKick makes the loop wake on k's notifications.
func WithKick(k *Kick) Option { return func(d *Dispatcher) { d.kick = k } }

// Snoozes releases snoozed records whose time has come (inbox.Service.ReleaseSnoozed):
// each pass does it before its claim, so what it released goes out in the same pass.
type Snoozes interface {
	ReleaseSnoozed(ctx context.Context) (int, error)
}

// WithSnoozes makes every pass release due snoozed records first.
func WithSnoozes(s Snoozes) Option { return func(d *Dispatcher) { d.snoozes = s } }

// Releases releases records whose hold has ended (inbox.Service.ReleaseHeld).
type Releases interface {
	ReleaseHeld(ctx context.Context) (int, error)
}

// WithHolds makes every pass release records whose hold ended first, and ask h of
// every due record before sending it: a hold that began after the record was decided
// (a silence made since) holds it then. h may be nil (nothing held at the last moment).
func WithHolds(r Releases, h inbox.Holder) Option {
	return func(d *Dispatcher) { d.releases, d.holder = r, h }
}

// payloadHolder is a holder that reads the event's payload (a silence's `when`).
type payloadHolder interface{ UsesPayload() bool }

// holdDue takes out of rs the records a hold takes now (recorded in o as Held) and
// answers the rest.
func (d *Dispatcher) holdDue(o *Outcome, rs []inbox.Record, now time.Time) []inbox.Record {
	if d.holder == nil || len(rs) == 0 {
		return rs
	}
	p, ok := d.holder.(payloadHolder)
	payload := ok && p.UsesPayload()
	kept := rs[:0:0]
	for _, r := range rs {
		sub := r.Subject()
		if payload {
			sub.Payload = condition.DecodePayload(r.Payload)
		}
		h, held := d.holder.Held(sub, now)
		if !held {
			kept = append(kept, r)
			continue
		}
		o.Held = append(o.Held, Held{RecordID: r.ID, UpdatedAt: r.UpdatedAt, Coalesced: r.CoalescedCount, Hold: h,
			Reason: h.Reason + "; " + r.Reason})
	}
	return kept
}

// Observer is told what each committed pass did (the metrics).
type Observer interface {
	DeliveryAttempt(target, outcome string)
	SignalSent(target, action string)
}

// WithObserver reports committed attempts and signals to o.
func WithObserver(o Observer) Option { return func(d *Dispatcher) { d.obs = o } }

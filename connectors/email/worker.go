package email

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cenkalti/backoff/v5"
	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
	"go.opentelemetry.io/otel/trace"

	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/reply"
)

const (
	dialTimeout = 30 * time.Second
	// maxBackoff caps a backoff that gives up (returns backoff.Stop): mail keeps coming.
	maxBackoff = 5 * time.Minute
)

var errServerClosed = errors.New("connection closed by the server")

// worker owns one mailbox: one connection at a time, a cursor, a status.
type worker struct {
	p       *Poller
	mailbox string
	log     *slog.Logger
	// wake is signalled by EXISTS (new mail) while connected.
	wake    chan struct{}
	pollNow chan struct{}

	mu sync.Mutex
	st MailboxStatus
}

func newWorker(p *Poller, mailbox string) *worker {
	return &worker{
		p: p, mailbox: mailbox,
		log:     p.log.With("mailbox", mailbox),
		wake:    make(chan struct{}, 1),
		pollNow: make(chan struct{}, 1),
		st:      MailboxStatus{Mailbox: mailbox, State: StateStopped},
	}
}

func (w *worker) status() MailboxStatus {
	w.mu.Lock()
	defer w.mu.Unlock()
	st := w.st
	st.Connected = st.State.Connected()
	return st
}

func (w *worker) update(fn func(st *MailboxStatus)) {
	w.mu.Lock()
	fn(&w.st)
	w.mu.Unlock()
}

func (w *worker) setState(s State) { w.update(func(st *MailboxStatus) { st.State = s }) }

func (w *worker) recordError(err error) {
	now := w.p.now()
	w.update(func(st *MailboxStatus) { st.LastError, st.LastErrorAt = err.Error(), now })
}

// run connects, syncs and waits for mail until ctx ends, reconnecting with backoff.
func (w *worker) run(ctx context.Context) {
	defer w.update(func(st *MailboxStatus) { st.State, st.IdleActive = StateStopped, false })
	b := w.p.newBackoff()
	b.Reset()
	for ctx.Err() == nil {
		release, ok, err := w.p.lock.TryLock(ctx, w.p.StateConnector()+"/"+w.mailbox)
		if err == nil && !ok {
			w.setState(StateStandby)
			w.sleep(ctx, w.p.cfg.PollInterval)
			continue
		}
		if err == nil {
			err = w.session(ctx, b.Reset)
			if release != nil {
				release()
			}
		} else {
			err = fmt.Errorf("mailbox lock: %w", err)
		}
		if ctx.Err() != nil {
			return
		}
		w.recordError(err)
		if h := w.p.hooks.Disconnected; h != nil {
			h(w.mailbox, err)
		}
		d := b.NextBackOff()
		if d == backoff.Stop || d > maxBackoff {
			d = maxBackoff
		}
		w.log.Warn("imap session ended; reconnecting", "error", err.Error(), "retry_in", d.String())
		w.update(func(st *MailboxStatus) { st.State, st.IdleActive = StateBackoff, false; st.Reconnects++ })
		w.sleep(ctx, d)
	}
}

func (w *worker) sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

func (w *worker) dial() (*imapclient.Client, error) {
	return dialIMAP(w.p.cfg, w.p.tlsConfig(), &imapclient.UnilateralDataHandler{
		Mailbox: func(d *imapclient.UnilateralDataMailbox) {
			if d.NumMessages != nil {
				signal(w.wake)
			}
		},
	})
}

func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

func drain(ch chan struct{}) {
	select {
	case <-ch:
	default:
	}
}

// session runs one connection: login, select, then fetch and wait until an error.
// healthy is called after each complete fetch cycle (it resets the backoff).
func (w *worker) session(ctx context.Context, healthy func()) error {
	cfg := w.p.cfg
	w.setState(StateConnecting)
	c, err := w.dial()
	if err != nil {
		return fmt.Errorf("connect to %s: %w", cfg.Addr, err)
	}
	// Commands take no context: closing the connection is what interrupts them.
	stop := context.AfterFunc(ctx, func() { _ = c.Close() })
	defer func() {
		stop()
		_ = c.Close()
	}()
	if err := c.Login(cfg.Username, cfg.Password.Reveal()).Wait(); err != nil {
		return fmt.Errorf("login as %q: %w", cfg.Username, err)
	}
	sel, err := c.Select(w.mailbox, nil).Wait()
	if err != nil {
		return fmt.Errorf("select %q: %w", w.mailbox, err)
	}
	last, err := w.loadCursor(ctx, sel.UIDValidity, sel.UIDNext)
	if err != nil {
		return err
	}
	idle := cfg.useIdle() && c.Caps().Has(imap.CapIdle)
	w.log.Debug("mailbox selected", "uidvalidity", sel.UIDValidity, "messages", sel.NumMessages,
		"last_uid", last, "idle", idle)
	for {
		n, err := w.sync(ctx, c, sel.UIDValidity, &last)
		if h := w.p.hooks.Polled; h != nil {
			h(w.mailbox, n, err)
		}
		if err != nil {
			return err
		}
		healthy()
		if err := w.wait(ctx, c, idle); err != nil {
			return err
		}
	}
}

// loadCursor reads the committed cursor; a different UIDVALIDITY (or an unreadable
// cursor) starts from the beginning, and Message-ID dedupe keeps that idempotent.
// A mailbox seen for the first time starts at its beginning (initial_sync: all) or
// after its current last message (initial_sync: new, saved at once so mail arriving
// before the first event is not skipped after a restart).
func (w *worker) loadCursor(ctx context.Context, validity uint32, uidNext imap.UID) (uint32, error) {
	v, ok, err := w.p.cursors.ConnectorState(ctx, w.p.StateConnector(), w.mailbox)
	if err != nil {
		return 0, fmt.Errorf("read cursor: %w", err)
	}
	var last uint32
	if !ok && w.p.cfg.InitialSync == InitialSyncNew && uidNext > 0 {
		last = uint32(uidNext) - 1
		if err := w.p.cursors.SetConnectorState(ctx, w.p.StateConnector(), w.mailbox, formatCursor(validity, last)); err != nil {
			return 0, fmt.Errorf("save initial cursor: %w", err)
		}
		w.log.Info("first sync of the mailbox: skipping existing mail (initial_sync: new)", "last_uid", last)
	}
	if ok {
		cv, cu, perr := parseCursor(v)
		switch {
		case perr != nil:
			w.log.Warn("unreadable cursor; rescanning the mailbox", "cursor", v, "error", perr.Error())
		case cv != validity:
			w.log.Info("UIDVALIDITY changed; rescanning the mailbox", "old_uidvalidity", cv, "uidvalidity", validity)
		default:
			last = cu
		}
	}
	w.update(func(st *MailboxStatus) { st.UIDValidity, st.LastUID = validity, last })
	return last, nil
}

func formatCursor(validity, uid uint32) string { return fmt.Sprintf("%d:%d", validity, uid) }

func parseCursor(s string) (validity, uid uint32, err error) {
	a, b, ok := strings.Cut(s, ":")
	if !ok {
		return 0, 0, fmt.Errorf("cursor %q: want <uidvalidity>:<uid>", s)
	}
	v, err1 := strconv.ParseUint(a, 10, 32)
	u, err2 := strconv.ParseUint(b, 10, 32)
	if err := errors.Join(err1, err2); err != nil {
		return 0, 0, fmt.Errorf("cursor %q: %w", s, err)
	}
	return uint32(v), uint32(u), nil
}

// sync fetches and stores every message with a UID above *last, in UID order, one
// event per message so the cursor advances exactly with commits.
func (w *worker) sync(ctx context.Context, c *imapclient.Client, validity uint32, last *uint32) (int, error) {
	// Mail arriving after this point signals wake again and gets its own cycle.
	drain(w.wake)
	w.setState(StateSyncing)
	data, err := c.UIDSearch(&imap.SearchCriteria{
		UID: []imap.UIDSet{{imap.UIDRange{Start: imap.UID(*last + 1), Stop: 0}}},
	}, nil).Wait()
	if err != nil {
		return 0, fmt.Errorf("search new messages: %w", err)
	}
	var uids []uint32
	for _, u := range data.AllUIDs() {
		// "n:*" includes the highest UID even when it is below n.
		if uint32(u) > *last {
			uids = append(uids, uint32(u))
		}
	}
	slices.Sort(uids)
	stored := 0
	var span trace.Span
	if len(uids) > 0 {
		ctx, span = w.startFetch(ctx, len(uids))
	}
	for _, uid := range uids {
		if ctx.Err() != nil {
			endSpan(span, ctx.Err())
			return stored, ctx.Err()
		}
		ok, err := w.fetchAndStore(ctx, c, validity, uid)
		if err != nil {
			endSpan(span, err)
			return stored, err
		}
		if !ok {
			continue // expunged since the search
		}
		*last = uid
		stored++
		w.update(func(st *MailboxStatus) { st.LastUID = uid; st.Stored++ })
		w.afterIngest(c, uid)
	}
	endSpan(span, nil)
	now := w.p.now()
	w.update(func(st *MailboxStatus) { st.LastPoll = now })
	return stored, nil
}

// fetchAndStore fetches one message without setting \Seen and stores it with its
// cursor; false means the message no longer exists.
func (w *worker) fetchAndStore(ctx context.Context, c *imapclient.Client, validity, uid uint32) (stored bool, err error) {
	ctx, span := w.startMessage(ctx, uid)
	defer func() { endSpan(span, err) }()
	max := int64(w.p.cfg.MaxMessageBytes)
	section := &imap.FetchItemBodySection{Peek: true, Partial: &imap.SectionPartial{Offset: 0, Size: max}}
	msgs, err := c.Fetch(imap.UIDSetNum(imap.UID(uid)), &imap.FetchOptions{
		UID: true, RFC822Size: true, InternalDate: true, BodySection: []*imap.FetchItemBodySection{section},
	}).Collect()
	if err != nil {
		return false, fmt.Errorf("fetch uid %d: %w", uid, err)
	}
	var buf *imapclient.FetchMessageBuffer
	for _, m := range msgs {
		if uint32(m.UID) == uid {
			buf = m
		}
	}
	if buf == nil {
		return false, nil
	}
	raw := buf.FindBodySection(section)
	if raw == nil && len(buf.BodySection) > 0 {
		raw = buf.BodySection[0].Bytes
	}
	if int64(len(raw)) > max {
		raw = raw[:max]
	}
	truncated := buf.RFC822Size > int64(len(raw))
	parse := connectors.StartParse(ctx)
	ev, items := w.event(raw, truncated, validity, uid, buf.InternalDate)
	connectors.EndParse(parse, ev.Type, len(items))
	if err := w.markOwn(ctx, ev, items); err != nil {
		return false, fmt.Errorf("uid %d: %w", uid, err)
	}
	out, err := w.p.pipeline.Ingest(ctx, ev, items)
	if err != nil {
		return false, fmt.Errorf("store uid %d: %w", uid, err)
	}
	w.log.DebugContext(ctx, "message stored", "uid", uid, "delivery_id", ev.DeliveryID, "event_id", out.EventID,
		"status", string(out.Status), "duplicate", out.Duplicate, "records", out.Records)
	return true, nil
}

// markOwn skips a message that is one of the gateway's own replies (by its
// Message-ID, recorded or of the derived form from our address), whatever else would
// apply to it.
func (w *worker) markOwn(ctx context.Context, ev *inbox.Event, items []connectors.Item) error {
	id := ev.Headers["Message-Id"]
	if w.p.own == nil || id == "" || len(items) == 0 {
		return nil
	}
	own := w.p.cfg.markedOwn(id, ev.Headers["From"])
	if !own {
		var err error
		if own, err = w.p.own.OwnReply(ctx, Source, w.p.cfg.Name, id); err != nil {
			return fmt.Errorf("check for an own reply: %w", err)
		}
	}
	if own {
		for i := range items {
			items[i].Skip = reply.OwnReason
		}
	}
	return nil
}

// event builds the inbox event and items of one fetched message. A message over a
// parse limit (or empty) becomes an invalid event so the mailbox moves on.
func (w *worker) event(raw []byte, truncated bool, validity, uid uint32, internal time.Time) (*inbox.Event, []connectors.Item) {
	ev := &inbox.Event{
		Source:    Source,
		Connector: w.p.cfg.Name,
		Type:      EventType,
		Body:      raw,
		Headers: map[string]string{
			HeaderMailbox:     w.mailbox,
			HeaderUID:         strconv.FormatUint(uint64(uid), 10),
			HeaderUIDValidity: strconv.FormatUint(uint64(validity), 10),
		},
		ReceivedAt: w.p.now().UTC(),
		Checkpoint: &inbox.Checkpoint{Connector: w.p.StateConnector(), Key: w.mailbox, Value: formatCursor(validity, uid)},
	}
	if truncated {
		ev.Headers[HeaderTruncated] = "true"
	}
	if !internal.IsZero() {
		ev.Headers[HeaderInternalDate] = internal.UTC().Format(time.RFC3339)
	}
	m, err := parseMessage(raw, truncated, w.p.now)
	if err != nil {
		ev.DeliveryID = deliveryID(rawMessageID(raw), raw, validity, uid, w.mailbox)
		ev.Status = inbox.EventInvalid
		ev.Error = "unparseable message: " + err.Error()
		w.log.Warn("unparseable message stored as invalid", "uid", uid, "error", err.Error())
		return ev, nil
	}
	ev.DeliveryID = deliveryID(m.MessageID, raw, validity, uid, w.mailbox)
	if m.MessageID != "" {
		ev.Headers["Message-Id"] = m.MessageID
	}
	if m.Subject != "" {
		ev.Headers["Subject"] = m.Subject
	}
	if m.FromRaw != "" {
		ev.Headers["From"] = m.FromRaw
	}
	if notes := m.Notes.all(); len(notes) > 0 {
		ev.Headers[HeaderParseNotes] = cut(strings.Join(notes, "; "), maxNotesHeader)
	}
	it := w.p.cfg.item(m, w.mailbox, uid, ev.DeliveryID)
	it.OccurredAt = occurredAt(internal, m)
	return ev, []connectors.Item{it}
}

// deliveryID is the Message-ID; without one, a digest of the raw message, which
// (unlike a UID) survives a UIDVALIDITY change, so a rescan still finds duplicates;
// "<uidvalidity>:<uid>@<mailbox>" only when the server returned no bytes at all.
func deliveryID(messageID string, raw []byte, validity, uid uint32, mailbox string) string {
	switch {
	case messageID != "":
		return messageID
	case len(raw) > 0:
		return "sha256:" + inbox.Digest(raw)
	}
	return fmt.Sprintf("%d:%d@%s", validity, uid, mailbox)
}

// afterIngest applies after_ingest to a committed message. A failure is logged and
// shown in the status; the message stays stored, so it is not retried.
func (w *worker) afterIngest(c *imapclient.Client, uid uint32) {
	set := imap.UIDSetNum(imap.UID(uid))
	var err error
	switch w.p.after {
	case AfterIngestSeen:
		err = c.Store(set, &imap.StoreFlags{Op: imap.StoreFlagsAdd, Silent: true, Flags: []imap.Flag{imap.FlagSeen}}, nil).Close()
	case "move":
		_, err = c.Move(set, w.p.moveTo).Wait()
	default:
		return
	}
	if err != nil {
		err = fmt.Errorf("after_ingest %s on uid %d: %w", w.p.cfg.AfterIngest, uid, err)
		w.recordError(err)
		w.log.Warn("after_ingest failed", "uid", uid, "error", err.Error())
	}
}

// wait blocks until there may be new mail: EXISTS during IDLE, the poll interval
// (a safety net even with IDLE), PollNow, or the end of the connection.
func (w *worker) wait(ctx context.Context, c *imapclient.Client, idle bool) error {
	timer := time.NewTimer(w.p.cfg.PollInterval)
	defer timer.Stop()
	if !idle {
		w.setState(StateWaiting)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-c.Closed():
			return errServerClosed
		case <-timer.C:
		case <-w.wake:
		case <-w.pollNow:
		}
		return nil
	}
	cmd, err := c.Idle()
	if err != nil {
		return fmt.Errorf("start IDLE: %w", err)
	}
	w.update(func(st *MailboxStatus) { st.State, st.IdleActive = StateIdle, true })
	if h := w.p.hooks.Idling; h != nil {
		h(w.mailbox)
	}
	var ended error
	select {
	case <-ctx.Done():
		ended = ctx.Err()
	case <-c.Closed():
		ended = errServerClosed
	case <-timer.C:
	case <-w.wake:
	case <-w.pollNow:
	}
	w.update(func(st *MailboxStatus) { st.IdleActive = false })
	if ended != nil {
		return ended
	}
	if err := cmd.Close(); err != nil {
		return fmt.Errorf("end IDLE: %w", err)
	}
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("IDLE: %w", err)
	}
	return nil
}

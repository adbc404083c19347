package email

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/inbox"
)

// Headers stored with every message event: where the message was read.
const (
	HeaderMailbox     = "X-Imap-Mailbox"
	HeaderUID         = "X-Imap-Uid"
	HeaderUIDValidity = "X-Imap-Uidvalidity"
	HeaderTruncated   = "X-Signalgate-Truncated"
	// HeaderInternalDate is the server's INTERNALDATE of the message (RFC 3339): when
	// it arrived, which a watch compares with its creation.
	HeaderInternalDate = "X-Imap-Internaldate"
	// HeaderParseNotes lists what lenient reading skipped or repaired ("; "-separated).
	HeaderParseNotes = "X-Signalgate-Parse-Notes"
)

// maxNotesHeader bounds the parse notes header.
const maxNotesHeader = 2 << 10

// Items parses a stored or sample message event (the raw RFC 822 message in its body)
// back into its item with the connector's config, without IMAP: replay and explain use
// it. The mailbox and UID come from the X-Imap-* headers when present.
func Items(cfg Config, ev *inbox.Event) ([]connectors.Item, error) {
	cfg = cfg.WithDefaults()
	mailbox := connectors.Header(ev.Headers, HeaderMailbox)
	if mailbox == "" {
		mailbox = cfg.Mailboxes[0]
	}
	uid := headerUint32(ev.Headers, HeaderUID)
	validity := headerUint32(ev.Headers, HeaderUIDValidity)
	// Replay and explain run on an operator's request: the wall clock is their budget's.
	m, err := parseMessage(ev.Body, connectors.Header(ev.Headers, HeaderTruncated) == "true", time.Now)
	if err != nil {
		return nil, fmt.Errorf("unparseable message: %w", err)
	}
	id := ev.DeliveryID
	if id == "" {
		id = deliveryID(m.MessageID, ev.Body, validity, uid, mailbox)
	}
	it := cfg.item(m, mailbox, uid, id)
	internal, _ := time.Parse(time.RFC3339, connectors.Header(ev.Headers, HeaderInternalDate))
	it.OccurredAt = occurredAt(internal, m)
	return []connectors.Item{it}, nil
}

// occurredAt is when the message arrived: the server's INTERNALDATE, else its Date
// header (a sender's claim, the only time there is then).
func occurredAt(internal time.Time, m *message) time.Time {
	if !internal.IsZero() {
		return internal.UTC()
	}
	if !m.Date.IsZero() {
		return m.Date.UTC()
	}
	return time.Time{}
}

func headerUint32(h map[string]string, name string) uint32 {
	n, _ := strconv.ParseUint(connectors.Header(h, name), 10, 32)
	return uint32(n)
}

// Parser is Items for every configured email connector, picked by the event's connector.
type Parser struct {
	cfgs map[string]Config
}

// NewParser indexes the connectors' configs by name.
func NewParser(cfgs []Config) *Parser {
	p := &Parser{cfgs: make(map[string]Config, len(cfgs))}
	for _, c := range cfgs {
		p.cfgs[c.Name] = c
	}
	return p
}

// Items parses ev with its connector's config.
func (p *Parser) Items(_ context.Context, ev *inbox.Event) ([]connectors.Item, error) {
	cfg, ok := p.cfgs[ev.Connector]
	if !ok {
		return nil, fmt.Errorf("no email connector named %q", ev.Connector)
	}
	return Items(cfg, ev)
}

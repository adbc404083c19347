package email

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/emersion/go-message/mail"

	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/reply"
)

// Source, kind and provenance of every item this connector makes.
const (
	Source     = "email"
	Kind       = "email"
	VerifiedBy = "imap-login"
	// EventType is the inbox event type of a fetched message.
	EventType = "message"
)

// Bounds on the text an item carries.
const (
	maxPayloadText = 64 << 10
	maxMessageText = 16 << 10
	maxSummarySubj = 160
)

// item maps a parsed message to the connector contract. deliveryID is the event's
// delivery id (Message-ID, or the fallback when there is none).
func (c Config) item(m *message, mailbox string, uid uint32, deliveryID string) connectors.Item {
	addr, name := "", ""
	if m.From != nil {
		addr = strings.ToLower(strings.TrimSpace(m.From.Address))
		name = strings.TrimSpace(m.From.Name)
	}
	priority, why := c.priority(m, addr)
	bot := m.AutoReason != ""

	attrs := inbox.Attributes{}
	if addr != "" {
		attrs = attrs.Set("from", addr)
	}
	if m.Subject != "" {
		attrs = attrs.Set("subject", m.Subject)
	}
	attrs = attrs.Set("mailbox", mailbox)
	if m.MessageID != "" {
		attrs = attrs.Set("message_id", m.MessageID)
	}

	meta := map[string]any{
		connectors.MetaVerifiedBy:  VerifiedBy,
		connectors.MetaAuthor:      addr,
		connectors.MetaAuthorIsBot: bot,
		"delivery_id":              deliveryID,
	}
	if why != "" {
		meta["priority_reason"] = why
	}
	if addr != "" {
		// Where an answer goes: to the sender, threaded under this message.
		meta[reply.MetadataKey] = reply.NewTo(Source, c.Name, Place{Mailbox: mailbox,
			MessageID: m.MessageID, References: first(m.References), From: addr, Subject: m.Subject})
	}

	it := connectors.Item{
		Kind:        Kind,
		Priority:    priority,
		Summary:     summary(m, addr, name),
		DedupeKey:   deliveryID,
		CoalesceKey: conversationRoot(m, deliveryID),
		SourceID:    m.MessageID,
		Attributes:  attrs,
		Metadata:    meta,
		Fields: connectors.Fields{
			Source:    Source,
			Connector: c.Name,
			Kind:      Kind,
			Author:    addr,
			Mailbox:   mailbox,
			From:      addr,
			Subject:   m.Subject,
		},
		Message: &connectors.Message{
			Name: firstNonEmpty(name, addr, "unknown sender"),
			From: Source,
			Text: cut(m.Reply, maxMessageText),
		},
	}
	it.WatchResources = conversation(m)
	if bot && !c.DeliverAutoReplies {
		it.Skip = "automatic message (" + m.AutoReason + ")"
	}
	if b, err := json.Marshal(payload(m, mailbox, uid)); err == nil {
		it.Payload = b
	}
	return it
}

// conversation lists the Message-IDs a message's conversation is watched by: its own,
// In-Reply-To, and References' root and latest entries, at most
// connectors.MaxWatchResources in all (a long thread's middle is left out).
func conversation(m *message) []string {
	var ids []string
	add := func(id string) {
		if id != "" && len(ids) < connectors.MaxWatchResources && !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	add(m.MessageID)
	for _, id := range m.InReplyTo {
		add(id)
	}
	if n := len(m.References); n > 0 {
		add(m.References[0])
		for i := n - 1; i > 0 && len(ids) < connectors.MaxWatchResources; i-- {
			add(m.References[i])
		}
	}
	return ids
}

// priority: VIP senders are high; list and bulk mail is low whatever it claims
// (bulk senders like to mark everything urgent); otherwise X-Priority, Importance
// and Priority headers raise or lower the default medium.
func (c Config) priority(m *message, addr string) (inbox.Priority, string) {
	if c.isVIP(addr) {
		return inbox.PriorityHigh, "vip sender"
	}
	if m.ListID != "" {
		return inbox.PriorityLow, "mailing list"
	}
	if m.Precedence == "bulk" || m.Precedence == "list" || m.Precedence == "junk" {
		return inbox.PriorityLow, "Precedence: " + m.Precedence
	}
	switch xPriority(m.XPriority) {
	case 1, 2:
		return inbox.PriorityHigh, "X-Priority: " + m.XPriority
	case 4, 5:
		return inbox.PriorityLow, "X-Priority: " + m.XPriority
	}
	switch m.Importance {
	case "high":
		return inbox.PriorityHigh, "Importance: high"
	case "low":
		return inbox.PriorityLow, "Importance: low"
	}
	return inbox.PriorityMedium, ""
}

// xPriority reads "1", "1 (Highest)", "2 (High)"; 0 when absent or unreadable.
func xPriority(v string) int {
	f := strings.Fields(v)
	if len(f) == 0 {
		return 0
	}
	n, err := strconv.Atoi(f[0])
	if err != nil || n < 1 || n > 5 {
		return 0
	}
	return n
}

// conversationRoot is the first of References, else In-Reply-To, else the message itself.
func conversationRoot(m *message, deliveryID string) string {
	if len(m.References) > 0 {
		return m.References[0]
	}
	if len(m.InReplyTo) > 0 {
		return m.InReplyTo[0]
	}
	return deliveryID
}

// summary reads `Jane Doe <jane@example.com> wrote "Subject": excerpt…`.
func summary(m *message, addr, name string) string {
	who := "unknown sender"
	switch {
	case name != "" && addr != "":
		who = name + " <" + addr + ">"
	case addr != "":
		who = addr
	case name != "":
		who = name
	}
	subject := "(no subject)"
	if m.Subject != "" {
		subject = `"` + connectors.Truncate(m.Subject, maxSummarySubj) + `"`
	}
	s := who + " wrote " + subject
	if ex := connectors.Truncate(strings.Join(strings.Fields(m.Reply), " "), connectors.ExcerptLen); ex != "" {
		s += ": " + ex
	}
	switch n := m.AttachmentCount; n {
	case 0:
	case 1:
		s += " (1 attachment)"
	default:
		s += fmt.Sprintf(" (%d attachments)", n)
	}
	return s
}

type addressJSON struct {
	Name    string `json:"name,omitempty"`
	Address string `json:"address"`
}

func addresses(list []*mail.Address) []addressJSON {
	var out []addressJSON
	for _, a := range list {
		if a != nil {
			out = append(out, addressJSON{Name: a.Name, Address: strings.ToLower(a.Address)})
		}
	}
	return out
}

// payload is what an agent may ask for: headers that matter, the text, the
// attachment list. Attachment bytes stay in the stored raw event.
func payload(m *message, mailbox string, uid uint32) map[string]any {
	p := map[string]any{
		"mailbox": mailbox,
		"uid":     uid,
		"subject": m.Subject,
		"text":    cut(m.Text, maxPayloadText),
		"reply":   cut(m.Reply, maxPayloadText),
	}
	set := func(k string, v any, ok bool) {
		if ok {
			p[k] = v
		}
	}
	set("message_id", m.MessageID, m.MessageID != "")
	if m.From != nil {
		p["from"] = addressJSON{Name: m.From.Name, Address: strings.ToLower(m.From.Address)}
	} else {
		set("from_raw", m.FromRaw, m.FromRaw != "")
	}
	// Lists keep their first maxListed entries; a "_total" says how many there were.
	list := func(k string, n int, v any) {
		set(k, v, n > 0)
		set(k+"_total", n, n > maxListed)
	}
	list("to", len(m.To), addresses(first(m.To)))
	list("cc", len(m.Cc), addresses(first(m.Cc)))
	set("date", m.Date.UTC().Format(time.RFC3339), !m.Date.IsZero())
	list("in_reply_to", len(m.InReplyTo), first(m.InReplyTo))
	list("references", len(m.References), first(m.References))
	set("list_id", m.ListID, m.ListID != "")
	set("auto_submitted", m.AutoSubmitted, m.AutoSubmitted != "")
	set("automatic", m.AutoReason, m.AutoReason != "")
	set("x_priority", m.XPriority, m.XPriority != "")
	set("importance", m.Importance, m.Importance != "")
	set("html_converted", true, m.FromHTML)
	list("attachments", m.AttachmentCount, m.Attachments)
	set("truncated", true, m.Truncated)
	set("body_error", m.BodyError, m.BodyError != "")
	set("parse_notes", m.Notes.all(), len(m.Notes.List) > 0)
	return p
}

func first[T any](s []T) []T { return s[:min(len(s), maxListed)] }

// cut bounds s to n bytes on a rune boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !isRuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

func firstNonEmpty(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

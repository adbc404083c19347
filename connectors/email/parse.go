package email

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dimiro1/reply"
	gomessage "github.com/emersion/go-message"
	"github.com/emersion/go-message/charset"
	"github.com/emersion/go-message/mail"
	"github.com/emersion/go-message/textproto"
)

// Bounds on what one message contributes to memory and to the inbox.
const (
	maxTextBytes  = 1 << 20  // decoded text/plain or text/html read per part
	maxReplyInput = 16 << 10 // reply stripping compiles regexps per line (~5ms/KB); the reply comes first anyway
	maxSubject    = 998      // RFC 5322 line limit
)

// message is what the connector reads from one RFC 822 message.
type message struct {
	MessageID     string
	From          *mail.Address // nil when missing or unparseable
	FromRaw       string
	To, Cc        []*mail.Address
	Subject       string
	Date          time.Time
	InReplyTo     []string
	References    []string
	ListID        string
	Precedence    string
	AutoSubmitted string
	// AutoReason is why the message counts as automatic ("" when it does not).
	AutoReason string
	XPriority  string
	Importance string
	// Text is the body as plain text: text/plain when present, HTML converted otherwise.
	Text     string
	FromHTML bool
	// Reply is Text without quoted replies and signatures.
	Reply string
	// Attachments lists the first maxListed attachments; AttachmentCount counts all.
	Attachments     []attachment
	AttachmentCount int
	// Truncated is set when only the first max_message_bytes were fetched.
	Truncated bool
	// BodyError records a body that could not be read completely; headers are still used.
	BodyError string
	// Notes say what was skipped or repaired to read the message.
	Notes parseNotes
}

// maxNotes bounds the notes one message keeps.
const maxNotes = 20

// parseNotes collects what lenient reading skipped or repaired, bounded.
type parseNotes struct {
	List    []string
	Dropped int
}

func (n *parseNotes) add(format string, args ...any) {
	if len(n.List) >= maxNotes {
		n.Dropped++
		return
	}
	n.List = append(n.List, cut(cleanHeader(fmt.Sprintf(format, args...), ""), 200))
}

// all is the notes, with a last one counting those left out.
func (n *parseNotes) all() []string {
	if n.Dropped == 0 {
		return n.List
	}
	return append(slices.Clone(n.List), fmt.Sprintf("and %d more", n.Dropped))
}

type attachment struct {
	Name string `json:"name"`
	Type string `json:"type"`
	Size int64  `json:"size"`
}

// wordDecoder decodes RFC 2047 words in every charset go-message knows.
func wordDecoder() *mime.WordDecoder { return &mime.WordDecoder{CharsetReader: charset.Reader} }

// parseMessage reads raw RFC 822 bytes as leniently as a mail client: what cannot
// be read is skipped and noted, and a body that breaks off keeps what was read, so
// a sloppy sender's mail still reaches its thread. Only an empty message and one
// that exceeds a parse limit (errLimit) are errors. now is the clock of the budget.
func parseMessage(raw []byte, truncated bool, now func() time.Time) (*message, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, errors.New("empty message")
	}
	m := &message{Truncated: truncated}
	head, body := splitHeader(raw, &m.Notes)
	th, err := textproto.ReadHeader(bufio.NewReader(bytes.NewReader(head)))
	if err != nil {
		// splitHeader keeps only lines the reader accepts; never seen, but not fatal.
		m.Notes.add("header unreadable (%v): read without it", err)
		th = textproto.Header{}
	}
	b := newBudget(now)
	// An unknown charset or transfer encoding leaves the body as sent; still readable.
	e, _ := gomessage.New(gomessage.Header{Header: th}, b.reader(bytes.NewReader(body)))
	h := mail.Header{Header: e.Header}
	if h.Len() == 0 {
		m.Notes.add("no header fields")
	}
	bodyCharset := ""
	if _, params, err := h.ContentType(); err == nil {
		bodyCharset = params["charset"]
	}
	m.MessageID = messageID(&h)
	m.FromRaw = headerText(&h, "From", bodyCharset)
	if list, err := h.AddressList("From"); err == nil && len(list) > 0 {
		m.From = list[0]
	} else if addr := looseAddress(m.FromRaw); addr != "" {
		m.From = &mail.Address{Address: addr}
	}
	if m.From != nil {
		m.From.Name = cleanHeader(m.From.Name, bodyCharset)
	}
	m.To, _ = h.AddressList("To")
	m.Cc, _ = h.AddressList("Cc")
	m.Subject = truncateRunes(headerText(&h, "Subject", bodyCharset), maxSubject)
	m.Date, _ = h.Date()
	m.InReplyTo = msgIDList(&h, "In-Reply-To")
	m.References = msgIDList(&h, "References")
	m.ListID = cleanHeader(h.Get("List-Id"), bodyCharset)
	m.Precedence = strings.ToLower(strings.TrimSpace(h.Get("Precedence")))
	m.AutoSubmitted = strings.ToLower(strings.TrimSpace(h.Get("Auto-Submitted")))
	m.XPriority = strings.TrimSpace(h.Get("X-Priority"))
	m.Importance = strings.ToLower(strings.TrimSpace(h.Get("Importance")))
	m.AutoReason = autoReason(&h, m)

	if err := m.readBody(e, b); err != nil {
		if errors.Is(err, errLimit) {
			return nil, err
		}
		if !truncated {
			m.BodyError = err.Error()
		}
		if m.Text == "" {
			// The MIME structure is broken before any text: show the body as sent,
			// as a mail client does, rather than nothing.
			m.Text = strings.TrimSpace(strings.ReplaceAll(validUTF8(body[:min(len(body), maxTextBytes)], bodyCharset), "\r\n", "\n"))
			if !truncated {
				m.Notes.add("body structure unreadable: shown as sent")
			}
		}
	}
	src := cut(m.Text, maxReplyInput)
	m.Reply = strings.TrimSpace(reply.FromText(src))
	if m.Reply == "" {
		// A forward or a message that is all quote: the quote is the content.
		m.Reply = strings.TrimSpace(src)
	}
	return m, nil
}

// messageID reads Message-ID leniently: a malformed one is still an identifier.
func messageID(h *mail.Header) string {
	if id, err := h.MessageID(); err == nil && id != "" {
		return id
	}
	return strings.Trim(strings.TrimSpace(h.Get("Message-Id")), "<>")
}

func msgIDList(h *mail.Header, key string) []string {
	ids, err := h.MsgIDList(key)
	if err == nil || len(ids) > 0 {
		return ids
	}
	// Lenient fallback for ids without angle brackets.
	var out []string
	for f := range strings.FieldsSeq(h.Get(key)) {
		if f = strings.Trim(f, "<>,"); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// headerText decodes RFC 2047 words; raw 8-bit bytes are read in the body's charset
// (or Windows-1252), so a non-UTF-8 subject is decoded or replaced, never dropped.
func headerText(h *mail.Header, key, fallbackCharset string) string {
	v := h.Get(key)
	if dec, err := wordDecoder().DecodeHeader(v); err == nil {
		v = dec
	}
	return cleanHeader(v, fallbackCharset)
}

// cleanHeader makes a header value valid single-line UTF-8.
func cleanHeader(v, fallbackCharset string) string {
	v = validUTF8([]byte(v), fallbackCharset)
	return strings.Join(strings.Fields(v), " ")
}

// validUTF8 returns b as UTF-8: as is when valid, else decoded from cs (or
// Windows-1252, the usual culprit), else with invalid bytes replaced.
func validUTF8(b []byte, cs string) string {
	if utf8.Valid(b) {
		return string(b)
	}
	for _, name := range []string{cs, "windows-1252"} {
		if name == "" || strings.EqualFold(name, "utf-8") || strings.EqualFold(name, "us-ascii") {
			continue
		}
		if r, err := charset.Reader(name, bytes.NewReader(b)); err == nil {
			if out, err := io.ReadAll(r); err == nil && utf8.Valid(out) {
				return string(out)
			}
		}
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

var looseAddr = regexp.MustCompile(`[^\s<>"(),;:@]+@[^\s<>"(),;:@]+`)

// looseAddress finds something address-shaped in a From that does not parse.
func looseAddress(s string) string { return looseAddr.FindString(s) }

// autoReason reports why a message is automatic: an auto-reply, a bounce or other
// machine-submitted mail (RFC 3834 and the headers common responders set).
func autoReason(h *mail.Header, m *message) string {
	switch {
	case m.AutoSubmitted != "" && m.AutoSubmitted != "no":
		return "Auto-Submitted: " + m.AutoSubmitted
	case h.Has("X-Autoreply") || h.Has("X-Autorespond"):
		return "auto-responder header"
	case m.Precedence == "auto_reply":
		return "Precedence: auto_reply"
	case strings.TrimSpace(h.Get("Return-Path")) == "<>":
		return "null return path (bounce)"
	}
	if t, params, err := h.ContentType(); err == nil && t == "multipart/report" {
		return "delivery report (" + params["report-type"] + ")"
	}
	return ""
}

// rawMessageID scans the header block for a Message-ID when the header as a whole
// does not parse, so an invalid message still dedupes across rescans.
func rawMessageID(raw []byte) string {
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	for sc.Scan() {
		line := sc.Text()
		if strings.TrimSpace(line) == "" {
			break
		}
		if k, v, ok := strings.Cut(line, ":"); ok && strings.EqualFold(strings.TrimSpace(k), "Message-Id") {
			id := strings.Trim(strings.TrimSpace(v), "<>")
			if id != "" && utf8.ValidString(id) && !strings.ContainsAny(id, " \t") {
				return id
			}
		}
	}
	return ""
}

func truncateRunes(s string, max int) string {
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	return string([]rune(s)[:max])
}

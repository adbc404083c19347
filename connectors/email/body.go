package email

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	gomessage "github.com/emersion/go-message"
	"github.com/inbucket/html2text"

	"github.com/signalgate/signalgate/connectors"
)

// Bounds on the MIME structure of one message. Each level of nesting adds a pass
// over the rest of the message (16,000 levels in 1 MB took minutes to read), and
// real mail nests a handful of levels, so the depth cap is what keeps a small
// message cheap; the deadline is the backstop for costs nobody foresaw.
const (
	maxDepth    = 32   // nested multipart entities
	maxParts    = 1000 // entities in the whole tree
	parseBudget = 5 * time.Second
	// maxListed bounds each list a message contributes (attachments, recipients,
	// references); the totals stay exact.
	maxListed = 50
)

// errLimit marks a message that exceeds a parse limit. Such a message is stored as
// invalid and the mailbox moves on: reading it again would fail again.
var errLimit = errors.New("message exceeds a parse limit")

var errDeadline = fmt.Errorf("%w: not read within %s", errLimit, parseBudget)

// budget is the time one message may take to read. Every read of the raw bytes
// checks it, so go-message's work stops soon after it runs out.
type budget struct {
	now      func() time.Time
	deadline time.Time
	expired  bool
}

func newBudget(now func() time.Time) *budget {
	return &budget{now: now, deadline: now().Add(parseBudget)}
}

func (b *budget) check() error {
	if b.expired || b.now().After(b.deadline) {
		b.expired = true
		return errDeadline
	}
	return nil
}

func (b *budget) reader(r io.Reader) io.Reader { return &budgetReader{b: b, r: r} }

type budgetReader struct {
	b *budget
	r io.Reader
}

func (r *budgetReader) Read(p []byte) (int, error) {
	if err := r.b.check(); err != nil {
		return 0, err
	}
	return r.r.Read(p)
}

// bodyText collects the candidate texts while walking.
type bodyText struct {
	plain, html         string
	havePlain, haveHTML bool
}

// readBody walks the MIME tree depth first within the limits: the first inline
// text/plain is the text, the first text/html the fallback, every other leaf is
// listed as an attachment without keeping its bytes. A limit is an errLimit; any
// other error leaves what was read so far in m.
func (m *message) readBody(root *gomessage.Entity, b *budget) error {
	var bt bodyText
	err := m.walk(root, b, &bt)
	if b.expired {
		return errDeadline
	}
	if errors.Is(err, errLimit) {
		return err
	}
	m.finishText(bt, b)
	return err
}

func (m *message) walk(root *gomessage.Entity, b *budget, bt *bodyText) error {
	for depth := 1; ; depth++ {
		inner := enclosed(root, false)
		if inner == nil {
			break
		}
		if depth >= maxDepth {
			return fmt.Errorf("%w: messages enclosed deeper than %d levels", errLimit, maxDepth)
		}
		root = inner
	}
	mr := multipartReader(root)
	if mr == nil {
		return m.leaf(root, bt)
	}
	stack := []level{{mr, isDigest(root)}}
	parts := 1
	for len(stack) > 0 {
		if err := b.check(); err != nil {
			return err
		}
		top := stack[len(stack)-1]
		p, err := top.r.NextPart()
		if err == io.EOF { // only a bare EOF ends a multipart; a wrapped one is a broken body
			stack = stack[:len(stack)-1]
			continue
		}
		// An unknown charset or encoding still yields a readable part.
		if p == nil || err != nil && !gomessage.IsUnknownCharset(err) && !gomessage.IsUnknownEncoding(err) {
			if err == nil {
				err = errors.New("unreadable part")
			}
			return fmt.Errorf("read body: %w", err)
		}
		if parts++; parts > maxParts {
			return fmt.Errorf("%w: more than %d MIME parts", errLimit, maxParts)
		}
		if inner := enclosed(p, top.digest); inner != nil {
			// A forwarded message is shown inline, as mail clients do: its parts are read
			// as parts of this one.
			p = inner
		}
		if pmr := multipartReader(p); pmr != nil {
			if len(stack) >= maxDepth {
				return fmt.Errorf("%w: multipart nested deeper than %d levels", errLimit, maxDepth)
			}
			stack = append(stack, level{pmr, isDigest(p)})
			continue
		}
		if err := m.leaf(p, bt); err != nil {
			return err
		}
	}
	return nil
}

// level is one open multipart while walking.
type level struct {
	r      gomessage.MultipartReader
	digest bool
}

func isDigest(e *gomessage.Entity) bool {
	t, _, _ := e.Header.ContentType()
	return t == "multipart/digest"
}

// multipartReader is the entity's parts, or nil when it has none to give: a
// multipart without a boundary is shown as text, as mail clients do.
func multipartReader(e *gomessage.Entity) gomessage.MultipartReader {
	if _, params, _ := e.Header.ContentType(); params["boundary"] == "" {
		return nil
	}
	return e.MultipartReader()
}

// enclosed is the message a message/rfc822 part carries, or nil when it is not one
// or its header does not read.
// In a multipart/digest, a part without a type is such a message (RFC 2046 §5.1.5).
func enclosed(p *gomessage.Entity, inDigest bool) *gomessage.Entity {
	t, _, _ := p.Header.ContentType()
	if t != "message/rfc822" && (!inDigest || p.Header.Has("Content-Type")) {
		return nil
	}
	inner, err := gomessage.Read(p.Body)
	if inner == nil || err != nil && !gomessage.IsUnknownCharset(err) && !gomessage.IsUnknownEncoding(err) {
		return nil
	}
	return inner
}

func (m *message) leaf(p *gomessage.Entity, bt *bodyText) error {
	t, params, _ := p.Header.ContentType()
	// RFC 2045 §5.2: a missing or unreadable type is text/plain; so is a multipart
	// that cannot be split.
	if !strings.Contains(t, "/") || strings.HasPrefix(t, "multipart/") {
		t = "text/plain"
	}
	disp, dparams, _ := p.Header.ContentDisposition()
	name := dparams["filename"]
	if name == "" {
		name = params["name"]
	}
	if name != "" {
		if dec, err := wordDecoder().DecodeHeader(name); err == nil {
			name = dec
		}
	}
	// A named text part is still the body unless it says attachment (mail clients show it).
	inline := disp != "attachment"
	switch {
	case inline && t == "text/plain" && !bt.havePlain, inline && t == "text/html" && !bt.haveHTML:
		b, rerr := io.ReadAll(io.LimitReader(p.Body, maxTextBytes))
		_, _ = io.Copy(io.Discard, p.Body)
		text := validUTF8(b, params["charset"])
		if t == "text/plain" {
			bt.plain, bt.havePlain = text, true
		} else {
			bt.html, bt.haveHTML = text, true
		}
		if rerr != nil {
			return fmt.Errorf("read %s part: %w", t, rerr)
		}
		return nil
	case strings.HasPrefix(t, "text/") && name == "" && disp != "attachment":
		_, err := io.Copy(io.Discard, p.Body) // a second text part of an alternative
		return err
	}
	return m.addAttachment(name, t, p.Body)
}

func (m *message) finishText(bt bodyText, b *budget) {
	plain := strings.ReplaceAll(bt.plain, "\r\n", "\n")
	switch {
	case bt.havePlain && strings.TrimSpace(plain) != "":
		m.Text = strings.TrimSpace(plain)
	case bt.haveHTML:
		text, err := htmlText(bt.html, b)
		if err != nil {
			m.Notes.add("html conversion failed (%v): tags stripped", err)
		}
		m.Text, m.FromHTML = strings.TrimSpace(text), true
	}
}

// htmlText converts HTML to text within the budget; when the conversion fails it
// falls back to stripping tags, so raw HTML never reaches a summary.
func htmlText(html string, b *budget) (text string, err error) {
	defer func() {
		if r := recover(); r != nil {
			text, err = connectors.PlainText(html), fmt.Errorf("panic: %v", r)
		}
	}()
	text, err = html2text.FromReader(b.reader(strings.NewReader(html)), html2text.Options{})
	if err != nil {
		return connectors.PlainText(html), err
	}
	return text, nil
}

func (m *message) addAttachment(name, typ string, body io.Reader) error {
	n, err := io.Copy(io.Discard, body)
	m.AttachmentCount++
	if len(m.Attachments) < maxListed {
		m.Attachments = append(m.Attachments, attachment{Name: cleanHeader(name, ""), Type: typ, Size: n})
	}
	if err != nil {
		return fmt.Errorf("read attachment %q: %w", name, err)
	}
	return nil
}

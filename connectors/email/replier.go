package email

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/emersion/go-message/mail"
	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"github.com/signalgate/signalgate/reply"
	"github.com/signalgate/signalgate/service"
)

// Bounds on what a reply puts in a message.
const (
	// MaxReplyBytes bounds a reply's text: mail has no fixed limit, but submission
	// servers commonly refuse messages over 10-25MB and a reply is prose.
	MaxReplyBytes = 1 << 20
	// maxReferences keeps the References header bounded on long conversations; the
	// first (the conversation's root) and the latest ids are what clients thread by.
	maxReferences = 20
	maxMsgIDLen   = 250
	smtpTimeout   = 2 * time.Minute
)

// ReplierOption configures a Replier.
type ReplierOption func(*Replier)

// WithReplierTLSConfig sets the base TLS config of the SMTP and IMAP connections
// (custom roots); ServerName and insecure_skip_verify still come from the config.
func WithReplierTLSConfig(c *tls.Config) ReplierOption {
	return func(r *Replier) { r.tlsBase = c.Clone() }
}

// Replier answers email notifications: a reply is submitted over SMTP from the
// connector's address, threaded under the message it answers, with a Message-ID
// derived from the reply, and optionally copied to the Sent folder over IMAP, where
// Find looks for it. It implements reply.Sender.
type Replier struct {
	conns   map[string]replyConn
	log     *slog.Logger
	now     func() time.Time
	tlsBase *tls.Config
}

type replyConn struct {
	cfg   Config // defaults applied
	index int    // in connectors.email, for error messages naming the key
}

var _ reply.Sender = (*Replier)(nil)

// NewReplier builds the sender over the configured email connectors (validated
// already, as the gateway's config load does).
func NewReplier(cfgs []Config, base service.Base, opts ...ReplierOption) *Replier {
	base = base.Component("reply_email")
	r := &Replier{conns: map[string]replyConn{}, log: base.Logger, now: base.Now}
	for i, c := range cfgs {
		r.conns[c.Name] = replyConn{cfg: c.WithDefaults(), index: i}
	}
	for _, o := range opts {
		o(r)
	}
	return r
}

// Check refuses what can never be sent: another source, an unknown connector, a
// connector without smtp, a replyTo without a usable address or with ids that would
// break the headers, text over MaxReplyBytes.
func (r *Replier) Check(to reply.To, text string) error {
	_, _, err := r.place(to, text)
	return err
}

func (r *Replier) place(to reply.To, text string) (replyConn, Place, error) {
	if to.Source != Source {
		return replyConn{}, Place{}, fmt.Errorf("%w: source %q is not email", reply.ErrUnknownPlace, to.Source)
	}
	c, ok := r.conns[to.Connector]
	if !ok {
		return replyConn{}, Place{}, fmt.Errorf("%w: no email connector %q", reply.ErrUnknownPlace, to.Connector)
	}
	if c.cfg.SMTP == nil {
		return replyConn{}, Place{}, fmt.Errorf("%w: connectors.email[%d].smtp is not set (connector %q)",
			reply.ErrNoCredentials, c.index, to.Connector)
	}
	p, err := reply.PlaceOf[Place](to)
	if err != nil {
		return replyConn{}, Place{}, fmt.Errorf("%w: %w", reply.ErrUnknownPlace, err)
	}
	if a, err := mail.ParseAddress(p.From); err != nil || a.Address != strings.TrimSpace(p.From) {
		return replyConn{}, Place{}, fmt.Errorf("%w: replyTo.from %q is not an address", reply.ErrUnknownPlace, p.From)
	}
	if p.MessageID != "" && !validMsgID(p.MessageID) {
		return replyConn{}, Place{}, fmt.Errorf("%w: replyTo.messageId %q is not a Message-ID", reply.ErrUnknownPlace, cut(p.MessageID, 80))
	}
	for i, id := range p.References {
		if !validMsgID(id) {
			return replyConn{}, Place{}, fmt.Errorf("%w: replyTo.references[%d] %q is not a Message-ID", reply.ErrUnknownPlace, i, cut(id, 80))
		}
	}
	if text = reply.NeutralizeMarkers(text); len(text) > MaxReplyBytes {
		return replyConn{}, Place{}, fmt.Errorf("%w: %d bytes, email replies take at most %d", reply.ErrTooLong, len(text), MaxReplyBytes)
	}
	if !utf8.ValidString(text) {
		return replyConn{}, Place{}, fmt.Errorf("%w: the text is not UTF-8", reply.ErrUnknownPlace)
	}
	return c, p, nil
}

// validMsgID accepts the id-left@id-right of a Message-ID without its angle
// brackets: printable ASCII, no spaces, brackets or quotes that would end the id
// (and no CR/LF that would start a new header field).
func validMsgID(id string) bool {
	if id == "" || len(id) > maxMsgIDLen || !strings.Contains(id, "@") {
		return false
	}
	for _, c := range id {
		if c <= ' ' || c > '~' || strings.ContainsRune(`<>"\`, c) {
			return false
		}
	}
	return true
}

// MessageID is the Message-ID (without angle brackets) of reply id in thread, on
// the from address's domain: the same reply always gets the same id, so Find can
// look it up and a resent copy is recognisably the same message.
func MessageID(r reply.Reply, from string) string {
	sum := sha256.Sum256([]byte(r.Thread.String() + "\x00" + r.ID))
	domain := "signalgate.invalid"
	if _, d, ok := strings.Cut(from, "@"); ok && d != "" {
		domain = d
	}
	return messageIDPrefix + hex.EncodeToString(sum[:16]) + "@" + domain
}

// messageIDPrefix starts every Message-ID MessageID derives.
const messageIDPrefix = "signalgate.reply."

// markedOwn reports whether a message is a copy of one of this connector's replies by
// its form alone: a Message-ID as MessageID derives it on the smtp.from domain, from
// the smtp.from address. The mail can arrive before the outbox records the id; a
// stranger's message with such a Message-ID but another From is not ours.
func (c *Config) markedOwn(messageID, fromRaw string) bool {
	if c.SMTP == nil {
		return false
	}
	ours, err := mail.ParseAddress(c.SMTP.From)
	if err != nil {
		return false
	}
	local, domain, ok := strings.Cut(messageID, "@")
	_, ourDomain, _ := strings.Cut(ours.Address, "@")
	sum, marked := strings.CutPrefix(local, messageIDPrefix)
	if !ok || !marked || !strings.EqualFold(domain, ourDomain) || len(sum) != 32 {
		return false
	}
	if _, err := hex.DecodeString(sum); err != nil {
		return false
	}
	from := looseAddress(fromRaw)
	if a, err := mail.ParseAddress(fromRaw); err == nil {
		from = a.Address
	}
	return strings.EqualFold(from, ours.Address)
}

// Send submits r over SMTP and then, when configured, appends the copy to the Sent
// folder. SMTP 5xx answers are permanent (retry false); 4xx and connection errors
// are worth retrying. A failed copy does not fail the reply: it was sent.
func (r *Replier) Send(ctx context.Context, rp reply.Reply) (reply.Sent, bool, error) {
	c, p, err := r.place(rp.To, rp.Text)
	if err != nil {
		return reply.Sent{}, false, err
	}
	from, err := mail.ParseAddress(c.cfg.SMTP.From)
	if err != nil {
		return reply.Sent{}, false, fmt.Errorf("connectors.email[%d].smtp.from: %w", c.index, err)
	}
	id := MessageID(rp, from.Address)
	raw, err := composeReply(rp, p, from, id, r.now())
	if err != nil {
		return reply.Sent{}, false, fmt.Errorf("compose the reply: %w", err)
	}
	if err := r.submit(ctx, c.cfg, from.Address, p.From, raw); err != nil {
		return reply.Sent{}, retryable(err), fmt.Errorf("submit the reply over SMTP to %s: %w", c.cfg.SMTP.Addr, err)
	}
	sent := reply.Sent{PlatformID: id}
	if c.cfg.SentFolder != "" && *c.cfg.AppendSent {
		if err := r.appendSent(ctx, c.cfg, raw); err != nil {
			r.log.Warn("reply sent but its copy was not saved in the Sent folder",
				"connector", c.cfg.Name, "sent_folder", c.cfg.SentFolder, "message_id", id, "error", err.Error())
		}
	}
	return sent, false, nil
}

// Find looks for r's Message-ID in the Sent folder. Without sent_folder there is
// nowhere to look: found is false, and the service sends again (with the same
// Message-ID, which mail clients show once).
func (r *Replier) Find(ctx context.Context, rp reply.Reply) (reply.Sent, bool, error) {
	c, _, err := r.place(rp.To, rp.Text)
	if err != nil {
		return reply.Sent{}, false, err
	}
	if c.cfg.SentFolder == "" {
		return reply.Sent{}, false, nil
	}
	from, err := mail.ParseAddress(c.cfg.SMTP.From)
	if err != nil {
		return reply.Sent{}, false, fmt.Errorf("connectors.email[%d].smtp.from: %w", c.index, err)
	}
	id := MessageID(rp, from.Address)
	found, err := r.searchSent(ctx, c.cfg, id)
	if err != nil || !found {
		return reply.Sent{}, false, err
	}
	return reply.Sent{PlatformID: id}, true, nil
}

// retryable: an SMTP 5xx answer is permanent; 4xx, a dropped connection, a
// timeout may pass.
func retryable(err error) bool {
	var se *smtp.SMTPError
	if errors.As(err, &se) {
		return se.Code < 500 || se.Code > 599
	}
	return true
}

// submit runs one SMTP transaction. The client takes no context: closing the
// connection is what interrupts it.
func (r *Replier) submit(ctx context.Context, cfg Config, from, to string, raw []byte) error {
	s := cfg.SMTP
	tc := r.tlsConfig(s.Addr, s.InsecureSkipVerify)
	d := &net.Dialer{Timeout: dialTimeout}
	var conn net.Conn
	var err error
	if *s.TLS {
		conn, err = (&tls.Dialer{NetDialer: d, Config: tc}).DialContext(ctx, "tcp", s.Addr)
	} else {
		conn, err = d.DialContext(ctx, "tcp", s.Addr)
	}
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
	defer func() {
		stop()
		_ = conn.Close()
	}()
	var c *smtp.Client
	if s.StartTLS {
		if c, err = smtp.NewClientStartTLS(conn, tc); err != nil {
			return fmt.Errorf("STARTTLS: %w", err)
		}
	} else {
		c = smtp.NewClient(conn)
	}
	c.CommandTimeout, c.SubmissionTimeout = smtpTimeout, smtpTimeout
	// A server that offers no AUTH (a relay trusting its network) is sent to without.
	if ok, _ := c.Extension("AUTH"); ok && s.Username != "" {
		var a sasl.Client
		if !c.SupportsAuth("PLAIN") && c.SupportsAuth("LOGIN") {
			a = sasl.NewLoginClient(s.Username, s.Password.Reveal())
		} else {
			a = sasl.NewPlainClient("", s.Username, s.Password.Reveal())
		}
		if err := c.Auth(a); err != nil {
			return fmt.Errorf("log in as %q: %w", s.Username, err)
		}
	}
	if err := c.SendMail(from, []string{to}, bytes.NewReader(raw)); err != nil {
		return ctxErr(ctx, err)
	}
	_ = c.Quit()
	return nil
}

func ctxErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%w (%w)", ctx.Err(), err)
	}
	return err
}

func (r *Replier) tlsConfig(addr string, insecure bool) *tls.Config {
	return tlsFor(r.tlsBase, addr, insecure)
}

// composeReply writes the reply as a text/plain message threaded under the one it
// answers: In-Reply-To its Message-ID, References its references plus it.
func composeReply(rp reply.Reply, to Place, from *mail.Address, id string, now time.Time) ([]byte, error) {
	var h mail.Header
	h.SetDate(now)
	h.SetAddressList("From", []*mail.Address{from})
	h.SetAddressList("To", []*mail.Address{{Address: strings.TrimSpace(to.From)}})
	h.SetSubject(replySubject(to.Subject))
	h.SetMessageID(id)
	if m := to.MessageID; m != "" {
		h.SetMsgIDList("In-Reply-To", []string{m})
		h.SetMsgIDList("References", references(to.References, m))
	}
	h.SetContentType("text/plain", map[string]string{"charset": "utf-8"})
	h.Set("Content-Transfer-Encoding", "quoted-printable")
	var buf bytes.Buffer
	w, err := mail.CreateSingleInlineWriter(&buf, h)
	if err != nil {
		return nil, err
	}
	// Marker text quoted in the reply is neutralised, as on every platform (an email's
	// own marker is its Message-ID, which text cannot set).
	if _, err := io.WriteString(w, reply.NeutralizeMarkers(rp.Text)); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// replySubject prefixes "Re: " unless the subject already starts with it (any case);
// control characters become spaces so the subject stays one header field.
func replySubject(s string) string {
	s = strings.Join(strings.FieldsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }), " ")
	s = truncateRunes(s, maxSubject-4)
	if len(s) >= 3 && strings.EqualFold(s[:3], "re:") {
		return "Re:" + s[3:]
	}
	if s == "" {
		return "Re:"
	}
	return "Re: " + s
}

// references is the answered message's references plus its id, without repeats,
// keeping the root and the latest when there are more than maxReferences.
func references(refs []string, id string) []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range append(append([]string{}, refs...), id) {
		if !seen[r] {
			seen[r] = true
			out = append(out, r)
		}
	}
	if len(out) > maxReferences {
		out = append(out[:1], out[len(out)-maxReferences+1:]...)
	}
	return out
}

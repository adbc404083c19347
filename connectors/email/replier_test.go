package email

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-message/mail"
	"github.com/emersion/go-smtp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/reply"
	"github.com/signalgate/signalgate/service"
)

// smtpBox is an in-process SMTP server (go-smtp's server) that keeps what it
// accepts. Like .ci/smtp_server.py, a recipient whose local part starts with
// reject-permanent gets 550 and reject-temporary 451.
type smtpBox struct {
	addr string
	mu   sync.Mutex
	msgs []smtpMsg
}

type smtpMsg struct {
	From string
	To   []string
	Raw  []byte
}

func newSMTPBox(t *testing.T) *smtpBox {
	t.Helper()
	b := &smtpBox{}
	srv := smtp.NewServer(b)
	srv.Domain = "localhost"
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	b.addr = ln.Addr().String()
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return b
}

func (b *smtpBox) NewSession(*smtp.Conn) (smtp.Session, error) { return &smtpSession{box: b}, nil }

func (b *smtpBox) all() []smtpMsg {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]smtpMsg(nil), b.msgs...)
}

type smtpSession struct {
	box *smtpBox
	msg smtpMsg
}

func (s *smtpSession) Reset()        { s.msg = smtpMsg{} }
func (s *smtpSession) Logout() error { return nil }
func (s *smtpSession) Mail(from string, _ *smtp.MailOptions) error {
	s.msg.From = from
	return nil
}

func (s *smtpSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	switch {
	case strings.HasPrefix(to, "reject-permanent"):
		return &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "mailbox unavailable"}
	case strings.HasPrefix(to, "reject-temporary"):
		return &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0}, Message: "try again later"}
	}
	s.msg.To = append(s.msg.To, to)
	return nil
}

func (s *smtpSession) Data(r io.Reader) error {
	raw, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s.msg.Raw = raw
	s.box.mu.Lock()
	s.box.msgs = append(s.box.msgs, s.msg)
	s.box.mu.Unlock()
	return nil
}

func replyConfig(smtpAddr string) Config {
	off := false
	c := testConfig("127.0.0.1:1")
	c.Username = "support@example.com"
	// From comes from the IMAP username; the in-process server offers no AUTH.
	c.SMTP = &SMTPConfig{Addr: smtpAddr, TLS: &off}
	return c
}

func testReply(id string) reply.Reply {
	return reply.Reply{
		ID:     id,
		Thread: inbox.ThreadKey{Agent: "support", Resource: "mail:support", Thread: "jane@example.com"},
		Text:   "Thanks, Jane — it is fixed.\n\nA long line " + strings.Repeat("é", 100) + "\n",
		To:     reply.NewTo("email", "support", Place{Mailbox: "INBOX", MessageID: "q-2@example.com", References: []string{"q-1@example.com"}, From: "jane@example.com", Subject: "Printer on fire"}),
	}
}

func testBase() service.Base { return service.Base{Now: func() time.Time { return testNow }} }

func newTestReplier(cfgs ...Config) *Replier { return NewReplier(cfgs, testBase()) }

// TestReplierCheck: what can never be sent is refused before it is queued, with
// the error kind the API maps to an answer and the key to fix named.
func TestReplierCheck(t *testing.T) {
	listenOnly := testConfig("127.0.0.1:1")
	listenOnly.Name = "listen"
	r := newTestReplier(replyConfig("127.0.0.1:1"), listenOnly)
	ok := testReply("r1").To
	require.NoError(t, r.Check(ok, "hello"))

	with := func(f func(*reply.To)) reply.To { to := ok; f(&to); return to }
	for name, tc := range map[string]struct {
		to   reply.To
		text string
		want error
		msg  string
	}{
		"another source":                 {with(func(to *reply.To) { to.Source = "slack" }), "x", reply.ErrUnknownPlace, `source "slack"`},
		"unknown connector":              {with(func(to *reply.To) { to.Connector = "nope" }), "x", reply.ErrUnknownPlace, `"nope"`},
		"no smtp":                        {with(func(to *reply.To) { to.Connector = "listen" }), "x", reply.ErrNoCredentials, "connectors.email[1].smtp"},
		"no address":                     {with(func(to *reply.To) { editPlace(to, func(p *Place) { p.From = "" }) }), "x", reply.ErrUnknownPlace, "replyTo.from"},
		"a second recipient smuggled in": {with(func(to *reply.To) { editPlace(to, func(p *Place) { p.From = "jane@example.com, boss@example.com" }) }), "x", reply.ErrUnknownPlace, "replyTo.from"},
		"header injection in messageId": {with(func(to *reply.To) {
			editPlace(to, func(p *Place) { p.MessageID = "q@example.com>\r\nBcc: victim@example.com" })
		}), "x", reply.ErrUnknownPlace, "replyTo.messageId"},
		"bad reference": {with(func(to *reply.To) {
			editPlace(to, func(p *Place) { p.References = []string{"ok@example.com", "no id"} })
		}), "x", reply.ErrUnknownPlace, "replyTo.references[1]"},
		"too long":  {ok, strings.Repeat("a", MaxReplyBytes+1), reply.ErrTooLong, "at most"},
		"not UTF-8": {ok, "\xff\xfe", reply.ErrUnknownPlace, "UTF-8"},
	} {
		t.Run(name, func(t *testing.T) {
			err := r.Check(tc.to, tc.text)
			require.ErrorIs(t, err, tc.want)
			assert.Contains(t, err.Error(), tc.msg)
			_, retry, err := r.Send(context.Background(), reply.Reply{ID: "x", To: tc.to, Text: tc.text})
			require.ErrorIs(t, err, tc.want, "Send refuses it too")
			assert.False(t, retry)
		})
	}
}

// TestReplierSendsThreadedReply: the message submitted is from the connector's
// address to the sender, threaded under the message it answers, with a Message-ID
// that is the same for the same reply.
func TestReplierSendsThreadedReply(t *testing.T) {
	box := newSMTPBox(t)
	r := newTestReplier(replyConfig(box.addr))
	rp := testReply("r1")
	// A subject carrying a header of its own stays one Subject field.
	editPlace(&rp.To, func(p *Place) { p.Subject = "Printer on fire\r\nBcc: victim@example.com" })
	sent, retry, err := r.Send(context.Background(), rp)
	require.NoError(t, err)
	assert.False(t, retry)
	assert.Equal(t, MessageID(rp, "support@example.com"), sent.PlatformID)
	assert.True(t, strings.HasPrefix(sent.PlatformID, "signalgate.reply."))
	assert.True(t, strings.HasSuffix(sent.PlatformID, "@example.com"))

	msgs := box.all()
	require.Len(t, msgs, 1)
	assert.Equal(t, "support@example.com", msgs[0].From)
	assert.Equal(t, []string{"jane@example.com"}, msgs[0].To)
	mr, err := mail.CreateReader(bytes.NewReader(msgs[0].Raw))
	require.NoError(t, err)
	h := mr.Header
	id, err := h.MessageID()
	require.NoError(t, err)
	assert.Equal(t, sent.PlatformID, id)
	subject, _ := h.Subject()
	assert.Equal(t, "Re: Printer on fire Bcc: victim@example.com", subject)
	assert.Empty(t, h.Get("Bcc"))
	irt, _ := h.MsgIDList("In-Reply-To")
	assert.Equal(t, []string{"q-2@example.com"}, irt)
	refs, _ := h.MsgIDList("References")
	assert.Equal(t, []string{"q-1@example.com", "q-2@example.com"}, refs)
	from, _ := h.AddressList("From")
	require.Len(t, from, 1)
	assert.Equal(t, "support@example.com", from[0].Address)
	p, err := mr.NextPart()
	require.NoError(t, err)
	body, err := io.ReadAll(p.Body)
	require.NoError(t, err)
	assert.Equal(t, strings.ReplaceAll(rp.Text, "\n", "\r\n"), string(body))

	// The same reply gets the same id; another reply, or the same id in another
	// thread, another.
	other := testReply("r2")
	elsewhere := testReply("r1")
	elsewhere.Thread.Thread = "bob@example.com"
	assert.Equal(t, sent.PlatformID, MessageID(testReply("r1"), "support@example.com"))
	assert.NotEqual(t, sent.PlatformID, MessageID(other, "support@example.com"))
	assert.NotEqual(t, sent.PlatformID, MessageID(elsewhere, "support@example.com"))
}

func TestReplySubject(t *testing.T) {
	for in, want := range map[string]string{
		"Printer on fire":      "Re: Printer on fire",
		"Re: Printer on fire":  "Re: Printer on fire",
		"RE: Printer on fire":  "Re: Printer on fire",
		"re:Printer":           "Re:Printer",
		"":                     "Re:",
		"  a\r\n\tb  ":         "Re: a b",
		"Fwd: Printer on fire": "Re: Fwd: Printer on fire",
	} {
		assert.Equal(t, want, replySubject(in), "%q", in)
	}
}

func TestReferencesBounded(t *testing.T) {
	var refs []string
	for i := range 50 {
		refs = append(refs, "m"+strings.Repeat("x", i%3)+string(rune('a'+i%26))+"-"+strings.Repeat("1", i)+"@example.com")
	}
	got := references(append(refs, refs[3]), "last@example.com")
	require.Len(t, got, maxReferences)
	assert.Equal(t, refs[0], got[0], "the root stays")
	assert.Equal(t, "last@example.com", got[len(got)-1], "the answered message comes last")
}

// TestReplierSMTPAnswers: 5xx is permanent, 4xx and a server that is not there
// are worth retrying; nothing is sent either way.
func TestReplierSMTPAnswers(t *testing.T) {
	box := newSMTPBox(t)
	r := newTestReplier(replyConfig(box.addr))
	for addr, wantRetry := range map[string]bool{
		"reject-permanent@example.com": false,
		"reject-temporary@example.com": true,
	} {
		rp := testReply("r-" + addr)
		editPlace(&rp.To, func(p *Place) { p.From = addr })
		_, retry, err := r.Send(context.Background(), rp)
		require.Error(t, err)
		var se *smtp.SMTPError
		require.True(t, errors.As(err, &se), "the SMTP answer is kept: %v", err)
		assert.Equal(t, wantRetry, retry, "%s: %v", addr, err)
	}
	assert.Empty(t, box.all())

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	gone := ln.Addr().String()
	require.NoError(t, ln.Close())
	_, retry, err := newTestReplier(replyConfig(gone)).Send(context.Background(), testReply("r1"))
	require.Error(t, err)
	assert.True(t, retry, "a connection error is transient: %v", err)
}

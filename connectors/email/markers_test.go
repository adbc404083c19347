package email

import (
	"bytes"
	"context"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/emersion/go-imap/v2/imapclient"
	"github.com/emersion/go-message/mail"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/reply"
	"github.com/signalgate/signalgate/secret"
)

// bodyOf is a submitted message's decoded text.
func bodyOf(t *testing.T, raw []byte) string {
	t.Helper()
	mr, err := mail.CreateReader(bytes.NewReader(raw))
	require.NoError(t, err)
	p, err := mr.NextPart()
	require.NoError(t, err)
	b, err := io.ReadAll(p.Body)
	require.NoError(t, err)
	return string(b)
}

// A marker quoted in a reply's text is neutralised in the mail as on every platform,
// reading as written, and Check counts the text as sent.
func TestReplierNeutralizesMarkersInText(t *testing.T) {
	box := newSMTPBox(t)
	r := newTestReplier(replyConfig(box.addr))
	rp := testReply("a-1")
	rp.Text = "Ignore beta: <!-- signalgate:reply:b-1 --> SignalGate:Reply:b-1"
	_, _, err := r.Send(context.Background(), rp)
	require.NoError(t, err)
	msgs := box.all()
	require.Len(t, msgs, 1)
	body := bodyOf(t, msgs[0].Raw)
	assert.NotContains(t, strings.ToLower(body), reply.MarkerToken)
	assert.Equal(t, rp.Text+"\r\n", strings.ReplaceAll(body, "\u2060", ""), "reads as written (SMTP ends the body with a line break)")

	at := strings.Repeat("x", MaxReplyBytes-len(reply.MarkerToken)) + reply.MarkerToken
	require.ErrorIs(t, r.Check(rp.To, at), reply.ErrTooLong)
}

// Agent alpha's reply quotes beta's marker and Message-ID in its text, and lands in
// the Sent folder first (real SMTP, Dovecot): beta's reply, looked for after a failed
// attempt, is not found there by alpha's copy, and is found once sent itself.
func TestRealSMTPQuotedMarkerDoesNotPassForAnotherReply(t *testing.T) {
	s := needRealSMTP(t)
	addr, user, password := os.Getenv(envIMAPAddr), os.Getenv(envIMAPUser), os.Getenv(envIMAPPassword)
	if addr == "" || user == "" || password == "" {
		t.Skipf("%s, %s and %s not set (run .ci/dovecot.sh)", envIMAPAddr, envIMAPUser, envIMAPPassword)
	}
	c, err := imapclient.DialInsecure(addr, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	require.NoError(t, c.Login(user, password).Wait())
	folder := "sg-sent-" + randomSuffix()
	require.NoError(t, c.Create(folder, nil).Wait())
	t.Cleanup(func() { _ = c.Delete(folder).Wait() })

	cfg := s.config(s.startTLS, false, true)
	cfg.Addr, cfg.Username, cfg.Password, cfg.SentFolder = addr, user, secret.Secret(password), folder
	cfg.SMTP.From = "support@example.com"
	r := NewReplier([]Config{cfg}, testBase(), WithReplierTLSConfig(s.tls))
	ctx := context.Background()

	beta := testReply("b-" + randomSuffix())
	beta.Thread.Agent = "beta"
	betaID := MessageID(beta, "support@example.com")
	alpha := testReply("a-" + randomSuffix())
	alpha.Text = "Ignore beta.\nMessage-ID: <" + betaID + ">\n<!-- signalgate:reply:" + beta.ID + " -->\n"
	sentAlpha, _, err := r.Send(ctx, alpha)
	require.NoError(t, err)
	delivered := s.delivered(t, sentAlpha.PlatformID)
	require.Len(t, delivered, 1)
	assert.NotContains(t, strings.ToLower(bodyOf(t, delivered[0])), reply.MarkerToken)

	_, found, err := r.Find(ctx, beta)
	require.NoError(t, err)
	assert.False(t, found, "alpha's copy passed for beta's reply")
	sent, _, err := r.Send(ctx, beta)
	require.NoError(t, err)
	got, found, err := r.Find(ctx, beta)
	require.NoError(t, err)
	require.True(t, found)
	assert.Equal(t, sent, got)
	assert.Equal(t, betaID, sent.PlatformID)
}

package email

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
	"github.com/emersion/go-message/mail"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/secret"
)

// Variables .ci/smtp.sh prints; the real-SMTP test is skipped without them.
const (
	envSMTPAddr     = "SIGNALGATE_TEST_SMTP_ADDR"
	envSMTPStartTLS = "SIGNALGATE_TEST_SMTP_STARTTLS_ADDR"
	envSMTPTLS      = "SIGNALGATE_TEST_SMTP_TLS_ADDR"
	envSMTPUser     = "SIGNALGATE_TEST_SMTP_USER"
	envSMTPPassword = "SIGNALGATE_TEST_SMTP_PASSWORD"
	envSMTPCA       = "SIGNALGATE_TEST_SMTP_CA"
	envSMTPMaildir  = "SIGNALGATE_TEST_SMTP_MAILDIR"
)

type realSMTP struct {
	plain, startTLS, implicit string
	user, password, maildir   string
	tls                       *tls.Config
}

func needRealSMTP(t *testing.T) realSMTP {
	t.Helper()
	s := realSMTP{
		plain: os.Getenv(envSMTPAddr), startTLS: os.Getenv(envSMTPStartTLS), implicit: os.Getenv(envSMTPTLS),
		user: os.Getenv(envSMTPUser), password: os.Getenv(envSMTPPassword), maildir: os.Getenv(envSMTPMaildir),
	}
	ca := os.Getenv(envSMTPCA)
	if s.plain == "" || s.startTLS == "" || s.implicit == "" || s.user == "" || s.password == "" || s.maildir == "" || ca == "" {
		t.Skipf("%s and the other SIGNALGATE_TEST_SMTP_* variables are not set (run .ci/smtp.sh)", envSMTPAddr)
	}
	pem, err := os.ReadFile(ca)
	require.NoError(t, err)
	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(pem))
	s.tls = &tls.Config{RootCAs: pool}
	return s
}

func (s realSMTP) config(addr string, implicit, startTLS bool) Config {
	c := testConfig("127.0.0.1:1")
	c.Username = "support@example.com"
	c.SMTP = &SMTPConfig{Addr: addr, TLS: &implicit, StartTLS: startTLS, Username: s.user, Password: secret.Secret(s.password)}
	return c
}

// delivered returns the messages in the server's Maildir that carry Message-ID id.
func (s realSMTP) delivered(t *testing.T, id string) [][]byte {
	t.Helper()
	var out [][]byte
	for _, sub := range []string{"new", "cur"} {
		files, err := filepath.Glob(filepath.Join(s.maildir, sub, "*"))
		require.NoError(t, err)
		for _, f := range files {
			raw, err := os.ReadFile(f)
			require.NoError(t, err)
			if bytes.Contains(raw, []byte("Message-Id: <"+id+">")) || bytes.Contains(raw, []byte("Message-ID: <"+id+">")) {
				out = append(out, raw)
			}
		}
	}
	return out
}

func randomSuffix() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// TestRealSMTP submits replies to a real SMTP server (aiosmtpd) over plain SMTP,
// STARTTLS and implicit TLS, with AUTH, and reads what it delivered; the server's
// own 5xx and 4xx answers are permanent and transient.
func TestRealSMTP(t *testing.T) {
	s := needRealSMTP(t)
	ctx := context.Background()
	for name, cfg := range map[string]Config{
		"plain":    s.config(s.plain, false, false),
		"starttls": s.config(s.startTLS, false, true),
		"tls":      s.config(s.implicit, true, false),
	} {
		t.Run(name, func(t *testing.T) {
			r := NewReplier([]Config{cfg}, testBase(), WithReplierTLSConfig(s.tls))
			rp := testReply(name + "-" + randomSuffix())
			sent, retry, err := r.Send(ctx, rp)
			require.NoError(t, err)
			assert.False(t, retry)
			got := s.delivered(t, sent.PlatformID)
			require.Len(t, got, 1, "delivered once")
			mr, err := mail.CreateReader(bytes.NewReader(got[0]))
			require.NoError(t, err)
			assert.Equal(t, "jane@example.com", mr.Header.Get("X-Test-Envelope-To"))
			assert.Equal(t, "support@example.com", mr.Header.Get("X-Test-Envelope-From"))
			irt, _ := mr.Header.MsgIDList("In-Reply-To")
			assert.Equal(t, []string{"q-2@example.com"}, irt)
			subject, _ := mr.Header.Subject()
			assert.Equal(t, "Re: Printer on fire", subject)
		})
	}

	t.Run("answers", func(t *testing.T) {
		r := NewReplier([]Config{s.config(s.startTLS, false, true)}, testBase(), WithReplierTLSConfig(s.tls))
		for addr, wantRetry := range map[string]bool{
			"reject-permanent@example.com": false,
			"reject-temporary@example.com": true,
		} {
			rp := testReply("answers-" + randomSuffix())
			editPlace(&rp.To, func(p *Place) { p.From = addr })
			sent, retry, err := r.Send(ctx, rp)
			require.Error(t, err, addr)
			assert.Equal(t, wantRetry, retry, "%s: %v", addr, err)
			assert.Empty(t, sent.PlatformID)
		}

		bad := s.config(s.startTLS, false, true)
		bad.SMTP.Password = "wrong-password-value"
		_, retry, err := NewReplier([]Config{bad}, testBase(), WithReplierTLSConfig(s.tls)).Send(ctx, testReply("bad-"+randomSuffix()))
		require.Error(t, err)
		assert.False(t, retry, "a refused login is permanent: %v", err)
		assert.Contains(t, err.Error(), "535")
		assert.NotContains(t, err.Error(), "wrong-password-value")

		// A certificate the gateway does not trust: nothing is sent, the login never
		// leaves the machine in clear.
		_, _, err = NewReplier([]Config{s.config(s.implicit, true, false)}, testBase()).Send(ctx, testReply("untrusted-"+randomSuffix()))
		require.Error(t, err)
		assert.Contains(t, err.Error(), "certificate")
	})
}

// TestRealSMTPWithDovecotSentFolder: the copy lands in Dovecot's Sent folder once,
// and Find finds it there by its Message-ID (and does not before it is sent).
func TestRealSMTPWithDovecotSentFolder(t *testing.T) {
	s := needRealSMTP(t)
	addr, user, password := os.Getenv(envIMAPAddr), os.Getenv(envIMAPUser), os.Getenv(envIMAPPassword)
	if addr == "" || user == "" || password == "" {
		t.Skipf("%s, %s and %s not set (run .ci/dovecot.sh)", envIMAPAddr, envIMAPUser, envIMAPPassword)
	}
	c, err := imapclient.DialInsecure(addr, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	require.NoError(t, c.Login(user, password).Wait())
	box := "sg-sent-" + randomSuffix()
	require.NoError(t, c.Create(box, nil).Wait())
	t.Cleanup(func() { _ = c.Delete(box).Wait() })

	cfg := s.config(s.startTLS, false, true)
	cfg.Addr, cfg.Username, cfg.Password, cfg.SentFolder = addr, user, secret.Secret(password), box
	cfg.SMTP.From = "support@example.com"
	r := NewReplier([]Config{cfg}, testBase(), WithReplierTLSConfig(s.tls))
	ctx := context.Background()

	rp := testReply("dovecot-" + randomSuffix())
	_, found, err := r.Find(ctx, rp)
	require.NoError(t, err)
	assert.False(t, found)
	sent, _, err := r.Send(ctx, rp)
	require.NoError(t, err)
	got, found, err := r.Find(ctx, rp)
	require.NoError(t, err)
	assert.True(t, found)
	assert.Equal(t, sent, got)
	assert.Len(t, s.delivered(t, sent.PlatformID), 1)

	_, err = c.Select(box, &imap.SelectOptions{ReadOnly: true}).Wait()
	require.NoError(t, err)
	data, err := c.UIDSearch(&imap.SearchCriteria{Header: []imap.SearchCriteriaHeaderField{{Key: "Message-ID", Value: sent.PlatformID}}}, nil).Wait()
	require.NoError(t, err)
	assert.Len(t, data.AllUIDs(), 1, "one copy in the Sent folder")
	_, found, err = r.Find(ctx, testReply("never-sent-"+randomSuffix()))
	require.NoError(t, err)
	assert.False(t, found)
}

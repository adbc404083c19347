package email

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/server"
	"github.com/signalgate/signalgate/service"
)

func decodeConfigs(t *testing.T, src string) []Config {
	t.Helper()
	var doc struct {
		Email []Config `yaml:"email"`
	}
	dec := yaml.NewDecoder(strings.NewReader(src))
	dec.KnownFields(true)
	require.NoError(t, dec.Decode(&doc))
	return doc.Email
}

func TestConfigFromYAML(t *testing.T) {
	cfgs := decodeConfigs(t, `
email:
  - name: support
    addr: imap.example.com:993
    username: support@example.com
    password: hunter2
    mailboxes: [INBOX, Escalations]
    poll_interval: 1m
    idle: false
    after_ingest: move:Archive
    vip_senders: [ceo@example.com, "@bigcustomer.com"]
    deliver_auto_replies: true
    max_message_bytes: 10MB
  - name: minimal
    addr: 127.0.0.1:10143
    tls: false
    username: u
    password: p
`)
	require.NoError(t, connectors.ValidateConfigs("email", cfgs))
	c := cfgs[0].WithDefaults()
	assert.True(t, c.useTLS())
	assert.False(t, c.useIdle())
	assert.Equal(t, time.Minute, c.PollInterval)
	assert.Equal(t, server.ByteSize(10<<20), c.MaxMessageBytes)
	assert.True(t, c.isVIP("CEO@example.com"))
	assert.True(t, c.isVIP("anyone@BigCustomer.com"))
	assert.False(t, c.isVIP("anyone@sub.bigcustomer.com"))
	assert.False(t, c.isVIP(""))

	m := cfgs[1].WithDefaults()
	assert.False(t, m.useTLS())
	assert.True(t, m.useIdle())
	assert.Equal(t, []string{"INBOX"}, m.Mailboxes)
	assert.Equal(t, DefaultPollInterval, m.PollInterval)
	assert.Equal(t, AfterIngestNone, m.AfterIngest)
	assert.Equal(t, DefaultMaxMessageBytes, m.MaxMessageBytes)
	assert.False(t, m.plaintextRemote(), "loopback")
}

func TestStartTLSDefaultsTLSOff(t *testing.T) {
	c := Config{StartTLS: true}.WithDefaults()
	assert.False(t, c.useTLS())
	assert.False(t, Config{StartTLS: true}.useTLS())
	assert.True(t, Config{}.useTLS())
}

func TestConfigValidation(t *testing.T) {
	on := true
	bad := []Config{
		{Name: "ok", Addr: "imap.example.com:993", Username: "u", Password: "p"},
		{
			Name: "bad/name", Addr: "imap.example.com", TLS: &on, StartTLS: true,
			Mailboxes: []string{"INBOX", "", "INBOX"}, PollInterval: 10 * time.Millisecond,
			AfterIngest: "move:INBOX", VIPSenders: []string{"Jane <jane@example.com>", "@", "ok@example.com"},
			MaxMessageBytes: 10,
		},
		{Name: "ok", Addr: "h:0", Username: "u", Password: "p", AfterIngest: "archive"},
		{Name: "x", Addr: "h:143", Username: "u", Password: "p", AfterIngest: "move:"},
	}
	err := connectors.ValidateConfigs("email", bad)
	require.Error(t, err)
	lines := strings.Split(err.Error(), "\n")
	for _, want := range []string{
		"email[1].name: ",
		"email[1].addr: \"imap.example.com\" is not host:port",
		"email[1].starttls: cannot be combined",
		"email[1].username: required",
		"email[1].password: required",
		"email[1].mailboxes[1]: empty mailbox name",
		"email[1].mailboxes[2]: duplicate mailbox \"INBOX\" (also mailboxes[0])",
		"email[1].poll_interval: 10ms is below the minimum of 1s",
		"email[1].after_ingest: cannot move into \"INBOX\"",
		"email[1].vip_senders[0]: ",
		"email[1].vip_senders[1]: ",
		"email[1].max_message_bytes: ",
		"email[2].addr: bad port \"0\"",
		"email[2].after_ingest: unknown action \"archive\"",
		"email[2].name: duplicate connector name \"ok\" (also email[0])",
		"email[3].after_ingest: \"move:\" needs a mailbox",
	} {
		found := false
		for _, l := range lines {
			if strings.HasPrefix(l, want) {
				found = true
			}
		}
		assert.True(t, found, "missing %q in:\n%s", want, err)
	}
	assert.NotContains(t, err.Error(), "vip_senders[2]")
	assert.NotContains(t, err.Error(), "email[0]:")
}

func TestPasswordNeverLogged(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, nil))
	cfg := Config{Name: "support", Addr: "imap.example.com:993", Username: "u", Password: "hunter2-secret"}
	log.Info("config", "email", cfg)
	assert.NotContains(t, buf.String(), "hunter2-secret")
	assert.Contains(t, buf.String(), "imap.example.com:993")

	err := Config{Name: "x", Addr: "nope", Password: "hunter2-secret"}.Validate()
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "hunter2-secret")
}

func TestPlaintextRemoteWarning(t *testing.T) {
	off := false
	assert.True(t, Config{Addr: "imap.example.com:143", TLS: &off}.plaintextRemote())
	assert.False(t, Config{Addr: "localhost:143", TLS: &off}.plaintextRemote())
	assert.False(t, Config{Addr: "[::1]:143", TLS: &off}.plaintextRemote())
	assert.False(t, Config{Addr: "imap.example.com:143", StartTLS: true}.plaintextRemote())
}

func TestCursorFormat(t *testing.T) {
	v, u, err := parseCursor(formatCursor(1795347654, 42))
	require.NoError(t, err)
	assert.Equal(t, uint32(1795347654), v)
	assert.Equal(t, uint32(42), u)
	for _, bad := range []string{"", "12", "a:b", "1:-1", "99999999999:1"} {
		_, _, err := parseCursor(bad)
		assert.Error(t, err, bad)
	}
}

func TestInvalidEventKeepsRawAndMessageID(t *testing.T) {
	p, err := NewPoller(Config{Name: "support", Addr: "127.0.0.1:1", Username: "u", Password: "p"}, &recorder{}, storeless{},
		service.Base{Now: func() time.Time { return testNow }})
	require.NoError(t, err)
	w := p.workers[0]
	raw := []byte(deepMultipart(maxDepth+1, "Message-ID: <broken-1@example.com>\r\n"))
	ev, items := w.event(raw, false, 9, 4, time.Time{})
	assert.Nil(t, items)
	assert.Equal(t, inbox.EventInvalid, ev.Status)
	assert.Contains(t, ev.Error, "unparseable message: message exceeds a parse limit")
	assert.Equal(t, "broken-1@example.com", ev.DeliveryID)
	assert.Equal(t, raw, ev.Body)
	assert.Equal(t, &inbox.Checkpoint{Connector: "email/support", Key: "INBOX", Value: "9:4"}, ev.Checkpoint)
	assert.Equal(t, testNow, ev.ReceivedAt)

	ev, _ = w.event([]byte(deepMultipart(maxDepth+1, "")), false, 9, 5, time.Time{})
	assert.Equal(t, inbox.EventInvalid, ev.Status)
	assert.True(t, strings.HasPrefix(ev.DeliveryID, "sha256:"), ev.DeliveryID)

	ev, _ = w.event(nil, false, 9, 6, time.Time{})
	assert.Equal(t, "9:6@INBOX", ev.DeliveryID)

	ev, items = w.event([]byte(testMail(3)), true, 9, 7, time.Time{})
	require.Len(t, items, 1)
	assert.Equal(t, "true", ev.Headers["X-Signalgate-Truncated"])
	assert.Equal(t, "q3@example.com", ev.DeliveryID)
	assert.Equal(t, "Question 3", ev.Headers["Subject"])
}

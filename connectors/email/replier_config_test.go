package email

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/secret"
)

func TestSMTPConfigFromYAML(t *testing.T) {
	cfgs := decodeConfigs(t, `
email:
  - name: support
    addr: imap.example.com:993
    username: support@example.com
    password: hunter2
    sent_folder: Sent
    smtp:
      addr: smtp.example.com:465
  - name: relay
    addr: imap.example.com:993
    username: helpdesk
    password: hunter2
    sent_folder: "[Gmail]/Sent Mail"
    append_sent: false
    smtp:
      addr: smtp.example.com:587
      starttls: true
      username: helpdesk@example.com
      password: other-secret
      from: Help Desk <help@example.com>
`)
	require.NoError(t, connectors.ValidateConfigs("email", cfgs))
	c := cfgs[0].WithDefaults()
	assert.True(t, *c.SMTP.TLS, "implicit TLS by default")
	assert.Equal(t, "support@example.com", c.SMTP.Username, "the IMAP login by default")
	assert.Equal(t, secret.Secret("hunter2"), c.SMTP.Password)
	assert.Equal(t, "support@example.com", c.SMTP.From, "the IMAP username, an address")
	assert.True(t, *c.AppendSent)
	r := cfgs[1].WithDefaults()
	assert.False(t, *r.SMTP.TLS)
	assert.Equal(t, "helpdesk@example.com", r.SMTP.Username)
	assert.Equal(t, secret.Secret("other-secret"), r.SMTP.Password)
	assert.False(t, *r.AppendSent)
	assert.NotContains(t, r.SMTP.Password.String(), "other-secret")
	// The gateway validates the entries with their defaults applied.
	require.NoError(t, connectors.ValidateConfigs("email", []Config{c, r}))
	assert.Equal(t, c, c.WithDefaults(), "defaults apply once")
}

func TestSMTPConfigValidation(t *testing.T) {
	on := true
	base := func() Config {
		return Config{Name: "support", Addr: "imap.example.com:993", Username: "support@example.com", Password: "pw",
			SMTP: &SMTPConfig{Addr: "smtp.example.com:465"}}
	}
	for name, tc := range map[string]struct {
		edit func(c *Config)
		want string
	}{
		"no addr":                   {func(c *Config) { c.SMTP.Addr = "" }, "smtp.addr: required"},
		"addr without port":         {func(c *Config) { c.SMTP.Addr = "smtp.example.com" }, `smtp.addr: "smtp.example.com" is not host:port`},
		"bad port":                  {func(c *Config) { c.SMTP.Addr = "smtp.example.com:0" }, `smtp.addr: bad port "0"`},
		"tls and starttls":          {func(c *Config) { c.SMTP.TLS, c.SMTP.StartTLS = &on, true }, "smtp.starttls: cannot be combined"},
		"username without password": {func(c *Config) { c.SMTP.Username = "u" }, "smtp.password: required with smtp.username"},
		"password without username": {func(c *Config) { c.SMTP.Password = "p" }, "smtp.username: required with smtp.password"},
		"bad from":                  {func(c *Config) { c.SMTP.From = "not an address" }, `smtp.from: "not an address" is not an address`},
		"no from":                   {func(c *Config) { c.Username = "support" }, `smtp.from: required (the username "support" is not an address)`},
		"plain to a remote host": {func(c *Config) {
			off := false
			c.SMTP.TLS = &off
		}, "smtp.tls: plain SMTP is allowed to a loopback address only"},
		"sent_folder without smtp": {func(c *Config) { c.SMTP, c.SentFolder = nil, "Sent" }, "sent_folder: needs smtp"},
		"blank sent_folder":        {func(c *Config) { c.SentFolder = "  " }, "sent_folder: empty mailbox name"},
	} {
		t.Run(name, func(t *testing.T) {
			c := base()
			require.NoError(t, c.Validate())
			tc.edit(&c)
			err := connectors.ValidateConfigs("email", []Config{c})
			require.Error(t, err)
			assert.Contains(t, err.Error(), "email[0]."+tc.want)
			assert.NotContains(t, err.Error(), "pw")
		})
	}
	off := false
	c := base()
	c.SMTP.Addr, c.SMTP.TLS = "127.0.0.1:25", &off
	assert.NoError(t, c.Validate(), "plain SMTP to loopback (a local relay)")
}

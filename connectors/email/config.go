// Package email polls IMAP mailboxes (IDLE when the server offers it) and turns each
// message into an inbox event and a connector item: sender, subject, the reply text
// without quotes and signatures, attachments listed, priority from headers and VIPs.
package email

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/mail"
	"strconv"
	"strings"
	"time"

	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/secret"

	"github.com/signalgate/signalgate/server"
)

// Defaults for unset config keys.
const (
	DefaultMailbox         = "INBOX"
	DefaultPollInterval    = 30 * time.Second
	DefaultMaxMessageBytes = server.ByteSize(25 << 20)
	// MinPollInterval keeps a typo ("30ms") from hammering a mail server.
	MinPollInterval = time.Second
)

// After-ingest actions (the `move:` action carries its target mailbox).
const (
	InitialSyncAll  = "all" // a mailbox seen for the first time is read from its start
	InitialSyncNew  = "new" // …or only mail arriving after the first connection
	AfterIngestNone = "none"
	AfterIngestSeen = "seen"
	afterMovePrefix = "move:"
)

// Config is one entry of `connectors.email` in config.yaml.
type Config struct {
	Name string `yaml:"name"`
	// Addr is host:port of the IMAP server.
	Addr string `yaml:"addr"`
	// TLS is implicit TLS (port 993); it defaults to true unless StartTLS is set.
	TLS *bool `yaml:"tls"`
	// StartTLS upgrades a plain connection (port 143) before login.
	StartTLS bool `yaml:"starttls"`
	// InsecureSkipVerify disables certificate checks; for test servers only.
	InsecureSkipVerify bool   `yaml:"insecure_skip_verify"`
	Username           string `yaml:"username"`
	// Password is a secret: it is never logged nor put in an error.
	Password  secret.Secret `yaml:"password"`
	Mailboxes []string      `yaml:"mailboxes"`
	// PollInterval is the polling period without IDLE, and the safety-net re-poll with it.
	PollInterval time.Duration `yaml:"poll_interval"`
	// Idle uses IMAP IDLE when the server supports it (default true).
	Idle *bool `yaml:"idle"`
	// AfterIngest is what happens to a message once its event is committed:
	// none (default), seen, or move:<mailbox>.
	AfterIngest string `yaml:"after_ingest"`
	// InitialSync is where a mailbox without a stored cursor starts: all (default,
	// nothing missed) or new (skip the existing backlog).
	InitialSync string `yaml:"initial_sync"`
	// VIPSenders are addresses (jane@example.com) or domains (@example.com) whose
	// mail is high priority.
	VIPSenders []string `yaml:"vip_senders"`
	// DeliverAutoReplies routes auto-replies and other auto-submitted mail instead
	// of storing them as ignored.
	DeliverAutoReplies bool `yaml:"deliver_auto_replies"`
	// MaxMessageBytes bounds what is fetched and stored of one message (default 25MB);
	// a longer message is stored truncated and marked so.
	MaxMessageBytes server.ByteSize `yaml:"max_message_bytes"`

	// SMTP is where replies are submitted; without it the connector only listens.
	SMTP *SMTPConfig `yaml:"smtp"`
	// SentFolder is the IMAP mailbox replies are looked up in (Find) and, unless
	// AppendSent is false, copied to. Empty: no copy, and no lookup after a crash.
	SentFolder string `yaml:"sent_folder"`
	// AppendSent appends a copy of each reply to SentFolder (default true); false for
	// providers that file submitted mail there themselves (Gmail, Outlook).
	AppendSent *bool `yaml:"append_sent"`
}

// SMTPConfig is the submission server replies go through.
type SMTPConfig struct {
	// Addr is host:port of the submission server (465 implicit TLS, 587 STARTTLS).
	Addr string `yaml:"addr"`
	// TLS is implicit TLS; it defaults to true unless StartTLS is set.
	TLS      *bool `yaml:"tls"`
	StartTLS bool  `yaml:"starttls"`
	// InsecureSkipVerify disables certificate checks; for test servers only.
	InsecureSkipVerify bool `yaml:"insecure_skip_verify"`
	// Username and Password default to the IMAP login's. AUTH is used when the
	// server offers it (a relay that trusts its network offers none).
	Username string        `yaml:"username"`
	Password secret.Secret `yaml:"password"`
	// From is the address replies are sent from; it defaults to the IMAP username
	// when that is an address.
	From string `yaml:"from"`
}

// WithDefaults fills unset fields.
func (c Config) WithDefaults() Config {
	if c.TLS == nil {
		tls := !c.StartTLS
		c.TLS = &tls
	}
	if c.Idle == nil {
		idle := true
		c.Idle = &idle
	}
	if len(c.Mailboxes) == 0 {
		c.Mailboxes = []string{DefaultMailbox}
	}
	if c.PollInterval == 0 {
		c.PollInterval = DefaultPollInterval
	}
	if c.InitialSync == "" {
		c.InitialSync = InitialSyncAll
	}
	if strings.TrimSpace(c.AfterIngest) == "" {
		c.AfterIngest = AfterIngestNone
	}
	if c.MaxMessageBytes == 0 {
		c.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if c.AppendSent == nil {
		appendSent := true
		c.AppendSent = &appendSent
	}
	if c.SMTP != nil {
		s := *c.SMTP
		if s.TLS == nil {
			tls := !s.StartTLS
			s.TLS = &tls
		}
		if s.Username == "" && s.Password == "" {
			s.Username, s.Password = c.Username, c.Password
		}
		if s.From == "" {
			if a, err := mail.ParseAddress(c.Username); err == nil {
				s.From = a.Address
			}
		}
		c.SMTP = &s
	}
	return c
}

// ConnectorName is the configured name (connectors.Config).
func (c Config) ConnectorName() string { return c.Name }

// LogValue keeps the password out of logs even when a whole Config is logged.
func (c Config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("name", c.Name), slog.String("addr", c.Addr), slog.String("username", c.Username),
		slog.Bool("tls", c.useTLS()), slog.Bool("starttls", c.StartTLS), slog.Any("mailboxes", c.Mailboxes),
	)
}

// Validate reports problems with key paths relative to the list entry;
// connectors.ValidateConfigs("email", list) adds the "email[i]." prefix and name uniqueness.
func (c Config) Validate() error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if err := connectors.CheckName(c.Name); err != nil {
		errs = append(errs, err)
	}
	if strings.TrimSpace(c.Addr) == "" {
		add("addr: required (host:port, e.g. imap.example.com:993)")
	} else if host, port, err := net.SplitHostPort(c.Addr); err != nil || host == "" {
		add("addr: %q is not host:port", c.Addr)
	} else if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		add("addr: bad port %q", port)
	}
	if c.TLS != nil && *c.TLS && c.StartTLS {
		add("starttls: cannot be combined with tls: true (implicit TLS); set tls: false to use STARTTLS")
	}
	if strings.TrimSpace(c.Username) == "" {
		add("username: required")
	}
	if c.Password == "" {
		add("password: required")
	}
	seen := map[string]int{}
	for i, m := range c.Mailboxes {
		if strings.TrimSpace(m) == "" {
			add("mailboxes[%d]: empty mailbox name", i)
			continue
		}
		if j, dup := seen[m]; dup {
			add("mailboxes[%d]: duplicate mailbox %q (also mailboxes[%d])", i, m, j)
		}
		seen[m] = i
	}
	if c.PollInterval < 0 || (c.PollInterval > 0 && c.PollInterval < MinPollInterval) {
		add("poll_interval: %s is below the minimum of %s", c.PollInterval, MinPollInterval)
	}
	if c.InitialSync != InitialSyncAll && c.InitialSync != InitialSyncNew && c.InitialSync != "" {
		add("initial_sync: unknown %q (want all or new)", c.InitialSync)
	}
	if _, target, err := parseAfterIngest(c.AfterIngest); err != nil {
		add("after_ingest: %w", err)
	} else if target != "" {
		mailboxes := c.Mailboxes
		if len(mailboxes) == 0 {
			mailboxes = []string{DefaultMailbox}
		}
		for _, m := range mailboxes {
			if m == target {
				// Moving into a polled mailbox would fetch the message again, forever.
				add("after_ingest: cannot move into %q, which is polled (mailboxes)", target)
			}
		}
	}
	for i, v := range c.VIPSenders {
		if err := validVIP(v); err != nil {
			add("vip_senders[%d]: %w", i, err)
		}
	}
	if c.MaxMessageBytes < 0 {
		add("max_message_bytes: must not be negative")
	} else if c.MaxMessageBytes > 0 && c.MaxMessageBytes < 1024 {
		add("max_message_bytes: %d is below the minimum of 1KB", c.MaxMessageBytes)
	}
	if c.SMTP != nil {
		errs = append(errs, c.SMTP.validate(c.Username)...)
	}
	if c.SentFolder != "" && strings.TrimSpace(c.SentFolder) == "" {
		add("sent_folder: empty mailbox name")
	}
	if c.SentFolder != "" && c.SMTP == nil {
		add("sent_folder: needs smtp (sent_folder is where replies are copied and looked up)")
	}
	return errors.Join(errs...)
}

func (s SMTPConfig) validate(imapUser string) []error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf("smtp."+format, args...)) }
	if strings.TrimSpace(s.Addr) == "" {
		add("addr: required (host:port, e.g. smtp.example.com:465)")
	} else if host, port, err := net.SplitHostPort(s.Addr); err != nil || host == "" {
		add("addr: %q is not host:port", s.Addr)
	} else if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		add("addr: bad port %q", port)
	}
	if s.TLS != nil && *s.TLS && s.StartTLS {
		add("starttls: cannot be combined with tls: true (implicit TLS); set tls: false to use STARTTLS")
	}
	if s.Username != "" && s.Password == "" {
		add("password: required with smtp.username")
	}
	if s.Username == "" && s.Password != "" {
		add("username: required with smtp.password")
	}
	if s.From != "" {
		if a, err := mail.ParseAddress(s.From); err != nil || a.Address == "" {
			add("from: %q is not an address (want support@example.com)", s.From)
		}
	} else if _, err := mail.ParseAddress(imapUser); err != nil {
		add("from: required (the username %q is not an address)", imapUser)
	}
	tls := s.TLS == nil && !s.StartTLS || s.TLS != nil && *s.TLS
	if !tls && !s.StartTLS && !loopback(s.Addr) {
		// A password, and the replies, would cross the network in clear.
		add("tls: plain SMTP is allowed to a loopback address only; set tls: true or starttls: true")
	}
	return errs
}

// parseAfterIngest splits "move:Archive" into its action and target.
func parseAfterIngest(s string) (action, target string, err error) {
	s = strings.TrimSpace(s)
	switch {
	case s == "" || strings.EqualFold(s, AfterIngestNone):
		return AfterIngestNone, "", nil
	case strings.EqualFold(s, AfterIngestSeen):
		return AfterIngestSeen, "", nil
	case strings.HasPrefix(strings.ToLower(s), afterMovePrefix):
		target = strings.TrimSpace(s[len(afterMovePrefix):])
		if target == "" {
			return "", "", errors.New(`"move:" needs a mailbox, e.g. move:Archive`)
		}
		return "move", target, nil
	}
	return "", "", fmt.Errorf("unknown action %q (want none, seen or move:<mailbox>)", s)
}

func validVIP(v string) error {
	v = strings.TrimSpace(v)
	if domain, ok := strings.CutPrefix(v, "@"); ok {
		if domain == "" || strings.ContainsAny(domain, "@ \t") {
			return fmt.Errorf("%q is not a domain (want @example.com)", v)
		}
		return nil
	}
	a, err := mail.ParseAddress(v)
	if err != nil || a.Address != v {
		return fmt.Errorf("%q is not an address (want jane@example.com or @example.com)", v)
	}
	return nil
}

func (c Config) useTLS() bool { return c.TLS == nil && !c.StartTLS || c.TLS != nil && *c.TLS }

func (c Config) useIdle() bool { return c.Idle == nil || *c.Idle }

// plaintext reports a connection without any TLS to a host that is not loopback.
func (c Config) plaintextRemote() bool {
	if c.useTLS() || c.StartTLS {
		return false
	}
	return !loopback(c.Addr)
}

// loopback reports a host:port on this machine.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// isVIP matches an address against vip_senders, case-insensitively; "@example.com"
// matches that domain exactly, not its subdomains.
func (c Config) isVIP(addr string) bool {
	addr = strings.ToLower(strings.TrimSpace(addr))
	if addr == "" {
		return false
	}
	_, domain, _ := strings.Cut(addr, "@")
	for _, v := range c.VIPSenders {
		v = strings.ToLower(strings.TrimSpace(v))
		if d, ok := strings.CutPrefix(v, "@"); ok {
			if d == domain {
				return true
			}
		} else if v == addr {
			return true
		}
	}
	return false
}

package email

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
)

// MailboxProbe is what a login probe found in one mailbox.
type MailboxProbe struct {
	Name        string
	UIDValidity uint32
	Messages    uint32
	Err         error // the mailbox could not be read (missing, not permitted)
}

// ErrLogin marks a probe whose server refused the username and password.
var ErrLogin = errors.New("login refused")

// Probe connects as the poller would, logs in and reads each mailbox's UIDVALIDITY
// with STATUS (nothing is selected or changed), then logs out. ctx bounds it all.
// Errors name the address and the username, never the password.
func Probe(ctx context.Context, cfg Config) ([]MailboxProbe, error) {
	cfg = cfg.WithDefaults()
	c, err := dialIMAP(cfg, probeTLS(cfg), nil)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", cfg.Addr, err)
	}
	// Commands take no context: closing the connection is what interrupts them.
	stop := context.AfterFunc(ctx, func() { _ = c.Close() })
	defer func() {
		stop()
		_ = c.Close()
	}()
	if err := c.Login(cfg.Username, cfg.Password.Reveal()).Wait(); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("log in to %s: %w", cfg.Addr, ctx.Err())
		}
		var ie *imap.Error
		if errors.As(err, &ie) {
			return nil, fmt.Errorf("log in to %s as %s: %w (%s)", cfg.Addr, cfg.Username, ErrLogin, ie.Text)
		}
		return nil, fmt.Errorf("log in to %s as %s: %w", cfg.Addr, cfg.Username, err)
	}
	out := make([]MailboxProbe, 0, len(cfg.Mailboxes))
	for _, name := range cfg.Mailboxes {
		p := MailboxProbe{Name: name}
		st, err := c.Status(name, &imap.StatusOptions{UIDValidity: true, NumMessages: true}).Wait()
		switch {
		case ctx.Err() != nil:
			return out, fmt.Errorf("read mailbox %s: %w", name, ctx.Err())
		case err != nil:
			p.Err = fmt.Errorf("read mailbox %s: %w", name, err)
		default:
			p.UIDValidity = st.UIDValidity
			if st.NumMessages != nil {
				p.Messages = *st.NumMessages
			}
		}
		out = append(out, p)
	}
	_ = c.Logout().Wait()
	return out, nil
}

func probeTLS(cfg Config) *tls.Config {
	c := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: cfg.InsecureSkipVerify}
	if host, _, err := net.SplitHostPort(cfg.Addr); err == nil {
		c.ServerName = host
	}
	return c
}

// dialIMAP connects with the connector's transport: implicit TLS, STARTTLS or plain.
func dialIMAP(cfg Config, tc *tls.Config, unilateral *imapclient.UnilateralDataHandler) (*imapclient.Client, error) {
	opts := &imapclient.Options{
		TLSConfig:             tc,
		Dialer:                &net.Dialer{Timeout: dialTimeout},
		WordDecoder:           wordDecoder(),
		UnilateralDataHandler: unilateral,
	}
	switch {
	case cfg.useTLS():
		return imapclient.DialTLS(cfg.Addr, opts)
	case cfg.StartTLS:
		return imapclient.DialStartTLS(cfg.Addr, opts)
	default:
		return imapclient.DialInsecure(cfg.Addr, opts)
	}
}

package email

import (
	"context"
	"fmt"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
)

// withIMAP runs fn on a logged-in IMAP session of the connector. Commands take no
// context: closing the connection is what interrupts them.
func (r *Replier) withIMAP(ctx context.Context, cfg Config, fn func(c *imapclient.Client) error) error {
	c, err := dialIMAP(cfg, r.tlsConfig(cfg.Addr, cfg.InsecureSkipVerify), nil)
	if err != nil {
		return fmt.Errorf("connect to %s: %w", cfg.Addr, err)
	}
	stop := context.AfterFunc(ctx, func() { _ = c.Close() })
	defer func() {
		stop()
		_ = c.Close()
	}()
	if err := c.Login(cfg.Username, cfg.Password.Reveal()).Wait(); err != nil {
		return ctxErr(ctx, fmt.Errorf("log in to %s as %q: %w", cfg.Addr, cfg.Username, err))
	}
	if err := fn(c); err != nil {
		return ctxErr(ctx, err)
	}
	_ = c.Logout().Wait()
	return nil
}

// appendSent saves raw in the Sent folder, marked seen.
func (r *Replier) appendSent(ctx context.Context, cfg Config, raw []byte) error {
	return r.withIMAP(ctx, cfg, func(c *imapclient.Client) error {
		cmd := c.Append(cfg.SentFolder, int64(len(raw)), &imap.AppendOptions{Flags: []imap.Flag{imap.FlagSeen}, Time: r.now()})
		if _, err := cmd.Write(raw); err != nil {
			_ = cmd.Close()
			return fmt.Errorf("append to %q: %w", cfg.SentFolder, err)
		}
		if err := cmd.Close(); err != nil {
			return fmt.Errorf("append to %q: %w", cfg.SentFolder, err)
		}
		if _, err := cmd.Wait(); err != nil {
			return fmt.Errorf("append to %q: %w", cfg.SentFolder, err)
		}
		return nil
	})
}

// searchSent reports whether a message with Message-ID id is in the Sent folder.
func (r *Replier) searchSent(ctx context.Context, cfg Config, id string) (bool, error) {
	found := false
	err := r.withIMAP(ctx, cfg, func(c *imapclient.Client) error {
		if _, err := c.Select(cfg.SentFolder, &imap.SelectOptions{ReadOnly: true}).Wait(); err != nil {
			return fmt.Errorf("select %q: %w", cfg.SentFolder, err)
		}
		data, err := c.UIDSearch(&imap.SearchCriteria{
			Header: []imap.SearchCriteriaHeaderField{{Key: "Message-ID", Value: "<" + id + ">"}},
		}, nil).Wait()
		if err != nil {
			return fmt.Errorf("search %q for Message-ID <%s>: %w", cfg.SentFolder, id, err)
		}
		found = len(data.AllUIDs()) > 0
		return nil
	})
	return found, err
}

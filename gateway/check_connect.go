package gateway

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/signalgate/signalgate/connectors/email"
	"github.com/signalgate/signalgate/connectors/slack"
	"github.com/signalgate/signalgate/store"
)

// connectCheck is one outside dependency tried by `check --connect`.
type connectCheck struct {
	name string
	run  func(ctx context.Context) (string, error) // what was found, or what to fix
}

// CheckConnections tries every outside dependency of c (check --connect), each within
// timeout, and writes one line per check: what was found, or what to fix. It reports
// whether all passed. No line shows a secret of c.
func (c *Config) CheckConnections(ctx context.Context, w io.Writer, timeout time.Duration) bool {
	return runConnectChecks(ctx, w, connectChecks(c, &http.Client{}, slog.New(slog.DiscardHandler)), timeout, c.Secrets())
}

// connectChecks lists every outside dependency of cfg, in config order: the
// database, each connector's (by kind: Slack tokens, IMAP logins), each agent's target
// whose kind has a probe.
func connectChecks(cfg *Config, hc *http.Client, log *slog.Logger) []connectCheck {
	var out []connectCheck
	out = append(out, connectCheck{"database", func(ctx context.Context) (string, error) {
		return checkDatabase(ctx, cfg, log)
	}})
	cfg.Connectors.each(func(k integration, l any) { out = append(out, k.connect(l, hc)...) })
	out = append(out, cfg.targetChecks(hc)...)
	return out
}

// runConnectChecks prints one line per check and reports whether all passed. Every
// line is scrubbed of the config's secrets, whatever a library put in an error.
func runConnectChecks(ctx context.Context, w io.Writer, checks []connectCheck, timeout time.Duration, secrets []string) bool {
	ok := true
	for _, c := range checks {
		cctx, cancel := context.WithTimeout(ctx, timeout)
		found, err := c.run(cctx)
		cancel()
		line := "ok    " + c.name + ": " + found
		if err != nil {
			ok = false
			line = "FAIL  " + c.name + ": " + err.Error()
		}
		for _, s := range secrets {
			line = strings.ReplaceAll(line, s, "[redacted]")
		}
		fmt.Fprintln(w, line)
	}
	return ok
}

func checkDatabase(ctx context.Context, cfg *Config, log *slog.Logger) (string, error) {
	// Alongside: checking a SQLite database a gateway serves must not be refused.
	st, err := store.Open(ctx, cfg.Storage, log, store.ReadAlongside())
	if err != nil {
		return "", fmt.Errorf("%w: check storage.dsn and that the database server is running", err)
	}
	defer st.Close()
	current, err := st.Current(ctx)
	if err != nil {
		return "", err
	}
	where := cfg.Storage.Driver + " " + cfg.Storage.RedactedDSN()
	if !current {
		return "", fmt.Errorf("%s is reachable but not migrated: run `gateway migrate` (serve also migrates at start)", where)
	}
	return where + " reachable, migrations applied", nil
}

func checkIMAP(ctx context.Context, c email.Config, key string) (string, error) {
	boxes, err := email.Probe(ctx, c)
	switch {
	case errors.Is(err, email.ErrLogin):
		return "", fmt.Errorf("%w: check %s.username and %s.password", err, key, key)
	case err != nil:
		return "", fmt.Errorf("%w: check %s.addr, tls and starttls", err, key)
	}
	var parts, bad []string
	for _, b := range boxes {
		if b.Err != nil {
			bad = append(bad, b.Err.Error())
			continue
		}
		parts = append(parts, fmt.Sprintf("%s UIDVALIDITY %d (%d messages)", b.Name, b.UIDValidity, b.Messages))
	}
	if len(bad) > 0 {
		return "", fmt.Errorf("logged in as %s, but %s: check %s.mailboxes", c.Username, strings.Join(bad, "; "), key)
	}
	return fmt.Sprintf("logged in to %s as %s; %s", c.Addr, c.Username, strings.Join(parts, ", ")), nil
}

// slackChecks are a Slack connector's: its bot token, and its app token in Socket Mode.
func slackChecks(c slack.Config, key string, hc *http.Client) []connectCheck {
	out := []connectCheck{{slack.Source + "/" + c.Name, func(ctx context.Context) (string, error) {
		return checkSlackBot(ctx, c, hc, key)
	}}}
	if c.SocketMode {
		out = append(out, connectCheck{slack.Source + "/" + c.Name + " socket mode", func(ctx context.Context) (string, error) {
			return checkSlackSocket(ctx, c, hc, key)
		}})
	}
	return out
}

func checkSlackBot(ctx context.Context, c slack.Config, hc *http.Client, key string) (string, error) {
	if c.BotToken == "" {
		return "no bot_token: nothing to try (names are not resolved)", nil
	}
	id, err := slack.ProbeBot(ctx, c, hc)
	if err != nil && !slack.Refused(err) {
		return "", unreachableSlack(err, key)
	}
	if err != nil {
		return "", fmt.Errorf("%w: check %s.bot_token (the app's Bot User OAuth Token, xoxb-…)", err, key)
	}
	if c.BotUserID != "" && id.UserID != "" && !strings.EqualFold(c.BotUserID, id.UserID) {
		return "", fmt.Errorf("the bot token is bot user %s, but %s.bot_user_id is %s: set it to %s", id.UserID, key, c.BotUserID, id.UserID)
	}
	return fmt.Sprintf("auth.test ok: bot user %s (%s) in team %s (%s)", id.UserID, id.User, id.Team, id.TeamID), nil
}

func checkSlackSocket(ctx context.Context, c slack.Config, hc *http.Client, key string) (string, error) {
	err := slack.ProbeSocket(ctx, c, hc)
	switch {
	case err == nil:
		return "apps.connections.open ok", nil
	case !slack.Refused(err):
		return "", unreachableSlack(err, key)
	}
	return "", fmt.Errorf("%w: check %s.app_token (an app-level token with connections:write, and Socket Mode enabled in the app)", err, key)
}

func unreachableSlack(err error, key string) error {
	return fmt.Errorf("%w: Slack's Web API did not answer: check network access to slack.com (or %s.api_url)", err, key)
}

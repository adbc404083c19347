package slack

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/slack-go/slack"
)

// Identity is what auth.test says the bot token belongs to.
type Identity struct {
	Team, TeamID, User, UserID, BotID, URL string
}

// ProbeBot calls auth.test with the connector's bot token. Errors carry Slack's
// error code (invalid_auth, token_revoked, …), never the token.
func ProbeBot(ctx context.Context, cfg Config, hc *http.Client) (Identity, error) {
	cfg = cfg.WithDefaults()
	res, err := slack.New(cfg.BotToken.Reveal(), apiOptions(cfg, hc)...).AuthTestContext(ctx)
	if err != nil {
		return Identity{}, fmt.Errorf("auth.test: %w", err)
	}
	return Identity{Team: res.Team, TeamID: res.TeamID, User: res.User, UserID: res.UserID, BotID: res.BotID, URL: res.URL}, nil
}

// ProbeSocket calls apps.connections.open with the app-level token, as a Socket Mode
// connection starts, and drops the WebSocket URL it gets (it is a one-use ticket).
func ProbeSocket(ctx context.Context, cfg Config, hc *http.Client) error {
	cfg = cfg.WithDefaults()
	opts := append(apiOptions(cfg, hc), slack.OptionAppLevelToken(cfg.AppToken.Reveal()))
	if _, _, err := slack.New(cfg.BotToken.Reveal(), opts...).StartSocketModeContext(ctx); err != nil {
		return fmt.Errorf("apps.connections.open: %w", err)
	}
	return nil
}

// Refused reports whether a probe's error is Slack's answer (invalid_auth,
// token_revoked, not_allowed_token_type, …) rather than a failure to reach Slack.
func Refused(err error) bool {
	var se slack.SlackErrorResponse
	return errors.As(err, &se)
}

func apiOptions(cfg Config, hc *http.Client) []slack.Option {
	if hc == nil {
		hc = http.DefaultClient
	}
	opts := []slack.Option{slack.OptionHTTPClient(hc)}
	if cfg.APIURL != "" {
		opts = append(opts, slack.OptionAPIURL(cfg.APIURL))
	}
	return opts
}

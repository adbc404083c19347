package admin

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"

	"github.com/labstack/echo/v4"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/server"
	"github.com/signalgate/signalgate/silence"
)

// Silences makes, lists and expires silences (silence.Service).
type Silences interface {
	Create(ctx context.Context, in silence.Input) (silence.Silence, error)
	List(ctx context.Context, state silence.State) ([]silence.Silence, error)
	Get(ctx context.Context, id string) (silence.Silence, error)
	Expire(ctx context.Context, id, by string) (silence.Silence, error)
}

// SilencePage is GET /silences.
type SilencePage struct {
	Silences []silence.Silence `json:"silences"`
}

// silenceIDPattern admits the ids silences carry (UUIDs) and any other plain id, so a
// malformed one is a 400 and an unknown one a 404.
var silenceIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

func checkSilenceID(v string) (string, error) {
	if !silenceIDPattern.MatchString(v) {
		return "", server.BadRequest("id: %q is not a silence id", v)
	}
	return v, nil
}

// silenceError answers a silence operation's refusal: 400 naming the field, 404.
func silenceError(err error, id string) error {
	var ve *silence.ValidationError
	switch {
	case errors.As(err, &ve):
		return server.BadRequest("%s", ve.Error())
	case errors.Is(err, inbox.ErrNotFound):
		return notFound(err, "silence", id)
	}
	return err
}

// Silences lists silences newest first, with GET /silences' query parameters (state:
// pending, active or expired); a bad parameter is a 400 naming it.
func (a *API) Silences(ctx context.Context, q url.Values) (SilencePage, error) {
	p := readParams(q, "state")
	state, err := silence.ParseState(p.vals["state"])
	if err != nil {
		p.fail("%s", err.Error())
	}
	if p.err != nil {
		return SilencePage{}, p.err
	}
	out := SilencePage{Silences: []silence.Silence{}}
	if a.d.Silences == nil {
		return out, nil
	}
	list, err := a.d.Silences.List(ctx, state)
	if err != nil {
		return SilencePage{}, err
	}
	out.Silences = append(out.Silences, list...)
	return out, nil
}

// CreateSilence makes a silence (POST /silences, the console): a refused one is a 400
// naming the field.
func (a *API) CreateSilence(ctx context.Context, in silence.Input) (silence.Silence, error) {
	if a.d.Silences == nil {
		return silence.Silence{}, server.NewError(http.StatusConflict, "conflict", "silences are not served here")
	}
	s, err := a.d.Silences.Create(ctx, in)
	if err != nil {
		return silence.Silence{}, silenceError(err, "")
	}
	return s, nil
}

// ExpireSilence ends a silence now for an operator (DELETE /silences/{id}, the console),
// as Alertmanager's expire: what it held is released through the policy. An ended
// silence is answered as it is; an unknown one is a 404.
func (a *API) ExpireSilence(ctx context.Context, id, by string) (silence.Silence, error) {
	id, err := checkSilenceID(id)
	if err != nil {
		return silence.Silence{}, err
	}
	if a.d.Silences == nil {
		return silence.Silence{}, server.NotFound("silence %q not found", id)
	}
	s, err := a.d.Silences.Expire(ctx, id, by)
	if err != nil {
		return silence.Silence{}, silenceError(err, id)
	}
	a.log.InfoContext(ctx, "silence expired", slog.String("silence", id), slog.String("operator", by))
	return s, nil
}

func (a *API) listSilences(c echo.Context) error {
	page, err := a.Silences(c.Request().Context(), c.QueryParams())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, page)
}

func (a *API) createSilence(c echo.Context) error {
	body, err := io.ReadAll(c.Request().Body)
	if err != nil {
		return err
	}
	// Times are read here so a bad one is refused naming its field.
	var b struct {
		silence.Input
		StartsAt string `json:"startsAt"`
		EndsAt   string `json:"endsAt"`
	}
	if err := agent.DecodeJSON(body, &b, false); err != nil {
		return server.BadRequest("%s", err.Error())
	}
	p := &params{vals: map[string]string{}}
	for name, v := range map[string]string{"startsAt": b.StartsAt, "endsAt": b.EndsAt} {
		if v != "" {
			p.vals[name] = v
		}
	}
	in := b.Input
	in.StartsAt, in.EndsAt = p.time("startsAt"), p.time("endsAt")
	if p.err != nil {
		return p.err
	}
	s, err := a.CreateSilence(c.Request().Context(), in)
	if err != nil {
		return err
	}
	a.log.InfoContext(c.Request().Context(), "silence created", slog.String("silence", s.ID), slog.String("token", tokenName(c)))
	return c.JSON(http.StatusCreated, s)
}

func (a *API) getSilence(c echo.Context) error {
	id, err := pathValue(c, "id")
	if err != nil {
		return err
	}
	if id, err = checkSilenceID(id); err != nil {
		return err
	}
	if a.d.Silences == nil {
		return server.NotFound("silence %q not found", id)
	}
	s, err := a.d.Silences.Get(c.Request().Context(), id)
	if err != nil {
		return silenceError(err, id)
	}
	return c.JSON(http.StatusOK, s)
}

func (a *API) deleteSilence(c echo.Context) error {
	id, err := pathValue(c, "id")
	if err != nil {
		return err
	}
	s, err := a.ExpireSilence(c.Request().Context(), id, tokenName(c))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, s)
}

func (a *API) silenceRoutes() []route {
	return []route{
		{Route{http.MethodGet, "/silences", ScopeRead}, a.listSilences},
		{Route{http.MethodPost, "/silences", ScopeWrite}, a.createSilence},
		{Route{http.MethodGet, "/silences/:id", ScopeRead}, a.getSilence},
		{Route{http.MethodDelete, "/silences/:id", ScopeWrite}, a.deleteSilence},
	}
}

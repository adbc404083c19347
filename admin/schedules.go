package admin

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/schedule"
	"github.com/signalgate/signalgate/server"
)

// Schedules creates, changes and fires schedules (schedule.Service).
type Schedules interface {
	Create(ctx context.Context, spec schedule.Spec) (schedule.Schedule, error)
	List(ctx context.Context) ([]schedule.Schedule, error)
	Get(ctx context.Context, id string) (schedule.Schedule, error)
	Patch(ctx context.Context, id string, patch json.RawMessage) (schedule.Schedule, error)
	Delete(ctx context.Context, id string) (schedule.Schedule, error)
	Pause(ctx context.Context, id string) (schedule.Schedule, error)
	Resume(ctx context.Context, id string) (schedule.Schedule, error)
	Run(ctx context.Context, id string) (agent.SignalResult, error)
}

// ScheduleList is GET /schedules.
type ScheduleList struct {
	Schedules []schedule.Schedule `json:"schedules"`
}

// scheduleError answers a schedule operation's refusal: the field named for a bad one,
// 409 for a taken id or a config schedule, 404, 502 when the target did not take a run.
func scheduleError(err error, id string) error {
	var inv *schedule.InvalidError
	var ae *agent.Error
	switch {
	case errors.As(err, &inv):
		return server.BadRequest("%s", inv.Error())
	case errors.Is(err, schedule.ErrExists):
		return server.NewError(http.StatusConflict, "conflict", "schedule %q exists already", id)
	case errors.Is(err, schedule.ErrFromConfig):
		return server.NewError(http.StatusConflict, "conflict", "schedule %q: %s", id, schedule.ErrFromConfig.Error())
	case errors.Is(err, inbox.ErrNotFound):
		return notFound(err, "schedule", id)
	case errors.Is(err, agent.ErrDeliveryFailed):
		return server.NewError(http.StatusBadGateway, "bad_gateway", "schedule %q: %s", id, agent.ErrDeliveryFailed.Error())
	case errors.As(err, &ae):
		status := map[agent.ErrorKind]int{agent.KindInvalid: http.StatusBadRequest, agent.KindConflict: http.StatusConflict,
			agent.KindNotFound: http.StatusNotFound, agent.KindTooLarge: http.StatusRequestEntityTooLarge}[ae.Kind]
		if status != 0 {
			return server.NewError(status, ae.Code, "%s", ae.Message)
		}
	}
	return err
}

func (a *API) scheduleID(c echo.Context) (string, error) {
	id, err := pathValue(c, "id")
	if err != nil {
		return "", err
	}
	if err := schedule.CheckID(id); err != nil {
		return "", server.BadRequest("id: %v", err)
	}
	if a.d.Schedules == nil {
		return "", server.NotFound("schedule %q not found", id)
	}
	return id, nil
}

func (a *API) listSchedules(c echo.Context) error {
	out := ScheduleList{Schedules: []schedule.Schedule{}}
	if a.d.Schedules == nil {
		return c.JSON(http.StatusOK, out)
	}
	list, err := a.d.Schedules.List(c.Request().Context())
	if err != nil {
		return err
	}
	out.Schedules = append(out.Schedules, list...)
	return c.JSON(http.StatusOK, out)
}

func (a *API) createSchedule(c echo.Context) error {
	body, err := io.ReadAll(c.Request().Body)
	if err != nil {
		return err
	}
	var spec schedule.Spec
	if err := agent.DecodeJSON(body, &spec, false); err != nil {
		return server.BadRequest("%s", err.Error())
	}
	if a.d.Schedules == nil {
		return server.NewError(http.StatusConflict, "conflict", "schedules are not served here")
	}
	sc, err := a.d.Schedules.Create(c.Request().Context(), spec)
	if err != nil {
		return scheduleError(err, spec.ID)
	}
	a.log.InfoContext(c.Request().Context(), "schedule created", slog.String("schedule", sc.ID), slog.String("token", tokenName(c)))
	return c.JSON(http.StatusCreated, sc)
}

func (a *API) getSchedule(c echo.Context) error {
	id, err := a.scheduleID(c)
	if err != nil {
		return err
	}
	sc, err := a.d.Schedules.Get(c.Request().Context(), id)
	if err != nil {
		return scheduleError(err, id)
	}
	return c.JSON(http.StatusOK, sc)
}

func (a *API) patchSchedule(c echo.Context) error {
	id, err := a.scheduleID(c)
	if err != nil {
		return err
	}
	body, err := io.ReadAll(c.Request().Body)
	if err != nil {
		return err
	}
	sc, err := a.d.Schedules.Patch(c.Request().Context(), id, body)
	if err != nil {
		return scheduleError(err, id)
	}
	a.log.InfoContext(c.Request().Context(), "schedule changed", slog.String("schedule", id), slog.String("token", tokenName(c)))
	return c.JSON(http.StatusOK, sc)
}

// scheduleAction serves DELETE /schedules/{id} and POST …/pause and …/resume.
func (a *API) scheduleAction(do func(Schedules) func(context.Context, string) (schedule.Schedule, error), what string) echo.HandlerFunc {
	return func(c echo.Context) error {
		id, err := a.scheduleID(c)
		if err != nil {
			return err
		}
		sc, err := do(a.d.Schedules)(c.Request().Context(), id)
		if err != nil {
			return scheduleError(err, id)
		}
		a.log.InfoContext(c.Request().Context(), "schedule "+what, slog.String("schedule", id), slog.String("token", tokenName(c)))
		return c.JSON(http.StatusOK, sc)
	}
}

func (a *API) runSchedule(c echo.Context) error {
	id, err := a.scheduleID(c)
	if err != nil {
		return err
	}
	res, err := a.d.Schedules.Run(c.Request().Context(), id)
	if err != nil {
		return scheduleError(err, id)
	}
	a.log.InfoContext(c.Request().Context(), "schedule run", slog.String("schedule", id), slog.String("signal_id", res.ID),
		slog.String("token", tokenName(c)))
	return c.JSON(http.StatusOK, res)
}

func (a *API) scheduleRoutes() []route {
	del := func(s Schedules) func(context.Context, string) (schedule.Schedule, error) { return s.Delete }
	pause := func(s Schedules) func(context.Context, string) (schedule.Schedule, error) { return s.Pause }
	resume := func(s Schedules) func(context.Context, string) (schedule.Schedule, error) { return s.Resume }
	return []route{
		{Route{http.MethodGet, "/schedules", ScopeRead}, a.listSchedules},
		{Route{http.MethodPost, "/schedules", ScopeWrite}, a.createSchedule},
		{Route{http.MethodGet, "/schedules/:id", ScopeRead}, a.getSchedule},
		{Route{http.MethodPatch, "/schedules/:id", ScopeWrite}, a.patchSchedule},
		{Route{http.MethodDelete, "/schedules/:id", ScopeWrite}, a.scheduleAction(del, "deleted")},
		{Route{http.MethodPost, "/schedules/:id/pause", ScopeWrite}, a.scheduleAction(pause, "paused")},
		{Route{http.MethodPost, "/schedules/:id/resume", ScopeWrite}, a.scheduleAction(resume, "resumed")},
		{Route{http.MethodPost, "/schedules/:id/run", ScopeWrite}, a.runSchedule},
	}
}

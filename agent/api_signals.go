package agent

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/server"
)

// ErrSignalLogged is a Deliverer's answer for a signal id its thread logged already:
// nothing was sent.
var ErrSignalLogged = errors.New("signal id already logged on this thread")

func (a *API) openRun(c echo.Context, k inbox.ThreadKey) error {
	var body struct{}
	if err := decodeBody(c, &body, true); err != nil {
		return err
	}
	run, created, err := a.Runs.Open(c.Request().Context(), k, OriginAgent)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	return c.JSON(status, run)
}

func (a *API) heartbeat(c echo.Context, k inbox.ThreadKey) error {
	id, err := pathID(c, "runId")
	if err != nil {
		return err
	}
	run, err := a.Runs.Heartbeat(c.Request().Context(), k, id)
	if err != nil {
		return runError(err, id)
	}
	return c.JSON(http.StatusOK, run)
}

func (a *API) finishRun(c echo.Context, k inbox.ThreadKey) error {
	id, err := pathID(c, "runId")
	if err != nil {
		return err
	}
	var body struct {
		Status string `json:"status"`
	}
	if err := decodeBody(c, &body, true); err != nil {
		return err
	}
	if body.Status != "" && body.Status != RunFinished && body.Status != RunAborted {
		return server.BadRequest("status: unknown %q (want finished or aborted)", body.Status)
	}
	run, idle, err := a.Runs.Finish(c.Request().Context(), k, id, body.Status)
	if err != nil {
		return runError(err, id)
	}
	if idle {
		a.Notify([]inbox.ThreadKey{k})
	}
	return c.JSON(http.StatusOK, run)
}

func runError(err error, id string) error {
	switch {
	case errors.Is(err, ErrRunNotFound):
		return server.NotFound("run %q not found on this thread", id)
	case errors.Is(err, ErrRunClosed):
		return server.NewError(http.StatusConflict, "run_closed",
			"run %q is no longer open (finished, aborted, or its lease lapsed): open a new run", id)
	}
	return err
}

// signalRequest is the body of POST …/signals, shaped like Mastra's signals route:
// {"signal": {...}, "ifActive": {...}, "ifIdle": {...}}. A state signal's id names its
// lane; cacheKey and mode sit in the signal.
type signalRequest struct {
	Signal *struct {
		SignalInput
		CacheKey string `json:"cacheKey,omitempty"`
		Mode     string `json:"mode,omitempty"`
	} `json:"signal"`
	Options
}

type signalResponse struct {
	ID      string `json:"id,omitempty"`
	Action  Action `json:"action"`
	RunID   string `json:"runId,omitempty"`
	Skipped string `json:"skipped,omitempty"`
	Version int    `json:"version,omitempty"` // state signals: the lane's version
}

// sendSignal accepts one signal: validates it, resolves its action from the thread's
// presence and the options, and delivers it (a wake opens a run first). A discarded signal
// and a state signal skipped as unchanged store nothing and answer action discard.
func (a *API) sendSignal(c echo.Context, k inbox.ThreadKey) error {
	ctx := c.Request().Context()
	var req signalRequest
	if err := decodeBody(c, &req, false); err != nil {
		return err
	}
	if req.Signal == nil {
		return server.BadRequest("signal: required")
	}
	cfg := a.agents[k.Agent]
	sig, err := NormalizeSignal(req.Signal.SignalInput, int(cfg.MaxContents))
	if err != nil {
		return validationError(err)
	}
	if err := req.Options.Validate(); err != nil {
		return validationError(err)
	}
	if sig.ID != "" {
		// Checked before a state signal's id becomes its lane's: both are indexed.
		if err := checkID(sig.ID); err != nil {
			return server.BadRequest("signal.id: %v", err)
		}
	}
	lane := ""
	if sig.Type == TypeState {
		if !ValidStateMode(req.Signal.Mode) {
			return server.BadRequest("signal.mode: unknown %q (want snapshot or delta)", req.Signal.Mode)
		}
		if lane = sig.ID; lane == "" {
			return server.BadRequest("signal.id: required for a state signal (it names the state lane)")
		}
		sig.ID = ""
	} else if req.Signal.CacheKey != "" || req.Signal.Mode != "" {
		return server.BadRequest("signal: cacheKey and mode apply only to type state")
	}
	conditional := req.IfActive.Attributes.Merge(req.IfIdle.Attributes)
	if sig.ID != "" {
		// A resend of a signal the thread already logged answers like the first time,
		// before anything acts on presence: on an idle thread resolving it again would
		// open (and recover into) a run for a signal that is not sent. Another signal
		// under a logged id is a conflict, never dropped in silence.
		if f, ok, err := a.loggedSignal(ctx, k, sig.ID); err != nil {
			return err
		} else if ok {
			return a.answerLogged(c, f, sig, conditional)
		}
	}
	live, err := a.Runs.Live(ctx, k)
	if err != nil {
		return err
	}
	presence := inbox.PresenceIdle
	if live != nil {
		presence = inbox.PresenceActive
	}
	action, extra := Resolve(req.Options, presence)
	if action == ActionDiscard {
		return c.JSON(http.StatusOK, signalResponse{Action: ActionDiscard})
	}
	now := a.now().UTC()
	var prev *StateLane
	var version int
	if lane != "" {
		next, before, skipped, err := a.States.AdvanceStateLane(ctx, k, lane, req.Signal.CacheKey, req.Signal.Mode, now)
		if err != nil {
			return err
		}
		if skipped {
			return c.JSON(http.StatusOK, signalResponse{Action: ActionDiscard, Skipped: SkipUnchanged, Version: next.Version})
		}
		prev, version = before, next.Version
		sig.Metadata = cloneMeta(sig.Metadata)
		sig.Metadata["state"] = map[string]any{"id": lane, "version": next.Version, "mode": next.Mode, "cacheKey": next.CacheKey}
	}
	if sig.ID == "" {
		sig.ID = a.newID()
	}
	sig = Accept(sig, extra, now)
	d := Delivery{Thread: k, Signal: sig, Action: action, Attempt: 1}
	woke := false // this send opened d's run
	switch {
	case action == ActionWake:
		run, created, err := a.Runs.Open(ctx, k, OriginWake)
		if err != nil {
			return a.undoLane(c, k, lane, prev, version, err)
		}
		d.RunID, d.StreamOptions, woke = run.ID, req.IfIdle.Stream(), created
	case live != nil:
		d.RunID = live.ID
	}
	if _, err := a.Deliverer.Deliver(ctx, d); errors.Is(err, ErrSignalLogged) {
		// A concurrent send of this id was logged first; nothing was sent.
		f, ok, gerr := a.loggedSignal(ctx, k, sig.ID)
		if gerr != nil || !ok {
			return errors.Join(err, gerr)
		}
		return a.answerLogged(c, f, sig, conditional)
	} else if err != nil {
		a.log.Error("deliver signal", "thread", k.String(), "signal_id", sig.ID, "error", err.Error())
		if woke {
			a.abortWake(ctx, k, d.RunID)
		}
		return a.undoLane(c, k, lane, prev, version,
			server.NewError(http.StatusBadGateway, "delivery_failed", "the signal could not be delivered to the agent's target; send it again with the same id"))
	}
	if f, ok, err := a.loggedSignal(ctx, k, sig.ID); err == nil && ok && !sameSignal(f.Signal, sig, conditional) {
		// Two sends of one id raced and the other one's frame holds the id: ours never
		// reaches the thread's log.
		return idConflict(sig.ID)
	}
	return c.JSON(http.StatusOK, signalResponse{ID: sig.ID, Action: action, RunID: d.RunID, Version: version})
}

// abortWake closes the run a wake opened for a signal that never reached the agent:
// nothing runs on the thread, which would otherwise read active for the whole lease. It
// runs even when the sender has gone, so the thread is not left to the lease.
func (a *API) abortWake(ctx context.Context, k inbox.ThreadKey, runID string) {
	_, idle, err := a.Runs.Finish(context.WithoutCancel(ctx), k, runID, RunAborted)
	if err != nil {
		a.log.Error("close the run of a failed wake", "thread", k.String(), "run_id", runID, "error", err.Error())
		return
	}
	if idle {
		a.Notify([]inbox.ThreadKey{k})
	}
}

// answerLogged answers a send whose id the thread logged already: like the first time
// when it is the same signal, 409 when it is another.
func (a *API) answerLogged(c echo.Context, f Frame, sig Signal, conditional inbox.Attributes) error {
	if !sameSignal(f.Signal, sig, conditional) {
		return idConflict(sig.ID)
	}
	return c.JSON(http.StatusOK, signalResponse{ID: f.ID, Action: f.Action, RunID: f.RunID})
}

func idConflict(id string) error {
	return server.NewError(http.StatusConflict, "signal_id_conflict",
		"signal id %q was already used on this thread for a different signal: send it with a new id", id)
}

// sameSignal reports whether logged is the signal sent describes: the same type, tag,
// contents, metadata and attributes, except attributes the delivery options add (they
// depend on the thread's presence, which may have changed since).
func sameSignal(logged, sent Signal, conditional inbox.Attributes) bool {
	if logged.Type != sent.Type || logged.TagName != sent.TagName || logged.Contents != inbox.CleanText(sent.Contents) ||
		canonicalJSON(logged.Metadata) != canonicalJSON(sent.Metadata) {
		return false
	}
	for _, set := range [][2]inbox.Attributes{{logged.Attributes, sent.Attributes}, {sent.Attributes, logged.Attributes}} {
		for _, kv := range set[0] {
			if _, cond := conditional.Get(kv.Key); cond {
				continue
			}
			other, ok := set[1].Get(kv.Key)
			if !ok || canonicalJSON(other) != canonicalJSON(kv.Value) {
				return false
			}
		}
	}
	return true
}

// canonicalJSON renders v as JSON after a round trip, so a value read back from the log
// compares equal to the one decoded from a request; empty and missing maps are alike.
func canonicalJSON(v any) string {
	if m, ok := v.(map[string]any); ok && len(m) == 0 {
		return "{}"
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	var back any
	if json.Unmarshal(raw, &back) != nil {
		return string(raw)
	}
	raw, _ = json.Marshal(back)
	return string(raw)
}

// frameGetter reads a thread's logged signal by id (the store).
type frameGetter interface {
	GetFrame(ctx context.Context, k inbox.ThreadKey, id string) (Frame, error)
}

// loggedSignal finds the signal frame id logged on k, if the frame store can look it up.
func (a *API) loggedSignal(ctx context.Context, k inbox.ThreadKey, id string) (Frame, bool, error) {
	g, ok := a.Frames.(frameGetter)
	if !ok {
		return Frame{}, false, nil
	}
	f, err := g.GetFrame(ctx, k, id)
	switch {
	case errors.Is(err, inbox.ErrNotFound):
		return Frame{}, false, nil
	case err != nil:
		return Frame{}, false, err
	}
	return f, f.Event == EventSignal, nil
}

// undoLane puts a state lane back when its signal did not go out, so a resend is not
// skipped as unchanged.
func (a *API) undoLane(c echo.Context, k inbox.ThreadKey, lane string, prev *StateLane, version int, cause error) error {
	if lane == "" {
		return cause
	}
	if err := a.States.RestoreStateLane(c.Request().Context(), k, lane, prev, version); err != nil {
		a.log.Error("restore state lane", "thread", k.String(), "lane", lane, "error", err.Error())
	}
	return cause
}

func cloneMeta(m map[string]any) map[string]any {
	out := make(map[string]any, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	return out
}

package agent

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/signalgate/signalgate/inbox"
)

// ErrSignalLogged is a Deliverer's answer for a signal id its thread logged already:
// nothing was sent.
var ErrSignalLogged = errors.New("signal id already logged on this thread")

// ErrDeliveryFailed is SendSignal's answer when the agent's target did not take the
// signal (the cause is logged): the sender may send it again with the same id.
var ErrDeliveryFailed = errors.New("the signal could not be delivered to the agent's target; send it again with the same id")

// OpenRun opens a run on thread k for its agent, or returns the open one (created
// false).
func (s *Service) OpenRun(ctx context.Context, k inbox.ThreadKey) (Run, bool, error) {
	return s.Runs.Open(ctx, k, OriginAgent)
}

// Heartbeat extends run id's lease.
func (s *Service) Heartbeat(ctx context.Context, k inbox.ThreadKey, id string) (Run, error) {
	run, err := s.Runs.Heartbeat(ctx, k, id)
	if err != nil {
		return Run{}, runError(err, id)
	}
	return run, nil
}

// FinishRequest is the body of POST …/runs/{runId}/finish.
type FinishRequest struct {
	Status string `json:"status,omitempty"`
	// ClearPendingSignals, with status aborted on an agent whose runtime reports its runs,
	// asks the runtime to drop the signals queued behind the run it aborts (Mastra's
	// abortThreadStream option).
	ClearPendingSignals *bool `json:"clearPendingSignals,omitempty"`
}

// FinishRun closes run id as finished or aborted ("" is finished); a thread left idle
// has its waiting records sent at once.
func (s *Service) FinishRun(ctx context.Context, k inbox.ThreadKey, id, status string) (Run, error) {
	return s.Finish(ctx, k, id, FinishRequest{Status: status})
}

// ErrAbortFailed is Finish's answer when the agent's runtime did not take the abort: the
// run stays open, and the finish may be sent again.
var ErrAbortFailed = errors.New("the agent's runtime did not take the abort (the cause is logged); the run stays open: send the finish again")

// Finish is FinishRun with Mastra's abort options. Aborting the live run of an agent
// whose runtime reports its runs (PresenceRuntime) aborts the runtime's run of the
// thread first (so the runtime, not only the gateway, stops it); when the runtime cannot
// be reached the gateway run stays open and the answer is 502.
func (s *Service) Finish(ctx context.Context, k inbox.ThreadKey, id string, req FinishRequest) (Run, error) {
	status := req.Status
	if status != "" && status != RunFinished && status != RunAborted {
		return Run{}, invalidf("status: unknown %q (want finished or aborted)", status)
	}
	if req.ClearPendingSignals != nil && status != RunAborted {
		return Run{}, invalidf("clearPendingSignals: only with status aborted")
	}
	if status == RunAborted && s.Aborter != nil && s.agents[k.Agent].Target.Presence == PresenceRuntime {
		live, err := s.Runs.Live(ctx, k)
		if err != nil {
			return Run{}, err
		}
		// Only the thread's live run is the runtime's current one: aborting after it
		// closed would abort whatever the runtime runs now.
		if live != nil && live.ID == id {
			clear := req.ClearPendingSignals != nil && *req.ClearPendingSignals
			if err := s.Aborter.AbortThread(ctx, k, clear); err != nil {
				s.log.Error("abort the runtime's run", "thread", k.String(), "run_id", id, "error", err.Error())
				return Run{}, ErrAbortFailed
			}
		}
	}
	run, idle, err := s.Runs.Finish(ctx, k, id, status)
	if err != nil {
		return Run{}, runError(err, id)
	}
	if idle {
		s.Notify([]inbox.ThreadKey{k})
	}
	return run, nil
}

func runError(err error, id string) error {
	switch {
	case errors.Is(err, ErrRunNotFound):
		return notFoundf("run %q not found on this thread", id)
	case errors.Is(err, ErrRunClosed):
		return NewError(KindConflict, "run_closed",
			"run %q is no longer open (finished, aborted, or its lease lapsed): open a new run", id)
	}
	return err
}

// SignalRequest is the body of POST …/signals, Mastra's signals route's: {"signal": {...},
// "runId", "resourceId", "threadId", "ifActive": {...}, "ifIdle": {...}}. A state
// signal's id names its lane; cacheKey, mode, value and delta sit in the signal.
type SignalRequest struct {
	Signal *SignalBody `json:"signal"`
	// RunID targets a run: one that is the thread's live run gets the signal; any other
	// sends to the thread with the default idle behaviour (wake), as Mastra's route does.
	RunID string `json:"runId,omitempty"`
	// ResourceID and ThreadID, when given, must name the path's thread.
	ResourceID string `json:"resourceId,omitempty"`
	ThreadID   string `json:"threadId,omitempty"`
	Options
}

// SignalBody is a signal as POST …/signals takes it.
type SignalBody struct {
	SignalInput
	// Contents shadows SignalInput's: a string or an array of parts (ParseContents).
	Contents json.RawMessage `json:"contents"`
	CacheKey string          `json:"cacheKey,omitempty"`
	Mode     string          `json:"mode,omitempty"`
	// Value and Delta (state signals) land in metadata.value and metadata.delta, where
	// Mastra's state signals carry them.
	Value any `json:"value,omitempty"`
	Delta any `json:"delta,omitempty"`
}

// SignalResult is what sending a signal did, in the shape of Mastra's signals route:
// accepted, runId (the run for wake and deliver; the signal id for persist and
// discard, as Mastra answers) and the signal, with the gateway's id and action beside.
// A state signal skipped as unchanged answers skipped, reason and its lane's version.
type SignalResult struct {
	Accepted bool     `json:"accepted"`
	ID       string   `json:"id,omitempty"`
	Action   Behavior `json:"action"`
	RunID    string   `json:"runId,omitempty"`
	Signal   *Signal  `json:"signal,omitempty"`
	Skipped  bool     `json:"skipped,omitempty"`
	Reason   string   `json:"reason,omitempty"`
	Version  int      `json:"version,omitempty"` // state signals: the lane's version
}

// answered is the result of sig sent with action into run (Mastra's runId rule).
func answered(sig Signal, action Behavior, run string, version int) SignalResult {
	if action == BehaviorPersist || action == BehaviorDiscard {
		run = sig.ID
	}
	return SignalResult{Accepted: true, ID: sig.ID, Action: action, RunID: run, Signal: &sig, Version: version}
}

// checkTarget applies the body's thread and run fields to the path's thread k.
func (req *SignalRequest) checkTarget(k inbox.ThreadKey) error {
	if (req.ResourceID != "" && req.ResourceID != k.Resource) || (req.ThreadID != "" && req.ThreadID != k.Thread) {
		return NewError(KindInvalid, "thread_mismatch", "resourceId and threadId, when given, must be the path's (%q, %q)", k.Resource, k.Thread)
	}
	if req.RunID == "" {
		return nil
	}
	if err := checkID(req.RunID); err != nil {
		return invalidf("runId: %v", err)
	}
	idle := req.IfIdle
	if idle.Behavior != "" || idle.Attributes != nil || idle.StreamOptions != nil || idle.RunOptions != nil {
		return invalidf("runId and ifIdle: a signal sent to a run has no idle behaviour (as in Mastra): drop one")
	}
	return nil
}

// input is the body as a SignalInput: contents parsed, a state's value and delta in
// its metadata.
func (b *SignalBody) input() (SignalInput, error) {
	in := b.SignalInput
	text, parts, err := ParseContents(b.Contents)
	if err != nil {
		return in, invalidf("signal.contents: %v", err)
	}
	in.Contents, in.Parts = text, parts
	if b.Value != nil || b.Delta != nil {
		if in.Type != string(TypeState) {
			return in, invalidf("signal: value and delta apply only to type state")
		}
		in.Metadata = cloneMeta(in.Metadata)
		if b.Value != nil {
			in.Metadata["value"] = b.Value
		}
		if b.Delta != nil {
			in.Metadata["delta"] = b.Delta
		}
	}
	return in, nil
}

// SendSignal accepts one signal: validates it, resolves its action from the thread's
// presence and the options, and delivers it (a wake opens a run first). A discarded signal
// and a state signal skipped as unchanged store nothing and answer action discard.
func (s *Service) SendSignal(ctx context.Context, k inbox.ThreadKey, req SignalRequest) (SignalResult, error) {
	if req.Signal == nil {
		return SignalResult{}, invalidf("signal: required")
	}
	if err := req.checkTarget(k); err != nil {
		return SignalResult{}, err
	}
	in, err := req.Signal.input()
	if err != nil {
		return SignalResult{}, err
	}
	cfg := s.agents[k.Agent]
	sig, err := NormalizeSignal(in, int(cfg.MaxContents))
	if err != nil {
		return SignalResult{}, validationError(err)
	}
	if err := req.Options.Validate(); err != nil {
		return SignalResult{}, validationError(err)
	}
	if sig.ID != "" {
		// Checked before a state signal's id becomes its lane's: both are indexed.
		if err := checkID(sig.ID); err != nil {
			return SignalResult{}, invalidf("signal.id: %v", err)
		}
	}
	lane := ""
	if sig.Type == TypeState {
		if !ValidStateMode(req.Signal.Mode) {
			return SignalResult{}, invalidf("signal.mode: unknown %q (want snapshot or delta)", req.Signal.Mode)
		}
		if lane = sig.ID; lane == "" {
			return SignalResult{}, invalidf("signal.id: required for a state signal (it names the state lane)")
		}
		sig.ID = ""
	} else if req.Signal.CacheKey != "" || req.Signal.Mode != "" {
		return SignalResult{}, invalidf("signal: cacheKey and mode apply only to type state")
	}
	conditional := req.IfActive.Attributes.Merge(req.IfIdle.Attributes)
	if sig.ID != "" {
		// A resend of a signal the thread already logged answers like the first time,
		// before anything acts on presence: on an idle thread resolving it again would
		// open (and recover into) a run for a signal that is not sent. Another signal
		// under a logged id is a conflict, never dropped in silence.
		if f, ok, err := s.loggedSignal(ctx, k, sig.ID); err != nil {
			return SignalResult{}, err
		} else if ok {
			return answerLogged(f, sig, conditional)
		}
	}
	live, err := s.Runs.Live(ctx, k)
	if err != nil {
		return SignalResult{}, err
	}
	presence := inbox.PresenceIdle
	if live != nil {
		presence = inbox.PresenceActive
	}
	action, extra := Resolve(req.Options, presence)
	if action == BehaviorPersist && sig.Transient {
		action = BehaviorDiscard // nothing to keep of a transient signal, as in Mastra
	}
	now := s.now().UTC()
	if action == BehaviorDiscard {
		if sig.ID == "" {
			sig.ID = s.newID()
		}
		return answered(Accept(sig, nil, now), BehaviorDiscard, "", 0), nil
	}
	var prev *StateLane
	var version int
	if lane != "" {
		next, before, skipped, err := s.States.AdvanceStateLane(ctx, k, lane, req.Signal.CacheKey, req.Signal.Mode, now)
		if err != nil {
			return SignalResult{}, err
		}
		if skipped {
			return SignalResult{Accepted: true, Action: BehaviorDiscard, Skipped: true, Reason: SkipUnchanged, Version: next.Version}, nil
		}
		prev, version = before, next.Version
		sig.Metadata = cloneMeta(sig.Metadata)
		sig.Metadata["state"] = map[string]any{"id": lane, "version": next.Version, "mode": next.Mode, "cacheKey": next.CacheKey}
	}
	if sig.ID == "" {
		sig.ID = s.newID()
	}
	sig = Accept(sig, extra, now)
	d := Handoff{Thread: k, Signal: sig, Behavior: action, Attempt: 1}
	woke := false // this send opened d's run
	switch {
	case action == BehaviorWake:
		run, created, err := s.ownWake(ctx, k)
		if err != nil {
			return SignalResult{}, s.undoLane(ctx, k, lane, prev, version, err)
		}
		d.RunID, d.StreamOptions, woke = run.ID, req.IfIdle.Stream(), created
	case live != nil:
		d.RunID = live.ID
	}
	if _, err := s.Deliverer.Deliver(ctx, d); errors.Is(err, ErrSignalLogged) {
		// A concurrent send of this id was logged first; nothing was sent.
		f, ok, gerr := s.loggedSignal(ctx, k, sig.ID)
		if gerr != nil || !ok {
			return SignalResult{}, errors.Join(err, gerr)
		}
		return answerLogged(f, sig, conditional)
	} else if err != nil {
		s.log.Error("deliver signal", "thread", k.String(), "signal_id", sig.ID, "error", err.Error())
		if woke {
			s.abortWake(ctx, k, d.RunID)
		}
		return SignalResult{}, s.undoLane(ctx, k, lane, prev, version, ErrDeliveryFailed)
	}
	if f, ok, err := s.loggedSignal(ctx, k, sig.ID); err == nil && ok && !sameSignal(f.Signal, sig, conditional) {
		// Two sends of one id raced and the other one's frame holds the id: ours never
		// reaches the thread's log.
		return SignalResult{}, idConflict(sig.ID)
	}
	return answered(sig, action, d.RunID, version), nil
}

// abortWake closes the run a wake opened for a signal that never reached the agent:
// nothing runs on the thread, which would otherwise read active for the whole lease. It
// runs even when the sender has gone, so the thread is not left to the lease.
func (s *Service) abortWake(ctx context.Context, k inbox.ThreadKey, runID string) {
	_, idle, err := s.Runs.Finish(context.WithoutCancel(ctx), k, runID, RunAborted)
	if err != nil {
		s.log.Error("close the run of a failed wake", "thread", k.String(), "run_id", runID, "error", err.Error())
		return
	}
	if idle {
		s.Notify([]inbox.ThreadKey{k})
	}
}

// answerLogged answers a send whose id the thread logged already: like the first time
// when it is the same signal, 409 when it is another.
func answerLogged(f Frame, sig Signal, conditional inbox.Attributes) (SignalResult, error) {
	if !sameSignal(f.Signal, sig, conditional) {
		return SignalResult{}, idConflict(sig.ID)
	}
	return answered(f.Signal, f.Behavior, f.RunID, 0), nil
}

func idConflict(id string) error {
	return NewError(KindConflict, "signal_id_conflict",
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
func (s *Service) loggedSignal(ctx context.Context, k inbox.ThreadKey, id string) (Frame, bool, error) {
	return loggedSignal(ctx, s.Frames, k, id)
}

func loggedSignal(ctx context.Context, frames FrameReader, k inbox.ThreadKey, id string) (Frame, bool, error) {
	g, ok := frames.(frameGetter)
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
func (s *Service) undoLane(ctx context.Context, k inbox.ThreadKey, lane string, prev *StateLane, version int, cause error) error {
	if lane == "" {
		return cause
	}
	if err := s.States.RestoreStateLane(ctx, k, lane, prev, version); err != nil {
		s.log.Error("restore state lane", "thread", k.String(), "lane", lane, "error", err.Error())
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

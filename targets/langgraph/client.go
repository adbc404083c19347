package langgraph

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/secret"
	"github.com/signalgate/signalgate/targets/httptarget"
)

// Thread statuses of the Agent Server.
const (
	StatusIdle        = "idle"
	StatusBusy        = "busy"
	StatusInterrupted = "interrupted"
	StatusError       = "error"
)

// Run statuses of the Agent Server. A run that stops at interrupt() ends success: the
// thread, not the run, says interrupted.
const (
	RunPending     = "pending"
	RunRunning     = "running"
	RunSuccess     = "success"
	RunError       = "error"
	RunInterrupted = "interrupted"
	RunTimeout     = "timeout"
)

// runEnded reports a run status that will not change.
func runEnded(s string) bool {
	return s != RunPending && s != RunRunning && s != ""
}

// Metadata keys the gateway puts on LangGraph threads and runs.
const (
	MetaAgent    = "signalgate_agent"
	MetaResource = "signalgate_resource"
	MetaThread   = "signalgate_thread"
	MetaSignal   = "signalgate_signal"
	MetaRun      = "signalgate_run" // the gateway run the LangGraph run belongs to
)

// maxValuesBody bounds the thread read for a run's answer (its whole state).
const maxValuesBody = 32 << 20

// api calls one Agent Server for one agent.
type api struct {
	srv    server
	client *http.Client
	now    func() time.Time
}

func (a *api) headers() map[string]string { return secret.RevealMap(a.srv.Headers) }

func (a *api) post(ctx context.Context, path string, body any) ([]byte, agent.Result, error) {
	raw, err := json.Marshal(body)
	if err != nil {
		return nil, agent.Result{}, fmt.Errorf("encode request: %w", err)
	}
	return httptarget.Post(ctx, a.client, a.srv.base()+path, a.headers(), raw, a.srv.Timeout, a.now)
}

func (a *api) get(ctx context.Context, path string) ([]byte, agent.Result, error) {
	return httptarget.Get(ctx, a.client, a.srv.base()+path, a.headers(), a.srv.Timeout, a.now)
}

// thread is what the gateway reads of a LangGraph thread.
type thread struct {
	ThreadID string `json:"thread_id"`
	Status   string `json:"status"`
	// Interrupts are the pending interrupt() calls by task: {task id: [{id, value}]}.
	Interrupts map[string][]pendingInterrupt `json:"interrupts"`
}

// pendingInterrupt is one interrupt() a thread waits on: its id and what the node asked.
type pendingInterrupt struct {
	ID    string          `json:"id"`
	Value json.RawMessage `json:"value"`
}

// pending lists the thread's interrupts, in a stable order.
func (t thread) pending() []pendingInterrupt {
	var out []pendingInterrupt
	for _, list := range t.Interrupts {
		for _, i := range list {
			if i.ID != "" {
				out = append(out, i)
			}
		}
	}
	sortInterrupts(out)
	return out
}

// ensureThread creates k's LangGraph thread unless it exists (if_exists: do_nothing),
// with the gateway's ids (and the graph, so a state update works before any run) in
// its metadata, and returns its status.
func (a *api) ensureThread(ctx context.Context, k inbox.ThreadKey, graphID string) (thread, error) {
	meta := map[string]any{MetaAgent: k.Agent, MetaResource: k.Resource, MetaThread: k.Thread}
	if graphID != "" {
		meta["graph_id"] = graphID
	}
	raw, _, err := a.post(ctx, "/threads", map[string]any{"thread_id": ThreadID(k), "if_exists": "do_nothing", "metadata": meta})
	if err != nil {
		return thread{}, fmt.Errorf("create the LangGraph thread of %s: %w", k, err)
	}
	// An existing thread comes with its whole state; the status comes before it.
	var t thread
	fields := topLevel(raw, "thread_id", "status")
	_ = json.Unmarshal(fields["status"], &t.Status)
	_ = json.Unmarshal(fields["thread_id"], &t.ThreadID)
	return t, nil
}

// status reads k's thread status and pending interrupts without its state (POST
// /threads/search with select). found is false for a thread the server does not have.
func (a *api) status(ctx context.Context, k inbox.ThreadKey) (t thread, found bool, err error) {
	id := ThreadID(k)
	raw, _, err := a.post(ctx, "/threads/search", map[string]any{"ids": []string{id}, "limit": 1,
		"select": []string{"thread_id", "status", "interrupts"}})
	if err != nil {
		return thread{}, false, fmt.Errorf("read the LangGraph thread of %s: %w", k, err)
	}
	var list []thread
	if err := json.Unmarshal(raw, &list); err != nil {
		return thread{}, false, &agent.DeliveryError{Err: fmt.Errorf("read the LangGraph thread of %s: unreadable answer: %w", k, err), Retry: true}
	}
	// A server that ignores ids lists others: only ours counts.
	for _, t := range list {
		if t.ThreadID == id {
			return t, true, nil
		}
	}
	return thread{}, false, nil
}

// runRequest is POST /threads/{thread_id}/runs's body.
type runRequest struct {
	AssistantID       string         `json:"assistant_id"`
	Input             any            `json:"input,omitempty"`
	Command           map[string]any `json:"command,omitempty"`
	Metadata          map[string]any `json:"metadata,omitempty"`
	Config            any            `json:"config,omitempty"`
	Context           any            `json:"context,omitempty"`
	Webhook           string         `json:"webhook,omitempty"`
	MultitaskStrategy string         `json:"multitask_strategy,omitempty"`
	IfNotExists       string         `json:"if_not_exists,omitempty"`
}

// run is what the gateway reads of a LangGraph run.
type run struct {
	RunID    string `json:"run_id"`
	ThreadID string `json:"thread_id"`
	Status   string `json:"status"`
}

// errBusy: the server refused a run because the thread is running one (reject).
var errBusy = errors.New("the LangGraph thread is running another run")

// createRun starts a run on k's thread (creating the thread if the server lost it). A
// refusal because the thread is busy (409; the JS server answers 422) is errBusy.
func (a *api) createRun(ctx context.Context, k inbox.ThreadKey, req runRequest) (run, agent.Result, error) {
	req.AssistantID = a.srv.AssistantID
	req.IfNotExists = "create"
	raw, res, err := a.post(ctx, "/threads/"+ThreadID(k)+"/runs", req)
	if err != nil {
		if st := agent.DeliveryFailure(err).Status; st == http.StatusConflict || st == http.StatusUnprocessableEntity {
			return run{}, res, fmt.Errorf("%w: %w", errBusy, err)
		}
		return run{}, res, err
	}
	var r run
	if err := json.Unmarshal(raw, &r); err != nil || r.RunID == "" {
		// Accepted: the run exists whatever its answer says; presence is read from the thread.
		return run{}, res, nil
	}
	return r, res, nil
}

// getRun reads one run of k's thread.
func (a *api) getRun(ctx context.Context, k inbox.ThreadKey, runID string) (run, error) {
	raw, _, err := a.get(ctx, "/threads/"+ThreadID(k)+"/runs/"+url.PathEscape(runID))
	if err != nil {
		return run{}, fmt.Errorf("read LangGraph run %s of %s: %w", runID, k, err)
	}
	var r run
	if err := json.Unmarshal(raw, &r); err != nil {
		return run{}, &agent.DeliveryError{Err: fmt.Errorf("read LangGraph run %s of %s: unreadable answer: %w", runID, k, err), Retry: true}
	}
	return r, nil
}

// activeRuns lists the runs of k's thread that are pending or running (at most one of
// each is asked for: whether there is any).
func (a *api) activeRuns(ctx context.Context, k inbox.ThreadKey) ([]run, error) {
	var out []run
	for _, st := range []string{RunRunning, RunPending} {
		raw, _, err := a.get(ctx, "/threads/"+ThreadID(k)+"/runs?"+url.Values{"status": {st}, "limit": {"1"}}.Encode())
		if err != nil {
			return nil, fmt.Errorf("list the LangGraph runs of %s: %w", k, err)
		}
		var list []run
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, &agent.DeliveryError{Err: fmt.Errorf("list the LangGraph runs of %s: unreadable answer: %w", k, err), Retry: true}
		}
		for _, r := range list {
			if !runEnded(r.Status) {
				out = append(out, r)
			}
		}
	}
	return out, nil
}

// updateState writes values into k's thread state without a run.
func (a *api) updateState(ctx context.Context, k inbox.ThreadKey, values any) (agent.Result, error) {
	_, res, err := a.post(ctx, "/threads/"+ThreadID(k)+"/state", map[string]any{"values": values})
	return res, err
}

// cancel cancels one run of k's thread, keeping what it wrote (action interrupt).
func (a *api) cancel(ctx context.Context, k inbox.ThreadKey, runID string) error {
	_, _, err := a.post(ctx, "/threads/"+ThreadID(k)+"/runs/"+url.PathEscape(runID)+"/cancel?action=interrupt", struct{}{})
	return err
}

// graphID reads the graph of the assistant (GET /assistants/{assistant_id}).
func (a *api) graphID(ctx context.Context) (string, error) {
	raw, _, err := a.get(ctx, "/assistants/"+url.PathEscape(a.srv.AssistantID))
	if err != nil {
		return "", err
	}
	var body struct {
		GraphID string `json:"graph_id"`
	}
	if err := json.Unmarshal(raw, &body); err != nil {
		return "", fmt.Errorf("read assistant %s: unreadable answer: %w", a.srv.AssistantID, err)
	}
	return body.GraphID, nil
}

// messages reads k's thread state's messages (GET /threads/{thread_id}: the whole state,
// read up to maxValuesBody).
func (a *api) messages(ctx context.Context, k inbox.ThreadKey) ([]json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(ctx, a.srv.Timeout)
	defer cancel()
	u := a.srv.base() + "/threads/" + ThreadID(k)
	shown := httptarget.SafeURL(a.srv.URL)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("GET %s: bad request", shown)
	}
	req.Header.Set("User-Agent", "signalgate")
	for hk, hv := range a.headers() {
		req.Header.Set(hk, hv)
	}
	resp, err := httptarget.NoRedirects(a.client).Do(req)
	if err != nil {
		return nil, &agent.DeliveryError{Err: fmt.Errorf("read the LangGraph thread of %s at %s: transport error", k, shown), Retry: true}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		return nil, &agent.DeliveryError{Err: fmt.Errorf("read the LangGraph thread of %s at %s: HTTP %d", k, shown, resp.StatusCode),
			Status: resp.StatusCode, Retry: httptarget.Retryable(resp.StatusCode)}
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxValuesBody+1))
	if err != nil {
		return nil, &agent.DeliveryError{Err: fmt.Errorf("read the LangGraph thread of %s at %s: %w", k, shown, err), Retry: true}
	}
	if len(raw) > maxValuesBody {
		return nil, fmt.Errorf("the LangGraph thread of %s is over %d bytes", k, maxValuesBody)
	}
	var body struct {
		Values struct {
			Messages []json.RawMessage `json:"messages"`
		} `json:"values"`
	}
	if err := json.Unmarshal(raw, &body); err != nil {
		return nil, fmt.Errorf("read the LangGraph thread of %s: unreadable answer: %w", k, err)
	}
	return body.Values.Messages, nil
}

// topLevel reads the named keys of a JSON object without decoding the rest of it more
// than needed: it stops once it has them, so a long answer cut short after them still
// gives them.
func topLevel(raw []byte, keys ...string) map[string]json.RawMessage {
	return topLevelReader(bytes.NewReader(raw), keys...)
}

// sortInterrupts orders interrupts by id.
func sortInterrupts(list []pendingInterrupt) {
	slices.SortFunc(list, func(a, b pendingInterrupt) int { return strings.Compare(a.ID, b.ID) })
}

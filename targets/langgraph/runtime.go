package langgraph

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/approval"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/targets/httptarget"
)

// Client makes the calls the gateway sends LangGraph servers beside deliveries, for
// every configured langgraph agent: answering an interrupt (a question's answer resumes
// the run), aborting a thread's runs, and reading a thread for the console.
type Client struct {
	agents map[string]*api
}

var (
	_ agent.ThreadAborter = (*Client)(nil)
	_ approval.Resumer    = (*Client)(nil)
)

// NewClient builds the client for the configured langgraph agents (others are skipped);
// client carries every request (nil: a default one).
func NewClient(cfgs []agent.Config, client *http.Client) *Client {
	c := &Client{agents: map[string]*api{}}
	if client == nil {
		client = &http.Client{}
	}
	for _, cfg := range cfgs {
		if srv, err := serverOf(cfg); err == nil {
			c.agents[cfg.ID] = &api{srv: srv, client: client, now: time.Now}
		}
	}
	return c
}

func (c *Client) agent(k inbox.ThreadKey) (*api, error) {
	f, ok := c.agents[k.Agent]
	if !ok {
		return nil, fmt.Errorf("agent %q is not a langgraph agent", k.Agent)
	}
	return f, nil
}

// Answer resumes k's thread with an answer to interrupt callID: a run with
// command: {resume: {callID: resumeData}} (the graph's interrupt() returns it). A thread
// no longer waiting on that interrupt is approval.ErrStale.
func (c *Client) Answer(ctx context.Context, k inbox.ThreadKey, callID string, resumeData any) error {
	f, err := c.agent(k)
	if err != nil {
		return err
	}
	t, found, err := f.status(ctx, k)
	if err != nil {
		return fmt.Errorf("answer interrupt %s: %w", callID, err)
	}
	waits := false
	for _, p := range t.pending() {
		waits = waits || p.ID == callID
	}
	if !found || t.Status != StatusInterrupted || !waits {
		return fmt.Errorf("%w: the LangGraph thread of %s does not wait on interrupt %s (status %q)", approval.ErrStale, k, callID, t.Status)
	}
	// No run may be going (reject): one that is answered the question already, or
	// will ask it again.
	_, _, err = f.createRun(ctx, k, runRequest{Command: map[string]any{"resume": map[string]any{callID: resumeData}},
		MultitaskStrategy: Reject, Webhook: f.srv.webhookURL(k, ""),
		Metadata: map[string]any{MetaAgent: k.Agent, MetaResource: k.Resource, MetaThread: k.Thread}})
	var de *agent.DeliveryError
	switch {
	case errors.Is(err, errBusy):
		return fmt.Errorf("answer interrupt %s: %w", callID, err)
	case errors.As(err, &de) && de.Status >= 400 && de.Status < 500 && !httptarget.Retryable(de.Status) &&
		de.Status != http.StatusUnauthorized && de.Status != http.StatusForbidden:
		return fmt.Errorf("%w: %w", approval.ErrStale, err)
	case err != nil:
		return fmt.Errorf("answer interrupt %s: %w", callID, err)
	}
	return nil
}

// SendToolApproval refuses: a LangGraph interrupt is a question, answered by a reply.
func (c *Client) SendToolApproval(_ context.Context, k inbox.ThreadKey, toolCallID string, _ bool) error {
	return fmt.Errorf("%w: interrupt %s of %s is a question: it is answered, not approved", approval.ErrStale, toolCallID, k)
}

// AbortThread cancels the run the server is running on k's thread (POST
// …/runs/{run_id}/cancel?action=interrupt); clearPendingSignals also cancels the runs
// waiting behind it (signals enqueued while it ran).
func (c *Client) AbortThread(ctx context.Context, k inbox.ThreadKey, clearPendingSignals bool) error {
	f, err := c.agent(k)
	if err != nil {
		return err
	}
	runs, err := f.activeRuns(ctx, k)
	if err != nil {
		return fmt.Errorf("abort the LangGraph runs of %s: %w", k, err)
	}
	var errs []error
	for _, r := range runs {
		if r.Status == RunPending && !clearPendingSignals {
			continue
		}
		if err := f.cancel(ctx, k, r.RunID); err != nil && agent.DeliveryFailure(err).Status != http.StatusNotFound {
			errs = append(errs, fmt.Errorf("cancel LangGraph run %s of %s: %w", r.RunID, k, err))
		}
	}
	return errors.Join(errs...)
}

// RuntimeRun is what the server says of k's thread now: its status and the run it
// runs (or the next one waiting), for the console.
func (f *Follower) RuntimeRun(ctx context.Context, k inbox.ThreadKey) (agent.RuntimeRun, bool, error) {
	if k.Agent != f.id || f.err != nil {
		return agent.RuntimeRun{}, false, nil
	}
	return f.api.runtimeRun(ctx, k)
}

// runtimeRun reads k's thread and its running run.
func (f *api) runtimeRun(ctx context.Context, k inbox.ThreadKey) (agent.RuntimeRun, bool, error) {
	out := agent.RuntimeRun{Kind: Kind, Thread: ThreadID(k), Term: "run"}
	t, found, err := f.status(ctx, k)
	if err != nil {
		return out, true, err
	}
	if !found {
		out.Status = "not created"
		return out, true, nil
	}
	out.Status = t.Status
	for _, p := range t.pending() {
		out.Waiting = append(out.Waiting, p.ID)
	}
	if t.Status == StatusBusy {
		runs, err := f.activeRuns(ctx, k)
		if err != nil {
			return out, true, err
		}
		if len(runs) > 0 {
			out.Run, out.RunStatus = runs[0].RunID, runs[0].Status
		}
	}
	return out, true, nil
}

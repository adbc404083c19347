package gateway

import (
	"context"
	"fmt"
	"net/http"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/approval"
	"github.com/signalgate/signalgate/delivery"
	"github.com/signalgate/signalgate/inbox"
)

// runtimeClients are the clients of every agent whose kind has a Runtime, by agent, and
// of every agent whose built target answers the runtime calls itself (routes).
func (c *Config) runtimeClients(hc *http.Client, routes map[string]delivery.Route) agentRuntimes {
	out := agentRuntimes{}
	for id, r := range routes {
		if t, ok := r.Target.(selfRuntime); ok {
			out[id] = runtimeClients{Aborter: t, Resumer: t}
		}
	}
	kinds := c.targetKinds()
	for _, k := range kinds {
		var agents []agent.Config
		for _, a := range c.Agents {
			if a = a.WithDefaults(); a.Target.Kind == k.kind() {
				agents = append(agents, a)
			}
		}
		rc, ok := k.runtime(agents, hc)
		if !ok {
			continue
		}
		for _, a := range agents {
			out[a.ID] = rc
		}
	}
	return out
}

// selfRuntime is a target that answers the runtime calls itself.
type selfRuntime interface {
	agent.ThreadAborter
	approval.Resumer
}

// agentRuntimes routes the calls the gateway makes to agents' runtimes to the clients
// of each agent's kind.
type agentRuntimes map[string]runtimeClients

var (
	_ agent.ThreadAborter = agentRuntimes(nil)
	_ approval.Resumer    = agentRuntimes(nil)
)

// AbortThread aborts the runtime's run of k; a runtime without aborts holds none.
func (r agentRuntimes) AbortThread(ctx context.Context, k inbox.ThreadKey, clearPendingSignals bool) error {
	if a := r[k.Agent].Aborter; a != nil {
		return a.AbortThread(ctx, k, clearPendingSignals)
	}
	return nil
}

// SendToolApproval answers a call k's runtime suspended for approval.
func (r agentRuntimes) SendToolApproval(ctx context.Context, k inbox.ThreadKey, toolCallID string, approved bool) error {
	res, err := r.resumer(k)
	if err != nil {
		return err
	}
	return res.SendToolApproval(ctx, k, toolCallID, approved)
}

// Answer resumes a call k's runtime suspended for an answer.
func (r agentRuntimes) Answer(ctx context.Context, k inbox.ThreadKey, toolCallID string, resumeData any) error {
	res, err := r.resumer(k)
	if err != nil {
		return err
	}
	return res.Answer(ctx, k, toolCallID, resumeData)
}

func (r agentRuntimes) resumer(k inbox.ThreadKey) (approval.Resumer, error) {
	if res := r[k.Agent].Resumer; res != nil {
		return res, nil
	}
	return nil, fmt.Errorf("agent %q: its runtime answers no tool calls", k.Agent)
}

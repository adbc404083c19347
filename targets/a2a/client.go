package a2a

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/secret"
	"github.com/signalgate/signalgate/targets/httptarget"
)

// conn is how the gateway calls one A2A agent: its card, read once, and JSON-RPC over
// the endpoint the card names.
type conn struct {
	cfg   settings
	hc    *http.Client
	now   func() time.Time
	cards *cardCache
	seq   atomic.Int64
}

func newConn(cfg settings, hc *http.Client, now func() time.Time) *conn {
	if hc == nil {
		hc = &http.Client{}
	}
	return &conn{cfg: cfg, hc: hc, now: now, cards: &cardCache{cfg: cfg, hc: hc, now: now}}
}

// card is the agent's card; a failure to read it may pass (the agent is starting, the
// network is down), so it is retried and counts against the target's health.
func (c *conn) card(ctx context.Context) (Card, error) {
	card, err := c.cards.get(ctx)
	if err != nil {
		de := agent.DeliveryFailure(err)
		return Card{}, &agent.DeliveryError{Err: err, Status: de.Status, Retry: true, RetryAfter: de.RetryAfter}
	}
	return card, nil
}

// call makes one JSON-RPC call of method at the card's endpoint and decodes its result
// into out. A JSON-RPC error answer is an *rpcError inside an *agent.DeliveryError that
// says whether trying again may help; other failures are httptarget's.
func (c *conn) call(ctx context.Context, card Card, method string, params any, out any) (agent.Result, error) {
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.seq.Add(1), "method": method, "params": params})
	if err != nil {
		return agent.Result{}, fmt.Errorf("encode %s: %w", method, err)
	}
	headers := secret.RevealMap(c.cfg.Headers)
	if headers == nil {
		headers = map[string]string{}
	}
	if card.V1() {
		// The SDK routes by this header, not by the method: without it a v1.0 method is
		// unknown to a server that also speaks v0.3.
		headers[headerVersion] = protocolV1
	}
	raw, res, err := httptarget.Post(ctx, c.hc, card.Endpoint, headers, body, c.cfg.Timeout, c.now)
	if err != nil {
		if de := agent.DeliveryFailure(err); de.Status == http.StatusNotFound || de.Status == http.StatusGone || (de.Status == 0 && de.Retry) {
			c.cards.stale() // the endpoint may have moved: the card says where it is now
		}
		return res, fmt.Errorf("%s: %w", method, err)
	}
	var env struct {
		Result json.RawMessage `json:"result"`
		Error  *rpcError       `json:"error"`
	}
	if err := json.Unmarshal(raw, &env); err != nil {
		return res, &agent.DeliveryError{Err: fmt.Errorf("%s at %s: unreadable JSON-RPC answer", method, httptarget.SafeURL(card.Endpoint)),
			Status: res.Status, Retry: true}
	}
	if env.Error != nil {
		return res, &agent.DeliveryError{Err: fmt.Errorf("%s at %s: %w", method, httptarget.SafeURL(card.Endpoint), env.Error),
			Status: res.Status, Retry: env.Error.Code == codeInternal}
	}
	if out != nil {
		if raw, ok := out.(*json.RawMessage); ok {
			*raw = env.Result
			return res, nil
		}
		if err := json.Unmarshal(env.Result, out); err != nil {
			return res, &agent.DeliveryError{Err: fmt.Errorf("%s at %s: unreadable result: %w", method, httptarget.SafeURL(card.Endpoint), err),
				Status: res.Status, Retry: true}
		}
	}
	return res, nil
}

// rpcCode is the JSON-RPC error code in err's chain, 0 for none.
func rpcCode(err error) int {
	var re *rpcError
	if errors.As(err, &re) {
		return re.Code
	}
	return 0
}

// ended reports an answer saying the task no longer takes messages or is unknown.
func ended(err error) bool {
	code := rpcCode(err)
	return code == codeTaskNotFound || code == codeUnsupportedOperation
}

// methodsOf are the JSON-RPC method names of the card's protocol.
func methodsOf(card Card) methods {
	if card.V1() {
		return methodsV1
	}
	return methodsV03
}

// send sends m; it returns the task the agent opened or continued, or the message it
// answered with at once.
func (c *conn) send(ctx context.Context, card Card, m outMessage, push *pushConfig) (*task, *message, agent.Result, error) {
	var raw json.RawMessage
	res, err := c.call(ctx, card, methodsOf(card).send, sendParams(m, card.V1(), card.Tenant, push), &raw)
	if err != nil {
		return nil, nil, res, err
	}
	t, msg, err := sendResult(raw, card.V1())
	if err != nil {
		// The agent took the message; what it answered cannot be read. Not sent again:
		// a second send would be a second task.
		return nil, nil, res, fmt.Errorf("%s at %s: %w", methodsOf(card).send, httptarget.SafeURL(card.Endpoint), err)
	}
	return t, msg, res, nil
}

// get reads a task (tasks/get, GetTask).
func (c *conn) get(ctx context.Context, card Card, taskID string) (task, error) {
	var t task
	_, err := c.call(ctx, card, methodsOf(card).get, getParams(taskID, card.V1(), card.Tenant), &t)
	if err != nil {
		return task{}, err
	}
	if t.ID == "" {
		return task{}, fmt.Errorf("%s: the answer holds no task", methodsOf(card).get)
	}
	return t, nil
}

// listPage bounds the tasks read to find a lost send's task.
const listPage = 20

// findSent looks for the task a send of messageID opened in contextID, among the
// context's newest tasks (ListTasks, v1.0 only): a send whose answer was lost may have
// opened one, and A2A does not deduplicate message ids.
func (c *conn) findSent(ctx context.Context, card Card, contextID, messageID string) (*task, error) {
	if !card.V1() {
		return nil, nil
	}
	params := map[string]any{"contextId": contextID, "pageSize": listPage, "historyLength": 1 << 10}
	if card.Tenant != "" {
		params["tenant"] = card.Tenant
	}
	var out struct {
		Tasks []task `json:"tasks"`
	}
	if _, err := c.call(ctx, card, methodsV1.list, params, &out); err != nil {
		return nil, err
	}
	for i := range out.Tasks {
		for _, m := range out.Tasks[i].History {
			if m.MessageID == messageID {
				return &out.Tasks[i], nil
			}
		}
	}
	return nil, nil
}

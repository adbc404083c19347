package linear

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The GraphQL API is spoken through plain HTTP: a handful of operations, each a POST of
// {query, variables, operationName}, whose documents the tests validate against Linear's
// published schema.

// maxResponseBytes bounds what one API answer may take.
const maxResponseBytes = 1 << 20

// defaultRateWait is the wait when Linear rate-limits without saying how long.
const defaultRateWait = time.Minute

// client calls one connector's GraphQL endpoint with its credential.
type client struct {
	url  string
	auth string // the Authorization header's value; never in an error or a log
	// oauth: the credential is an OAuth access token (an application's agent can post
	// agent activities; an API key's user cannot).
	oauth bool
	hc    *http.Client
	now   func() time.Time

	mu     sync.Mutex
	viewer *viewer // learned once
}

func newClient(c Config, now func() time.Time) *client {
	if c.token() == "" {
		return nil
	}
	return &client{url: c.WithDefaults().APIURL, auth: c.token(), oauth: c.AccessToken != "", hc: &http.Client{Timeout: 30 * time.Second}, now: now}
}

// apiError is a call Linear refused or that did not complete.
type apiError struct {
	doing string
	// status is the HTTP status (0: no answer).
	status int
	// codes are the GraphQL errors' extensions.code values.
	codes []string
	msg   string
	// retry: the same call may succeed later (rate limits, 5xx, a network failure).
	retry bool
	wait  time.Duration // Linear's wait when it named one
}

func (e *apiError) Error() string {
	if e.status == 0 {
		return fmt.Sprintf("%s: %s", e.doing, e.msg)
	}
	return fmt.Sprintf("%s: linear answered %d: %s", e.doing, e.status, e.msg)
}

// gqlError is one entry of a GraphQL answer's errors.
type gqlError struct {
	Message    string `json:"message"`
	Extensions struct {
		Code                   string `json:"code"`
		Type                   string `json:"type"`
		UserPresentableMessage string `json:"userPresentableMessage"`
	} `json:"extensions"`
}

// do runs one operation and decodes its data into out.
func (c *client) do(ctx context.Context, doing, opName, query string, vars map[string]any, out any) error {
	body, err := json.Marshal(map[string]any{"query": query, "variables": vars, "operationName": opName})
	if err != nil {
		return fmt.Errorf("%s: encode the request: %w", doing, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("%s: build the request: %w", doing, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", c.auth)
	req.Header.Set("User-Agent", "signalgate")
	resp, err := c.hc.Do(req)
	if err != nil {
		// Network failures, timeouts, a cancelled context: nothing says Linear refused.
		return &apiError{doing: doing, msg: transportError(err), retry: true}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil {
		return &apiError{doing: doing, status: resp.StatusCode, msg: "the answer could not be read", retry: true}
	}
	if len(raw) > maxResponseBytes {
		return &apiError{doing: doing, status: resp.StatusCode, msg: fmt.Sprintf("the answer is over %d bytes", maxResponseBytes)}
	}
	var doc struct {
		Data   json.RawMessage `json:"data"`
		Errors []gqlError      `json:"errors"`
	}
	decodeErr := json.Unmarshal(raw, &doc)
	if resp.StatusCode/100 != 2 || len(doc.Errors) > 0 || decodeErr != nil {
		return c.refusal(doing, resp, doc.Errors, decodeErr)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(doc.Data, out); err != nil {
		return &apiError{doing: doing, status: resp.StatusCode, msg: "the answer's data is not of the operation's shape"}
	}
	return nil
}

// refusal classifies a failed answer: rate limits (HTTP 429, or Linear's RATELIMITED
// code) and 5xx are retried, anything else (401, 403, a validation error) is not.
func (c *client) refusal(doing string, resp *http.Response, errs []gqlError, decodeErr error) *apiError {
	e := &apiError{doing: doing, status: resp.StatusCode}
	var msgs []string
	for _, g := range errs {
		e.codes = append(e.codes, g.Extensions.Code)
		m := g.Message
		if g.Extensions.UserPresentableMessage != "" {
			m = g.Extensions.UserPresentableMessage
		}
		msgs = append(msgs, m)
	}
	switch {
	case len(msgs) > 0:
		e.msg = strings.Join(msgs, "; ")
	case decodeErr != nil:
		e.msg = "the answer is not GraphQL's JSON"
	default:
		e.msg = http.StatusText(resp.StatusCode)
	}
	limited := resp.StatusCode == http.StatusTooManyRequests || e.has("RATELIMITED")
	switch {
	case limited:
		e.retry, e.wait = true, c.rateWait(resp.Header)
	case resp.StatusCode >= 500 || resp.StatusCode == http.StatusRequestTimeout:
		e.retry = true
	}
	return e
}

func (e *apiError) has(code string) bool {
	for _, c := range e.codes {
		if strings.EqualFold(c, code) {
			return true
		}
	}
	return false
}

// rateWait is Retry-After, else the reset of the request budget Linear reports
// (X-RateLimit-Requests-Reset, unix milliseconds), else a minute.
func (c *client) rateWait(h http.Header) time.Duration {
	if s, err := strconv.Atoi(h.Get("Retry-After")); err == nil && s > 0 {
		return time.Duration(s) * time.Second
	}
	if ms, err := strconv.ParseInt(h.Get("X-RateLimit-Requests-Reset"), 10, 64); err == nil {
		if d := time.UnixMilli(ms).Sub(c.now()); d > time.Second {
			return d
		}
		return time.Second
	}
	return defaultRateWait
}

// transportError names a failed round trip without the URL's query.
func transportError(err error) string {
	var ue interface{ Unwrap() error }
	if errors.As(err, &ue) && ue.Unwrap() != nil {
		return ue.Unwrap().Error()
	}
	return err.Error()
}

// viewer is who the connector's credentials act as: the application's agent (an OAuth
// token installed with actor=app) or the API key's user.
type viewer struct {
	ID           string
	Organization string
	App          bool
}

const viewerQuery = `query SignalgateViewer {
  viewer {
    id
    app
    organization {
      id
    }
  }
}`

// whoAmI is the viewer, asked once and kept.
func (c *client) whoAmI(ctx context.Context) (viewer, error) {
	c.mu.Lock()
	if c.viewer != nil {
		v := *c.viewer
		c.mu.Unlock()
		return v, nil
	}
	c.mu.Unlock()
	var out struct {
		Viewer struct {
			ID           string `json:"id"`
			App          bool   `json:"app"`
			Organization struct {
				ID string `json:"id"`
			} `json:"organization"`
		} `json:"viewer"`
	}
	if err := c.do(ctx, "read who the credentials act as (viewer)", "SignalgateViewer", viewerQuery, nil, &out); err != nil {
		return viewer{}, err
	}
	if out.Viewer.ID == "" {
		return viewer{}, errors.New("read who the credentials act as (viewer): linear named no user")
	}
	v := viewer{ID: out.Viewer.ID, Organization: out.Viewer.Organization.ID, App: out.Viewer.App}
	c.mu.Lock()
	c.viewer = &v
	c.mu.Unlock()
	return v, nil
}

const userQuery = `query SignalgateUser($id: String!) {
  user(id: $id) {
    id
    guest
    active
    app
  }
}`

// member is what the author gate asks of a user.
type member struct {
	Guest, Active, App bool
}

// user reads whether a user is a guest, active, an application's agent.
func (c *client) user(ctx context.Context, id string) (member, error) {
	var out struct {
		User struct {
			ID     string `json:"id"`
			Guest  bool   `json:"guest"`
			Active bool   `json:"active"`
			App    bool   `json:"app"`
		} `json:"user"`
	}
	if err := c.do(ctx, "read a comment author's membership (user)", "SignalgateUser", userQuery, map[string]any{"id": id}, &out); err != nil {
		return member{}, err
	}
	return member{Guest: out.User.Guest, Active: out.User.Active, App: out.User.App}, nil
}

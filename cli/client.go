package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Environment variables the client commands read, so tokens stay off command lines.
const (
	envURL        = "SIGNALGATE_URL"
	envAdminToken = "SIGNALGATE_ADMIN_TOKEN"
	envAgentToken = "SIGNALGATE_AGENT_TOKEN"
	defaultURL    = "http://127.0.0.1:8080"
)

// newFlagSet is a flag set whose --help prints usage (with its example) and the flags.
func newFlagSet(name, usage string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		fs.PrintDefaults()
	}
	return fs
}

// configFlag registers --config as every command has it.
func configFlag(fs *flag.FlagSet, lookup func(string) (string, bool)) *string {
	def := "config.yaml"
	if v, ok := lookup("SIGNALGATE_CONFIG"); ok && v != "" {
		def = v
	}
	return fs.String("config", def, "path to the config file")
}

// client talks to a running gateway.
type client struct {
	base     string
	token    string
	tokenEnv string // the variable the token comes from when --token is not given
	lookup   func(string) (string, bool)
	http     *http.Client
}

// clientFlags registers --url and --token; the token defaults to tokenEnv. The
// variable's value is read only after parsing, so --help never prints it as a default.
func clientFlags(fs *flag.FlagSet, lookup func(string) (string, bool), tokenEnv string) *client {
	c := &client{http: &http.Client{}, tokenEnv: tokenEnv, lookup: lookup}
	def := defaultURL
	if v, ok := lookup(envURL); ok && v != "" {
		def = v
	}
	fs.StringVar(&c.base, "url", def, "gateway base URL (or $"+envURL+")")
	fs.StringVar(&c.token, "token", "", "bearer token (from $"+tokenEnv+" when not given; prefer the variable: flags show in process lists)")
	return c
}

// check validates --url and takes the token from the environment when --token is unset.
func (c *client) check() error {
	u, err := url.Parse(c.base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("--url: want http(s)://host:port, got %q", c.base)
	}
	if c.token == "" {
		c.token, _ = c.lookup(c.tokenEnv)
	}
	if c.token == "" {
		return fmt.Errorf("--token: required, or set %s", c.tokenEnv)
	}
	return nil
}

// apiError is a non-2xx answer: the gateway's error message, never the request's token.
type apiError struct {
	Status  int
	Code    string
	Message string
}

func (e *apiError) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("HTTP %d", e.Status)
	}
	return fmt.Sprintf("HTTP %d %s: %s", e.Status, e.Code, e.Message)
}

// request builds an authenticated request; body is JSON-encoded when not nil.
func (c *client) request(ctx context.Context, method, path string, body any) (*http.Request, error) {
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("encode request: %w", err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(c.base, "/")+path, rd)
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}

// do sends a request and decodes a 2xx JSON answer into out.
func (c *client) do(ctx context.Context, method, path string, body, out any) error {
	_, err := c.doStatus(ctx, method, path, body, out)
	return err
}

// doStatus is do that also returns the 2xx status (200 and 201 say different things).
func (c *client) doStatus(ctx context.Context, method, path string, body, out any) (int, error) {
	req, err := c.request(ctx, method, path, body)
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	resp, err := c.http.Do(req.WithContext(ctx))
	if err != nil {
		return 0, fmt.Errorf("%s %s: %w", method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
	if err != nil {
		return 0, fmt.Errorf("%s %s: read answer: %w", method, req.URL.Path, err)
	}
	if resp.StatusCode/100 != 2 {
		return resp.StatusCode, readAPIError(resp.StatusCode, raw)
	}
	if out == nil {
		return resp.StatusCode, nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return resp.StatusCode, fmt.Errorf("%s %s: decode answer: %w", method, req.URL.Path, err)
	}
	return resp.StatusCode, nil
}

func readAPIError(status int, raw []byte) error {
	var e struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	_ = json.Unmarshal(raw, &e)
	return &apiError{Status: status, Code: e.Error.Code, Message: e.Error.Message}
}

// threadPath is the agent API path of a thread, ids escaped.
func threadPath(agent, resource, thread string) string {
	return "/v1/agents/" + url.PathEscape(agent) + "/threads/" + url.PathEscape(resource) + "/" + url.PathEscape(thread)
}

// required names the first empty flag.
func required(flags ...[2]string) error {
	for _, f := range flags {
		if strings.TrimSpace(f[1]) == "" {
			return fmt.Errorf("--%s: required", f[0])
		}
	}
	return nil
}

package session

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/signalgate/signalgate/targets/httptarget"
)

// Client is the JSON over HTTP both APIs speak: every request carries the kind's
// headers (its auth and beta headers, as the vendor's library sends them), bounded by
// the target's timeout, classified as httptarget classifies answers.
type Client struct {
	HTTP    *http.Client
	Base    string // the API's base URL, no trailing slash
	Headers func() map[string]string
	Timeout time.Duration
	Now     func() time.Time
}

// Post sends body as JSON to path with the extra headers and decodes a JSON answer into
// out (nil: the answer is dropped).
func (c Client) Post(ctx context.Context, path string, extra map[string]string, body, out any) error {
	raw, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("encode the request to %s: %w", path, err)
	}
	hdr := c.Headers()
	for k, v := range extra {
		hdr[k] = v
	}
	resp, _, err := httptarget.Post(ctx, c.HTTP, c.Base+path, hdr, raw, c.Timeout, c.Now)
	if err != nil {
		return err
	}
	return decode(resp, path, out)
}

// Get reads path and decodes its JSON answer into out.
func (c Client) Get(ctx context.Context, path string, out any) error {
	resp, _, err := httptarget.Get(ctx, c.HTTP, c.Base+path, c.Headers(), c.Timeout, c.Now)
	if err != nil {
		return err
	}
	return decode(resp, path, out)
}

func decode(raw []byte, path string, out any) error {
	if out == nil || len(raw) == 0 {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("read the answer of %s: %w", path, err)
	}
	return nil
}

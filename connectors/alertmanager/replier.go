package alertmanager

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/reply"
)

// MaxCommentBytes bounds a silence's comment (the reply's text with its marker).
const MaxCommentBytes = 16 << 10

const (
	apiTimeout = 30 * time.Second
	// maxAnswer bounds what the gateway reads of one API answer (Find lists the
	// silences matching one alert).
	maxAnswer = 8 << 20
)

// matcher is one matcher of a silence, as Alertmanager's API v2 takes it.
type matcher struct {
	Name    string `json:"name"`
	Value   string `json:"value"`
	IsRegex bool   `json:"isRegex"`
	IsEqual bool   `json:"isEqual"`
}

// silence is a silence as the API takes and lists it.
type silence struct {
	ID        string    `json:"id,omitempty"`
	Matchers  []matcher `json:"matchers"`
	StartsAt  time.Time `json:"startsAt"`
	EndsAt    time.Time `json:"endsAt"`
	CreatedBy string    `json:"createdBy"`
	Comment   string    `json:"comment"`
}

// Replier answers alerts with silences (reply.Sender): POST /api/v2/silences with the
// alert's labels as equality matchers, the reply's text and its marker as the comment,
// and the agent as createdBy.
type Replier struct {
	conns map[string]Config
	hc    *http.Client
	now   func() time.Time
}

var _ reply.Sender = (*Replier)(nil)

// ReplierOption configures a Replier.
type ReplierOption func(*Replier)

// WithHTTPClient sets the client of the API calls.
func WithHTTPClient(c *http.Client) ReplierOption { return func(r *Replier) { r.hc = c } }

// NewReplier validates the configs and builds the sender of silences.
func NewReplier(cfgs []Config, now func() time.Time, opts ...ReplierOption) (*Replier, error) {
	if err := connectors.ValidateConfigs(Source, cfgs); err != nil {
		return nil, err
	}
	if now == nil {
		now = time.Now
	}
	r := &Replier{conns: map[string]Config{}, hc: &http.Client{Timeout: apiTimeout}, now: now}
	for _, c := range cfgs {
		r.conns[c.Name] = c.WithDefaults()
	}
	for _, o := range opts {
		o(r)
	}
	return r, nil
}

// conn is the connector and place of to, and the silence's duration, refusing what can
// never be sent.
func (r *Replier) conn(to reply.To) (Config, Place, time.Duration, error) {
	if to.Source != Source {
		return Config{}, Place{}, 0, fmt.Errorf("replyTo.source %q is not alertmanager: %w", to.Source, reply.ErrUnknownPlace)
	}
	c, ok := r.conns[to.Connector]
	if !ok {
		return Config{}, Place{}, 0, fmt.Errorf("no alertmanager connector named %q: %w", to.Connector, reply.ErrUnknownPlace)
	}
	if c.APIURL == "" {
		return Config{}, Place{}, 0, fmt.Errorf("alertmanager connector %q has no api_url (connectors.alertmanager[].api_url) to create silences at: %w", to.Connector, reply.ErrNoCredentials)
	}
	p, err := reply.PlaceOf[Place](to)
	if err != nil {
		return Config{}, Place{}, 0, fmt.Errorf("%w: %w", reply.ErrUnknownPlace, err)
	}
	if !validFingerprint(p.Fingerprint) {
		return Config{}, Place{}, 0, fmt.Errorf("replyTo.fingerprint %q is not an alert's fingerprint: %w", p.Fingerprint, reply.ErrUnknownPlace)
	}
	if _, err := p.matchers(); err != nil {
		return Config{}, Place{}, 0, fmt.Errorf("%w: %w", reply.ErrUnknownPlace, err)
	}
	if p.Silence == "" {
		return Config{}, Place{}, 0, fmt.Errorf("%w: replyTo.silence: required: an answer to an alert is a silence (give replyTo with the alert's fingerprint and silence, e.g. \"2h\", at most %s)", reply.ErrInvalid, c.MaxSilence)
	}
	d, err := time.ParseDuration(p.Silence)
	switch {
	case err != nil:
		return Config{}, Place{}, 0, fmt.Errorf("%w: replyTo.silence: %q is not a duration (like 30m or 2h)", reply.ErrInvalid, p.Silence)
	case d < MinSilence:
		return Config{}, Place{}, 0, fmt.Errorf("%w: replyTo.silence: %s is under the minimum %s", reply.ErrInvalid, d, MinSilence)
	case d > c.MaxSilence:
		return Config{}, Place{}, 0, fmt.Errorf("%w: replyTo.silence: %s is over the connector's max_silence %s", reply.ErrInvalid, d, c.MaxSilence)
	}
	return c, p, d, nil
}

// Check refuses a silence that could never be created: see reply.Sender.
func (r *Replier) Check(to reply.To, text string) error {
	if _, _, _, err := r.conn(to); err != nil {
		return err
	}
	if n := len(comment(text, "x")); n > MaxCommentBytes {
		return fmt.Errorf("%w: the silence's comment would be %d bytes, at most %d", reply.ErrTooLong, n, MaxCommentBytes)
	}
	return nil
}

// comment is the silence's comment: the reply's text, any marker in it broken, and the
// reply's own marker on its last line.
func comment(text, id string) string {
	return strings.TrimSpace(reply.NeutralizeMarkers(text)) + "\n\n" + marker(id)
}

func marker(id string) string { return "(" + reply.MarkerToken + id + ")" }

// createdBy names the agent that asked for the silence.
func createdBy(agent string) string { return agent + " (signalgate)" }

// Send creates the silence. A 5xx, 429 or a failed connection is retried; any other
// refusal is permanent.
func (r *Replier) Send(ctx context.Context, rp reply.Reply) (reply.Sent, bool, error) {
	c, p, d, err := r.conn(rp.To)
	if err != nil {
		return reply.Sent{}, false, err
	}
	ms, _ := p.matchers() // conn checked them
	now := r.now().UTC()
	body, err := json.Marshal(silence{Matchers: ms, StartsAt: now, EndsAt: now.Add(d),
		CreatedBy: createdBy(rp.Thread.Agent), Comment: comment(rp.Text, rp.ID)})
	if err != nil {
		return reply.Sent{}, false, fmt.Errorf("encode the silence: %w", err)
	}
	var out struct {
		SilenceID string `json:"silenceID"`
	}
	if retry, err := r.call(ctx, c, http.MethodPost, "/api/v2/silences", nil, body, &out); err != nil {
		return reply.Sent{}, retry, fmt.Errorf("create a silence of alert %s: %w", p.name(), err)
	}
	if out.SilenceID == "" {
		return reply.Sent{}, true, fmt.Errorf("create a silence of alert %s: the answer names no silenceID", p.name())
	}
	return sent(c, out.SilenceID), false, nil
}

// Find looks for a silence of the alert whose comment carries rp's marker.
func (r *Replier) Find(ctx context.Context, rp reply.Reply) (reply.Sent, bool, error) {
	c, p, _, err := r.conn(rp.To)
	if err != nil {
		return reply.Sent{}, false, err
	}
	ms, _ := p.matchers()
	q := url.Values{}
	for _, m := range ms {
		q.Add("filter", fmt.Sprintf("%s=%q", m.Name, m.Value))
	}
	var list []silence
	if _, err := r.call(ctx, c, http.MethodGet, "/api/v2/silences", q, nil, &list); err != nil {
		return reply.Sent{}, false, fmt.Errorf("list the silences of alert %s: %w", p.name(), err)
	}
	want := marker(rp.ID)
	for _, s := range list {
		if strings.HasSuffix(s.Comment, want) && s.ID != "" {
			return sent(c, s.ID), true, nil
		}
	}
	return reply.Sent{}, false, nil
}

func sent(c Config, id string) reply.Sent {
	return reply.Sent{PlatformID: id, URL: strings.TrimSuffix(c.APIURL, "/") + "/#/silences/" + url.PathEscape(id)}
}

// call makes one API call and decodes its JSON answer into out. retry says whether a
// failure may pass.
func (r *Replier) call(ctx context.Context, c Config, method, path string, q url.Values, body []byte, out any) (retry bool, _ error) {
	u := strings.TrimSuffix(c.APIURL, "/") + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return false, fmt.Errorf("build the request: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.APIToken != "" {
		req.Header.Set("Authorization", "Bearer "+c.APIToken.Reveal())
	}
	resp, err := r.hc.Do(req)
	if err != nil {
		// The URL is the operator's own; what failed is the connection.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return true, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer func() { _ = resp.Body.Close() }()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	if err != nil {
		return true, fmt.Errorf("%s %s: read the answer: %w", method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		retry := resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusRequestTimeout
		err := fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, connectors.Truncate(strings.TrimSpace(string(raw)), 300))
		if wait := retryAfter(resp.Header.Get("Retry-After")); retry && wait > 0 {
			return true, &reply.RetryAfter{Wait: wait, Err: err}
		}
		return retry, err
	}
	if len(raw) > maxAnswer {
		return false, fmt.Errorf("%s %s: the answer is over %d bytes", method, path, maxAnswer)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return false, fmt.Errorf("%s %s: read the answer: %w", method, path, err)
	}
	return false, nil
}

func retryAfter(v string) time.Duration {
	var s int
	if _, err := fmt.Sscanf(v, "%d", &s); err != nil || s <= 0 {
		return 0
	}
	return time.Duration(s) * time.Second
}

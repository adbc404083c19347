package a2a

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/secret"
	"github.com/signalgate/signalgate/targets/httptarget"
)

// Card is what the gateway takes from an agent card: where to send and what the agent
// says it can do.
type Card struct {
	Name    string
	Version string // the agent's own version
	// Endpoint is the JSON-RPC URL; Protocol the A2A version spoken there ("1.0" or
	// "0.3"); Tenant the interface's tenant (v1.0), sent with each call when set.
	Endpoint string
	Protocol string
	Tenant   string
	// Streaming and PushNotifications are the card's capabilities.
	Streaming         bool
	PushNotifications bool
}

// V1 reports whether the endpoint speaks A2A v1.0 (SendMessage) rather than v0.3
// (message/send).
func (c Card) V1() bool { return c.Protocol == protocolV1 }

// Describe is check --connect's line: the agent, where it is reached and how.
func (c Card) Describe() string {
	caps := []string{}
	if c.Streaming {
		caps = append(caps, "streaming")
	}
	if c.PushNotifications {
		caps = append(caps, "push notifications")
	}
	capText := "no streaming, no push notifications"
	if len(caps) > 0 {
		capText = strings.Join(caps, ", ")
	}
	name := c.Name
	if c.Version != "" {
		name += " " + c.Version
	}
	return fmt.Sprintf("agent card %q: JSON-RPC at %s (A2A %s; %s)", name, httptarget.SafeURL(c.Endpoint), c.Protocol, capText)
}

const (
	protocolV1  = "1.0"
	protocolV03 = "0.3"
	bindingRPC  = "JSONRPC"
	// headerVersion selects the protocol version of a request (and the card's shape).
	headerVersion = "A2A-Version"
)

// wireCard is an agent card in either shape: v1.0 lists supportedInterfaces, v0.3 has a
// top-level url (with preferredTransport and additionalInterfaces).
type wireCard struct {
	Name                string `json:"name"`
	Version             string `json:"version"`
	SupportedInterfaces []struct {
		URL             string `json:"url"`
		ProtocolBinding string `json:"protocolBinding"`
		ProtocolVersion string `json:"protocolVersion"`
		Tenant          string `json:"tenant"`
	} `json:"supportedInterfaces"`
	URL                  string `json:"url"`
	PreferredTransport   string `json:"preferredTransport"`
	ProtocolVersion      string `json:"protocolVersion"`
	AdditionalInterfaces []struct {
		URL       string `json:"url"`
		Transport string `json:"transport"`
	} `json:"additionalInterfaces"`
	Capabilities struct {
		Streaming         bool `json:"streaming"`
		PushNotifications bool `json:"pushNotifications"`
	} `json:"capabilities"`
}

// family reads a declared protocol version as the one the gateway speaks to it: 1.x is
// v1.0, 0.x (0.3, 0.3.0, 0.2.5) the v0.3 methods; "" for anything else.
func family(v string) string {
	v = strings.TrimSpace(v)
	switch {
	case v == "1" || strings.HasPrefix(v, "1."):
		return protocolV1
	case strings.HasPrefix(v, "0."):
		return protocolV03
	}
	return ""
}

// parseCard reads an agent card fetched from cardURL: the JSON-RPC interface of v1.0 if
// the card offers one, else its v0.3 JSON-RPC interface; a relative endpoint is resolved
// against the card's URL.
func parseCard(raw []byte, cardURL string) (Card, error) {
	var w wireCard
	if err := json.Unmarshal(raw, &w); err != nil {
		return Card{}, fmt.Errorf("the agent card is not JSON: %w", err)
	}
	c := Card{Name: w.Name, Version: w.Version, Streaming: w.Capabilities.Streaming, PushNotifications: w.Capabilities.PushNotifications}
	for _, want := range []string{protocolV1, protocolV03} {
		for _, i := range w.SupportedInterfaces {
			if strings.EqualFold(i.ProtocolBinding, bindingRPC) && family(i.ProtocolVersion) == want && i.URL != "" {
				c.Endpoint, c.Protocol, c.Tenant = i.URL, want, i.Tenant
				break
			}
		}
		if c.Endpoint != "" {
			break
		}
	}
	if c.Endpoint == "" && w.URL != "" {
		// A v0.3 card: its url speaks preferredTransport (JSON-RPC when unnamed).
		switch {
		case w.PreferredTransport == "" || strings.EqualFold(w.PreferredTransport, bindingRPC):
			c.Endpoint = w.URL
		default:
			for _, i := range w.AdditionalInterfaces {
				if strings.EqualFold(i.Transport, bindingRPC) && i.URL != "" {
					c.Endpoint = i.URL
					break
				}
			}
		}
		c.Protocol = family(w.ProtocolVersion)
		if c.Protocol == "" {
			c.Protocol = protocolV03
		}
	}
	if c.Endpoint == "" {
		return Card{}, errors.New("the agent card names no JSON-RPC interface of A2A 1.0 or 0.3 (signalgate speaks JSON-RPC only)")
	}
	base, err := url.Parse(cardURL)
	if err != nil {
		return Card{}, fmt.Errorf("the card's URL: %w", err)
	}
	ep, err := base.Parse(c.Endpoint)
	if err != nil || (ep.Scheme != "http" && ep.Scheme != "https") || ep.Host == "" {
		return Card{}, errors.New("the agent card's JSON-RPC url is not an http(s) URL")
	}
	c.Endpoint = ep.String()
	return c, nil
}

// FetchCard reads the agent card of c (with A2A-Version 1.0, so a server that speaks
// both shows its v1.0 card) and picks the endpoint the gateway sends to.
func FetchCard(ctx context.Context, hc *http.Client, c Config, timeout time.Duration, now func() time.Time) (Card, error) {
	u := c.CardURL()
	headers := secret.RevealMap(c.Headers)
	if headers == nil {
		headers = map[string]string{}
	}
	headers[headerVersion] = protocolV1
	headers["Accept"] = "application/json"
	raw, _, err := httptarget.Get(ctx, hc, u, headers, timeout, now)
	if err != nil {
		return Card{}, fmt.Errorf("read the agent card: %w", err)
	}
	card, err := parseCard(raw, u)
	if err != nil {
		return Card{}, &agent.DeliveryError{Err: fmt.Errorf("read the agent card at %s: %w", httptarget.SafeURL(u), err)}
	}
	return card, nil
}

// cardCache holds an agent's card: read on first use (a target is built anew on each
// reload, so a reload reads it again), and again after a call to its endpoint failed
// the way a moved endpoint fails, at most once per cardRetry.
type cardCache struct {
	cfg     settings
	hc      *http.Client
	now     func() time.Time
	mu      sync.Mutex
	card    *Card
	staleAt time.Time // when the card was marked stale; zero: fresh
	readAt  time.Time
}

// cardRetry bounds how often a card is read again after its endpoint failed.
const cardRetry = 30 * time.Second

func (c *cardCache) get(ctx context.Context) (Card, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.card != nil && (c.staleAt.IsZero() || c.now().Sub(c.readAt) < cardRetry) {
		return *c.card, nil
	}
	card, err := FetchCard(ctx, c.hc, c.cfg.Config, c.cfg.Timeout, c.now)
	if err != nil {
		if c.card != nil {
			return *c.card, nil // the last card read stands until a new one is read
		}
		return Card{}, err
	}
	c.card, c.staleAt, c.readAt = &card, time.Time{}, c.now()
	return card, nil
}

// stale marks the card to be read again (its endpoint answered as a moved one would).
func (c *cardCache) stale() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.staleAt.IsZero() {
		c.staleAt = c.now()
	}
}

// Probe is `check --connect`'s try of an a2a target: it reads the agent card and shows
// what the gateway would use. key is the target's config path, named in what to fix.
func Probe(ctx context.Context, hc *http.Client, c Config, timeout time.Duration, key string) (string, error) {
	if timeout <= 0 {
		timeout = defaultTimeout
	}
	card, err := FetchCard(ctx, hc, c, timeout, time.Now)
	if err != nil {
		de := agent.DeliveryFailure(err)
		switch {
		case de.Status == http.StatusNotFound:
			return "", fmt.Errorf("%w: no agent card there; check %s.url (the card's URL, or the agent's base URL)", err, key)
		case de.Status == http.StatusUnauthorized || de.Status == http.StatusForbidden:
			return "", fmt.Errorf("%w: check %s.headers", err, key)
		}
		return "", fmt.Errorf("%w: check %s.url and that the agent is running", err, key)
	}
	out := card.Describe()
	c = c.WithDefaults()
	switch {
	case c.CallbackURL != "" && !card.PushNotifications:
		out += fmt.Sprintf("; the card says it sends no push notifications, so %s.callback_url is unused and tasks are polled every %s", key, c.PollInterval)
	case c.CallbackURL != "":
		out += "; tasks push to " + httptarget.SafeURL(c.CallbackURL)
	}
	return out, nil
}

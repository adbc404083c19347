package alertmanager

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/inbox"
)

// Source is the notification source of every alert item, and the kind's key under
// connectors:.
const Source = "alertmanager"

// RoutePath is where notifications are posted; :connector is the configured name.
const RoutePath = "/webhooks/alertmanager/:connector"

// Provenances (metadata.verified_by) of what the connector verified: the webhook's
// bearer token, its basic auth, Grafana's HMAC signature (with one of the others, if
// both are configured, the HMAC's).
const (
	VerifiedByBearer  = "alertmanager-bearer"
	VerifiedByBasic   = "alertmanager-basic"
	VerifiedByGrafana = "grafana-hmac"
)

// VerifiedBy are every provenance the connector stamps: the kinds table's row.
var VerifiedBy = []string{VerifiedByBearer, VerifiedByBasic, VerifiedByGrafana}

var (
	errMissingCredentials = errors.New("missing credentials")
	errCredentials        = errors.New("credentials do not match")
	errSignature          = errors.New("signature does not match")
	errTimestamp          = errors.New("timestamp missing, malformed or outside the window")
)

type connector struct {
	cfg Config
}

// Handler serves POST /webhooks/alertmanager/:connector for every configured connector.
type Handler struct {
	conns    map[string]*connector
	opening  connectors.Opening[*connector]
	pipeline *connectors.Pipeline
	log      *slog.Logger
}

// NewHandler validates the configs and builds the handler.
func NewHandler(cfgs []Config, p *connectors.Pipeline, log *slog.Logger, now func() time.Time) (*Handler, error) {
	if err := connectors.ValidateConfigs(Source, cfgs); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if now == nil {
		now = time.Now
	}
	h := &Handler{conns: map[string]*connector{}, pipeline: p, log: log.With("component", "connector_alertmanager")}
	for _, c := range cfgs {
		h.conns[c.Name] = &connector{cfg: c.WithDefaults()}
	}
	h.opening = connectors.Opening[*connector]{
		Source: Source, Conns: h.conns, Log: h.log, Now: now,
		// One set of credentials per connector: each configured one must hold.
		Secrets:    func(*connector) [][]byte { return [][]byte{nil} },
		SecretUsed: p.SecretUsed,
		Verify: func(c *connector, _ []byte, hdr http.Header, body []byte, at time.Time) error {
			return c.verify(hdr, body, at)
		},
	}
	return h, nil
}

// Mount registers the route on e.
func (h *Handler) Mount(e *echo.Echo) { e.POST(RoutePath, h.Serve) }

// verify checks every credential the connector has: the Authorization header (bearer
// or basic), and Grafana's HMAC signature.
func (c *connector) verify(hdr http.Header, body []byte, now time.Time) error {
	auth := hdr.Get("Authorization")
	switch {
	case c.cfg.BearerToken != "":
		tok, ok := cutScheme(auth, "Bearer")
		if !ok {
			return errMissingCredentials
		}
		if !equal(tok, c.cfg.BearerToken.Reveal()) {
			return errCredentials
		}
	case c.cfg.BasicAuth != nil:
		req := http.Request{Header: http.Header{"Authorization": {auth}}}
		user, pass, ok := req.BasicAuth()
		if !ok {
			return errMissingCredentials
		}
		// Both compared, whichever fails: the time taken says nothing of which.
		u, p := equal(user, c.cfg.BasicAuth.Username), equal(pass, c.cfg.BasicAuth.Password.Reveal())
		if !u || !p {
			return errCredentials
		}
	}
	if g := c.cfg.Grafana; g != nil {
		return g.verify(hdr, body, now)
	}
	return nil
}

// verify checks Grafana's signature: hex HMAC-SHA256 of the body, or of
// "<timestamp>:<body>" with a timestamp header, which must be within GrafanaTolerance.
func (g *GrafanaHMAC) verify(hdr http.Header, body []byte, now time.Time) error {
	sig := strings.TrimSpace(hdr.Get(g.Header))
	if sig == "" {
		return errMissingCredentials
	}
	got, err := hex.DecodeString(sig)
	if err != nil {
		return errSignature
	}
	mac := hmac.New(sha256.New, []byte(g.Secret.Reveal()))
	if g.TimestampHeader != "" {
		ts := hdr.Get(g.TimestampHeader)
		sec, err := strconv.ParseInt(ts, 10, 64)
		if err != nil || now.Sub(time.Unix(sec, 0)).Abs() > GrafanaTolerance {
			return errTimestamp
		}
		mac.Write([]byte(ts + ":"))
	}
	mac.Write(body)
	if !hmac.Equal(mac.Sum(nil), got) {
		return errSignature
	}
	return nil
}

func (c *connector) verifiedBy() string {
	switch {
	case c.cfg.Grafana != nil:
		return VerifiedByGrafana
	case c.cfg.BasicAuth != nil:
		return VerifiedByBasic
	}
	return VerifiedByBearer
}

// cutScheme reads "<scheme> <credentials>" with the scheme in any case.
func cutScheme(auth, scheme string) (string, bool) {
	s, rest, ok := strings.Cut(auth, " ")
	if !ok || !strings.EqualFold(s, scheme) {
		return "", false
	}
	rest = strings.TrimSpace(rest)
	return rest, rest != ""
}

func equal(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

// DeliveryID is the id of a notification: Alertmanager sends none, so it is the
// SHA-256 of the body. A retried notification is the same body, so it is a duplicate;
// a repeat (repeat_interval) is too, and nothing new to tell.
func DeliveryID(body []byte) string {
	sum := sha256.Sum256(body)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Serve verifies, stores and routes one notification. A verified body the connector
// cannot read is stored as invalid and answered 202: a 400 would only be retried.
func (h *Handler) Serve(c echo.Context) error {
	d, err := h.opening.Open(c)
	if err != nil {
		return err
	}
	ev := &inbox.Event{
		Source:     Source,
		Connector:  d.Name,
		DeliveryID: DeliveryID(d.Body),
		Headers:    connectors.KeepHeaders(d.Header, "User-Agent", "Content-Type"),
		Body:       d.Body,
		ReceivedAt: d.At,
	}
	ctx := c.Request().Context()
	parse := connectors.StartParse(ctx)
	n, err := decode(d.Body)
	if err != nil {
		connectors.EndParse(parse, "", 0)
		ev.Status, ev.Error = inbox.EventInvalid, err.Error()
		h.log.WarnContext(ctx, "body not readable", "connector", d.Name, "error", ev.Error)
		return h.pipeline.Respond(c, ev, nil)
	}
	items := d.Conn.items(n, d.Conn.verifiedBy())
	ev.Type = eventType(n)
	connectors.EndParse(parse, ev.Type, len(items))
	return h.pipeline.Respond(c, ev, items)
}

// eventType names a notification by its status: alerts-firing or alerts-resolved.
func eventType(n *Notification) string {
	if n.Status == StateResolved {
		return "alerts-resolved"
	}
	return "alerts-firing"
}

// Items turns a stored or sample notification back into its items without verifying
// it, for replay and explain.
func (h *Handler) Items(_ context.Context, ev *inbox.Event) ([]connectors.Item, error) {
	conn, ok := h.conns[ev.Connector]
	if !ok {
		return nil, fmt.Errorf("no alertmanager connector named %q", ev.Connector)
	}
	n, err := decode(ev.Body)
	if err != nil {
		return nil, err
	}
	return conn.items(n, conn.verifiedBy()), nil
}

package generic

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/reply"
	"github.com/signalgate/signalgate/stdwebhooks"
)

// RoutePath is where deliveries are posted; :connector is the configured name.
const RoutePath = "/webhooks/generic/:connector"

// Source is the notification source of every generic item.
const Source = "generic"

// VerifiedBy is the provenance of items verified as Standard Webhooks; other
// presets state their name ("stripe"), a verify block "custom".
const VerifiedBy = PresetStandardWebhooks

// SummaryLen bounds a sender's summary; it is read by a model on every delivery.
const SummaryLen = 1000

// connector is a validated Config with its decoded secrets and parsed paths.
type connector struct {
	cfg     Config
	preset  preset
	secrets [][]byte // current first
	mapping *compiledMapping
	idPath  Path // the delivery id's place in the body, when the preset has one
}

// Handler serves POST /webhooks/generic/:connector for every configured connector.
type Handler struct {
	// TrustProxy takes a URL-signing sender's scheme and host from X-Forwarded-Proto
	// and X-Forwarded-Host (server.trust_proxy).
	TrustProxy bool
	conns      map[string]*connector
	opening    connectors.Opening[*connector]
	pipeline   *connectors.Pipeline
	log        *slog.Logger
}

// NewHandler validates the configs and builds the handler.
func NewHandler(cfgs []Config, p *connectors.Pipeline, log *slog.Logger, now func() time.Time) (*Handler, error) {
	if err := connectors.ValidateConfigs("generic", cfgs); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if now == nil {
		now = time.Now
	}
	h := &Handler{conns: map[string]*connector{}, pipeline: p, log: log.With("component", "connector_generic")}
	for _, c := range cfgs {
		p, _ := c.preset() // validated above
		conn := &connector{cfg: c, preset: p}
		for _, s := range c.VerifySecrets() {
			key, _ := p.secret(s.Reveal()) // validated above
			conn.secrets = append(conn.secrets, key)
		}
		if m := cmp.Or(c.Mapping, p.mapping); m != nil {
			conn.mapping = compileMapping(m)
		}
		if p.idPath != "" {
			conn.idPath, _ = ParsePath(p.idPath)
		}
		h.conns[c.Name] = conn
	}
	h.opening = connectors.Opening[*connector]{
		Source: Source, Conns: h.conns, LogHeader: stdwebhooks.HeaderID, Log: h.log, Now: now,
		Secrets:    func(c *connector) [][]byte { return c.secrets },
		SecretUsed: p.SecretUsed,
		Verify: func(c *connector, key []byte, hdr http.Header, body []byte, at time.Time) error {
			return c.preset.scheme.verify(key, hdr, body, at)
		},
	}
	return h, nil
}

// Mount registers the route on e.
func (h *Handler) Mount(e *echo.Echo) { e.POST(RoutePath, h.Serve) }

// Serve verifies, stores and routes one delivery. A verified body the connector
// cannot read is stored as invalid and answered 202 (or the preset's answer): a 400
// would only make the sender retry something that will never parse.
func (h *Handler) Serve(c echo.Context) error {
	req := c.Request()
	req.Header.Del(headerSignedURL)
	if conn, ok := h.conns[c.Param("connector")]; ok && conn.preset.signsURL {
		req.Header.Set(headerSignedURL, h.signedURL(conn, req))
	}
	d, err := h.opening.Open(c)
	if err != nil {
		return err
	}
	p := d.Conn.preset
	if p.ping != nil {
		// A provider's endpoint check, verified like any delivery: answered, not stored.
		if reply, ok := p.ping(d.Body); ok {
			return c.JSON(http.StatusOK, reply)
		}
	}
	id := d.Conn.deliveryID(d.Header, d.Body)
	ev := &inbox.Event{
		Source:     Source,
		Connector:  d.Name,
		DeliveryID: id,
		Headers:    connectors.KeepHeaders(d.Header, append([]string{p.idHeader, p.kindHeader, "User-Agent", "Content-Type"}, p.keep...)...),
		Body:       d.Body,
		ReceivedAt: d.At,
	}
	ctx := c.Request().Context()
	parse := connectors.StartParse(ctx)
	it, err := d.Conn.read(ev, sent{id: id, at: d.Header.Get(p.timestampHeader), kind: d.Header.Get(p.kindHeader), contentType: d.Header.Get("Content-Type")})
	if err != nil {
		connectors.EndParse(parse, "", 0)
		ev.Status, ev.Error = inbox.EventInvalid, err.Error()
		h.log.WarnContext(ctx, "body not readable", "connector", d.Name, "delivery_id", connectors.Truncate(id, 200), "error", ev.Error)
		return h.respond(c, p, ev, nil)
	}
	ev.Type = it.Kind
	connectors.EndParse(parse, it.Kind, 1)
	return h.respond(c, p, ev, []connectors.Item{it})
}

// respond stores the delivery and answers with the outcome, or with the body the
// provider expects once a delivery is taken (Discord's deferred response, Twilio's
// TwiML). A failure to store keeps the gateway's error answer.
func (h *Handler) respond(c echo.Context, p preset, ev *inbox.Event, items []connectors.Item) error {
	if p.ack == nil {
		return h.pipeline.Respond(c, ev, items)
	}
	if _, err := h.pipeline.Ingest(c.Request().Context(), ev, items); err != nil {
		return err
	}
	return c.Blob(http.StatusOK, p.ack.contentType, p.ack.body)
}

// answer is a fixed 200 answer a provider expects to a delivery it made.
type answer struct {
	contentType string
	body        []byte
}

// Items turns a stored or sample delivery back into its item without verifying it,
// for replay and explain.
func (h *Handler) Items(_ context.Context, ev *inbox.Event) ([]connectors.Item, error) {
	conn, ok := h.conns[ev.Connector]
	if !ok {
		return nil, fmt.Errorf("no generic connector named %q", ev.Connector)
	}
	p := conn.preset
	header := func(name string) string {
		if name == "" {
			return ""
		}
		return connectors.Header(ev.Headers, name)
	}
	id := cmp.Or(ev.DeliveryID, header(p.idHeader))
	if id == "" && conn.idPath != nil {
		id = conn.deliveryID(nil, ev.Body) // a sample event: the id its body carries
	}
	it, err := conn.read(ev, sent{id: id, at: header(p.timestampHeader), kind: header(p.kindHeader), contentType: header("Content-Type")})
	if err != nil {
		return nil, err
	}
	return []connectors.Item{it}, nil
}

// sent is what the delivery's headers say about it: its id, its signed unix time
// (verified when it arrived: the item's OccurredAt), for providers that name the
// event in a header its kind, and its content type.
type sent struct{ id, at, kind, contentType string }

// read decodes ev's body and reads its item. A form read as a document is what the
// event's `when` expressions see as `payload` too, on arrival as on replay and
// explain: the object its records store, not the raw form (which stays the body, as
// signed).
func (c *connector) read(ev *inbox.Event, d sent) (connectors.Item, error) {
	doc, payload, form, err := c.decode(ev.Body, d.contentType)
	if err != nil {
		return connectors.Item{}, err
	}
	if form {
		ev.SetExprPayload(doc)
	}
	return c.item(ev.Connector, d, doc, payload)
}

// item reads one delivery's decoded body: by the connector's mapping when it has
// one, else as a native notification body or a Standard Webhooks envelope. payload is
// the body as JSON. Errors name the problem without echoing the body.
func (c *connector) item(name string, d sent, doc any, payload []byte) (connectors.Item, error) {
	var err error
	obj, isObject := doc.(map[string]any)
	if !isObject {
		return connectors.Item{}, errors.New("body: want a JSON object")
	}
	var it connectors.Item
	switch {
	case c.mapping != nil:
		it, err = c.mapped(doc, payload, d.kind)
	case isNative(obj):
		it, err = c.notification(payload)
	default:
		it, err = c.envelope(obj, d.id)
	}
	if err != nil {
		return connectors.Item{}, err
	}
	if len(it.Payload) > 0 && !json.Valid(it.Payload) {
		// The inbox refuses such a payload: said here, the delivery is stored invalid
		// (202) rather than failing to store at all (500, retried forever).
		return connectors.Item{}, errors.New("payload: not valid JSON")
	}
	it.Fields.Source, it.Fields.Connector, it.Fields.Kind = Source, name, it.Kind
	if secs, err := strconv.ParseInt(d.at, 10, 64); err == nil && secs > 0 {
		it.OccurredAt = time.Unix(secs, 0).UTC()
	}
	for _, r := range []string{it.SourceID, it.NetKey} {
		if r != "" {
			it.WatchResources = append(it.WatchResources, r)
		}
	}
	if it.Metadata == nil {
		it.Metadata = map[string]any{}
	}
	// Provenance is ours to state; a sender's metadata cannot claim another, nor say
	// where answers go (only the connectors that post answers name a place, from what
	// they verified). Dropped, not refused: the event is stored either way, and a
	// refusal would have the sender retry it forever.
	delete(it.Metadata, reply.MetadataKey)
	it.Metadata[connectors.MetaVerifiedBy] = c.preset.name
	it.Metadata[connectors.MetaAuthor] = it.Fields.Author
	it.Metadata[connectors.MetaAuthorIsBot] = false
	return it, nil
}

// decode reads the body as JSON, or as a form for presets that post forms (unless
// the sender says it sent JSON; form then reports true). payload is the body as
// JSON: the body itself, or the form's fields as an object.
func (c *connector) decode(body []byte, contentType string) (doc any, payload []byte, form bool, err error) {
	if c.preset.form && !sentJSON(contentType) {
		fields, payload, err := formDocument(body)
		if err != nil {
			return nil, nil, true, err
		}
		return fields, payload, true, nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil || dec.More() {
		return nil, nil, false, errors.New("malformed JSON body")
	}
	return doc, body, false, nil
}

// deliveryID is the provider's id of this delivery: its header, or the body's field
// for providers that send it there only. "" when there is none.
func (c *connector) deliveryID(hdr http.Header, body []byte) string {
	if c.preset.idHeader != "" {
		return hdr.Get(c.preset.idHeader)
	}
	if c.idPath == nil {
		return ""
	}
	var doc any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if dec.Decode(&doc) != nil {
		return ""
	}
	v, ok := c.idPath.Lookup(doc)
	if !ok {
		return ""
	}
	s, err := scalarString(v)
	if err != nil {
		return ""
	}
	return connectors.Truncate(s, 200)
}

// isNative tells a native notification body (it names a kind or a summary) from a
// Standard Webhooks envelope; only a native body has its field names checked.
func isNative(obj map[string]any) bool {
	_, kind := obj["kind"]
	_, summary := obj["summary"]
	return kind || summary
}

func (c *connector) notification(body []byte) (connectors.Item, error) {
	// The native body is the notification input the agent API takes too; its Source
	// names the sending system while the notification's source stays "generic"
	// (policies and routes trust it): it becomes the "origin" attribute and
	// Fields.Extra["origin"]. Unknown fields are rejected so a typo (dedupe_key) is not
	// silently ignored.
	var nb inbox.NotificationInput
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&nb); err != nil {
		return connectors.Item{}, bodyError(err)
	}
	kind := cmp.Or(nb.Kind, c.cfg.DefaultKind)
	if kind == "" {
		return connectors.Item{}, errors.New("kind: required")
	}
	prio := inbox.Priority(nb.Priority)
	if prio == "" {
		prio = c.defaultPriority()
	} else if !prio.Valid() {
		return connectors.Item{}, fmt.Errorf("priority: unknown %q (want low, medium, high or urgent)", nb.Priority)
	}
	if nb.NetKey == "" && (nb.State != "" || nb.RestState != "") {
		return connectors.Item{}, errors.New("state, restState: need a netKey (the lane they belong to)")
	}
	attrs := nb.Attributes.Clone()
	if nb.Source != "" {
		attrs = inbox.Attributes{}.Set("origin", nb.Source).Merge(attrs)
	}
	it := connectors.Item{
		Kind:        kind,
		Priority:    prio,
		Summary:     c.summary(nb.Summary, kind),
		DedupeKey:   nb.DedupeKey,
		CoalesceKey: nb.CoalesceKey,
		SourceID:    nb.SourceID,
		Attributes:  attrs,
		Metadata:    nb.Metadata,
		Fields:      fieldsFromAttributes(attrs),
		NetKey:      nb.NetKey,
		State:       nb.State,
		RestState:   nb.RestState,
	}
	if len(nb.Payload) > 0 && !bytes.Equal(nb.Payload, []byte("null")) {
		it.Payload = nb.Payload
	}
	it.Message = &connectors.Message{Name: cmp.Or(it.Fields.Author, c.cfg.Name), From: cmp.Or(nb.Source, Source), Text: it.Summary}
	return it, nil
}

// bodyError names the field at fault without echoing the body.
func bodyError(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return fmt.Errorf("%s: wrong type (%s where %s was expected)", te.Field, te.Value, te.Type)
	}
	return fmt.Errorf("body: %w", err)
}

func (c *connector) defaultPriority() inbox.Priority {
	if c.cfg.DefaultPriority != "" {
		return c.cfg.DefaultPriority
	}
	return inbox.PriorityMedium
}

// summary cleans the sender's text, or says what arrived when there is none.
func (c *connector) summary(s, kind string) string {
	if s = connectors.Truncate(connectors.PlainText(s), SummaryLen); s != "" {
		return s
	}
	return fmt.Sprintf("%s sent a %s event.", c.cfg.Name, kind)
}

// fieldsFromAttributes lets routes match generic items like others: repo, number,
// branch and author by name, every scalar attribute under match.extra.
func fieldsFromAttributes(attrs inbox.Attributes) connectors.Fields {
	scalars := map[string]string{}
	for _, kv := range attrs {
		scalars[kv.Key] = inbox.FormatValue(kv.Value)
	}
	return fieldsFromScalars(scalars)
}

// fieldsFromScalars puts every named scalar under match.extra, and repo, number,
// branch and author in their own fields.
func fieldsFromScalars(scalars map[string]string) connectors.Fields {
	f := connectors.Fields{Extra: scalars}
	f.Repo, f.Branch, f.Author = f.Extra["repo"], f.Extra["branch"], f.Extra["author"]
	if n, err := strconv.Atoi(f.Extra["number"]); err == nil && n > 0 {
		f.Number = n
	}
	return f
}

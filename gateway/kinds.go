package gateway

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"go.yaml.in/yaml/v3"

	"github.com/signalgate/signalgate/admin"
	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/approval"
	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/connectors/alertmanager"
	"github.com/signalgate/signalgate/connectors/email"
	"github.com/signalgate/signalgate/connectors/generic"
	"github.com/signalgate/signalgate/connectors/github"
	"github.com/signalgate/signalgate/connectors/linear"
	"github.com/signalgate/signalgate/connectors/slack"
	"github.com/signalgate/signalgate/reply"
	"github.com/signalgate/signalgate/service"
	"github.com/signalgate/signalgate/watch"
)

// builtinKinds is the table of integration kinds: one row per connector package. Its
// config key, defaults, validation, metric labels, parse step, check lines, route
// sources and the OpenAPI source enum all come from these rows, in this order.
//
// To add a kind: write its package with a config type (connectors.Config, credentials
// typed secret.Secret, an optional WithDefaults) and a parse step (admin.Parser; a
// Mount(*echo.Echo) method if it serves HTTP, its endpoints documented in admin's
// OpenAPI paths), then add its row here. A kind that answers adds its place codec, its
// reply sender and the provenance that vouches for its places (Place, Replier,
// VerifiedBy); a kind that can be watched adds its watch resource parser (Watch) and,
// if it has one, its rule of what a connector may watch (WatchAdmit). Replies, watches,
// their API schemas and enums, MCP's and the console's follow from the row.
func builtinKinds() []integration {
	return []integration{
		Kind[github.Config]{
			Source:   github.Source,
			Describe: func(c github.Config) string { return "POST /webhooks/github/" + c.Name },
			Parser: func(cs []github.Config, b build) (admin.Parser, error) {
				opts := []github.Option{github.WithCIState(b.ci)}
				if b.own != nil {
					opts = append(opts, github.WithOwnReplies(b.own))
				}
				if b.seen != nil {
					opts = append(opts, github.WithSeenRepos(b.seen))
				}
				return github.NewHandler(cs, b.pipeline, b.log, b.now, opts...)
			},
			Sender:     github.NewSender,
			Place:      github.PlaceCodec,
			Replier:    func(cs []github.Config, b build) (reply.Sender, error) { return github.NewReplier(cs, b.now) },
			VerifiedBy: []string{github.VerifiedBy},
			Watch:      github.WatchResource,
			WatchAdmit: func(cs []github.Config, b build) watch.Admit { return github.AdmitWatch(cs, b.repos) },
		},
		Kind[slack.Config]{
			Source: slack.Source,
			Describe: func(c slack.Config) string {
				if c.SocketMode {
					return "Socket Mode"
				}
				return "POST /webhooks/slack/" + c.Name
			},
			Parser: func(cs []slack.Config, b build) (admin.Parser, error) {
				if b.offline {
					cs = slices.Clone(cs)
					for i := range cs {
						cs[i].BotToken = "" // the bot token is what the name lookups call with
					}
				}
				var opts []slack.Option
				if b.approvals != nil {
					opts = append(opts, slack.WithDecider(b.approvals))
				}
				if b.own != nil {
					opts = append(opts, slack.WithOwnReplies(b.own))
				}
				return slack.NewHandler(cs, b.pipeline, b.log, b.now, opts...)
			},
			Sender:     slack.NewSender,
			Place:      slack.PlaceCodec,
			Replier:    func(cs []slack.Config, b build) (reply.Sender, error) { return slack.NewReplier(cs, b.log, b.now) },
			VerifiedBy: []string{slack.VerifiedBySignature, slack.VerifiedBySocketMode},
			Watch:      slack.WatchResource,
			Serve: func(_ *Generation, _ []slack.Config, p admin.Parser, _ *connectors.Pipeline) ([]background, error) {
				var out []background
				for _, c := range p.(*slack.Handler).SocketClients() {
					out = append(out, c)
				}
				return out, nil
			},
			Connect: slackChecks,
		},
		Kind[email.Config]{
			Source: email.Source,
			Describe: func(c email.Config) string {
				return fmt.Sprintf("IMAP %s as %s, mailboxes %s", c.Addr, c.Username, strings.Join(c.Mailboxes, ", "))
			},
			Parser: func(cs []email.Config, _ build) (admin.Parser, error) { return email.NewParser(cs), nil },
			Serve:  (*Generation).emailPollers,
			Place:  email.PlaceCodec,
			Replier: func(cs []email.Config, b build) (reply.Sender, error) {
				return email.NewReplier(cs, service.Base{Logger: b.log, Now: b.now}), nil
			},
			VerifiedBy: []string{email.VerifiedBy},
			Watch:      email.WatchResource,
			Connect: func(c email.Config, key string, _ *http.Client) []connectCheck {
				return []connectCheck{{email.Source + "/" + c.Name, func(ctx context.Context) (string, error) { return checkIMAP(ctx, c, key) }}}
			},
		},
		Kind[generic.Config]{
			Source:   generic.Source,
			Describe: func(c generic.Config) string { return "POST /webhooks/generic/" + c.Name },
			Parser: func(cs []generic.Config, b build) (admin.Parser, error) {
				h, err := generic.NewHandler(cs, b.pipeline, b.log, b.now)
				if err != nil {
					return nil, err
				}
				h.TrustProxy = b.trustProxy
				return h, nil
			},
			Watch:  generic.WatchResource,
			Sender: generic.NewSender,
		},
		Kind[alertmanager.Config]{
			Source:   alertmanager.Source,
			Describe: func(c alertmanager.Config) string { return "POST /webhooks/alertmanager/" + c.Name },
			Parser: func(cs []alertmanager.Config, b build) (admin.Parser, error) {
				return alertmanager.NewHandler(cs, b.pipeline, b.log, b.now)
			},
			Place: alertmanager.PlaceCodec,
			Replier: func(cs []alertmanager.Config, b build) (reply.Sender, error) {
				return alertmanager.NewReplier(cs, b.now)
			},
			VerifiedBy:    alertmanager.VerifiedBy,
			Watch:         alertmanager.WatchResource,
			DefaultThread: true,
		},
		Kind[linear.Config]{
			Source:   linear.Source,
			Describe: func(c linear.Config) string { return "POST /webhooks/linear/" + c.Name },
			Parser: func(cs []linear.Config, b build) (admin.Parser, error) {
				var opts []linear.Option
				if b.offline {
					opts = append(opts, linear.WithOffline())
				}
				if b.own != nil {
					opts = append(opts, linear.WithOwnReplies(b.own))
				}
				return linear.NewHandler(cs, b.pipeline, b.log, b.now, opts...)
			},
			Sender:        linear.NewSender,
			Place:         linear.PlaceCodec,
			Replier:       func(cs []linear.Config, b build) (reply.Sender, error) { return linear.NewReplier(cs, b.now) },
			VerifiedBy:    []string{linear.VerifiedBy},
			Watch:         linear.WatchResource,
			DefaultThread: true,
		},
	}
}

// integration is what the gateway asks of a row of the kinds table; Kind implements it
// for each connector package's config type.
type integration interface {
	source() string
	// decode reads the kind's entries under connectors.<source> (n may be nil), with
	// the kind's defaults applied.
	decode(n *yaml.Node) (any, error)
	validate(list any) error
	names(list any) []string
	describe(list any) []string
	parser(list any, b build) (admin.Parser, error)
	serve(g *Generation, list any, p admin.Parser, pipeline *connectors.Pipeline) ([]background, error)
	connect(list any, hc *http.Client) []connectCheck
	// replier is the kind's reply sender; nil when it has none or no entries.
	replier(list any, b build) (reply.Sender, error)
	// vouches are the provenances that vouch for a replyTo naming the kind's source:
	// its VerifiedBy when it has a Replier, else none.
	vouches() []string
	// place is the kind's place codec when it answers (nil: it does not).
	place() reply.PlaceCodec
	// watchResource reads the kind's watch resources (nil: it cannot be watched).
	watchResource() func(string) (watch.Resource, error)
	// watchAdmit is the kind's rule of what its connectors may watch (nil: none).
	watchAdmit(list any, b build) watch.Admit
	// defaultThread reports items that carry the kind's default thread (a route may
	// name only its agent).
	defaultThread() bool
	// check reports a row that cannot work (a Replier without a Place).
	check() error
	// sender is the sender of the kind's entry named name (ok false: no such entry;
	// a nil Sender: the kind has none).
	sender(list any, name string, o connectors.SenderOptions) (s connectors.Sender, ok bool, err error)
}

// Kind is one integration kind: its package's config type C and what the gateway does
// with it. Defaults come from C's WithDefaults method when it has one.
type Kind[C connectors.Config] struct {
	// Source is the key under connectors: and the source its events carry.
	Source string
	// Describe is check's line for one entry, after "source/name  ". It must not show secrets.
	Describe func(C) string
	// Parser builds the kind's parse step over all its entries, once for serve (with
	// the ingest pipeline; mounted when it serves HTTP) or for explain (no pipeline).
	Parser func([]C, build) (admin.Parser, error)
	// Serve, if set, adds what serving the kind runs beyond the parser (pollers, sockets).
	Serve func(g *Generation, cs []C, p admin.Parser, pipeline *connectors.Pipeline) ([]background, error)
	// Connect, if set, lists check --connect's checks for one entry; key is its config path.
	Connect func(c C, key string, hc *http.Client) []connectCheck
	// Replier, if set, builds the kind's reply sender over all its entries (the reply
	// outbox posts through it).
	Replier func(cs []C, b build) (reply.Sender, error)
	// VerifiedBy, with a Replier, are the provenances (metadata.verified_by) the kind's
	// connectors stamp on what they verified and put a replyTo in: only a record with
	// one of them names a place the kind's sender posts answers to.
	VerifiedBy []string
	// Place, with a Replier, reads the kind's places: the fields its connectors put in a
	// replyTo besides source and connector (reply.Codec of its place type). The outbox
	// compares and watches places, the console describes them and the API documents list
	// their fields through it.
	Place reply.PlaceCodec
	// Watch, if set, reads the kind's watch resources: a watch may name its source (the
	// API documents' and MCP's enums list it), and its items are looked up by their
	// WatchResources in the form it answers.
	Watch func(resource string) (watch.Resource, error)
	// WatchAdmit, if set, is the kind's rule of what its connectors may watch beyond an
	// agent's scope, over all its entries.
	WatchAdmit func(cs []C, b build) watch.Admit
	// DefaultThread says every item of the kind carries its default thread
	// (connectors.Item.DefaultResource, DefaultThread): a route matching only the kind
	// may name only its agent.
	DefaultThread bool
	// Sender, if set, makes the deliveries the kind's real sender makes to one entry:
	// documented samples, signed as the sender signs (gateway deliver).
	Sender func(c C, o connectors.SenderOptions) (connectors.Sender, error)
}

func (k Kind[C]) source() string { return k.Source }

func (k Kind[C]) decode(n *yaml.Node) (any, error) {
	var cs []C
	var err error
	if n != nil {
		err = n.Decode(&cs)
	}
	for i, c := range cs {
		if d, ok := any(c).(interface{ WithDefaults() C }); ok {
			cs[i] = d.WithDefaults()
		}
	}
	return cs, err
}

func (k Kind[C]) list(l any) []C { cs, _ := l.([]C); return cs }

func (k Kind[C]) validate(l any) error { return connectors.ValidateConfigs(k.Source, k.list(l)) }

func (k Kind[C]) names(l any) []string {
	var out []string
	for _, c := range k.list(l) {
		out = append(out, c.ConnectorName())
	}
	return out
}

func (k Kind[C]) describe(l any) []string {
	var out []string
	for _, c := range k.list(l) {
		out = append(out, fmt.Sprintf("%s/%s  %s", k.Source, c.ConnectorName(), k.Describe(c)))
	}
	return out
}

func (k Kind[C]) parser(l any, b build) (admin.Parser, error) { return k.Parser(k.list(l), b) }

func (k Kind[C]) serve(g *Generation, l any, p admin.Parser, pipeline *connectors.Pipeline) ([]background, error) {
	if k.Serve == nil {
		return nil, nil
	}
	return k.Serve(g, k.list(l), p, pipeline)
}

func (k Kind[C]) replier(l any, b build) (reply.Sender, error) {
	if k.Replier == nil || len(k.list(l)) == 0 {
		return nil, nil
	}
	return k.Replier(k.list(l), b)
}

func (k Kind[C]) vouches() []string {
	if k.Replier == nil {
		return nil
	}
	return k.VerifiedBy
}

func (k Kind[C]) place() reply.PlaceCodec {
	if k.Replier == nil {
		return nil
	}
	return k.Place
}

func (k Kind[C]) watchResource() func(string) (watch.Resource, error) { return k.Watch }

func (k Kind[C]) defaultThread() bool { return k.DefaultThread }

func (k Kind[C]) watchAdmit(l any, b build) watch.Admit {
	if k.Watch == nil || k.WatchAdmit == nil {
		return nil
	}
	return k.WatchAdmit(k.list(l), b)
}

func (k Kind[C]) sender(l any, name string, o connectors.SenderOptions) (connectors.Sender, bool, error) {
	for _, c := range k.list(l) {
		if c.ConnectorName() != name {
			continue
		}
		if k.Sender == nil {
			return nil, true, nil
		}
		s, err := k.Sender(c, o)
		return s, true, err
	}
	return nil, false, nil
}

func (k Kind[C]) check() error {
	switch {
	case k.Replier != nil && k.Place == nil:
		return fmt.Errorf("kind %s: a Replier needs the Place its replyTo reads with", k.Source)
	case k.Replier != nil && len(k.VerifiedBy) == 0:
		return fmt.Errorf("kind %s: a Replier needs the VerifiedBy that vouch for its places", k.Source)
	case k.Replier == nil && (k.Place != nil || len(k.VerifiedBy) > 0):
		return fmt.Errorf("kind %s: Place and VerifiedBy belong to a kind with a Replier", k.Source)
	case k.WatchAdmit != nil && k.Watch == nil:
		return fmt.Errorf("kind %s: WatchAdmit needs the Watch resource parser", k.Source)
	}
	return nil
}

func (k Kind[C]) connect(l any, hc *http.Client) []connectCheck {
	var out []connectCheck
	for i, c := range k.list(l) {
		if k.Connect != nil {
			out = append(out, k.Connect(c, fmt.Sprintf("connectors.%s[%d]", k.Source, i), hc)...)
		}
	}
	return out
}

// build is what a kind's parse step is built with: the ingest pipeline when serving
// (nil for explain), GitHub's CI state, the logger and the clock.
type build struct {
	pipeline *connectors.Pipeline
	ci       github.CIState
	log      *slog.Logger
	now      func() time.Time
	// approvals decides Slack's approval clicks; nil when approvals are off, and in explain.
	approvals *approval.Service
	// offline parse steps call no outside API (explain without --connect).
	offline bool
	// own recognises the gateway's own replies coming back as events (the store); nil in explain.
	own reply.Own
	// seen records the repositories GitHub deliveries come from (the store); nil in explain.
	seen github.SeenRepos
	// trustProxy is server.trust_proxy: a URL-signing sender's URL is rebuilt from the
	// proxy's forwarded headers.
	trustProxy bool
	// repos tells which repositories GitHub connectors receive events for (the store; a
	// GitHub watch's rule).
	repos github.RepoSeer
}

// HasLookups reports a connector whose parse step calls an outside API: a Slack
// connector with a bot token (user and channel names, channel types).
func (c *Config) HasLookups() bool {
	return slices.ContainsFunc(entries[slack.Config](c.Connectors, slack.Source), func(s slack.Config) bool { return s.BotToken != "" })
}

// ConnectorsConfig is the `connectors:` section: each integration kind's entries
// under the kind's source. The kinds table decodes it (decodeKinds).
type ConnectorsConfig struct {
	node  *yaml.Node
	lists map[string]any // source → the kind's []C
	kinds []integration
}

// UnmarshalYAML keeps the section for the kinds table to decode.
func (c *ConnectorsConfig) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		// Decoded into a type of this name, so the message reads as before.
		type ConnectorsConfig struct{}
		return n.Decode(&ConnectorsConfig{})
	}
	c.node = n
	return nil
}

// decodeKinds decodes every kind's entries; a kind absent from the document has none.
func (c *ConnectorsConfig) decodeKinds(kinds []integration) error {
	c.kinds, c.lists = kinds, map[string]any{}
	var errs []string
	for _, k := range kinds {
		var n *yaml.Node
		if c.node != nil {
			for i := 0; i+1 < len(c.node.Content); i += 2 {
				if c.node.Content[i].Value == k.source() {
					n = c.node.Content[i+1]
				}
			}
		}
		list, err := k.decode(n)
		c.lists[k.source()] = list
		var te *yaml.TypeError
		switch {
		case errors.As(err, &te):
			errs = append(errs, te.Errors...)
		case err != nil:
			errs = append(errs, err.Error())
		}
	}
	if len(errs) > 0 {
		return &yaml.TypeError{Errors: errs}
	}
	return nil
}

// sections are the kinds' lists by key, for the config walk.
func (c ConnectorsConfig) sections() map[string]reflect.Value {
	out := make(map[string]reflect.Value, len(c.lists))
	for k, l := range c.lists {
		out[k] = reflect.ValueOf(l)
	}
	return out
}

// each calls f with every kind and its entries, in table order.
func (c ConnectorsConfig) each(f func(k integration, list any)) {
	for _, k := range c.kinds {
		f(k, c.lists[k.source()])
	}
}

// entries is one kind's entries, for the code that serves that kind alone (the
// Slack approvals, explain's name lookups).
func entries[C connectors.Config](c ConnectorsConfig, source string) []C {
	cs, _ := c.lists[source].([]C)
	return cs
}

// defaultThreads are the sources of the kinds whose items carry a default thread.
func (c *Config) defaultThreads() []string {
	out := []string{}
	c.Connectors.each(func(k integration, _ any) {
		if k.defaultThread() {
			out = append(out, k.source())
		}
	})
	return out
}

// sources are the configured kinds' sources, in table order.
func (c *Config) sources() []string {
	var out []string
	c.Connectors.each(func(k integration, _ any) { out = append(out, k.source()) })
	return out
}

// validateKinds validates every kind's entries.
func (c *Config) validateKinds() error {
	var errs []error
	c.Connectors.each(func(k integration, l any) { errs = append(errs, k.validate(l)) })
	return errors.Join(errs...)
}

// connectorRefs lists every configured connector by source and name.
func (c *Config) connectorRefs() []admin.ConnectorRef {
	var refs []admin.ConnectorRef
	c.Connectors.each(func(k integration, l any) {
		for _, n := range k.names(l) {
			refs = append(refs, admin.ConnectorRef{Source: k.source(), Name: n})
		}
	})
	return refs
}

// buildRepliers builds the reply sender of every kind that has one, by source.
func (c *Config) buildRepliers(b build) (map[string]reply.Sender, error) {
	out := map[string]reply.Sender{}
	var errs []error
	c.Connectors.each(func(k integration, l any) {
		s, err := k.replier(l, b)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("%s replies: %w", k.source(), err))
		case s != nil:
			out[k.source()] = s
		}
	})
	return out, errors.Join(errs...)
}

// replyProvenance is which provenance vouches for a replyTo of each source: the
// VerifiedBy of the kinds that send replies.
func (c *Config) replyProvenance() agent.ReplyProvenance {
	out := agent.ReplyProvenance{}
	c.Connectors.each(func(k integration, _ any) {
		if v := k.vouches(); len(v) > 0 {
			out[k.source()] = v
		}
	})
	return out
}

// places are how the kinds that answer read their places, in table order.
func (c *Config) places() reply.Places {
	var out reply.Places
	c.Connectors.each(func(k integration, _ any) {
		if p := k.place(); p != nil {
			out = append(out, reply.PlaceKind{Source: k.source(), Codec: p})
		}
	})
	return out
}

// watchResources are how the kinds that can be watched read their resources, in table
// order.
func (c *Config) watchResources() watch.Resources {
	var out watch.Resources
	c.Connectors.each(func(k integration, _ any) {
		if w := k.watchResource(); w != nil {
			out = append(out, watch.ResourceKind{Source: k.source(), Parse: w})
		}
	})
	return out
}

// watchAdmits are the kinds' rules of what their connectors may watch, by source.
func (c *Config) watchAdmits(b build) map[string]watch.Admit {
	out := map[string]watch.Admit{}
	c.Connectors.each(func(k integration, l any) {
		if a := k.watchAdmit(l, b); a != nil {
			out[k.source()] = a
		}
	})
	return out
}

// checkKinds reports rows of the table that cannot work, and sources named twice.
func checkKinds(kinds []integration) error {
	var errs []error
	seen := map[string]bool{}
	for _, k := range kinds {
		if seen[k.source()] {
			errs = append(errs, fmt.Errorf("kind %s: listed twice", k.source()))
		}
		seen[k.source()] = true
		errs = append(errs, k.check())
	}
	var places reply.Places
	for _, k := range kinds {
		if p := k.place(); p != nil {
			places = append(places, reply.PlaceKind{Source: k.source(), Codec: p})
		}
	}
	if _, err := places.Fields(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// buildParsers builds every kind's parse step once: serve passes its pipeline, explain none.
func (c *Config) buildParsers(b build) (admin.Parsers, error) {
	b.trustProxy = c.Server.TrustProxy
	out := admin.Parsers{}
	var err error
	c.Connectors.each(func(k integration, l any) {
		if err != nil {
			return
		}
		var p admin.Parser
		if p, err = k.parser(l, b); err == nil {
			out[k.source()] = p
		}
	})
	return out, err
}

// mountKinds mounts each kind's parse step that serves HTTP and adds what each kind
// runs beyond it.
func (g *Generation) mountKinds(e *echo.Echo, parsers admin.Parsers, pipeline *connectors.Pipeline) error {
	var err error
	g.Config.Connectors.each(func(k integration, l any) {
		if err != nil {
			return
		}
		p := parsers[k.source()]
		if h, ok := p.(interface{ Mount(*echo.Echo) }); ok {
			h.Mount(e)
			for _, n := range k.names(l) {
				g.refusalKeys = append(g.refusalKeys, connectors.RefusalKey(k.source(), n))
			}
		}
		var svcs []background
		svcs, err = k.serve(g, l, p, pipeline)
		g.services = append(g.services, svcs...)
	})
	return err
}

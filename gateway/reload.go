package gateway

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"sort"
	"sync/atomic"

	"github.com/labstack/echo/v4"

	"github.com/signalgate/signalgate/console"
	"github.com/signalgate/signalgate/delivery"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/secret"
	"github.com/signalgate/signalgate/server"
	"github.com/signalgate/signalgate/service"
	"github.com/signalgate/signalgate/store"
)

// fixedSections are the config sections a running gateway cannot take without a
// restart: the listener and its limits, the database, the logger, the dispatcher's
// workers (kept running so no delivery in flight is cut) and the tracer provider
// every component was given.
func fixedSections() []string { return []string{"server", "storage", "log", "dispatch", "telemetry"} }

// Reload re-reads the config file the gateway was started with and puts it in force
// (SIGHUP, POST /-/reload). An invalid file, or one that changes a key that cannot
// change live, is refused: the running config stays, the error is logged and the
// reload metric reads 0. On PostgreSQL a reload in force is announced, and every other
// replica re-reads its own file.
func (gw *Gateway) Reload(ctx context.Context) error { return gw.reload(ctx, true) }

func (gw *Gateway) reload(ctx context.Context, announce bool) error {
	gw.reloadMu.Lock()
	defer gw.reloadMu.Unlock()
	err := gw.swap(ctx)
	gw.Metrics.ConfigLoaded(err == nil, gw.Now())
	if err != nil {
		gw.Log.Error("config reload refused; the running config stays", "component", "gateway", "path", gw.ConfigPath, "error", err.Error())
	} else {
		cfg := gw.Config()
		gw.Log.Info("config reloaded", "component", "gateway", "path", gw.ConfigPath,
			"agents", len(cfg.Agents), "routes", len(cfg.Routes))
		if pg, ok := gw.Broker.(*store.PGBroker); ok && announce {
			if aerr := pg.AnnounceReload(ctx); aerr != nil {
				gw.Log.Warn("other replicas were not told of the reload", "component", "gateway", "error", aerr.Error())
			}
		}
	}
	gw.TestSignals.Reloaded.Signal(err)
	return err
}

// swap loads the file, builds the new generation, starts its services, puts it in force
// and retires the old one. Requests in flight (open streams included) finish on the
// router that took them; the dispatcher's passes in flight finish with the routes they
// read.
func (gw *Gateway) swap(ctx context.Context) error {
	if gw.ConfigPath == "" {
		return errors.New("the gateway was not started from a config file")
	}
	lookup := gw.Lookup
	if lookup == nil {
		lookup = noLookup
	}
	cfg, err := LoadConfig(gw.ConfigPath, lookup)
	if err != nil {
		return err
	}
	old := gw.Generation()
	if keys := fixedChanges(old.Config, cfg); len(keys) > 0 {
		problems := make([]string, len(keys))
		for i, k := range keys {
			problems[i] = k + ": cannot change while the gateway runs (restart it to apply)"
		}
		return &ConfigError{Path: gw.ConfigPath, Problems: problems}
	}
	policy, err := cfg.newPolicy() // with the time intervals its rules name
	if err != nil {
		return fmt.Errorf("policy: %w", err)
	}
	g, err := gw.build(cfg, policy)
	if err != nil {
		return fmt.Errorf("build the new config: %w", err)
	}
	var started []background
	for _, svc := range append(append([]background{}, g.front...), g.services...) {
		if err := svc.Start(context.WithoutCancel(ctx)); err != nil {
			stopAll(started)
			return fmt.Errorf("start %s: %w", svc.Name(), err)
		}
		started = append(started, svc)
	}
	// A send still in flight on a replaced target may fail with its old credentials in
	// the error: those stay redacted too.
	secrets := append(cfg.Secrets(), old.Config.Secrets()...)
	gw.adopt(g)
	gw.Inbox.SetPolicy(policy)
	gw.Silences.SetConfig(cfg.Silences)
	gw.Runs.SetAgents(cfg.Agents)
	gw.Dispatcher.Reconfigure(delivery.Live{Routes: g.routes, SummaryInterval: policy.SummaryInterval(),
		DetailedSummaries: policy.SummaryFormat() == inbox.SummaryFormatDetailed, Secrets: secrets, StreamOptions: policy})
	gw.Metrics.SetLabels(cfg.metricLabels())
	gw.Metrics.SetTargetAgents(cfg.AgentIDs())
	gw.Server.Serve(g.router)
	gw.kick.Notify(nil) // what the new routes or policy make due goes out now
	for _, err := range stopAll(append(append([]background{}, old.front...), old.services...)) {
		gw.Log.Warn("retiring the previous config's service", "component", "gateway", "error", err.Error())
	}
	gw.running = gw.order()
	return nil
}

// order is the services in the order they start: the broker, the silences, the
// generation's presence followers, the dispatcher, the generation's other services, and
// last the reload follower, so another replica's reload never meets a gateway still
// starting.
func (gw *Gateway) order() []background {
	g := gw.Generation()
	out := append(append(append([]background{gw.Broker, gw.Silences}, g.front...), gw.Dispatcher), g.services...)
	if gw.follower != nil {
		out = append(out, gw.follower)
	}
	return out
}

// adopt makes g the generation in force.
func (gw *Gateway) adopt(g *Generation) {
	gw.gen.Store(g)
	gw.slots.set(g.slotFreed)
}

// stopAll stops svcs in reverse, each within stopWait, and returns their errors.
func stopAll(svcs []background) []error {
	var errs []error
	for i := len(svcs) - 1; i >= 0; i-- {
		ctx, cancel := context.WithTimeout(context.Background(), stopWait)
		if err := svcs[i].Stop(ctx); err != nil {
			errs = append(errs, fmt.Errorf("stop %s: %w", svcs[i].Name(), err))
		}
		cancel()
	}
	return errs
}

// fixedChanges names the keys of fixedSections whose values differ, as config.yaml
// spells them (server.listen), sorted. Values are never named: storage.dsn holds a
// password.
func fixedChanges(old, cur *Config) []string {
	ov, cv := reflect.ValueOf(old).Elem(), reflect.ValueOf(cur).Elem()
	top := yamlFields(ov.Type())
	var out []string
	for _, section := range fixedSections() {
		idx := top[section]
		o, c := ov.FieldByIndex(idx), cv.FieldByIndex(idx)
		if o.Kind() != reflect.Struct {
			if !reflect.DeepEqual(o.Interface(), c.Interface()) {
				out = append(out, section)
			}
			continue
		}
		for key, fi := range yamlFields(o.Type()) {
			if !reflect.DeepEqual(field(o, fi).Interface(), field(c, fi).Interface()) {
				out = append(out, section+"."+key)
			}
		}
	}
	sort.Strings(out)
	return out
}

// serveReload is POST /-/reload (admin write scope): 200 once the file is in force,
// 400 with the problems when it is refused.
func (gw *Gateway) serveReload(c echo.Context) error {
	if err := gw.Reload(context.WithoutCancel(c.Request().Context())); err != nil {
		return server.BadRequest("config reload refused, the running config stays: %s", err.Error())
	}
	return c.JSON(http.StatusOK, map[string]string{"status": "reloaded"})
}

func noLookup(string) (string, bool) { return "", false }

// slotHub forwards freed wake slots (agent.Runs is subscribed once) to the approvals
// service of the generation in force.
type slotHub struct {
	h atomic.Pointer[func(agentID string)]
}

func (s *slotHub) freed(agentID string) {
	if h := s.h.Load(); h != nil && *h != nil {
		(*h)(agentID)
	}
}

func (s *slotHub) set(h func(agentID string)) { s.h.Store(&h) }

// genSlots takes a generation's subscriber to freed wake slots until it is in force.
type genSlots struct{ h func(agentID string) }

func (g *genSlots) OnWakeSlotFreed(h func(agentID string)) { g.h = h }

// reloadFollower re-reads this replica's config file when another replica of the same
// PostgreSQL deployment reloaded (the broker hears the announcement), so every replica
// is on its file's config within a second.
type reloadFollower struct {
	gw   *Gateway
	told chan struct{}
	service.StartStop
}

// followReloads subscribes to other replicas' reloads on PostgreSQL; nil otherwise.
func (gw *Gateway) followReloads() *reloadFollower {
	pg, ok := gw.Broker.(*store.PGBroker)
	if !ok {
		return nil
	}
	f := &reloadFollower{gw: gw, told: make(chan struct{}, 1)}
	pg.OnReload(func() {
		select {
		case f.told <- struct{}{}:
		default: // one pending reload reads the file as it is then
		}
	})
	return f
}

func (f *reloadFollower) Name() string { return "reload follower" }

func (f *reloadFollower) Start(ctx context.Context) error {
	return f.StartStop.Start(ctx, func(ctx context.Context) {
		for {
			select {
			case <-ctx.Done():
				return
			case <-f.told:
				_ = f.gw.reload(ctx, false) // logged and counted; another replica's reload is not announced again
			}
		}
	})
}

// consoleConfig is cfg's console section, signed with the process's key when it names none.
func (gw *Gateway) consoleConfig(cfg *Config) console.Config {
	c := cfg.Console
	if c.SessionKey == "" {
		c.SessionKey = gw.sessionKey
	}
	return c
}

func randomSessionKey() (secret.Secret, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("console session key: %w", err)
	}
	return secret.Secret(hex.EncodeToString(b)), nil
}

package gateway

import (
	"log/slog"
	"time"

	"github.com/signalgate/signalgate/admin"
	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/store"
)

// adminDeps is what the admin API and the offline explain share: the store, today's
// routes (compiled once, by config validation) and policy, and the connectors' parse steps.
func adminDeps(cfg *Config, st *store.DB, policy *inbox.Policy, parsers admin.Parsers, log *slog.Logger, now func() time.Time, live adminLive) (admin.Deps, error) {
	router, err := cfg.Router()
	if err != nil {
		return admin.Deps{}, err
	}
	kinds := map[string]string{}
	wakes := map[string]agent.WakeSettings{}
	for _, a := range cfg.Agents {
		kinds[a.ID] = a.WithDefaults().Target.Kind
		wakes[a.ID] = agent.WakeSettings{Budget: a.WakeBudget, Limit: a.MaxConcurrentWakes}
	}
	deps := admin.Deps{Policy: policy, Router: router, Agents: cfg.AgentIDs(), TargetKinds: kinds, Wakes: wakes,
		Sources: cfg.sources(), Places: cfg.places(), Watchable: cfg.watchResources().Sources(), Targets: cfg.targetKindNames(), Runtimes: cfg.runtimeKindNames(), Parsers: parsers, Connectors: cfg.connectorRefs(), Log: log, Now: now,
		Inbox: live.Inbox, Pollers: live.Pollers, Notify: live.Notify, TraceURL: cfg.Telemetry.TraceURL}
	if st != nil { // explain without a database knows no watches
		deps.Store, deps.WatchLookup = store.NewAdmin(st), store.NewWatches(st)
	}
	return deps, nil
}

// adminLive is what a serving gateway's admin API has beyond what explain reads: where
// replays go, the pollers, the dispatcher's wake-up. Explain passes none.
type adminLive struct {
	Inbox   connectors.Ingester
	Pollers []admin.Poller
	Notify  func([]inbox.ThreadKey)
}

package gateway

import (
	"log/slog"

	"github.com/signalgate/signalgate/admin"
	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/connectors/github"
	"github.com/signalgate/signalgate/store"
)

// githubBackfill builds a backfill per GitHub connector with a backfill block, on the
// handler's pipeline.
func (g *Generation) githubBackfill(cfgs []github.Config, p admin.Parser, _ *connectors.Pipeline) ([]background, error) {
	gw := g.gw
	h, ok := p.(*github.Handler)
	if !ok {
		return nil, nil
	}
	var out []background
	for _, c := range cfgs {
		if c.Backfill == nil {
			continue
		}
		bf, err := github.NewBackfiller(h, c.Name, store.NewConnectorState(gw.Store), store.NewExplain(gw.Store), gw.base(),
			github.WithBackfillLock(backfillLock(g.Config, gw.Log)),
			github.WithBackfillCounted(func(name, outcome string) { gw.Metrics.Backfilled(github.Source+"/"+name, outcome) }))
		if err != nil {
			return nil, err
		}
		if bf != nil {
			out = append(out, bf)
		}
	}
	return out, nil
}

// backfillLock lets one replica at a time read a hook: a PostgreSQL session advisory
// lock per hook, held for the pass; one process on SQLite needs none.
func backfillLock(cfg *Config, log *slog.Logger) github.Lock {
	if cfg.Storage.Driver == store.DriverPostgres {
		return store.NewAdvisoryLocker(cfg.Storage.DSN, log)
	}
	return github.NoLock{}
}

package gateway

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/signalgate/signalgate/admin"
	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/connectors/github"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/service"
	"github.com/signalgate/signalgate/silence"
	"github.com/signalgate/signalgate/store"
)

// ExplainStore is the database an offline explain reads, if there is one to read.
type ExplainStore struct {
	db *store.DB // nil: no database (a SQLite file not created yet)
	// current: the schema is there to be read.
	current bool
}

// OpenExplainStore opens cfg's database for reading, alongside a gateway serving it, or
// finds none when a SQLite file is not there: explain creates nothing unless told to
// migrate, which needs the database alone and creates it if need be.
func OpenExplainStore(ctx context.Context, cfg *Config, migrate bool, log *slog.Logger) (*ExplainStore, error) {
	exists, err := cfg.Storage.Exists()
	if err != nil {
		return nil, err
	}
	if !exists && !migrate {
		return &ExplainStore{}, nil
	}
	var opts []store.Option
	if !migrate {
		opts = append(opts, store.ReadAlongside())
	}
	st, err := store.Open(ctx, cfg.Storage, log, opts...)
	if err != nil {
		return nil, err
	}
	if migrate {
		if _, err := st.Migrate(ctx); err != nil {
			st.Close()
			return nil, err
		}
	}
	current, err := st.Current(ctx)
	if err != nil {
		st.Close()
		return nil, err
	}
	return &ExplainStore{db: st, current: current}, nil
}

// Found says there is a database: without one, explain reads an empty inbox.
func (s *ExplainStore) Found() bool { return s.db != nil }

// Current says the database's schema is current; when it is not (never migrated, or
// migrations pending), explain reads an empty inbox.
func (s *ExplainStore) Current() bool { return s.current }

// Close closes the database, if one was opened.
func (s *ExplainStore) Close() error {
	if s.db == nil {
		return nil
	}
	return s.db.Close()
}

// NewExplainer explains against s, or against an empty inbox when s's schema is not
// current (its tables may not exist: nothing is read from it then). Offline, the
// connectors make no API calls. The silences in force are the database's.
func NewExplainer(ctx context.Context, cfg *Config, s *ExplainStore, offline bool, log *slog.Logger) (*admin.Explainer, error) {
	policy, err := cfg.newPolicy()
	if err != nil {
		return nil, err
	}
	st := s.db
	var xs admin.ExplainStore = emptyInbox{}
	var ci github.CIState = github.NewMemoryCIState(0)
	if s.current {
		xs, ci = store.NewExplain(st), github.NewStoreCIState(store.NewConnectorState(st), "github")
	}
	parsers, err := cfg.buildParsers(build{ci: ci, log: log, now: time.Now, offline: offline})
	if err != nil {
		return nil, err
	}
	deps, err := adminDeps(cfg, st, policy, parsers, log, time.Now, adminLive{})
	if err != nil {
		return nil, err
	}
	if s.current {
		sil := silence.NewService(store.NewSilences(st), cfg.Silences, service.Base{Logger: log})
		if err := sil.Refresh(ctx); err != nil {
			return nil, err
		}
		deps.Holder = sil
	}
	return admin.NewExplainer(xs, deps)
}

// emptyInbox is an inbox with nothing in it: no events, no records, no runs.
type emptyInbox struct{}

func (emptyInbox) GetEvent(_ context.Context, id string) (inbox.Event, error) {
	return inbox.Event{}, fmt.Errorf("event %s: %w", id, inbox.ErrNotFound)
}

func (emptyInbox) EventByDelivery(context.Context, string, string, string) (string, bool, error) {
	return "", false, nil
}

func (emptyInbox) FindMergeable(context.Context, inbox.Notification) (*inbox.Record, error) {
	return nil, nil
}

func (emptyInbox) LiveRun(context.Context, inbox.ThreadKey, time.Time) (*agent.Run, error) {
	return nil, nil
}

func (emptyInbox) NetLane(context.Context, inbox.ThreadKey, string) (inbox.NetLane, error) {
	return inbox.NetLane{}, nil
}

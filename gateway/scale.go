package gateway

import (
	"errors"
	"log/slog"
	"time"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/connectors/email"
	"github.com/signalgate/signalgate/delivery"
	"github.com/signalgate/signalgate/service"
	"github.com/signalgate/signalgate/store"
)

// DispatchConfig is the `dispatch:` section: how long a replica's claim on a thread
// lasts (a crashed replica's threads are reclaimed after it) and how often the
// dispatcher looks for work other replicas made due.
type DispatchConfig struct {
	Lease        time.Duration `yaml:"lease"`
	PollInterval time.Duration `yaml:"poll_interval"`
}

// WithDefaults fills unset fields.
func (c DispatchConfig) WithDefaults() DispatchConfig {
	if c.Lease == 0 {
		c.Lease = delivery.DefaultLease
	}
	if c.PollInterval == 0 {
		c.PollInterval = delivery.DefaultPollInterval
	}
	return c
}

// Validate reports problems with key paths relative to `dispatch`.
func (c DispatchConfig) Validate() error {
	var errs []error
	if c.Lease < time.Second {
		errs = append(errs, errors.New("lease: must be at least 1s"))
	}
	if c.PollInterval < 10*time.Millisecond {
		errs = append(errs, errors.New("poll_interval: must be at least 10ms"))
	}
	return errors.Join(errs...)
}

// options appends this section's dispatcher options to more.
func (c DispatchConfig) options(more ...delivery.Option) []delivery.Option {
	c = c.WithDefaults()
	return append(more, delivery.WithLease(c.Lease), delivery.WithPollInterval(c.PollInterval))
}

// newBroker picks the stream broker: with PostgreSQL, replicas share thread fan-out
// through LISTEN/NOTIFY; with SQLite one process serves every stream.
func newBroker(cfg *Config, st *store.DB, log *slog.Logger) agent.Broker {
	if cfg.Storage.Driver == store.DriverPostgres {
		return store.NewPGBroker(st, cfg.Storage.DSN, service.Base{Logger: log})
	}
	return agent.NewLocalBroker()
}

// mailboxLock makes exactly one replica poll each mailbox when replicas share a
// PostgreSQL database.
func mailboxLock(cfg *Config, log *slog.Logger) email.Lock {
	if cfg.Storage.Driver == store.DriverPostgres {
		return store.NewAdvisoryLocker(cfg.Storage.DSN, log)
	}
	return email.NoLock{}
}

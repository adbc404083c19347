package metrics

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/signalgate/signalgate/delivery"
)

// TargetReader reads the targets' shared health and backlog (the store).
type TargetReader interface {
	TargetStates(ctx context.Context) ([]delivery.TargetState, error)
	Backlog(ctx context.Context, now time.Time) (map[string]int, error)
}

var (
	targetUpDesc = prometheus.NewDesc("signalgate_target_up",
		"1 while the agent's target is up, 0 while it is down (failure_threshold consecutive failures; probed until it answers).",
		[]string{"agent"}, nil)
	targetBacklogDesc = prometheus.NewDesc("signalgate_target_backlog",
		"Pending records of the agent that are due or waiting for a retry.", []string{"agent"}, nil)
)

// WatchTargets adds signalgate_target_up{agent} and signalgate_target_backlog{agent}
// for the configured agents (read from r at scrape time, so every replica reports the
// shared state) and signalgate_target_probes_total{agent}. Call it once.
func (m *Metrics) WatchTargets(agents []string, r TargetReader, log *slog.Logger) {
	m.probes = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "signalgate_target_probes_total",
		Help: "Probes this replica sent to down targets.",
	}, []string{"agent"})
	m.SetTargetAgents(agents)
	m.reg.MustRegister(m.probes, &targetCollector{agents: &m.targetAgents, r: r, log: log})
}

// agentSet is the configured agents, the target gauges' label values.
type agentSet struct {
	list []string
	has  map[string]bool
}

// SetTargetAgents replaces the agents the target metrics report (a config reload added
// or removed agents).
func (m *Metrics) SetTargetAgents(agents []string) {
	set := &agentSet{list: append([]string(nil), agents...), has: make(map[string]bool, len(agents))}
	for _, a := range agents {
		set.has[a] = true
	}
	m.targetAgents.Store(set)
}

// TargetProbe counts a probe of a down target (delivery.HealthObserver).
func (m *Metrics) TargetProbe(agent string) {
	if set := m.targetAgents.Load(); m.probes != nil && set != nil && set.has[agent] {
		m.probes.WithLabelValues(agent).Inc()
	}
}

type targetCollector struct {
	agents *atomic.Pointer[agentSet]
	r      TargetReader
	log    *slog.Logger
}

func (c *targetCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- targetUpDesc
	ch <- targetBacklogDesc
}

func (c *targetCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	down, backlog, err := c.read(ctx)
	if err != nil {
		c.log.Warn("metrics: read target health", "component", "metrics", "error", err.Error())
		return
	}
	for _, a := range c.agents.Load().list {
		up := 1.0
		if down[a] {
			up = 0
		}
		ch <- prometheus.MustNewConstMetric(targetUpDesc, prometheus.GaugeValue, up, a)
		ch <- prometheus.MustNewConstMetric(targetBacklogDesc, prometheus.GaugeValue, float64(backlog[a]), a)
	}
}

// read returns which agents' targets are down and each agent's backlog.
func (c *targetCollector) read(ctx context.Context) (map[string]bool, map[string]int, error) {
	states, err := c.r.TargetStates(ctx)
	if err != nil {
		return nil, nil, err
	}
	backlog, err := c.r.Backlog(ctx, time.Now())
	if err != nil {
		return nil, nil, err
	}
	down := make(map[string]bool, len(states))
	for _, st := range states {
		down[st.Agent] = st.State == delivery.TargetDown
	}
	return down, backlog, nil
}

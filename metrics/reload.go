package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// registerReload adds the config reload gauges, named as Alertmanager and Prometheus
// name theirs so the same alerts apply.
func (m *Metrics) registerReload() {
	m.reloadOK = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "signalgate_config_last_reload_successful",
		Help: "1 when the last config reload (SIGHUP, POST /-/reload, or another replica's) succeeded, 0 when it was refused.",
	})
	m.reloadAt = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "signalgate_config_last_reload_success_timestamp_seconds",
		Help: "Unix time of the last successful config load (start or reload).",
	})
	m.reg.MustRegister(m.reloadOK, m.reloadAt)
}

// ConfigLoaded records a config load's outcome: at start and at each reload. A refused
// reload leaves the time of the last success.
func (m *Metrics) ConfigLoaded(ok bool, at time.Time) {
	if !ok {
		m.reloadOK.Set(0)
		return
	}
	m.reloadOK.Set(1)
	m.reloadAt.Set(float64(at.UnixNano()) / 1e9)
}

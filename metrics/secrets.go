package metrics

import "github.com/prometheus/client_golang/prometheus"

// registerSecretUse adds the counter that tells when a rotation's previous secret
// stops being used, so it can be retired.
func (m *Metrics) registerSecretUse() {
	m.secretUsed = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "signalgate_verify_secret_used_total",
		Help: "Inbound deliveries verified, by connector (source/name) and the slot of the secret that verified them (current, previous).",
	}, []string{"connector", "slot"})
	m.reg.MustRegister(m.secretUsed)
}

// SecretUsed counts a delivery verified by the secret in slot. The connector is a
// configured source/name (the openings look the name up before verifying) and the slot
// one of two values, so no request mints a series.
func (m *Metrics) SecretUsed(connector, slot string) {
	m.secretUsed.WithLabelValues(connector, slot).Inc()
}

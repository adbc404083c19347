// Package metrics exposes the gateway's Prometheus metrics. Most are observed from
// the outside of the domain packages: the server's request observer for ingest, a decorator
// around the inbox, and gauges read from the store at scrape time; the dispatcher,
// the stream broker and the email poller report through small observer methods.
package metrics

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel/trace"

	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/store"
)

// Metrics holds every collector on one registry (never the global one).
type Metrics struct {
	reg *prometheus.Registry

	eventsReceived  *prometheus.CounterVec
	verifyFailures  *prometheus.CounterVec
	ingestLatency   *prometheus.HistogramVec
	records         *prometheus.CounterVec
	decisions       *prometheus.CounterVec
	signalsSent     *prometheus.CounterVec
	attempts        *prometheus.CounterVec
	sseSubscribers  prometheus.Gauge
	imapPolls       *prometheus.CounterVec
	backfilled      *prometheus.CounterVec
	imapErrors      *prometheus.CounterVec
	requestDuration *prometheus.HistogramVec
	retained        *prometheus.CounterVec
	overBudget      *prometheus.CounterVec
	probes          *prometheus.CounterVec   // set by WatchTargets
	targetAgents    atomic.Pointer[agentSet] // the target metrics' label values

	// Label values a request may pick from: anything else is counted as "other" or
	// "unknown", so no request mints a series. A config reload swaps them (SetLabels).
	labels atomic.Pointer[labelSet]

	secretUsed *prometheus.CounterVec // see secrets.go

	reloadOK prometheus.Gauge // see reload.go
	reloadAt prometheus.Gauge
}

type labelSet struct{ sources, connectors map[string]bool }

// Labels lists the label values configuration allows. A source or connector name not
// listed is counted as "other" / "unknown".
type Labels struct {
	Sources    []string // the connector kinds, and the agent API's source
	Connectors []string // configured connector names and agent ids
}

// Option configures Metrics.
type Option func(*Metrics)

// WithLabels sets the source and connector names that may appear as label values.
func WithLabels(l Labels) Option { return func(m *Metrics) { m.SetLabels(l) } }

// SetLabels replaces the source and connector names that may appear as label values
// (a config reload added or removed connectors).
func (m *Metrics) SetLabels(l Labels) {
	set := &labelSet{sources: map[string]bool{}, connectors: map[string]bool{}}
	for _, s := range l.Sources {
		set.sources[s] = true
	}
	for _, c := range l.Connectors {
		set.connectors[c] = true
	}
	m.labels.Store(set)
}

// New registers the collectors. stats, when non-nil, backs the queue and presence gauges.
func New(stats StatsReader, log *slog.Logger, opts ...Option) *Metrics {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m := &Metrics{
		reg: reg,
		eventsReceived: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "signalgate_events_received_total",
			Help: "Inbound deliveries by source, connector and outcome (routed, unrouted, ignored, duplicate, rejected, error).",
		}, []string{"source", "connector", "outcome"}),
		verifyFailures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "signalgate_verification_failures_total",
			Help: "Inbound deliveries refused for a bad, missing or stale signature.",
		}, []string{"source", "connector"}),
		ingestLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "signalgate_ingest_duration_seconds",
			Help:    "Time from request to answer on the ingest endpoints (verification and commit included).",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
		}, []string{"source"}),
		records: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "signalgate_records_total",
			Help: "Inbox records created or merged (dedupe/coalesce).",
		}, []string{"source", "result"}),
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "signalgate_decisions_total",
			Help: "Policy decisions by action.",
		}, []string{"action"}),
		signalsSent: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "signalgate_signals_sent_total",
			Help: "Signals delivered to agent threads by target kind and action (wake, deliver, persist).",
		}, []string{"target", "action"}),
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "signalgate_delivery_attempts_total",
			Help: "Delivery attempts by target kind and outcome (delivered, retry, failed).",
		}, []string{"target", "outcome"}),
		sseSubscribers: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "signalgate_stream_subscribers",
			Help: "Open SSE subscriptions to thread streams.",
		}),
		imapPolls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "signalgate_imap_polls_total",
			Help: "IMAP mailbox polls by connector.",
		}, []string{"connector"}),
		backfilled: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "signalgate_backfill_events_total",
			Help: "Deliveries backfill read from a provider's API, by connector (source/name, from config) and outcome (ingested, duplicate, ignored).",
		}, []string{"connector", "outcome"}),
		imapErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "signalgate_imap_errors_total",
			Help: "IMAP connection or fetch errors by connector.",
		}, []string{"connector"}),
		requestDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "signalgate_http_request_duration_seconds",
			Help:    "HTTP requests by route template, method and status code.",
			Buckets: prometheus.DefBuckets,
		}, []string{"route", "method", "code"}),
		retained: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "signalgate_retention_deleted_total",
			Help: "Rows the retention cleaner deleted, by kind (events, records, net_states, silences, watches, replies).",
		}, []string{"kind"}),
		overBudget: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "signalgate_expression_budget_exceeded_total",
			Help: "Events whose `when` expressions ran out of their budget (not matched), by place (route, policy).",
		}, []string{"place"}),
	}
	m.SetLabels(Labels{})
	for _, o := range opts {
		o(m)
	}
	m.registerReload()
	m.registerSecretUse()
	reg.MustRegister(m.eventsReceived, m.verifyFailures, m.ingestLatency, m.records, m.decisions,
		m.signalsSent, m.attempts, m.sseSubscribers, m.imapPolls, m.backfilled, m.imapErrors, m.requestDuration, m.retained, m.overBudget)
	if stats != nil {
		reg.MustRegister(&statsCollector{stats: stats, log: log})
	}
	return m
}

// Registry is the registry behind /metrics (tests gather from it).
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the Prometheus text format, or OpenMetrics to a scraper that asks for
// it (the format that carries the histograms' trace exemplars).
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{EnableOpenMetrics: true})
}

// ObserveRequest times an answered request by route template (bounded label values)
// and counts ingest outcomes: the /webhooks/{source}/{connector} answers. route is ""
// when nothing matched; connector is the request's connector path parameter, if any
// (server.Observe reports them). A sampled span in ctx (the request's server span)
// becomes the observations' exemplar.
func (m *Metrics) ObserveRequest(ctx context.Context, route, method string, status int, connector string, elapsed time.Duration) {
	if route == "" {
		route = "unmatched"
	}
	observe(ctx, m.requestDuration.WithLabelValues(route, methodLabel(method), statusLabel(status)), elapsed.Seconds())
	if !strings.HasPrefix(route, "/webhooks/") {
		return
	}
	source := m.sourceLabel(strings.Split(strings.TrimPrefix(route, "/webhooks/"), "/")[0])
	observe(ctx, m.ingestLatency.WithLabelValues(source), elapsed.Seconds())
	// The connector comes from the URL and is refused (413, 503) by middleware before
	// any handler looks it up: only configured names are label values.
	connectorLabel := m.connectorLabel(connector)
	if status == http.StatusUnauthorized {
		m.verifyFailures.WithLabelValues(source, connectorLabel).Inc()
	}
	// Refused before the inbox; a failure to store is counted by WrapIngester.
	if status >= 400 && status < 500 {
		m.eventsReceived.WithLabelValues(source, connectorLabel, "rejected").Inc()
	}
}

// observe records v in h with the trace of ctx as its exemplar when that trace is
// sampled (an unsampled one is in no backend to link to).
func observe(ctx context.Context, h prometheus.Observer, v float64) {
	sc := trace.SpanContextFromContext(ctx)
	if eo, ok := h.(prometheus.ExemplarObserver); ok && sc.IsSampled() {
		eo.ObserveWithExemplar(v, prometheus.Labels{"trace_id": sc.TraceID().String()})
		return
	}
	h.Observe(v)
}

// methodLabel keeps the method label to the standard methods: a client may send any
// token as its method.
func methodLabel(method string) string {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return method
	}
	return "other"
}

// statusLabel is the status code; anything outside the HTTP range is "other".
func statusLabel(status int) string {
	if status < 100 || status > 599 {
		return "other"
	}
	return strconv.Itoa(status)
}

func (m *Metrics) sourceLabel(s string) string {
	if m.labels.Load().sources[s] {
		return s
	}
	return "other"
}

func (m *Metrics) connectorLabel(c string) string {
	if m.labels.Load().connectors[c] {
		return c
	}
	return "unknown"
}

// Ingester is what the connectors call (the inbox service).
type Ingester interface {
	Ingest(ctx context.Context, ev *inbox.Event, ns []inbox.Notification) (inbox.IngestResult, error)
}

// WrapIngester counts accepted events, records and decisions around the inbox.
func (m *Metrics) WrapIngester(next Ingester) Ingester { return &countingIngester{next: next, m: m} }

type countingIngester struct {
	next Ingester
	m    *Metrics
}

func (ci *countingIngester) Ingest(ctx context.Context, ev *inbox.Event, ns []inbox.Notification) (inbox.IngestResult, error) {
	res, err := ci.next.Ingest(ctx, ev, ns)
	// The agent API takes the source from its request body.
	source, connector := ci.m.sourceLabel(ev.Source), ci.m.connectorLabel(ev.Connector)
	if err != nil {
		ci.m.eventsReceived.WithLabelValues(source, connector, "error").Inc()
		return res, err
	}
	outcome := string(ev.Status)
	if res.Duplicate {
		outcome = "duplicate"
	}
	ci.m.eventsReceived.WithLabelValues(source, connector, outcome).Inc()
	for _, o := range res.Records {
		result := "created"
		if o.Merged {
			result = "merged"
		}
		ci.m.records.WithLabelValues(source, result).Inc()
		ci.m.decisions.WithLabelValues(string(o.Decision.Action)).Inc()
	}
	return res, nil
}

// SignalSent counts one signal handed to a target.
func (m *Metrics) SignalSent(target, action string) {
	m.signalsSent.WithLabelValues(target, action).Inc()
}

// DeliveryAttempt counts one attempt: success, retry or failed.
func (m *Metrics) DeliveryAttempt(target, outcome string) {
	m.attempts.WithLabelValues(target, outcome).Inc()
}

// SubscriberDelta moves the SSE subscriber gauge by +1 or -1.
func (m *Metrics) SubscriberDelta(d int) { m.sseSubscribers.Add(float64(d)) }

// IMAPPoll counts a mailbox poll; err counts an error too.
func (m *Metrics) IMAPPoll(connector string, err error) {
	m.imapPolls.WithLabelValues(connector).Inc()
	if err != nil {
		m.imapErrors.WithLabelValues(connector).Inc()
	}
}

// Backfilled counts one delivery backfill read: connector is source/name, outcome
// ingested, duplicate or ignored.
func (m *Metrics) Backfilled(connector, outcome string) {
	m.backfilled.WithLabelValues(connector, outcome).Inc()
}

// RetentionDeleted counts rows the retention cleaner deleted.
func (m *Metrics) RetentionDeleted(kind string, n int64) {
	m.retained.WithLabelValues(kind).Add(float64(n))
}

// Places where `when` expressions run, the values of the budget counter's label.
const (
	PlaceRoute  = "route"
	PlacePolicy = "policy"
)

// ExpressionBudgetExceeded counts one event whose expressions at place (PlaceRoute,
// PlacePolicy) ran out of budget.
func (m *Metrics) ExpressionBudgetExceeded(place string) {
	if place != PlaceRoute && place != PlacePolicy {
		place = "other"
	}
	m.overBudget.WithLabelValues(place).Inc()
}

// IMAPError counts a connection-level error (login, network) outside a poll cycle.
func (m *Metrics) IMAPError(connector string) { m.imapErrors.WithLabelValues(connector).Inc() }

// StatsReader reads queue depth and presence (the store).
type StatsReader interface {
	Stats(ctx context.Context, now time.Time) (store.Stats, error)
}

var (
	dueDesc     = prometheus.NewDesc("signalgate_queue_due", "Pending records whose due time has passed.", nil, nil)
	pendingDesc = prometheus.NewDesc("signalgate_queue_pending", "Pending records.", nil, nil)
	failedDesc  = prometheus.NewDesc("signalgate_records_failed", "Records that exhausted their attempts (dead letters).", nil, nil)
	activeDesc  = prometheus.NewDesc("signalgate_threads_active", "Threads with an open run.", nil, nil)
	silenceDesc = prometheus.NewDesc("signalgate_silences", "Silences by state.", []string{"state"}, nil)
)

// statsCollector reads the store on scrape, bounded by a short timeout.
type statsCollector struct {
	stats StatsReader
	log   *slog.Logger
}

func (c *statsCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- dueDesc
	ch <- pendingDesc
	ch <- failedDesc
	ch <- activeDesc
	ch <- silenceDesc
}

func (c *statsCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	st, err := c.stats.Stats(ctx, time.Now())
	if err != nil {
		c.log.Warn("metrics: read stats", "component", "metrics", "error", err.Error())
		return
	}
	ch <- prometheus.MustNewConstMetric(dueDesc, prometheus.GaugeValue, float64(st.Due))
	ch <- prometheus.MustNewConstMetric(pendingDesc, prometheus.GaugeValue, float64(st.Pending))
	ch <- prometheus.MustNewConstMetric(failedDesc, prometheus.GaugeValue, float64(st.Failed))
	ch <- prometheus.MustNewConstMetric(activeDesc, prometheus.GaugeValue, float64(st.ActiveThreads))
	for state, n := range map[string]int{"pending": st.SilencesPending, "active": st.SilencesActive, "expired": st.SilencesExpired} {
		ch <- prometheus.MustNewConstMetric(silenceDesc, prometheus.GaugeValue, float64(n), state)
	}
}

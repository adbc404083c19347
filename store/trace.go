package store

import (
	"context"
	"path/filepath"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/telemetry"
)

// Span attributes of an ingest transaction's children.
const (
	attrRecordID       = attribute.Key("signalgate.record.id")
	attrThread         = attribute.Key("signalgate.thread")
	attrDecisionAction = attribute.Key("signalgate.decision.action")
	attrDecisionReason = attribute.Key("signalgate.decision.reason")
	attrCoalesced      = attribute.Key("signalgate.coalesced_count")
)

// WithTracing makes a DB client span of every ingest transaction with tp, with a
// "decide" child per notification and a "merge" child per merge. A nil or no-op
// provider (telemetry.Off) records nothing.
func WithTracing(tp trace.TracerProvider) Option {
	return func(s *DB) {
		s.tracer = telemetry.RecordingTracer(tp)
	}
}

// dbAttrs names the database of the store's spans: db.namespace is the PostgreSQL
// database or the SQLite file's base name.
func dbAttrs(cfg Config) []attribute.KeyValue {
	if cfg.Driver == DriverPostgres {
		attrs := []attribute.KeyValue{semconv.DBSystemNamePostgreSQL}
		if pc, err := parsePostgresDSN(cfg.DSN); err == nil && pc.Database != "" {
			attrs = append(attrs, semconv.DBNamespace(pc.Database))
		}
		return attrs
	}
	path, _ := splitSQLiteDSN(cfg.DSN)
	return []attribute.KeyValue{semconv.DBSystemNameSQLite, semconv.DBNamespace(filepath.Base(path))}
}

// startIngestSpan starts the span of an ingest transaction; nothing (ctx as it is, a
// nil span) when tracing is off.
func (s *Inbox) startIngestSpan(ctx context.Context) (context.Context, trace.Span) {
	if s.tracer == nil {
		return ctx, nil
	}
	attrs := append(s.dbAttrs[:len(s.dbAttrs):len(s.dbAttrs)],
		semconv.DBOperationName("INSERT"), semconv.DBCollectionName("events"))
	return s.tracer.Start(ctx, "INSERT events", trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
}

// endSpan ends span (nil: tracing off), marking it failed with err.
func endSpan(span trace.Span, err error) {
	if span == nil {
		return
	}
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, "ingest failed")
	}
	span.End()
}

// decide runs the policy decision of n under a "decide" span.
func (s *Inbox) decide(ctx context.Context, n inbox.Notification, decide func() inbox.Decision) (inbox.Decision, trace.Span) {
	if s.tracer == nil {
		return decide(), nil
	}
	_, span := s.tracer.Start(ctx, "decide", trace.WithAttributes(attrThread.String(n.Thread.String())))
	d := decide()
	span.SetAttributes(attrDecisionAction.String(string(d.Action)), attrDecisionReason.String(d.Reason))
	return d, span
}

// endDecide ends a decide span once the record it decided has an id.
func endDecide(span trace.Span, recordID string) {
	if span == nil {
		return
	}
	span.SetAttributes(attrRecordID.String(recordID))
	span.End()
}

// mergeSpan records a merge into the pending record r.
func (s *Inbox) mergeSpan(ctx context.Context, r *inbox.Record) {
	if s.tracer == nil {
		return
	}
	_, span := s.tracer.Start(ctx, "merge", trace.WithAttributes(
		attrRecordID.String(r.ID), attrCoalesced.Int(r.CoalescedCount)))
	span.End()
}

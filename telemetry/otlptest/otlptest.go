// Package otlptest is an OTLP/HTTP trace receiver for tests and the load tool: it
// decodes what a real exporter sends (protobuf, gzip or not) with the official OTLP
// types and keeps the spans, so a test asserts the tree an operator's collector would
// receive.
package otlptest

import (
	"compress/gzip"
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"sync"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// maxRequest bounds one export request's body (decompressed).
const maxRequest = 64 << 20

// Span is one received span with its resource's service name.
type Span struct {
	*tracepb.Span
	Service string
}

// TraceID and SpanID are the span's ids in hex, as traceparent and logs write them.
func (s Span) TraceID() string      { return hex.EncodeToString(s.Span.TraceId) }
func (s Span) SpanID() string       { return hex.EncodeToString(s.Span.SpanId) }
func (s Span) ParentSpanID() string { return hex.EncodeToString(s.Span.ParentSpanId) }

// Attr is the string form of the span attribute key ("" when absent).
func (s Span) Attr(key string) string {
	for _, kv := range s.Attributes {
		if kv.Key == key {
			return valueString(kv.Value)
		}
	}
	return ""
}

// HasAttr reports whether the span has the attribute key.
func (s Span) HasAttr(key string) bool {
	for _, kv := range s.Attributes {
		if kv.Key == key {
			return true
		}
	}
	return false
}

func valueString(v *commonpb.AnyValue) string {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return fmt.Sprint(x.IntValue)
	case *commonpb.AnyValue_BoolValue:
		return fmt.Sprint(x.BoolValue)
	case *commonpb.AnyValue_DoubleValue:
		return fmt.Sprint(x.DoubleValue)
	}
	return v.String()
}

// Receiver is an http.Handler for POST /v1/traces. With Keep false it only counts
// (the load tool: memory stays flat however long the run).
type Receiver struct {
	Keep bool

	mu      sync.Mutex
	spans   []Span
	count   int
	changed chan struct{} // closed and replaced on every export
}

// NewReceiver returns a receiver that keeps every span.
func NewReceiver() *Receiver { return &Receiver{Keep: true, changed: make(chan struct{})} }

// ServeHTTP decodes one ExportTraceServiceRequest and answers the empty success.
func (r *Receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost || req.URL.Path != "/v1/traces" {
		http.NotFound(w, req)
		return
	}
	var body io.Reader = http.MaxBytesReader(w, req.Body, maxRequest)
	if req.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(body)
		if err != nil {
			http.Error(w, "bad gzip", http.StatusBadRequest)
			return
		}
		defer zr.Close()
		body = io.LimitReader(zr, maxRequest)
	}
	raw, err := io.ReadAll(body)
	if err != nil {
		http.Error(w, "read body", http.StatusBadRequest)
		return
	}
	var msg collectortrace.ExportTraceServiceRequest
	if err := proto.Unmarshal(raw, &msg); err != nil {
		http.Error(w, "decode: "+err.Error(), http.StatusBadRequest)
		return
	}
	r.add(&msg)
	out, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

// Add takes an export request received another way (the gRPC test server).
func (r *Receiver) Add(msg *collectortrace.ExportTraceServiceRequest) { r.add(msg) }

func (r *Receiver) add(msg *collectortrace.ExportTraceServiceRequest) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rs := range msg.ResourceSpans {
		service := ""
		for _, kv := range rs.GetResource().GetAttributes() {
			if kv.Key == "service.name" {
				service = valueString(kv.Value)
			}
		}
		for _, ss := range rs.ScopeSpans {
			r.count += len(ss.Spans)
			if !r.Keep {
				continue
			}
			for _, sp := range ss.Spans {
				r.spans = append(r.spans, Span{Span: sp, Service: service})
			}
		}
	}
	if r.changed == nil {
		r.changed = make(chan struct{})
	}
	close(r.changed)
	r.changed = make(chan struct{})
}

// Count is how many spans arrived.
func (r *Receiver) Count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.count
}

// Spans is a copy of the kept spans, in arrival order.
func (r *Receiver) Spans() []Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Span(nil), r.spans...)
}

// WaitFor blocks until ok holds for the kept spans (checked after every export) or ctx
// ends; it returns the spans it last saw.
func (r *Receiver) WaitFor(ctx context.Context, ok func([]Span) bool) ([]Span, error) {
	for {
		r.mu.Lock()
		if r.changed == nil {
			r.changed = make(chan struct{})
		}
		spans, changed := append([]Span(nil), r.spans...), r.changed
		r.mu.Unlock()
		if ok(spans) {
			return spans, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return spans, fmt.Errorf("wait for spans (%d received): %w", len(spans), ctx.Err())
		}
	}
}

// Named returns the kept spans called name.
func Named(spans []Span, name string) []Span {
	var out []Span
	for _, s := range spans {
		if s.Name == name {
			out = append(out, s)
		}
	}
	return out
}

// Children returns the spans whose parent is p.
func Children(spans []Span, p Span) []Span {
	var out []Span
	for _, s := range spans {
		if s.ParentSpanID() == p.SpanID() && s.TraceID() == p.TraceID() {
			out = append(out, s)
		}
	}
	return out
}

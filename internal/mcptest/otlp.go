package mcptest

import (
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// OTLPReceiver is a small OTLP/HTTP receiver (protobuf): it decodes the
// spans and metrics it is sent with pdata, as a collector would. Set
// Status (before anything is sent) to answer every request with it.
type OTLPReceiver struct {
	*httptest.Server
	Status int

	mu       sync.Mutex
	spans    []ptrace.Span
	metrics  []pmetric.Metric
	requests []*http.Request
	// got is closed and replaced at each request received: WaitSpan
	// waits on it.
	got chan struct{}
}

// NewOTLPReceiver starts a receiver on a loopback port, stopped when the
// test ends.
func NewOTLPReceiver(t testing.TB) *OTLPReceiver {
	r := &OTLPReceiver{got: make(chan struct{})}
	r.Server = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.Close)
	return r
}

func (r *OTLPReceiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	defer r.mu.Unlock()
	defer func() { close(r.got); r.got = make(chan struct{}) }()
	r.requests = append(r.requests, req.Clone(req.Context()))
	if r.Status != 0 {
		w.WriteHeader(r.Status)
		return
	}
	switch req.URL.Path {
	case "/v1/traces":
		td, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		for _, rs := range td.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				for _, s := range ss.Spans().All() {
					r.spans = append(r.spans, s)
				}
			}
		}
	case "/v1/metrics":
		md, err := (&pmetric.ProtoUnmarshaler{}).UnmarshalMetrics(body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		for _, rm := range md.ResourceMetrics().All() {
			for _, sm := range rm.ScopeMetrics().All() {
				for _, m := range sm.Metrics().All() {
					r.metrics = append(r.metrics, m)
				}
			}
		}
	default:
		http.NotFound(w, req)
		return
	}
	w.Header().Set("Content-Type", "application/x-protobuf")
}

// Spans are the spans received so far.
func (r *OTLPReceiver) Spans() []ptrace.Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]ptrace.Span(nil), r.spans...)
}

// SpansByName are the spans received so far, by name (the last of a name).
func (r *OTLPReceiver) SpansByName() map[string]ptrace.Span {
	out := map[string]ptrace.Span{}
	for _, s := range r.Spans() {
		out[s.Name()] = s
	}
	return out
}

// WaitSpan waits until a span named name has been received, for at most
// d, and returns the spans by name then; it fails the test past d, saying
// which spans did come.
func (r *OTLPReceiver) WaitSpan(t testing.TB, name string, d time.Duration) map[string]ptrace.Span {
	t.Helper()
	deadline := time.After(d)
	for {
		r.mu.Lock()
		got := r.got
		r.mu.Unlock()
		if spans := r.SpansByName(); spans[name] != (ptrace.Span{}) {
			return spans
		}
		select {
		case <-got:
		case <-deadline:
			spans := r.SpansByName()
			t.Fatalf("no span %q came in %v; came: %v", name, d, slices.Sorted(maps.Keys(spans)))
			return spans
		}
	}
}

// Metrics are the metrics received so far.
func (r *OTLPReceiver) Metrics() []pmetric.Metric {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]pmetric.Metric(nil), r.metrics...)
}

// Requests are the requests received so far (their bodies read).
func (r *OTLPReceiver) Requests() []*http.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*http.Request(nil), r.requests...)
}

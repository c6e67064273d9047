package otlp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpi-dev/mcpi/internal/transport"
)

// The headers of OTEL_EXPORTER_OTLP_HEADERS go with every export, those of
// the signal's own variable over them, percent-decoded, as the SDK's
// exporters send them; a malformed pair is left out.
func TestPosterHeaders(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "authorization=Bearer%20otlp-secret, x-tenant = a ,bad pair,=novalue")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "x-tenant=b")
	var got http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got = r.Header.Clone() }))
	defer srv.Close()
	p := newPoster(srv.URL+"/v1/traces", transport.NewHTTPClient(nil, transport.EgressPolicy{}), "TRACES", "1.2")
	if err := p.post(context.Background(), []byte{}); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"Authorization": "Bearer otlp-secret", "X-Tenant": "b", "Content-Type": "application/x-protobuf", "User-Agent": "mcpi/1.2"}
	for k, v := range want {
		if got.Get(k) != v {
			t.Errorf("%s: %q, want %q (all: %v)", k, got.Get(k), v, got)
		}
	}
	if got.Get("Bad pair") != "" || len(got.Values("")) != 0 {
		t.Errorf("a malformed pair was sent: %v", got)
	}
}

// A receiver that says to come back later (429, 502, 503, 504) is tried
// again with a backoff until it takes the export or the export's time runs
// out; any other refusal is final at once.
func TestPosterRetries(t *testing.T) {
	for _, tc := range []struct {
		statuses []int
		wantErr  string
		wantN    int
	}{
		{[]int{503, 429, 200}, "", 3},
		{[]int{400}, "400 Bad Request", 1},
		{[]int{404}, ": 404 Not Found", 1},
		{[]int{502, 502, 502, 502, 502, 502, 502, 502}, "502 Bad Gateway", 0},
	} {
		var mu sync.Mutex
		n := 0
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			defer mu.Unlock()
			w.WriteHeader(tc.statuses[min(n, len(tc.statuses)-1)])
			n++
		}))
		p := newPoster(srv.URL, transport.NewHTTPClient(nil, transport.EgressPolicy{}), "TRACES", "test")
		ctx, cancel := context.WithTimeout(context.Background(), 700*time.Millisecond)
		err := p.post(ctx, []byte("x"))
		cancel()
		srv.Close()
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%v: %v", tc.statuses, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%v: error %v, want one saying %q", tc.statuses, err, tc.wantErr)
		}
		if tc.wantN > 0 && n != tc.wantN {
			t.Errorf("%v: %d requests, want %d", tc.statuses, n, tc.wantN)
		}
		if tc.wantN == 0 && n < 2 {
			t.Errorf("%v: %d requests: no retry", tc.statuses, n)
		}
	}
}

// Every attribute type, the status codes (numbered differently in the API
// and in OTLP), kinds, events and links reach OTLP as the SDK's exporter
// sends them; the spans are grouped by resource and scope.
func TestSpansToPdata(t *testing.T) {
	tid := trace.TraceID{1, 2, 3}
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: trace.SpanID{4}, TraceFlags: trace.FlagsSampled})
	parent := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: trace.SpanID{5}})
	res := resource.NewSchemaless(attribute.String("service.name", "mcpi"))
	scope := instrumentation.Scope{Name: ScopeName, Version: "1"}
	t0 := time.Unix(1700000000, 0)
	stubs := tracetest.SpanStubs{
		{Name: "tools/call add", SpanContext: sc, Parent: parent, SpanKind: trace.SpanKindClient, StartTime: t0, EndTime: t0.Add(time.Second),
			Attributes: []attribute.KeyValue{attribute.Bool("b", true), attribute.Int64("i", 7), attribute.Float64("f", 1.5),
				attribute.String("s", "x"), attribute.StringSlice("ss", []string{"a", "b"}), attribute.Int64Slice("is", []int64{1}),
				attribute.Float64Slice("fs", []float64{0.5}), attribute.BoolSlice("bs", []bool{false})},
			Events:               []sdktrace.Event{{Name: "ev", Time: t0, Attributes: []attribute.KeyValue{attribute.Int("n", 1)}}},
			Links:                []sdktrace.Link{{SpanContext: parent}},
			Status:               sdktrace.Status{Code: codes.Error, Description: "boom"},
			Resource:             res,
			InstrumentationScope: scope},
		{Name: "ping", SpanContext: sc, SpanKind: trace.SpanKindServer, Status: sdktrace.Status{Code: codes.Ok}, Resource: res, InstrumentationScope: scope},
		{Name: "other scope", SpanContext: sc, Resource: res, InstrumentationScope: instrumentation.Scope{Name: "x"}},
	}
	td := spansToPdata(stubs.Snapshots())
	if n := td.ResourceSpans().Len(); n != 1 {
		t.Fatalf("%d resources, want 1", n)
	}
	rs := td.ResourceSpans().At(0)
	if v, _ := rs.Resource().Attributes().Get("service.name"); v.Str() != "mcpi" {
		t.Errorf("resource %v", rs.Resource().Attributes().AsRaw())
	}
	if n := rs.ScopeSpans().Len(); n != 2 {
		t.Fatalf("%d scopes, want 2", n)
	}
	ss := rs.ScopeSpans().At(0)
	if ss.Scope().Name() != ScopeName || ss.Scope().Version() != "1" || ss.Spans().Len() != 2 {
		t.Fatalf("scope %s %s, %d spans", ss.Scope().Name(), ss.Scope().Version(), ss.Spans().Len())
	}
	s := ss.Spans().At(0)
	if s.TraceID() != [16]byte(tid) || s.SpanID() != [8]byte{4} || s.ParentSpanID() != [8]byte{5} || s.Kind() != ptrace.SpanKindClient ||
		s.EndTimestamp().AsTime().Sub(s.StartTimestamp().AsTime()) != time.Second || s.Flags() != 1 {
		t.Errorf("span %s: ids %s %s %s, kind %v, flags %d", s.Name(), s.TraceID(), s.SpanID(), s.ParentSpanID(), s.Kind(), s.Flags())
	}
	wantAttrs := map[string]any{"b": true, "i": int64(7), "f": 1.5, "s": "x", "ss": []any{"a", "b"}, "is": []any{int64(1)},
		"fs": []any{0.5}, "bs": []any{false}}
	if d := cmp.Diff(wantAttrs, s.Attributes().AsRaw()); d != "" {
		t.Errorf("attributes (-want +got):\n%s", d)
	}
	if s.Status().Code() != ptrace.StatusCodeError || s.Status().Message() != "boom" {
		t.Errorf("status %v %q", s.Status().Code(), s.Status().Message())
	}
	if s.Events().Len() != 1 || s.Events().At(0).Name() != "ev" || s.Links().Len() != 1 || s.Links().At(0).SpanID() != [8]byte{5} {
		t.Errorf("events %d, links %d", s.Events().Len(), s.Links().Len())
	}
	if p := ss.Spans().At(1); p.Status().Code() != ptrace.StatusCodeOk || p.Kind() != ptrace.SpanKindServer || !p.ParentSpanID().IsEmpty() {
		t.Errorf("span ping: status %v kind %v parent %s", p.Status().Code(), p.Kind(), p.ParentSpanID())
	}
}

// Package otlp turns a trace of mcpi (internal/record) into OpenTelemetry
// spans, following the OpenTelemetry semantic conventions for the Model
// Context Protocol (gen-ai/mcp): a span for each request, from its sending
// to its answer, and for each notification; named `{mcp.method.name}
// {target}` (the tool or prompt, when there is one); with mcp.method.name,
// mcp.session.id, mcp.protocol.version, jsonrpc.request.id,
// gen_ai.tool.name, gen_ai.prompt.name, mcp.resource.uri,
// network.transport, and, for an error, error.type,
// rpc.response.status_code and an error status. They are children of one
// span for the session, so that a receiver shows the session as a tree.
//
// The spans are built with the collector's pdata (ptrace), whose JSON
// marshaler writes OTLP/JSON (hex ids, integer enums): the file form of
// `mcpi trace export --otlp`. Ids are derived from the trace's header, so
// that one trace always exports the same ids.
//
// The live form (`--otlp-endpoint`, Live) goes through the OpenTelemetry
// Go SDK (its tracer and meter providers, batch processor and
// aggregation); its last step, the OTLP/HTTP request, is exporter.go's:
// the same pdata types encoded as protobuf and POSTed through mcpi's HTTP
// client, as the SDK's otlptracehttp and otlpmetrichttp do, without the
// gRPC and protobuf-go packages those link (a millisecond and several MiB
// at every start of mcpi; docs/performance.md).
package otlp

import (
	"errors"
	"slices"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpi-dev/mcpi/internal/record"
)

// MaxSpans bounds the spans of one file export: a trace of a million
// notifications gives the first MaxSpans and says how many more there
// were (Stats.Dropped).
const MaxSpans = 200_000

// FromTrace reads a trace to its end and returns its spans, the session's
// first, then in the order they began. version is mcpi's, for the
// instrumentation scope.
func FromTrace(r *record.Reader, version string) (ptrace.Traces, Stats, error) {
	h := r.Header()
	var spans []*Span
	b := NewBuilder(h, func(s *Span) { spans = append(spans, s) })
	b.Limit = MaxSpans
	// A trace that ends inside an event is exported up to there.
	err := r.Each(func(ev record.Event) { b.Event(&ev) })
	if errors.Is(err, record.ErrTruncated) {
		err = nil
	}
	st := b.Finish()
	// The session's span, emitted last, goes first.
	root := spans[len(spans)-1]
	spans = spans[:len(spans)-1]
	slices.SortStableFunc(spans, func(a, b *Span) int { return a.Start.Compare(b.Start) })

	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	attrs := rs.Resource().Attributes()
	attrs.PutStr("service.name", "mcpi")
	attrs.PutStr("service.version", h.Mcpi)
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName(ScopeName)
	ss.Scope().SetVersion(version)
	out := ss.Spans()
	out.EnsureCapacity(len(spans) + 1)
	toPdata(root, out.AppendEmpty())
	for _, s := range spans {
		toPdata(s, out.AppendEmpty())
	}
	return td, st, err
}

// ScopeName is the instrumentation scope of mcpi's spans and metrics.
const ScopeName = "github.com/mcpi-dev/mcpi"

// toPdata writes s into d.
func toPdata(s *Span, d ptrace.Span) {
	d.SetTraceID(pcommon.TraceID(s.TraceID))
	d.SetSpanID(pcommon.SpanID(s.SpanID))
	if s.Parent.IsValid() {
		d.SetParentSpanID(pcommon.SpanID(s.Parent))
	}
	d.SetName(s.Name)
	switch s.Kind {
	case trace.SpanKindClient:
		d.SetKind(ptrace.SpanKindClient)
	case trace.SpanKindServer:
		d.SetKind(ptrace.SpanKindServer)
	default:
		d.SetKind(ptrace.SpanKindInternal)
	}
	d.SetStartTimestamp(pcommon.NewTimestampFromTime(s.Start))
	d.SetEndTimestamp(pcommon.NewTimestampFromTime(s.End))
	putAttrs(d.Attributes(), s.Attrs)
	for _, ev := range s.Events {
		e := d.Events().AppendEmpty()
		e.SetName(ev.Name)
		e.SetTimestamp(pcommon.NewTimestampFromTime(ev.Time))
		putAttrs(e.Attributes(), ev.Attrs)
	}
	if s.Error {
		d.Status().SetCode(ptrace.StatusCodeError)
		d.Status().SetMessage(s.Message)
	}
}

// JSON is the spans as OTLP/JSON.
func JSON(td ptrace.Traces) ([]byte, error) {
	m := &ptrace.JSONMarshaler{}
	return m.MarshalTraces(td)
}

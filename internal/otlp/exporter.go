package otlp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/mcpi-dev/mcpi/internal/bounds"
)

// The SDK's own OTLP/HTTP exporters (otlptracehttp, otlpmetrichttp) link
// gRPC, protobuf-go and the generated OTLP collector services, though they
// never speak gRPC: 10 MB of binary and a millisecond and several MiB at
// the start of every mcpi process, --version and a shell's TAB included.
// The SDK's tracer and meter providers, batching and aggregation stay;
// what is here is only the last step, as the SDK's exporters do it: the
// batch encoded as OTLP protobuf (with pdata, which the file export uses
// already) and POSTed, retried on 429, 502, 503 and 504 with a backoff,
// within the export's timeout.

// poster sends encoded OTLP requests to one URL.
type poster struct {
	url     string
	client  *http.Client
	headers http.Header
	agent   string
}

// newPoster sends to u through client, with the headers of
// OTEL_EXPORTER_OTLP_HEADERS and then of OTEL_EXPORTER_OTLP_{signal}_HEADERS
// (signal: TRACES or METRICS), as the SDK's exporters read them.
func newPoster(u string, client *http.Client, signal, version string) *poster {
	h := http.Header{}
	for _, env := range []string{"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_" + signal + "_HEADERS"} {
		for k, v := range parseHeaders(os.Getenv(env)) {
			h.Set(k, v)
		}
	}
	return &poster{url: u, client: client, headers: h, agent: "mcpi/" + version}
}

// parseHeaders reads the W3C baggage-like list of the OTEL_EXPORTER_OTLP
// headers variables: name=value pairs separated by commas, values
// percent-encoded. A malformed pair is left out, as the SDK does.
func parseHeaders(s string) map[string]string {
	out := map[string]string{}
	for pair := range strings.SplitSeq(s, ",") {
		n, v, ok := strings.Cut(pair, "=")
		name := strings.TrimSpace(n)
		if !ok || name == "" || strings.ContainsAny(name, " \t\r\n:") {
			continue
		}
		value, err := url.PathUnescape(v)
		if err != nil {
			continue
		}
		out[name] = strings.TrimSpace(value)
	}
	return out
}

// Backoff of the retries: doubling from retryFirst to retryMax.
const (
	retryFirst = 200 * time.Millisecond
	retryMax   = time.Second
)

// post sends body, retrying a refusal that says to come back later and a
// request that timed out, until ctx ends.
func (p *poster) post(ctx context.Context, body []byte) error {
	wait := retryFirst
	for {
		err, retry := p.postOnce(ctx, body)
		if err == nil || !retry {
			return err
		}
		pause, cancel := bounds.Clock{Name: "OTLP retry backoff", D: wait}.Context(ctx)
		<-pause.Done()
		cancel()
		if ctx.Err() != nil {
			return fmt.Errorf("%w (retried until %w)", err, context.Cause(ctx))
		}
		wait = min(2*wait, retryMax)
	}
}

// postOnce sends body once; retry says the receiver asked to come back.
func (p *poster) postOnce(ctx context.Context, body []byte) (err error, retry bool) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.url, bytes.NewReader(body))
	if err != nil {
		return err, false
	}
	for k, v := range p.headers {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	req.Header.Set("User-Agent", p.agent)
	resp, err := p.client.Do(req)
	if err != nil {
		// As the SDK's exporters: a request that timed out is tried again,
		// a refused one (a redirect to another origin, a closed port) not.
		var ue *url.Error
		return err, errors.As(err, &ue) && ue.Timeout() && ctx.Err() == nil
	}
	defer resp.Body.Close()
	// The answer (a partial success at most) is read, within a bound, so
	// that the connection can be used again.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return nil, false
	case resp.StatusCode == http.StatusTooManyRequests, resp.StatusCode == http.StatusBadGateway,
		resp.StatusCode == http.StatusServiceUnavailable, resp.StatusCode == http.StatusGatewayTimeout:
		return fmt.Errorf("failed to send to %s: %s", p.url, resp.Status), true
	}
	return fmt.Errorf("failed to send to %s: %s", p.url, resp.Status), false
}

// spanExporter is an sdktrace.SpanExporter that sends OTLP/HTTP protobuf.
type spanExporter struct{ p *poster }

func (e *spanExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if len(spans) == 0 {
		return nil
	}
	b, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(spansToPdata(spans))
	if err != nil {
		return err
	}
	return e.p.post(ctx, b)
}

func (e *spanExporter) Shutdown(context.Context) error { return nil }

// spansToPdata groups spans by resource and scope, as OTLP nests them.
func spansToPdata(spans []sdktrace.ReadOnlySpan) ptrace.Traces {
	td := ptrace.NewTraces()
	type key struct {
		res   *resource.Resource
		scope instrumentation.Scope
	}
	resources := map[*resource.Resource]ptrace.ResourceSpans{}
	scopes := map[key]ptrace.SpanSlice{}
	for _, s := range spans {
		rs, ok := resources[s.Resource()]
		if !ok {
			rs = td.ResourceSpans().AppendEmpty()
			putResource(rs.Resource(), s.Resource())
			resources[s.Resource()] = rs
		}
		k := key{s.Resource(), s.InstrumentationScope()}
		out, ok := scopes[k]
		if !ok {
			ss := rs.ScopeSpans().AppendEmpty()
			putScope(ss.Scope(), k.scope)
			ss.SetSchemaUrl(k.scope.SchemaURL)
			out = ss.Spans()
			scopes[k] = out
		}
		spanToPdata(s, out.AppendEmpty())
	}
	return td
}

func spanToPdata(s sdktrace.ReadOnlySpan, d ptrace.Span) {
	sc := s.SpanContext()
	d.SetTraceID(pcommon.TraceID(sc.TraceID()))
	d.SetSpanID(pcommon.SpanID(sc.SpanID()))
	d.TraceState().FromRaw(sc.TraceState().String())
	d.SetFlags(uint32(sc.TraceFlags()))
	if p := s.Parent(); p.IsValid() {
		d.SetParentSpanID(pcommon.SpanID(p.SpanID()))
	}
	d.SetName(s.Name())
	// The OTLP and OpenTelemetry API span kinds are numbered alike.
	d.SetKind(ptrace.SpanKind(s.SpanKind()))
	d.SetStartTimestamp(pcommon.NewTimestampFromTime(s.StartTime()))
	d.SetEndTimestamp(pcommon.NewTimestampFromTime(s.EndTime()))
	putAttrs(d.Attributes(), s.Attributes())
	d.SetDroppedAttributesCount(uint32(s.DroppedAttributes()))
	for _, ev := range s.Events() {
		e := d.Events().AppendEmpty()
		e.SetName(ev.Name)
		e.SetTimestamp(pcommon.NewTimestampFromTime(ev.Time))
		putAttrs(e.Attributes(), ev.Attributes)
		e.SetDroppedAttributesCount(uint32(ev.DroppedAttributeCount))
	}
	d.SetDroppedEventsCount(uint32(s.DroppedEvents()))
	for _, ln := range s.Links() {
		l := d.Links().AppendEmpty()
		l.SetTraceID(pcommon.TraceID(ln.SpanContext.TraceID()))
		l.SetSpanID(pcommon.SpanID(ln.SpanContext.SpanID()))
		l.TraceState().FromRaw(ln.SpanContext.TraceState().String())
		putAttrs(l.Attributes(), ln.Attributes)
		l.SetDroppedAttributesCount(uint32(ln.DroppedAttributeCount))
	}
	d.SetDroppedLinksCount(uint32(s.DroppedLinks()))
	switch st := s.Status(); st.Code {
	case codes.Error:
		d.Status().SetCode(ptrace.StatusCodeError)
		d.Status().SetMessage(st.Description)
	case codes.Ok:
		d.Status().SetCode(ptrace.StatusCodeOk)
	}
}

// metricExporter is an sdkmetric.Exporter that sends OTLP/HTTP protobuf,
// with the SDK's default temporality (cumulative) and aggregations.
type metricExporter struct{ p *poster }

func (e *metricExporter) Temporality(k sdkmetric.InstrumentKind) metricdata.Temporality {
	return sdkmetric.DefaultTemporalitySelector(k)
}

func (e *metricExporter) Aggregation(k sdkmetric.InstrumentKind) sdkmetric.Aggregation {
	return sdkmetric.DefaultAggregationSelector(k)
}

func (e *metricExporter) Export(ctx context.Context, rm *metricdata.ResourceMetrics) error {
	md, err := metricsToPdata(rm)
	if err != nil || md.DataPointCount() == 0 {
		return err
	}
	b, err := (&pmetric.ProtoMarshaler{}).MarshalMetrics(md)
	if err != nil {
		return err
	}
	return e.p.post(ctx, b)
}

func (e *metricExporter) ForceFlush(context.Context) error { return nil }
func (e *metricExporter) Shutdown(context.Context) error   { return nil }

// errAggregation is a metric of a kind mcpi does not record.
var errAggregation = errors.New("otlp: only float64 histograms are exported")

// metricsToPdata converts what mcpi records: histograms of float64.
func metricsToPdata(rm *metricdata.ResourceMetrics) (pmetric.Metrics, error) {
	md := pmetric.NewMetrics()
	r := md.ResourceMetrics().AppendEmpty()
	putResource(r.Resource(), rm.Resource)
	for _, sm := range rm.ScopeMetrics {
		s := r.ScopeMetrics().AppendEmpty()
		putScope(s.Scope(), sm.Scope)
		s.SetSchemaUrl(sm.Scope.SchemaURL)
		for _, m := range sm.Metrics {
			h, ok := m.Data.(metricdata.Histogram[float64])
			if !ok {
				return md, fmt.Errorf("%w: %s is %T", errAggregation, m.Name, m.Data)
			}
			d := s.Metrics().AppendEmpty()
			d.SetName(m.Name)
			d.SetDescription(m.Description)
			d.SetUnit(m.Unit)
			dh := d.SetEmptyHistogram()
			dh.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
			if h.Temporality == metricdata.DeltaTemporality {
				dh.SetAggregationTemporality(pmetric.AggregationTemporalityDelta)
			}
			for _, p := range h.DataPoints {
				dp := dh.DataPoints().AppendEmpty()
				putAttrs(dp.Attributes(), p.Attributes.ToSlice())
				dp.SetStartTimestamp(pcommon.NewTimestampFromTime(p.StartTime))
				dp.SetTimestamp(pcommon.NewTimestampFromTime(p.Time))
				dp.SetCount(p.Count)
				dp.SetSum(p.Sum)
				if v, ok := p.Min.Value(); ok {
					dp.SetMin(v)
				}
				if v, ok := p.Max.Value(); ok {
					dp.SetMax(v)
				}
				dp.ExplicitBounds().FromRaw(p.Bounds)
				dp.BucketCounts().FromRaw(p.BucketCounts)
			}
		}
	}
	return md, nil
}

func putResource(d pcommon.Resource, r *resource.Resource) {
	if r != nil {
		putAttrs(d.Attributes(), r.Attributes())
	}
}

func putScope(d pcommon.InstrumentationScope, s instrumentation.Scope) {
	d.SetName(s.Name)
	d.SetVersion(s.Version)
	putAttrs(d.Attributes(), s.Attributes.ToSlice())
}

// putAttrs writes OpenTelemetry attributes as OTLP ones, each type as its
// own (an int stays an int, a slice an array).
func putAttrs(m pcommon.Map, kvs []attribute.KeyValue) {
	m.EnsureCapacity(m.Len() + len(kvs))
	for _, kv := range kvs {
		k := string(kv.Key)
		switch v := kv.Value; v.Type() {
		case attribute.BOOL:
			m.PutBool(k, v.AsBool())
		case attribute.INT64:
			m.PutInt(k, v.AsInt64())
		case attribute.FLOAT64:
			m.PutDouble(k, v.AsFloat64())
		case attribute.STRING:
			m.PutStr(k, v.AsString())
		case attribute.BOOLSLICE:
			putSlice(m, k, v.AsBoolSlice(), pcommon.Value.SetBool)
		case attribute.INT64SLICE:
			putSlice(m, k, v.AsInt64Slice(), pcommon.Value.SetInt)
		case attribute.FLOAT64SLICE:
			putSlice(m, k, v.AsFloat64Slice(), pcommon.Value.SetDouble)
		case attribute.STRINGSLICE:
			putSlice(m, k, v.AsStringSlice(), pcommon.Value.SetStr)
		default:
			m.PutStr(k, v.String())
		}
	}
}

func putSlice[T any](m pcommon.Map, k string, vs []T, set func(pcommon.Value, T)) {
	sl := m.PutEmptySlice(k)
	sl.EnsureCapacity(len(vs))
	for _, v := range vs {
		set(sl.AppendEmpty(), v)
	}
}

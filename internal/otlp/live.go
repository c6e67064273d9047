package otlp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpi-dev/mcpi/internal/bounds"
	"github.com/mcpi-dev/mcpi/internal/record"
	"github.com/mcpi-dev/mcpi/internal/tracectx"
)

// ExportTimeout bounds one export to the endpoint, retries included, and
// the last one when the session ends: an endpoint that hangs costs a
// command at most this at its end.
const ExportTimeout = 5 * time.Second

// MaxQueue bounds the spans waiting to leave: past it a span is dropped
// and counted (a server that sends a million notifications in a second
// does not grow mcpi's memory).
const MaxQueue = 8192

// DurationMetric is the histogram of the conventions for the time a
// client's request took, from its sending to its answer, in seconds.
const DurationMetric = "mcp.client.operation.duration"

// durationBuckets are the conventions' advice for MCP durations.
var durationBuckets = []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}

// LiveOptions say where a live export goes.
type LiveOptions struct {
	// Endpoint is the OTLP/HTTP receiver: a base URL (the spans go to
	// /v1/traces under it, the metric to /v1/metrics), or the full URL of
	// its /v1/traces.
	Endpoint string
	// Client sends the exports: mcpi's one HTTP client, with its egress
	// policy. Its Timeout is set to ExportTimeout.
	Client *http.Client
	// Version is mcpi's.
	Version string
	// Timeout bounds each export and the last flush (ExportTimeout when
	// zero).
	Timeout time.Duration
	// Interval is how often the metric is sent (10 s when zero).
	Interval time.Duration
}

// LiveStats say how a live export went.
type LiveStats struct {
	// Spans were made; Exported reached the endpoint; Failed were sent and
	// refused or lost; Dropped never left (the queue was full, or the last
	// flush ran out of time).
	Spans, Exported, Failed, Dropped int
	// Err is the spans' first failure, if any.
	Err error
	// MetricErr is the metric's first failure; NoMetrics says the
	// receiver takes none (it answered 404 on /v1/metrics, as Jaeger
	// does), which is no failure.
	MetricErr error
	NoMetrics bool
}

// Live exports a session's spans and its duration metric to an OTLP/HTTP
// endpoint as the session goes, with the OpenTelemetry SDK: each span
// leaves when it ends, in batches, through a bounded queue.
type Live struct {
	tp      *sdktrace.TracerProvider
	mp      *sdkmetric.MeterProvider
	tracer  trace.Tracer
	hist    metric.Float64Histogram
	spans   *countingSpans
	metrics *countingMetrics
	timeout time.Duration

	mu      sync.Mutex
	ids     givenIDs // under mu
	builder *Builder
	made    int
	closed  bool
}

// Endpoints returns where the spans and the metric go for an endpoint
// given as a base URL or as the URL of its /v1/traces.
func Endpoints(endpoint string) (traces, metrics string, err error) {
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", "", fmt.Errorf("%q is not an http:// or https:// URL", endpoint)
	}
	if u.User != nil {
		return "", "", errors.New("the endpoint's URL holds credentials: give them in OTEL_EXPORTER_OTLP_HEADERS")
	}
	base := strings.TrimSuffix(u.Path, "/")
	base = strings.TrimSuffix(base, "/v1/traces")
	u.Path = base + "/v1/traces"
	traces = u.String()
	u.Path = base + "/v1/metrics"
	metrics = u.String()
	return traces, metrics, nil
}

// quietOnce keeps the SDK's own diagnostics off the terminal: they
// would reach it unsanitised through the log package. Export failures
// are not lost: the exporters' wrappers count them for LiveStats.
var quietOnce sync.Once

// StartLive starts a live export of the session whose trace has header h.
// The caller feeds it the trace's events (record.Options.Events) and
// closes it when the session ends.
func StartLive(h record.Header, o LiveOptions) (*Live, error) {
	tracesURL, metricsURL, err := Endpoints(o.Endpoint)
	if err != nil {
		return nil, err
	}
	quietOnce.Do(func() { otel.SetErrorHandler(otel.ErrorHandlerFunc(func(error) {})) })
	if o.Timeout <= 0 {
		o.Timeout = ExportTimeout
	}
	if o.Interval <= 0 {
		o.Interval = 10 * time.Second
	}
	client := *o.Client
	client.Timeout = o.Timeout
	te := &spanExporter{p: newPoster(tracesURL, &client, "TRACES", o.Version)}
	me := &metricExporter{p: newPoster(metricsURL, &client, "METRICS", o.Version)}
	res := resource.NewSchemaless(attribute.String("service.name", "mcpi"), attribute.String("service.version", o.Version))
	l := &Live{spans: &countingSpans{SpanExporter: te}, metrics: &countingMetrics{Exporter: me}, timeout: o.Timeout}
	l.tp = sdktrace.NewTracerProvider(
		sdktrace.WithResource(res),
		sdktrace.WithSampler(sdktrace.AlwaysSample()),
		sdktrace.WithIDGenerator(&l.ids),
		sdktrace.WithBatcher(l.spans, sdktrace.WithMaxQueueSize(MaxQueue), sdktrace.WithExportTimeout(o.Timeout), sdktrace.WithBatchTimeout(time.Second)))
	l.mp = sdkmetric.NewMeterProvider(
		sdkmetric.WithResource(res),
		sdkmetric.WithReader(sdkmetric.NewPeriodicReader(l.metrics, sdkmetric.WithInterval(o.Interval), sdkmetric.WithTimeout(o.Timeout))))
	l.tracer = l.tp.Tracer(ScopeName, trace.WithInstrumentationVersion(o.Version))
	l.hist, err = l.mp.Meter(ScopeName, metric.WithInstrumentationVersion(o.Version)).Float64Histogram(DurationMetric,
		metric.WithUnit("s"), metric.WithDescription("The duration of the MCP request or notification as observed on the sender from the time it was sent until the response or ack is received."),
		metric.WithExplicitBucketBoundaries(durationBuckets...))
	if err != nil {
		return nil, err
	}
	l.builder = NewBuilder(h, l.emit)
	return l, nil
}

// TraceID is the trace of the export.
func (l *Live) TraceID() trace.TraceID { return l.builder.TraceID() }

// Event reads the session's next event, as the trace writer hands it.
func (l *Live) Event(ev record.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.closed {
		l.builder.Event(&ev)
	}
}

// emit hands a finished span to the SDK, and a request of mcpi's to the
// duration metric.
func (l *Live) emit(s *Span) {
	l.made++
	// The SDK asks its IDGenerator for the ids within Start, and emit
	// runs under l.mu: the span to give them is set for that call alone.
	l.ids.next = s
	defer func() { l.ids.next = nil }()
	ctx := context.Background()
	if s.Parent.IsValid() {
		ctx = trace.ContextWithRemoteSpanContext(ctx, trace.NewSpanContext(trace.SpanContextConfig{
			TraceID: s.TraceID, SpanID: s.Parent, TraceFlags: trace.FlagsSampled, Remote: true}))
	}
	_, span := l.tracer.Start(ctx, s.Name, trace.WithTimestamp(s.Start), trace.WithSpanKind(s.Kind), trace.WithAttributes(s.Attrs...))
	for _, ev := range s.Events {
		span.AddEvent(ev.Name, trace.WithTimestamp(ev.Time), trace.WithAttributes(ev.Attrs...))
	}
	if s.Error {
		span.SetStatus(codes.Error, s.Message)
	}
	span.End(trace.WithTimestamp(s.End))
	// The metric is of requests that got their answer: one never answered
	// (or a stream still open at the end) took no time to report.
	if s.Request && s.Kind == trace.SpanKindClient && s.Attr("mcpi.unanswered") == "" && s.Attr("mcpi.open_at_end") == "" {
		l.hist.Record(context.Background(), s.End.Sub(s.Start).Seconds(), metric.WithAttributes(metricAttrs(s)...))
	}
}

// metricAttrs are the duration metric's attributes of a request's span.
func metricAttrs(s *Span) []attribute.KeyValue {
	var out []attribute.KeyValue
	for _, a := range s.Attrs {
		switch a.Key {
		case "mcp.method.name", "gen_ai.tool.name", "gen_ai.prompt.name", "mcp.protocol.version",
			"network.transport", "error.type", "rpc.response.status_code", "gen_ai.operation.name":
			out = append(out, a)
		}
	}
	return out
}

// Close ends the session's span and the requests still open, sends what
// is left within the export timeout, and says how the export went.
func (l *Live) Close() LiveStats {
	l.mu.Lock()
	if !l.closed {
		l.closed = true
		l.builder.Finish()
	}
	made := l.made
	l.mu.Unlock()
	ctx, cancel := bounds.Clock{Name: "OTLP export", D: l.timeout}.Context(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	var terr, merr error
	wg.Go(func() { terr = l.tp.Shutdown(ctx) })
	wg.Go(func() { merr = l.mp.Shutdown(ctx) })
	wg.Wait()
	st := LiveStats{Spans: made}
	st.Exported, st.Failed, st.Err = l.spans.counts()
	st.Dropped = max(0, made-st.Exported-st.Failed)
	if st.Err == nil && st.Dropped > 0 {
		st.Err = terr
	}
	st.MetricErr = l.metrics.err()
	if st.MetricErr == nil {
		st.MetricErr = merr
	}
	if st.MetricErr != nil && strings.Contains(st.MetricErr.Error(), ": 404 Not Found") {
		st.MetricErr, st.NoMetrics = nil, true
	}
	return st
}

// givenIDs gives a span the ids the Builder chose (a request's span has
// the id its traceparent gave the server): next, which emit sets around
// each Start under the Live's lock. Without one it gives random ids.
type givenIDs struct{ next *Span }

func (g *givenIDs) NewIDs(context.Context) (trace.TraceID, trace.SpanID) {
	if s := g.next; s != nil {
		return s.TraceID, s.SpanID
	}
	c := tracectx.New()
	return trace.TraceID(c.TraceID), trace.SpanID(c.SpanID)
}

func (g *givenIDs) NewSpanID(context.Context, trace.TraceID) trace.SpanID {
	if s := g.next; s != nil {
		return s.SpanID
	}
	return trace.SpanID(tracectx.New().SpanID)
}

// countingSpans counts what the endpoint took and refused, keeping the
// first failure; the SDK is told nothing went wrong, so that it does not
// print the failure itself.
type countingSpans struct {
	sdktrace.SpanExporter
	mu               sync.Mutex
	exported, failed int
	first            error
}

func (c *countingSpans) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	err := c.SpanExporter.ExportSpans(ctx, spans)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		c.failed += len(spans)
		if c.first == nil {
			c.first = err
		}
		return nil
	}
	c.exported += len(spans)
	return nil
}

func (c *countingSpans) counts() (exported, failed int, first error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.exported, c.failed, c.first
}

// countingMetrics keeps the metric's first failure.
type countingMetrics struct {
	sdkmetric.Exporter
	mu    sync.Mutex
	first error
}

func (c *countingMetrics) Export(ctx context.Context, rm *metricdata.ResourceMetrics) error {
	if err := c.Exporter.Export(ctx, rm); err != nil {
		c.mu.Lock()
		if c.first == nil {
			c.first = err
		}
		c.mu.Unlock()
	}
	return nil
}

func (c *countingMetrics) err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.first
}

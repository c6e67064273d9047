package mcptest

import (
	"context"
	"os"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// exportServerSpan does what a server instrumented with OpenTelemetry
// does with a request's _meta.traceparent: it extracts the context and
// ends a span of its own under it, sent to the receiver TracedServerEnv
// names.
func exportServerSpan(traceparent string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(os.Getenv(TracedServerEnv)+"/v1/traces"))
	if err != nil {
		return err
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp),
		sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", "traced-server"))))
	parent := propagation.TraceContext{}.Extract(ctx, propagation.MapCarrier{"traceparent": traceparent})
	_, span := tp.Tracer("mcptest").Start(parent, "server tools/call", trace.WithSpanKind(trace.SpanKindServer))
	span.End()
	return tp.Shutdown(ctx)
}

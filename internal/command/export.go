package command

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/mcpi-dev/mcpi/internal/otlp"
	"github.com/mcpi-dev/mcpi/internal/record"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// addExportFlag gives a command that connects --otlp-endpoint.
func addExportFlag(f *pflag.FlagSet, o *ConnOptions) {
	f.StringVar(&o.OTLPEndpoint, "otlp-endpoint", "", "send the session's spans and the mcp.client.operation.duration metric to this OTLP/HTTP receiver as it runs (a base URL such as http://127.0.0.1:4318; headers from OTEL_EXPORTER_OTLP_HEADERS)")
}

// StartTrace starts the command's trace: the file of --record, and the
// spans of --otlp-endpoint, which are made from the trace's events as
// they are recorded (what the trace redacts, the spans redact). Without
// --record the trace writes no file.
func (r *ConnRun) StartTrace() error {
	opts := r.TraceOptions()
	h := r.TraceHeader()
	// The spans begin where the trace does.
	h.Created = time.Now()
	if r.OTLPEndpoint != "" {
		// One HTTP client for every request mcpi makes, with its egress
		// policy: a redirect to another origin is refused, and with it
		// the headers of OTEL_EXPORTER_OTLP_HEADERS.
		client := transport.NewHTTPClient(r.Target.HTTPTransport, transport.EgressPolicy{})
		live, err := otlp.StartLive(h, otlp.LiveOptions{Endpoint: r.OTLPEndpoint, Client: client, Version: Version})
		if err != nil {
			return &FlagError{Err: fmt.Errorf("--otlp-endpoint: %w", err)}
		}
		r.Trace.exporter = live
		opts.Events = live.Event
	}
	if r.Record == "" {
		r.Trace.Recorder = record.NewTap(h, opts)
		return nil
	}
	w, err := record.Create(r.Record, h, opts)
	if err != nil {
		if r.Trace.exporter != nil {
			r.Trace.exporter.Close()
			r.Trace.exporter = nil
		}
		return &FlagError{Err: fmt.Errorf("--record: %w", err)}
	}
	r.Trace.Recorder = w
	return nil
}

// Close closes the run's trace and ends its export. A trace file that
// could not be written fails the command (exit 3); an export that failed
// is a warning, and changes no exit code. Close may be called more than
// once.
func (r *ConnRun) Close() error {
	var err error
	if r.Trace.Recorder != nil {
		if cerr := r.Trace.Recorder.Close(); cerr != nil && r.Record != "" {
			what := fmt.Sprintf("the trace %s is incomplete: %v", r.Record, cerr)
			fmt.Fprintf(r.IO.ErrOut, "mcpi: %s\n", what)
			err = ErrSilent{Code: ExitConnect, What: what}
		}
		r.Trace.Recorder = nil
	}
	if r.Trace.exporter != nil {
		st := r.Trace.exporter.Close()
		id := r.Trace.exporter.TraceID()
		r.Trace.exporter = nil
		if r.Verbose {
			fmt.Fprintf(r.IO.ErrOut, "exported %d spans of trace %s to %s\n", st.Exported, id, r.OTLPEndpoint)
			if st.NoMetrics {
				fmt.Fprintf(r.IO.ErrOut, "the receiver takes no metrics (404 on /v1/metrics): %s was not sent\n", otlp.DurationMetric)
			}
		}
		if st.Err != nil || st.Failed > 0 || st.Dropped > 0 {
			fmt.Fprintf(r.IO.ErrOut, "warning: %s\n", exportProblem(r.OTLPEndpoint, st))
		}
		if st.MetricErr != nil {
			fmt.Fprintf(r.IO.ErrOut, "warning: the OTLP export to %s did not take the %s metric: %s\n", r.OTLPEndpoint, otlp.DurationMetric, OneLine(st.MetricErr.Error()))
		}
	}
	return err
}

// exportProblem says what an export that did not go well lost.
func exportProblem(endpoint string, st otlp.LiveStats) string {
	msg := fmt.Sprintf("the OTLP export to %s sent %d of %d spans", endpoint, st.Exported, st.Spans)
	if st.Failed > 0 {
		msg += fmt.Sprintf(", %d refused or lost", st.Failed)
	}
	if st.Dropped > 0 {
		msg += fmt.Sprintf(", %d never sent (the queue of %d was full, or the last export ran out of its %s)", st.Dropped, otlp.MaxQueue, otlp.ExportTimeout)
	}
	if st.Err != nil {
		msg += ": " + OneLine(st.Err.Error())
	}
	return msg
}

package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/mcpi-dev/mcpi/internal/command"
	"github.com/mcpi-dev/mcpi/internal/iostreams"
	"github.com/mcpi-dev/mcpi/internal/otlp"
	"github.com/mcpi-dev/mcpi/internal/record"
)

// NewCmdTrace returns `mcpi trace`, tools for trace files.
func NewCmdTrace(f *command.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "trace",
		Short: "Work with trace files",
	}
	cmd.AddCommand(NewCmdTraceExport(f, nil))
	return cmd
}

// TraceExportOptions are the input of `mcpi trace export`.
type TraceExportOptions struct {
	IO    *command.IOStreams
	Trace string
	HAR   bool
	// OTLP writes the spans as OTLP/JSON.
	OTLP bool
	// Output is the file to write ("" or "-": stdout).
	Output string
}

// NewCmdTraceExport returns `mcpi trace export --har TRACE [-o FILE]`.
func NewCmdTraceExport(f *command.Factory, runF func(context.Context, *TraceExportOptions) error) *cobra.Command {
	opts := &TraceExportOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "export (--har | --otlp) TRACE [-o FILE]",
		Short: "Export a trace: its HTTP exchanges as a HAR (HTTP Archive 1.2), or its requests as OpenTelemetry spans (OTLP/JSON)",
		Args:  cobra.ExactArgs(1),
		RunE: command.CheckedRunE(func(_ *cobra.Command, args []string) error {
			if opts.HAR == opts.OTLP {
				return command.FlagErrorf("say which format: --har or --otlp")
			}
			opts.Trace = args[0]
			return nil
		}, opts, runF, traceExportRun),
	}
	end := command.FlagGroup(cmd, command.GroupOutput)
	cmd.Flags().BoolVar(&opts.HAR, "har", false, "write a HAR file")
	cmd.Flags().BoolVar(&opts.OTLP, "otlp", false, "write the requests and notifications as OpenTelemetry spans, OTLP/JSON (the MCP semantic conventions)")
	cmd.Flags().StringVarP(&opts.Output, "output", "o", "", "write to this file instead of stdout")
	end()
	return cmd
}

func traceExportRun(_ context.Context, opts *TraceExportOptions) error {
	r, err := record.Open(opts.Trace)
	if err != nil {
		return &command.FlagError{Err: fmt.Errorf("%s: %w", opts.Trace, err)}
	}
	defer r.Close()
	if opts.OTLP {
		return exportOTLP(opts, r)
	}
	h, err := record.ToHAR(r, command.Version)
	if err != nil {
		return err
	}
	if h.Log.Comment != "" {
		fmt.Fprintf(opts.IO.ErrOut, "warning: %s\n", h.Log.Comment)
	}
	if len(h.Log.Entries) == 0 {
		fmt.Fprintf(opts.IO.ErrOut, "warning: %s has no HTTP exchanges (a stdio trace, or one recorded before exchange numbers)\n", opts.Trace)
	}
	b, err := json.MarshalIndent(h, "", "  ")
	if err != nil {
		return err
	}
	return opts.write(append(b, '\n'))
}

// write writes the export to -o, or stdout.
func (opts *TraceExportOptions) write(b []byte) error {
	// What a trace holds came from a server: a character a terminal could
	// act on is escaped, in the file as on stdout (JSON reads it the same).
	b = iostreams.EscapeUnsafe(b)
	if opts.Output == "" || opts.Output == "-" {
		_, err := opts.IO.Data().Write(b)
		return err
	}
	return os.WriteFile(opts.Output, b, 0o600)
}

// exportOTLP writes the trace's spans as OTLP/JSON.
func exportOTLP(opts *TraceExportOptions, r *record.Reader) error {
	td, st, err := otlp.FromTrace(r, command.Version)
	if err != nil {
		return err
	}
	if st.Dropped > 0 {
		fmt.Fprintf(opts.IO.ErrOut, "warning: %s has more than %d requests and notifications: the %d after them are left out\n", opts.Trace, otlp.MaxSpans, st.Dropped)
	}
	if st.Unanswered > 0 {
		fmt.Fprintf(opts.IO.ErrOut, "note: %d request(s) have no answer in the trace: their spans end where it does, with an error status\n", st.Unanswered)
	}
	b, err := otlp.JSON(td)
	if err != nil {
		return err
	}
	return opts.write(append(b, '\n'))
}

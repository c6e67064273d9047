package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/mcpi-dev/mcpi/internal/record"
)

// NewCmdTrace returns `mcpi trace`, tools for trace files.
func NewCmdTrace(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "trace",
		Short: "Work with trace files",
	}
	cmd.AddCommand(NewCmdTraceExport(f, nil))
	return cmd
}

// TraceExportOptions are the input of `mcpi trace export`.
type TraceExportOptions struct {
	IO    *IOStreams
	Trace string
	HAR   bool
	// Output is the file to write ("" or "-": stdout).
	Output string
}

// NewCmdTraceExport returns `mcpi trace export --har TRACE [-o FILE]`.
func NewCmdTraceExport(f *Factory, runF func(context.Context, *TraceExportOptions) error) *cobra.Command {
	opts := &TraceExportOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "export --har TRACE [-o FILE]",
		Short: "Export the HTTP exchanges of a trace as a HAR (HTTP Archive 1.2)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !opts.HAR {
				return flagErrorf("say which format: --har")
			}
			opts.Trace = args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return traceExportRun(cmd.Context(), opts)
		},
	}
	end := flagGroup(cmd, groupOutput)
	cmd.Flags().BoolVar(&opts.HAR, "har", false, "write a HAR file")
	cmd.Flags().StringVarP(&opts.Output, "output", "o", "", "write to this file instead of stdout")
	end()
	return cmd
}

func traceExportRun(_ context.Context, opts *TraceExportOptions) error {
	r, err := record.Open(opts.Trace)
	if err != nil {
		return &FlagError{Err: fmt.Errorf("%s: %w", opts.Trace, err)}
	}
	defer r.Close()
	h, err := record.ToHAR(r, Version)
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
	b = append(b, '\n')
	if opts.Output == "" || opts.Output == "-" {
		_, err = opts.IO.Data().Write(b)
		return err
	}
	return os.WriteFile(opts.Output, b, 0o600)
}

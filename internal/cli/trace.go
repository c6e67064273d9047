package cli

import (
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
	var har bool
	var out string
	export := &cobra.Command{
		Use:   "export --har TRACE [-o FILE]",
		Short: "Export the HTTP exchanges of a trace as a HAR (HTTP Archive 1.2)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !har {
				return flagErrorf("say which format: --har")
			}
			r, err := record.Open(args[0])
			if err != nil {
				return &FlagError{Err: fmt.Errorf("%s: %w", args[0], err)}
			}
			defer r.Close()
			h, err := record.ToHAR(r, Version)
			if err != nil {
				return err
			}
			if h.Log.Comment != "" {
				fmt.Fprintf(f.IO.ErrOut, "warning: %s\n", h.Log.Comment)
			}
			if len(h.Log.Entries) == 0 {
				fmt.Fprintf(f.IO.ErrOut, "warning: %s has no HTTP exchanges (a stdio trace, or one recorded before exchange numbers)\n", args[0])
			}
			b, err := json.MarshalIndent(h, "", "  ")
			if err != nil {
				return err
			}
			b = append(b, '\n')
			if out == "" || out == "-" {
				_, err = f.IO.Data().Write(b)
				return err
			}
			return os.WriteFile(out, b, 0o600)
		},
	}
	end := flagGroup(export, groupOutput)
	export.Flags().BoolVar(&har, "har", false, "write a HAR file")
	export.Flags().StringVarP(&out, "output", "o", "", "write to this file instead of stdout")
	end()
	cmd.AddCommand(export)
	return cmd
}

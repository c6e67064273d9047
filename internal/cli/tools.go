package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/session"
)

// ToolsOptions are the flags of `mcpi tools`.
type ToolsOptions struct {
	IO     *IOStreams
	Target TargetOptions
	JSON   bool
}

// NewCmdTools returns `mcpi tools TARGET`.
func NewCmdTools(f *Factory, runF func(context.Context, *ToolsOptions) error) *cobra.Command {
	opts := &ToolsOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "tools TARGET",
		Short: "List a server's tools (every page)",
		Example: `  mcpi tools -- npx -y @modelcontextprotocol/server-everything
  mcpi tools http://127.0.0.1:8080/mcp --json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			rest, err := opts.Target.parseTarget(cmd, args)
			if err != nil {
				return err
			}
			if len(rest) > 0 {
				return flagErrorf("unexpected argument %q", rest[0])
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return toolsRun(cmd.Context(), opts)
		},
	}
	addTargetFlags(cmd, &opts.Target)
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the tools as JSON")
	return cmd
}

func toolsRun(ctx context.Context, opts *ToolsOptions) error {
	c, err := opts.Target.connect(ctx, session.Options{Handler: session.DeclineHandler{}}, nil)
	if err != nil {
		return err
	}
	defer c.Close()
	tools, err := c.AllTools(ctx)
	if err != nil {
		return err
	}
	if opts.JSON {
		return writeJSON(opts.IO, tools)
	}
	printTools(opts.IO.Out, tools)
	return nil
}

func writeJSON(io *IOStreams, v any) error {
	enc := json.NewEncoder(io.Out)
	if io.StdoutTTY {
		enc.SetIndent("", "  ")
	}
	return enc.Encode(v)
}

// annotationBadges names a tool's behaviour hints.
func annotationBadges(t *mcp.Tool) string {
	a := t.Annotations
	if a == nil {
		return ""
	}
	var b []string
	flag := func(p *bool, yes, no string) {
		if p == nil {
			return
		}
		if *p && yes != "" {
			b = append(b, yes)
		} else if !*p && no != "" {
			b = append(b, no)
		}
	}
	flag(a.ReadOnlyHint, "read-only", "")
	flag(a.DestructiveHint, "destructive", "non-destructive")
	flag(a.IdempotentHint, "idempotent", "")
	flag(a.OpenWorldHint, "open-world", "closed-world")
	return strings.Join(b, ",")
}

func printTools(w io.Writer, tools []mcp.Tool) {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tANNOTATIONS\tDESCRIPTION")
	for i := range tools {
		t := &tools[i]
		desc := t.Description
		if t.Title != "" {
			desc = t.Title + ": " + desc
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", oneLine(t.Name), annotationBadges(t), truncate(oneLine(desc), 80))
	}
	tw.Flush()
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

package cli

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcpi-dev/mcpi/internal/command"
	"github.com/mcpi-dev/mcpi/internal/iostreams"
	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/mcptext"
	"github.com/mcpi-dev/mcpi/internal/session"
)

// ListOptions are the flags of the listing commands.
type ListOptions struct {
	command.ConnOptions
	What       string // tools, resources, templates or prompts
	Signatures bool   // tools: one compact signature a line
}

type lister struct {
	short string
	run   func(ctx context.Context, c *session.Client, o *ListOptions) error
}

var listers = map[string]lister{
	"tools":     {"List the server's tools (every page)", listTools},
	"resources": {"List the server's resources (every page)", listResources},
	"templates": {"List the server's resource templates (every page)", listTemplates},
	"prompts":   {"List the server's prompts (every page)", listPrompts},
}

// NewCmdList returns `mcpi tools|resources|templates|prompts TARGET`.
func NewCmdList(f *command.Factory, what string, runF func(context.Context, *ListOptions) error) *cobra.Command {
	opts := &ListOptions{ConnOptions: f.Conn(), What: what}
	l := listers[what]
	cmd := withConnFlags(&cobra.Command{
		Use:   what + " TARGET",
		Short: l.short,
		Example: fmt.Sprintf(`  mcpi %[1]s -- npx -y @modelcontextprotocol/server-everything
  mcpi %[1]s http://127.0.0.1:8080/mcp --json`, what),
		Args: command.TargetArgs(&opts.Target, func(rest []string) error {
			if len(rest) > 0 {
				return command.FlagErrorf("unexpected argument %q", rest[0])
			}
			return nil
		}),
		RunE: command.RunE(opts, runF, listRun),
	}, &opts.ConnOptions)
	if what == "tools" {
		defer command.FlagGroup(cmd, command.GroupOutput)()
		cmd.Flags().BoolVar(&opts.Signatures, "signatures", false, "print each tool as one compact signature, get-sum(a: number, b?: number) — its first sentence, for an agent's context budget")
	}
	return cmd
}

func listRun(ctx context.Context, opts *ListOptions) error {
	return opts.With(ctx, func(c *session.Client) error { return listers[opts.What].run(ctx, c, opts) })
}

func listTools(ctx context.Context, c *session.Client, o *ListOptions) error {
	var keep func(gen int64, tools []mcp.Tool)
	if h := o.Held; h != nil && h.Client() == c {
		keep = h.BeginListing().Done
	}
	tools, err := c.AllTools(ctx)
	if !listed(err) {
		return err
	}
	if keep != nil && err == nil {
		keep(c.Generation(), slices.Clone(tools))
	}
	if o.Signatures {
		sigs := make([]mcptext.ToolSig, len(tools))
		for i := range tools {
			sigs[i] = mcptext.ToolSig{Name: tools[i].Name, Signature: mcptext.Signature(&tools[i]), Summary: mcptext.FirstSentence(tools[i].Description)}
		}
		if o.JSON {
			return cut(iostreams.WriteJSON(o.IO, sigs), err)
		}
		for _, s := range sigs {
			line := s.Signature
			if s.Summary != "" {
				line += " — " + s.Summary
			}
			fmt.Fprintln(o.IO.Out, command.Sanitize(line, false))
		}
		return err
	}
	if o.JSON {
		return cut(iostreams.WriteJSON(o.IO, nonNil(tools)), err)
	}
	mcptext.PrintTools(o.IO.Out, tools)
	return err
}

// listed reports whether a listing's items are printed: every one, or those
// listed before the server cut the listing short. The truncation is then
// the command's error, said on stderr after them (exit 4), so that a
// listing cut short never passes for a whole one.
func listed(err error) bool { return err == nil || errors.Is(err, session.ErrTruncated) }

// printListing prints what a listing gave (see listed): as JSON, or as a
// table under header with a row of each item.
func printListing[T any](o *command.ConnOptions, items []T, err error, header []string, row func(T) []string) error {
	if !listed(err) {
		return err
	}
	if o.JSON {
		return cut(iostreams.WriteJSON(o.IO, nonNil(items)), err)
	}
	tw := mcptext.Table(o.IO.Out, header...)
	for _, it := range items {
		mcptext.Row(tw, row(it)...)
	}
	return cut(tw.Flush(), err)
}

// cut returns the error of printing a listing, else the listing's own.
func cut(printErr, listErr error) error {
	if printErr != nil {
		return printErr
	}
	return listErr
}

func listResources(ctx context.Context, c *session.Client, o *ListOptions) error {
	res, err := c.AllResources(ctx)
	return printListing(&o.ConnOptions, res, err, []string{"URI", "NAME", "MIME TYPE", "DESCRIPTION"}, func(r mcp.Resource) []string {
		return []string{r.URI, mcptext.DisplayName(r.Title, r.Name), r.MimeType, r.Description}
	})
}

func listTemplates(ctx context.Context, c *session.Client, o *ListOptions) error {
	ts, err := c.AllResourceTemplates(ctx)
	return printListing(&o.ConnOptions, ts, err, []string{"URI TEMPLATE", "NAME", "MIME TYPE", "DESCRIPTION"}, func(t mcp.ResourceTemplate) []string {
		return []string{t.URITemplate, mcptext.DisplayName(t.Title, t.Name), t.MimeType, t.Description}
	})
}

func listPrompts(ctx context.Context, c *session.Client, o *ListOptions) error {
	ps, err := c.AllPrompts(ctx)
	return printListing(&o.ConnOptions, ps, err, []string{"NAME", "ARGUMENTS", "DESCRIPTION"}, func(p mcp.Prompt) []string {
		var args []string
		for _, a := range p.Arguments {
			name := a.Name
			if a.Required {
				name += "*"
			}
			args = append(args, name)
		}
		return []string{mcptext.DisplayName(p.Title, p.Name), strings.Join(args, " "), p.Description}
	})
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

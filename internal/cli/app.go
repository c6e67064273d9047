package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcpi-dev/mcpi/internal/apps"
	"github.com/mcpi-dev/mcpi/internal/bounds"
	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/session"
)

// AppInfoOptions are mcpi app-info's.
type AppInfoOptions struct {
	ConnOptions
	Tool string
}

// NewCmdAppInfo returns mcpi app-info.
func NewCmdAppInfo(f *Factory, runF func(context.Context, *AppInfoOptions) error) *cobra.Command {
	opts := &AppInfoOptions{ConnOptions: f.conn()}
	cmd := &cobra.Command{
		Use:   "app-info TOOL TARGET",
		Short: "Show a tool's MCP App: its ui:// resource, type, size, CSP, permissions, domain and what its HTML loads",
		Long: "Show a tool's MCP App (the io.modelcontextprotocol/ui extension, which mcpi declares here):\n" +
			"the ui:// resource its _meta names, read with resources/read, and its security posture.\n" +
			"Exit 10 when the tool has no App.",
		Example: "  mcpi app-info show-chart -- node server.js\n  mcpi app-info show-chart --json https://example.com/mcp",
		RunE: func(cmd *cobra.Command, args []string) error {
			rest, err := opts.Target.parseTarget(cmd, args)
			if err != nil {
				return err
			}
			if err := exactly(1, "the tool's name")(rest); err != nil {
				return err
			}
			opts.Tool = rest[0]
			opts.Target.Apps = true
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return appInfoRun(cmd.Context(), opts)
		},
	}
	addConnFlags(cmd, &opts.ConnOptions)
	addSessionFlag(cmd, &opts.ConnOptions)
	return cmd
}

func appInfoRun(ctx context.Context, opts *AppInfoOptions) error {
	return opts.with(ctx, func(c *session.Client) error {
		in, err := inspectApp(ctx, c, opts.Tool)
		if err != nil {
			return err
		}
		if opts.JSON {
			b, err := in.JSON()
			if err != nil {
				return err
			}
			fmt.Fprintln(opts.IO.Out, string(escapeUnsafe(b)))
			return nil
		}
		printAppInfo(opts.IO, in)
		return nil
	})
}

// noAppError is a tool without an App.
func noAppError(tool string) error {
	return fmt.Errorf("%w: %q names no ui:// resource in _meta.ui.resourceUri", errNoApp, tool)
}

// inspectApp finds the tool, reads its App's resource and says what it is.
func inspectApp(ctx context.Context, c *session.Client, name string) (*apps.Info, error) {
	tool, err := c.FindTool(ctx, name)
	if err != nil {
		return nil, err
	}
	if tool == nil {
		return nil, withKind(KindToolNotFound, flagErrorf("the server lists no tool named %q", name))
	}
	ui := apps.ToolMeta(tool.Meta)
	if !ui.HasApp() {
		return nil, noAppError(name)
	}
	var read mcp.ReadResourceResult
	if err := c.Call(ctx, "resources/read", mcp.ReadResourceParams{URI: ui.ResourceURI}, &read, nil); err != nil {
		return nil, err
	}
	// Is it listed? Servers may leave UI resources out of resources/list.
	var listed *mcp.Resource
	if c.ServerCapabilities().Resources != nil {
		if all, err := c.AllResources(ctx); err == nil {
			for i := range all {
				if all[i].URI == ui.ResourceURI {
					listed = &all[i]
					break
				}
			}
		}
	}
	in, err := apps.Describe(tool, &read, listed)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", session.ErrMalformed, err)
	}
	return in, nil
}

// printAppInfo writes the info for a person.
func printAppInfo(io *IOStreams, in *apps.Info) {
	w := io.Out
	field := func(name, value string) { fmt.Fprintf(w, "%-12s %s\n", name, value) }
	field("tool", oneLine(in.Tool)+"  (visible to: "+strings.Join(in.Visibility, ", ")+")")
	listed := "not listed by resources/list"
	if in.Listed {
		listed = "listed"
	}
	field("resource", oneLine(in.ResourceURI)+"  ("+listed+")")
	field("type", fmt.Sprintf("%s, %s (%s)", oneLine(in.MIMEType), bounds.Size(int64(in.Size)), in.Encoding))
	if in.CSP == nil {
		field("csp", "none declared: the restrictive default")
	} else {
		first := true
		for _, f := range []struct {
			name string
			list []string
		}{{"connectDomains", in.CSP.ConnectDomains}, {"resourceDomains", in.CSP.ResourceDomains}, {"frameDomains", in.CSP.FrameDomains}, {"baseUriDomains", in.CSP.BaseURIDomains}} {
			if len(f.list) == 0 {
				continue
			}
			label := ""
			if first {
				label, first = "csp", false
			}
			field(label, f.name+": "+oneLine(strings.Join(f.list, " ")))
		}
		if first {
			field("csp", "declared, with no domain: nothing from other origins")
		}
	}
	field("policy", oneLine(in.Policy))
	if len(in.Permissions) > 0 {
		field("permissions", strings.Join(in.Permissions, ", "))
	}
	if in.Domain != "" {
		field("domain", oneLine(in.Domain))
	}
	if in.PrefersBorder != nil {
		field("border", map[bool]string{true: "prefers a border and background", false: "prefers none"}[*in.PrefersBorder])
	}
	for i, l := range in.Loads {
		label := ""
		if i == 0 {
			label = "loads"
		}
		field(label, l.Kind+" "+oneLine(l.URL))
	}
	if len(in.Loads) == 0 {
		field("loads", "no script or stylesheet from a tag (a static reading)")
	}
	var notes []string
	for _, d := range in.Domains {
		notes = append(notes, fmt.Sprintf("csp %s %q: %s", d.Field, d.Domain, d.Why))
	}
	for _, l := range in.Undeclared {
		notes = append(notes, fmt.Sprintf("the HTML loads a %s from %s, which the CSP does not declare: a host blocks it (a static reading of the tags)", l.Kind, l.Origin))
	}
	notes = append(notes, in.Warnings...)
	if len(notes) > 0 {
		fmt.Fprintln(w, "warnings")
		for _, n := range notes {
			fmt.Fprintln(w, "  ! "+oneLine(n))
		}
	}
}

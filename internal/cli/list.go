package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/mcpi-dev/mcpi/internal/apps"
	"github.com/mcpi-dev/mcpi/internal/iostreams"
	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/schema"
	"github.com/mcpi-dev/mcpi/internal/session"
)

// ListOptions are the flags of the listing commands.
type ListOptions struct {
	ConnOptions
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
func NewCmdList(f *Factory, what string, runF func(context.Context, *ListOptions) error) *cobra.Command {
	opts := &ListOptions{ConnOptions: f.conn(), What: what}
	l := listers[what]
	cmd := &cobra.Command{
		Use:   what + " TARGET",
		Short: l.short,
		Example: fmt.Sprintf(`  mcpi %[1]s -- npx -y @modelcontextprotocol/server-everything
  mcpi %[1]s http://127.0.0.1:8080/mcp --json`, what),
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
			return listRun(cmd.Context(), opts)
		},
	}
	addConnFlags(cmd, &opts.ConnOptions)
	addSessionFlag(cmd, &opts.ConnOptions)
	if what == "tools" {
		defer flagGroup(cmd, groupOutput)()
		cmd.Flags().BoolVar(&opts.Signatures, "signatures", false, "print each tool as one compact signature, get-sum(a: number, b?: number) — its first sentence, for an agent's context budget")
	}
	return cmd
}

func listRun(ctx context.Context, opts *ListOptions) error {
	return opts.with(ctx, func(c *session.Client) error { return listers[opts.What].run(ctx, c, opts) })
}

func listTools(ctx context.Context, c *session.Client, o *ListOptions) error {
	var keep func(gen int64, tools []mcp.Tool)
	if h := o.held; h != nil && h.Client() == c {
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
		sigs := make([]toolSig, len(tools))
		for i := range tools {
			sigs[i] = toolSig{Name: tools[i].Name, Signature: toolSignature(&tools[i]), Summary: firstSentence(tools[i].Description)}
		}
		if o.JSON {
			return cut(iostreams.WriteJSON(o.IO, sigs), err)
		}
		for _, s := range sigs {
			line := s.Signature
			if s.Summary != "" {
				line += " — " + s.Summary
			}
			fmt.Fprintln(o.IO.Out, sanitize(line, false))
		}
		return err
	}
	if o.JSON {
		return cut(iostreams.WriteJSON(o.IO, nonNil(tools)), err)
	}
	printTools(o.IO.Out, tools)
	return err
}

// toolSig is a tool as tools --signatures prints it.
type toolSig struct {
	Name      string `json:"name"`
	Signature string `json:"signature"`
	Summary   string `json:"summary,omitempty"`
}

// toolSignature is a tool's name and arguments on one line:
// get-sum(a: number, b?: number, mode: "fast"|"slow", tags?: string[]).
func toolSignature(t *mcp.Tool) string {
	s, err := schema.Compile(t.InputSchema)
	if err != nil || len(t.InputSchema) == 0 {
		return t.Name + "(…)"
	}
	var args []string
	for _, p := range s.Properties() {
		name := p.Name
		if !p.Required {
			name += "?"
		}
		args = append(args, name+": "+typeText(p.Types, p.Enum, p.Raw))
	}
	return t.Name + "(" + strings.Join(args, ", ") + ")"
}

// typeText names a property's type compactly.
func typeText(types []string, enum []any, raw map[string]any) string {
	if len(enum) > 0 {
		var vals []string
		for i, v := range enum {
			if i == 5 {
				vals = append(vals, "…")
				break
			}
			b, _ := json.Marshal(v)
			vals = append(vals, string(b))
		}
		return strings.Join(vals, "|")
	}
	if len(types) == 0 {
		return "any"
	}
	out := make([]string, len(types))
	for i, t := range types {
		out[i] = t
		if t == "array" {
			item := "any"
			if items, ok := raw["items"].(map[string]any); ok {
				switch it := items["type"].(type) {
				case string:
					item = it
				}
			}
			out[i] = item + "[]"
		}
	}
	return strings.Join(out, "|")
}

// firstSentence is a description's first sentence, at most 100 runes.
func firstSentence(d string) string {
	d = strings.Join(strings.Fields(d), " ")
	if i := strings.Index(d, ". "); i >= 0 {
		d = d[:i+1]
	}
	return truncate(d, 100)
}

// listed reports whether a listing's items are printed: every one, or those
// listed before the server cut the listing short. The truncation is then
// the command's error, said on stderr after them (exit 4), so that a
// listing cut short never passes for a whole one.
func listed(err error) bool { return err == nil || errors.Is(err, session.ErrTruncated) }

// cut returns the error of printing a listing, else the listing's own.
func cut(printErr, listErr error) error {
	if printErr != nil {
		return printErr
	}
	return listErr
}

func listResources(ctx context.Context, c *session.Client, o *ListOptions) error {
	res, err := c.AllResources(ctx)
	if !listed(err) {
		return err
	}
	if o.JSON {
		return cut(iostreams.WriteJSON(o.IO, nonNil(res)), err)
	}
	tw := table(o.IO.Out, "URI", "NAME", "MIME TYPE", "DESCRIPTION")
	for _, r := range res {
		row(tw, r.URI, displayName(r.Title, r.Name), r.MimeType, r.Description)
	}
	return cut(tw.Flush(), err)
}

func listTemplates(ctx context.Context, c *session.Client, o *ListOptions) error {
	ts, err := c.AllResourceTemplates(ctx)
	if !listed(err) {
		return err
	}
	if o.JSON {
		return cut(iostreams.WriteJSON(o.IO, nonNil(ts)), err)
	}
	tw := table(o.IO.Out, "URI TEMPLATE", "NAME", "MIME TYPE", "DESCRIPTION")
	for _, t := range ts {
		row(tw, t.URITemplate, displayName(t.Title, t.Name), t.MimeType, t.Description)
	}
	return cut(tw.Flush(), err)
}

func listPrompts(ctx context.Context, c *session.Client, o *ListOptions) error {
	ps, err := c.AllPrompts(ctx)
	if !listed(err) {
		return err
	}
	if o.JSON {
		return cut(iostreams.WriteJSON(o.IO, nonNil(ps)), err)
	}
	tw := table(o.IO.Out, "NAME", "ARGUMENTS", "DESCRIPTION")
	for _, p := range ps {
		var args []string
		for _, a := range p.Arguments {
			name := a.Name
			if a.Required {
				name += "*"
			}
			args = append(args, name)
		}
		row(tw, displayName(p.Title, p.Name), strings.Join(args, " "), p.Description)
	}
	return cut(tw.Flush(), err)
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func displayName(title, name string) string {
	if title != "" && title != name {
		return name + " (" + title + ")"
	}
	return name
}

func table(w io.Writer, headers ...string) *tabwriter.Writer {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(headers, "\t"))
	return tw
}

// row prints one table row; every cell is server text, so each is
// sanitised and folded onto one line, and long ones are cut.
func row(tw io.Writer, cells ...string) {
	for i, c := range cells {
		cells[i] = truncate(oneLine(c), 80)
	}
	fmt.Fprintln(tw, strings.Join(cells, "\t"))
}

// annotationBadges names a tool's behaviour hints, and its App: "app"
// when it has one, "app-only" when the model may not see it,
// "model-only" when its App may not call it.
func annotationBadges(t *mcp.Tool) string {
	var b []string
	ui := apps.ToolMeta(t.Meta)
	if ui.HasApp() {
		b = append(b, "app")
	}
	switch {
	case !ui.Visible(apps.Model):
		b = append(b, "app-only")
	case !ui.Visible(apps.App):
		b = append(b, "model-only")
	}
	a := t.Annotations
	if a == nil {
		return strings.Join(b, ",")
	}
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
	flag(a.DestructiveHint, "destructive", "")
	flag(a.IdempotentHint, "idempotent", "")
	flag(a.OpenWorldHint, "open-world", "")
	return strings.Join(b, ",")
}

func printTools(w io.Writer, tools []mcp.Tool) {
	tw := table(w, "NAME", "ANNOTATIONS", "DESCRIPTION")
	for i := range tools {
		t := &tools[i]
		desc := t.Description
		if title := t.DisplayName(); title != t.Name {
			desc = title + ": " + desc
		}
		if t.Execution != nil && t.Execution.TaskSupport != "" && t.Execution.TaskSupport != "forbidden" {
			desc = "[task " + t.Execution.TaskSupport + "] " + desc
		}
		row(tw, t.Name, annotationBadges(t), desc)
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

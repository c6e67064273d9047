package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcpi-dev/mcpi/internal/command"
	"github.com/mcpi-dev/mcpi/internal/daemon"
	"github.com/mcpi-dev/mcpi/internal/iostreams"
	"github.com/mcpi-dev/mcpi/internal/live"
	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/mcptext"
	"github.com/mcpi-dev/mcpi/internal/roots"
	"github.com/mcpi-dev/mcpi/internal/session"
)

// RootsOptions are the input of `mcpi roots`.
type RootsOptions struct {
	command.ConnOptions
}

// NewCmdRoots returns `mcpi roots [set|add|remove]`: a live session's
// roots, which its server asks for with roots/list.
func NewCmdRoots(f *command.Factory, runF func(context.Context, *RootsOptions) error) *cobra.Command {
	opts := &RootsOptions{ConnOptions: f.Conn()}
	cmd := &cobra.Command{
		Use:   "roots --session NAME",
		Short: "Show or change the roots a live session offers its server",
		Long: `Show or change the roots a live session offers its server: the ones
given to mcpi session start with --root, as changed since. A change tells a
legacy server with notifications/roots/list_changed (it then asks roots/list
again); a modern server asks for roots in the requests that need them, and
gets the new ones from then on. A root is a directory (relative to where
the command runs) or a file:// URI; paths must exist.`,
		Example: `  mcpi roots --session demo
  mcpi roots add ./src --session demo
  mcpi roots set ~/project /tmp/data --session demo
  mcpi roots remove file:///tmp/data --session demo`,
		Args: cobra.NoArgs,
		RunE: sessionRunE(&opts.ConnOptions, opts, runF, rootsRun),
	}
	command.AddJSONFlag(cmd, &opts.JSON, "print JSON: the roots as roots/list answers them")
	cmd.AddCommand(NewCmdRootsChange(f, "set", "Replace a live session's roots (none: no roots)", nil),
		NewCmdRootsChange(f, "add", "Add roots to a live session", nil),
		NewCmdRootsChange(f, "remove", "Remove roots from a live session", nil))
	return sessionOnlyVerb(cmd, &opts.ConnOptions)
}

func rootsRun(ctx context.Context, opts *RootsOptions) error {
	return opts.InSession(ctx, func(h *daemon.Held) error {
		return printRoots(&opts.ConnOptions, h.Roots())
	})
}

// RootsChangeOptions are the input of `mcpi roots set|add|remove`.
type RootsChangeOptions struct {
	command.ConnOptions
	Op string // set, add or remove
	// Entries are the roots: directories or file:// URIs.
	Entries []string
}

// NewCmdRootsChange returns `mcpi roots set|add|remove [PATH|URI...]`.
func NewCmdRootsChange(f *command.Factory, op, short string, runF func(context.Context, *RootsChangeOptions) error) *cobra.Command {
	opts := &RootsChangeOptions{ConnOptions: f.Conn(), Op: op}
	cmd := &cobra.Command{
		Use:   op + " [PATH|URI...] --session NAME",
		Short: short,
		Args: func(_ *cobra.Command, args []string) error {
			if op != "set" && len(args) == 0 {
				return command.FlagErrorf("give the roots to %s: directories or file:// URIs", op)
			}
			opts.Entries = args
			return nil
		},
		RunE: sessionRunE(&opts.ConnOptions, opts, runF, rootsChangeRun),
	}
	command.AddJSONFlag(cmd, &opts.JSON, "print JSON: the roots as roots/list answers them")
	addSessionFlag(cmd, &opts.ConnOptions)
	return cmd
}

func rootsChangeRun(ctx context.Context, opts *RootsChangeOptions) error {
	return opts.InSession(ctx, func(h *daemon.Held) error {
		next, err := roots.Change(opts.Op, h.Roots(), opts.Entries, opts.IO.WorkDir())
		if err != nil {
			return &command.FlagError{Err: err}
		}
		h.SetRoots(next)
		if err := h.Client().RootsChanged(ctx); err != nil {
			return err
		}
		if h.Client().Era() == session.EraLegacy {
			fmt.Fprintf(opts.IO.ErrOut, "%s; the server was told (notifications/roots/list_changed).\n", rootsCount(len(next)))
		} else {
			fmt.Fprintf(opts.IO.ErrOut, "%s; the server gets them when it next asks.\n", rootsCount(len(next)))
		}
		return printRoots(&opts.ConnOptions, next)
	})
}

func rootsCount(n int) string {
	if n == 1 {
		return "1 root"
	}
	return fmt.Sprintf("%d roots", n)
}

func printRoots(o *command.ConnOptions, rs []mcp.Root) error {
	if o.JSON {
		return iostreams.WriteJSON(o.IO, mcp.ListRootsResult{Roots: rs})
	}
	if len(rs) == 0 {
		fmt.Fprintln(o.IO.ErrOut, "No roots.")
		return nil
	}
	tw := mcptext.Table(o.IO.Out, "URI", "NAME")
	for _, r := range rs {
		fmt.Fprintf(tw, "%s\t%s\n", command.OneLine(r.URI), command.OneLine(r.Name)) // whole URIs: not row's cut
	}
	return tw.Flush()
}

// setSessionRoots replaces the roots of the live session name, as
// `mcpi roots set` does: the TUI's roots pane on a session.
func setSessionRoots(ctx context.Context, dir, name string, rs []mcp.Root) error {
	args := []string{"roots", "set", "--session", name}
	for _, r := range rs {
		args = append(args, r.URI)
	}
	var out, errOut strings.Builder
	code, err := live.Run(ctx, dir, name, &live.Request{Args: args}, &out, &errOut)
	if err != nil {
		return command.SessionError(dir, name, err)
	}
	if code != 0 {
		return fmt.Errorf("%s", strings.TrimSpace(strings.TrimPrefix(errOut.String(), "mcpi: ")))
	}
	return nil
}

package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync/atomic"

	"github.com/spf13/cobra"

	"github.com/mcpi-dev/mcpi/internal/command"
	"github.com/mcpi-dev/mcpi/internal/iostreams"
	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/surface"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// SnapshotOptions are the input of `mcpi snapshot`.
type SnapshotOptions struct {
	command.ConnOptions
	// Output is the file to write (-o); "" writes to stdout.
	Output string
	// Ignore are JSON pointers left out of the snapshot.
	Ignore []string
}

// NewCmdSnapshot returns `mcpi snapshot TARGET`.
func NewCmdSnapshot(f *command.Factory, runF func(context.Context, *SnapshotOptions) error) *cobra.Command {
	opts := &SnapshotOptions{ConnOptions: f.Conn()}
	cmd := &cobra.Command{
		Use:   "snapshot TARGET",
		Short: "Write the server's surface (tools, resources, prompts, capabilities) as one deterministic JSON document",
		Long: "Snapshot lists everything the server shows a client (server info, revision and era, capabilities,\n" +
			"instructions, the client capabilities mcpi declared, every page of tools, resources, templates and\n" +
			"prompts; the other era's too when the server speaks both) and writes it as one JSON document with\n" +
			"sorted keys: two snapshots of an unchanged server are the same bytes. Commit it beside the server's\n" +
			"code and compare it with mcpi diff.",
		Example: "  mcpi snapshot -o surface.json -- ./server\n  mcpi snapshot https://example.com/mcp --ignore /serverInfo/version",
		Args: command.TargetArgs(&opts.Target, func(rest []string) error {
			if err := command.Exactly(0, "")(rest); err != nil {
				return err
			}
			if err := (&surface.Snapshot{}).Ignore(opts.Ignore); err != nil {
				return command.FlagErrorf("invalid --ignore: %v", err)
			}
			return nil
		}),
		RunE: command.RunE(opts, runF, snapshotRun),
	}
	command.AddConnFlags(cmd, &opts.ConnOptions)
	end := command.FlagGroup(cmd, command.GroupOutput)
	cmd.Flags().StringVarP(&opts.Output, "output", "o", "", "write the snapshot to this file instead of stdout")
	cmd.Flags().StringArrayVar(&opts.Ignore, "ignore", nil, "leave out what this JSON pointer names, in every era (e.g. /serverInfo/version; * matches every member; repeatable)")
	end()
	return cmd
}

func snapshotRun(ctx context.Context, opts *SnapshotOptions) error {
	var lc listChanges
	return opts.WithHooks(ctx, lc.hooks(), func(c *session.Client) error {
		snap, err := takeSurface(ctx, &opts.ConnOptions, c, opts.Ignore, lc.n.Load)
		if err != nil {
			return err
		}
		b, err := surface.Marshal(snap)
		if err != nil {
			return err
		}
		b = iostreams.EscapeUnsafe(b)
		if opts.Output != "" {
			if err := os.WriteFile(opts.IO.Path(opts.Output), b, 0o644); err != nil {
				return &command.FlagError{Err: fmt.Errorf("-o: %w", err)}
			}
			fmt.Fprintf(opts.IO.ErrOut, "%s: %s\n", opts.Output, surfaceSummary(snap))
			return nil
		}
		return iostreams.WriteDocument(opts.IO, b)
	})
}

// takeSurface lists the surface of the server behind c, the other era's
// on a second connection.
func takeSurface(ctx context.Context, o *command.ConnOptions, c *session.Client, ignore []string, changes func() int64) (*surface.Snapshot, error) {
	return surface.Take(ctx, c, surface.Options{
		Changes:    changes,
		Dial:       func(ctx context.Context) (transport.Conn, error) { return o.Target.Dial(ctx, nil) },
		Timeout:    o.Target.Timeout,
		ClientInfo: mcp.Implementation{Name: "mcpi", Version: command.Version},
		Ignore:     ignore,
	})
}

// surfaceSummary counts what a snapshot holds.
func surfaceSummary(s *surface.Snapshot) string {
	count := func(l []surface.Entry) string {
		if l == nil {
			return "?"
		}
		return fmt.Sprint(len(l))
	}
	eras := s.Era
	if s.OtherEra != nil {
		eras += " and " + s.OtherEra.Era
	}
	return fmt.Sprintf("%s tools, %s resources, %s templates, %s prompts (%s era)", count(s.Tools), count(s.Resources), count(s.Templates), count(s.Prompts), eras)
}

// DiffOptions are the input of `mcpi diff`.
type DiffOptions struct {
	command.ConnOptions
	// Old is a snapshot file or trace; New one too, or "" when NEW is the
	// target.
	Old, New string
	// FailOn is what makes the exit 1: breaking, possibly or any.
	FailOn   string
	Markdown bool
}

// NewCmdDiff returns `mcpi diff OLD NEW`.
func NewCmdDiff(f *command.Factory, runF func(context.Context, *DiffOptions) error) *cobra.Command {
	opts := &DiffOptions{ConnOptions: f.Conn()}
	cmd := &cobra.Command{
		Use:   "diff OLD NEW",
		Short: "Show what changed between two versions of a server, breaking changes first",
		Long: "Diff compares two surfaces of a server and classifies every change as breaking, possibly breaking,\n" +
			"non-breaking or changed, with the JSON pointer of what changed. OLD and NEW are each a snapshot file\n" +
			"(mcpi snapshot) or a trace (--record, proxy); NEW may instead be a server: a URL, --server NAME, or\n" +
			"a command after \"--\". Exit 1 when a change is breaking (see --fail-on).",
		Example: "  mcpi diff surface.json -- ./server\n  mcpi diff surface.json --markdown -- ./server > comment.md\n  mcpi diff old.json new.json --fail-on possibly",
		Args: command.CheckedArgs(func(cmd *cobra.Command, args []string) error {
			files := args
			if dash := cmd.ArgsLenAtDash(); dash >= 0 {
				files = args[:dash]
			}
			toServer := len(files) != len(args) || opts.Target.Server != "" || len(files) == 2 && command.HTTPLike(files[1]) == command.URLHTTP
			if toServer {
				rest, err := opts.Target.ParseTarget(cmd, args)
				if err != nil {
					return err
				}
				if len(rest) != 1 {
					return command.FlagErrorf("give OLD (a snapshot file or trace) and then the server, e.g. mcpi diff surface.json -- ./server")
				}
				opts.Old = rest[0]
			} else {
				if len(files) != 2 {
					return command.FlagErrorf("give OLD and NEW: snapshot files or traces, or OLD and a server (a URL, --server NAME or -- COMMAND)")
				}
				opts.Old, opts.New = files[0], files[1]
			}
			switch opts.FailOn {
			case "breaking", "possibly", "any":
			default:
				return command.FlagErrorf("invalid --fail-on %q: want breaking, possibly or any", opts.FailOn)
			}
			if opts.JSON && opts.Markdown {
				return command.FlagErrorf("--json and --markdown: give one")
			}
			return nil
		}),
		RunE: command.RunE(opts, runF, diffRun),
	}
	command.AddConnFlags(cmd, &opts.ConnOptions)
	end := command.FlagGroup(cmd, command.GroupArgs)
	cmd.Flags().StringVar(&opts.FailOn, "fail-on", "breaking", "exit 1 on a breaking change (breaking), a possibly breaking one too (possibly), or any change (any)")
	end()
	end = command.FlagGroup(cmd, command.GroupOutput)
	cmd.Flags().BoolVar(&opts.Markdown, "markdown", false, "print Markdown, for a pull-request comment")
	end()
	return cmd
}

func diffRun(ctx context.Context, opts *DiffOptions) error {
	old, err := readSurface(opts.IO, "OLD", opts.Old)
	if err != nil {
		return command.WithJSONError(opts.IO, opts.JSON, err)
	}
	var new *surface.Snapshot
	if opts.New != "" {
		if new, err = readSurface(opts.IO, "NEW", opts.New); err != nil {
			return command.WithJSONError(opts.IO, opts.JSON, err)
		}
	} else {
		var lc listChanges
		err := opts.WithHooks(ctx, lc.hooks(), func(c *session.Client) error {
			var err error
			new, err = takeSurface(ctx, &opts.ConnOptions, c, old.Ignored, lc.n.Load)
			return err
		})
		if err != nil {
			return err
		}
	}
	changes := surface.Diff(old, new)
	notes := surface.NotCompared(old, new)
	switch {
	case opts.JSON:
		if changes == nil {
			changes = []surface.Change{}
		}
		if err := iostreams.WriteJSON(opts.IO, map[string]any{"changes": changes, "counts": surface.Count(changes), "notCompared": notes}); err != nil {
			return err
		}
	case opts.Markdown:
		surface.WriteMarkdown(opts.IO.Out, changes, notes)
	default:
		surface.WriteText(opts.IO.Out, changes, notes)
	}
	failing := 0
	for _, c := range changes {
		switch {
		case opts.FailOn == "any",
			c.Class == surface.Breaking,
			opts.FailOn == "possibly" && c.Class == surface.PossiblyBreaking:
			failing++
		}
	}
	if failing > 0 {
		what := map[string]string{"breaking": "breaking", "possibly": "breaking or possibly breaking", "any": ""}[opts.FailOn]
		return command.ErrSilent{Code: command.ExitToolError, Kind: command.KindSurfaceBreaks, What: fmt.Sprintf("%d %s change(s)", failing, what)}
	}
	return nil
}

// readSurface reads a snapshot file or a trace; a file that is neither
// is a usage error.
func readSurface(ios *command.IOStreams, which, path string) (*surface.Snapshot, error) {
	f, err := os.Open(ios.Path(path))
	if err != nil {
		return nil, &command.FlagError{Err: fmt.Errorf("%s: %w", which, err)}
	}
	defer f.Close()
	s, err := surface.Read(f)
	if err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			err = fmt.Errorf("%w: it ends too soon", surface.ErrNotSnapshot)
		}
		return nil, &command.FlagError{Err: fmt.Errorf("%s %s: %w", which, path, err)}
	}
	return s, nil
}

// listChanges counts the list_changed notifications of a connection, for
// a snapshot to list again what changed while it was listed.
type listChanges struct{ n atomic.Int64 }

func (l *listChanges) hooks() command.ConnHooks {
	return command.ConnHooks{Notified: func(n session.Notification) {
		if strings.HasSuffix(n.Method, "/list_changed") {
			l.n.Add(1)
		}
	}}
}

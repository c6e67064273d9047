package cli

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcpi-dev/mcpi/internal/command"
	"github.com/mcpi-dev/mcpi/internal/daemon"
	"github.com/mcpi-dev/mcpi/internal/iostreams"
	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/timeline"
)

// TailOptions are the input of `mcpi tail`.
type TailOptions struct {
	command.ConnOptions
	// Wire shows every frame too.
	Wire bool
	// Filter shows only what matches (the Wire pane's search language).
	Filter string
	filter *timeline.Filter
}

// NewCmdTail returns `mcpi tail`.
func NewCmdTail(f *command.Factory, runF func(context.Context, *TailOptions) error) *cobra.Command {
	opts := &TailOptions{ConnOptions: f.Conn()}
	cmd := &cobra.Command{
		Use:   "tail --session NAME",
		Short: "Follow a live session's log messages, notifications and progress",
		Long: `Follow a live session's log messages, notifications and progress (with
--wire, every frame too), whatever command caused them, until interrupted or
the session ends. Any number of tails may follow a session; a tail that
reads too slowly misses events rather than slow the session down, and says
how many it missed.`,
		Example: "  mcpi tail --session demo\n  mcpi tail --wire --json --session demo | jq .",
		Args:    cobra.NoArgs,
		RunE: command.CheckedRunE(func(cmd *cobra.Command, args []string) (err error) {
			if err = sessionOnly(cmd, &opts.ConnOptions, args); err != nil {
				return err
			}
			opts.filter, err = newFrameFilter(opts.Filter)
			return err
		}, opts, runF, tailRun),
	}
	end := command.FlagGroup(cmd, command.GroupOutput)
	cmd.Flags().BoolVar(&opts.Wire, "wire", false, "show every frame sent and received, too")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON Lines, one event per line")
	cmd.Flags().StringVar(&opts.Filter, "filter", "", `show only what matches, e.g. "kind:log text:error" or "method:tools/call dur:>1s" (the Wire pane's search language, docs/cli.md)`)
	end()
	return sessionOnlyVerb(cmd, &opts.ConnOptions)
}

func tailRun(ctx context.Context, opts *TailOptions) error {
	return opts.InSession(ctx, func(h *daemon.Held) error {
		if opts.JSON {
			opts.IO.StartJSONStream()
		}
		sub := h.Hub().Subscribe(opts.Wire)
		defer h.Hub().Unsubscribe(sub)
		t := &timeline.Tail{IO: opts.IO, JSON: opts.JSON, Held: h, Sub: sub, Filter: opts.filter}
		return t.Follow(ctx)
	})
}

// LogLevelOptions are the input of `mcpi log-level`.
type LogLevelOptions struct {
	command.ConnOptions
	Level mcp.LoggingLevel
}

// NewCmdLogLevel returns `mcpi log-level LEVEL`.
func NewCmdLogLevel(f *command.Factory, runF func(context.Context, *LogLevelOptions) error) *cobra.Command {
	opts := &LogLevelOptions{ConnOptions: f.Conn()}
	cmd := &cobra.Command{
		Use:   "log-level LEVEL --session NAME",
		Short: "Set the level of the log messages a live session's server sends",
		Long: `Set the level of the log messages a live session's server sends (see
mcpi tail): debug, info, notice, warning, error, critical, alert or
emergency. A legacy server is sent logging/setLevel; in the modern era the
level goes with every later request.`,
		Example: "  mcpi log-level debug --session demo",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return command.FlagErrorf("give one LEVEL: %s", levelNames())
			}
			opts.Level = mcp.LoggingLevel(args[0])
			if !slices.Contains(mcp.LoggingLevels, opts.Level) {
				return command.FlagErrorf("invalid LEVEL %q: want %s", args[0], levelNames())
			}
			return nil
		},
		RunE: sessionRunE(&opts.ConnOptions, opts, runF, logLevelRun),
	}
	command.AddJSONFlag(cmd, &opts.JSON, "print JSON")
	return sessionOnlyVerb(cmd, &opts.ConnOptions)
}

func logLevelRun(ctx context.Context, opts *LogLevelOptions) error {
	return opts.InSession(ctx, func(h *daemon.Held) error {
		if err := h.SetLogLevel(ctx, opts.Level); err != nil {
			return err
		}
		if opts.JSON {
			return iostreams.WriteJSON(opts.IO, map[string]any{"level": opts.Level})
		}
		fmt.Fprintf(opts.IO.ErrOut, "Log level set to %s.\n", opts.Level)
		return nil
	})
}

func levelNames() string {
	names := make([]string, len(mcp.LoggingLevels))
	for i, l := range mcp.LoggingLevels {
		names[i] = string(l)
	}
	return strings.Join(names, ", ")
}

// SubscribeOptions are the input of `mcpi subscribe`.
type SubscribeOptions struct {
	command.ConnOptions
	URI         string
	Unsubscribe bool
}

// NewCmdSubscribe returns `mcpi subscribe URI`.
func NewCmdSubscribe(f *command.Factory, runF func(context.Context, *SubscribeOptions) error) *cobra.Command {
	opts := &SubscribeOptions{ConnOptions: f.Conn()}
	cmd := &cobra.Command{
		Use:   "subscribe URI --session NAME",
		Short: "Subscribe a live session to a resource's updates (see mcpi tail)",
		Long: `Subscribe a live session to a resource's updates: the server's
notifications/resources/updated about URI then reach mcpi tail. --unsubscribe
ends the subscription. A legacy server is sent resources/subscribe (or
resources/unsubscribe); in the modern era the session holds one
subscriptions/listen for all the resources it is subscribed to, opened anew
with each change (the new one acknowledged before the old one is closed).`,
		Example: "  mcpi subscribe demo://counter --session demo",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return command.FlagErrorf("give one resource URI")
			}
			opts.URI = args[0]
			return nil
		},
		RunE: sessionRunE(&opts.ConnOptions, opts, runF, subscribeRun),
	}
	end := command.FlagGroup(cmd, command.GroupArgs)
	cmd.Flags().BoolVar(&opts.Unsubscribe, "unsubscribe", false, "end the subscription instead")
	end()
	end = command.FlagGroup(cmd, command.GroupOutput)
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
	end()
	return sessionOnlyVerb(cmd, &opts.ConnOptions)
}

func subscribeRun(ctx context.Context, opts *SubscribeOptions) error {
	uri, subscribe := opts.URI, !opts.Unsubscribe
	return opts.InSession(ctx, func(h *daemon.Held) error {
		what := "Subscribed to"
		if !subscribe {
			what = "Unsubscribed from"
		}
		note, err := h.Subscribe(ctx, uri, subscribe)
		if err == nil && note != "" {
			fmt.Fprintln(opts.IO.ErrOut, "warning: "+note)
		}
		if err != nil {
			return err
		}
		if opts.JSON {
			return iostreams.WriteJSON(opts.IO, map[string]any{"uri": uri, "subscribed": subscribe})
		}
		fmt.Fprintf(opts.IO.ErrOut, "%s %s.\n", what, command.Sanitize(uri, false))
		return nil
	})
}

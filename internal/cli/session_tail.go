package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpi-dev/mcpi/internal/daemon"
	"github.com/mcpi-dev/mcpi/internal/iostreams"
	"github.com/mcpi-dev/mcpi/internal/mcp"
)

// TailOptions are the input of `mcpi tail`.
type TailOptions struct {
	ConnOptions
	// Wire shows every frame too.
	Wire bool
	// Filter shows only what matches (the Wire pane's search language).
	Filter string
	filter *frameFilter
}

// NewCmdTail returns `mcpi tail`.
func NewCmdTail(f *Factory, runF func(context.Context, *TailOptions) error) *cobra.Command {
	opts := &TailOptions{ConnOptions: f.conn()}
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
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := sessionOnly(cmd, &opts.ConnOptions, args); err != nil {
				return err
			}
			var err error
			if opts.filter, err = newFrameFilter(opts.Filter); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return tailRun(cmd.Context(), opts)
		},
	}
	end := flagGroup(cmd, groupOutput)
	cmd.Flags().BoolVar(&opts.Wire, "wire", false, "show every frame sent and received, too")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON Lines, one event per line")
	cmd.Flags().StringVar(&opts.Filter, "filter", "", `show only what matches, e.g. "kind:log text:error" or "method:tools/call dur:>1s" (the Wire pane's search language, docs/cli.md)`)
	end()
	addSessionFlag(cmd, &opts.ConnOptions)
	return markSessionOnly(cmd)
}

func tailRun(ctx context.Context, opts *TailOptions) error {
	return opts.inSession(ctx, func(h *daemon.Held) error {
		if opts.JSON {
			opts.IO.StartJSONStream()
		}
		sub := h.Hub().Subscribe(opts.Wire)
		defer h.Hub().Unsubscribe(sub)
		t := &tailer{o: &opts.ConnOptions, h: h, sub: sub, filter: opts.filter}
		return t.follow(ctx)
	})
}

// tailer is a tail following a session: what it reads, and where from.
type tailer struct {
	o      *ConnOptions
	h      *daemon.Held
	sub    *daemon.Tail
	filter *frameFilter
}

// follow prints the session's events as they come, until the session
// ends or ctx does.
func (t *tailer) follow(ctx context.Context) error {
	h := t.h
	for {
		select {
		case <-t.sub.Ready():
			if err := t.drain(); err != nil {
				return err
			}
		case <-h.Gone():
			why := "the connection ended"
			if err := h.Client().Err(); err != nil {
				why = oneLine(err.Error())
			}
			return t.ended(why)
		case <-h.Ended():
			// Stopped, or its idle timeout passed.
			return t.ended(h.End().Reason)
		case <-ctx.Done():
			if st := h.End(); st != nil {
				// The daemon cancels what runs once the session
				// ended: that is the session's end, not Ctrl-C.
				return t.ended(st.Reason)
			}
			t.dropped()
			return ctx.Err()
		}
	}
}

// drain prints the events that wait, each after the count of those
// dropped before it.
func (t *tailer) drain() error {
	o := t.o
	for {
		e, ok := t.sub.TryPop()
		if !ok {
			return nil
		}
		if err := t.dropped(); err != nil {
			return err
		}
		if t.filter != nil && !t.filter.tail(e) {
			continue
		}
		var err error
		if o.JSON {
			err = iostreams.WriteJSONLine(o.IO, e)
		} else {
			_, err = fmt.Fprintln(o.IO.Out, tailText(e))
		}
		if err != nil {
			return err
		}
	}
}

// dropped says how many events the tail missed, if any, since it last
// said so.
func (t *tailer) dropped() error {
	n := t.sub.Dropped()
	if n == 0 {
		return nil
	}
	if t.o.JSON {
		return iostreams.WriteJSONLine(t.o.IO, daemon.TailEvent{Time: time.Now(), Kind: "dropped", Dropped: n})
	}
	_, err := fmt.Fprintf(t.o.IO.ErrOut, "mcpi: %d event(s) dropped: this tail read too slowly\n", n)
	return err
}

// ended says the session ended, and why.
func (t *tailer) ended(why string) error {
	t.dropped()
	fmt.Fprintf(t.o.IO.ErrOut, "mcpi: session %s ended: %s\n", t.h.Name(), why)
	return nil
}

// tailText is an event as one line of text.
func tailText(e daemon.TailEvent) string {
	ts := e.Time.Format("15:04:05.000")
	switch e.Kind {
	case "frame":
		arrow := "→"
		if e.Dir == "recv" {
			arrow = "←"
		}
		return fmt.Sprintf("%s %s %s", ts, arrow, oneLine(string(e.Frame)))
	case "request":
		// A parked server request, under the number mcpi pending and
		// mcpi answer use.
		line := fmt.Sprintf("%s request #%d %s %s", ts, e.Request, oneLine(e.Method), e.State)
		if e.Command != "" {
			line += " for: " + oneLine(e.Command)
		}
		if e.Summary != "" {
			line += ": " + oneLine(e.Summary)
		}
		return line
	}
	switch e.Method {
	case "notifications/message":
		var m mcp.LoggingMessageParams
		if json.Unmarshal(e.Params, &m) == nil {
			data := string(m.Data)
			var s string
			if json.Unmarshal(m.Data, &s) == nil {
				data = s
			}
			logger := ""
			if m.Logger != "" {
				logger = " [" + oneLine(m.Logger) + "]"
			}
			return fmt.Sprintf("%s log %s%s %s", ts, oneLine(string(m.Level)), logger, oneLine(data))
		}
	case "notifications/tasks", "notifications/tasks/status":
		// A task's status (the 2026-07-28 extension; 2025-11-25 tasks).
		var t mcp.Task
		if json.Unmarshal(e.Params, &t) == nil && t.TaskID != "" {
			return ts + " " + taskLine(t)
		}
	case "notifications/progress":
		var p mcp.ProgressParams
		if json.Unmarshal(e.Params, &p) == nil {
			n := fmt.Sprint(p.Progress)
			if p.Total != nil {
				n += fmt.Sprintf("/%v", *p.Total)
			}
			return strings.TrimSpace(fmt.Sprintf("%s progress %s %s %s", ts, oneLine(string(p.ProgressToken)), n, oneLine(p.Message)))
		}
	}
	return fmt.Sprintf("%s %s %s", ts, oneLine(e.Method), oneLine(string(e.Params)))
}

// LogLevelOptions are the input of `mcpi log-level`.
type LogLevelOptions struct {
	ConnOptions
	Level mcp.LoggingLevel
}

// NewCmdLogLevel returns `mcpi log-level LEVEL`.
func NewCmdLogLevel(f *Factory, runF func(context.Context, *LogLevelOptions) error) *cobra.Command {
	opts := &LogLevelOptions{ConnOptions: f.conn()}
	cmd := &cobra.Command{
		Use:   "log-level LEVEL --session NAME",
		Short: "Set the level of the log messages a live session's server sends",
		Long: `Set the level of the log messages a live session's server sends (see
mcpi tail): debug, info, notice, warning, error, critical, alert or
emergency. A legacy server is sent logging/setLevel; in the modern era the
level goes with every later request.`,
		Example: "  mcpi log-level debug --session demo",
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return flagErrorf("give one LEVEL: %s", levelNames())
			}
			opts.Level = mcp.LoggingLevel(args[0])
			if !slices.Contains(mcp.LoggingLevels, opts.Level) {
				return flagErrorf("invalid LEVEL %q: want %s", args[0], levelNames())
			}
			if err := sessionOnly(cmd, &opts.ConnOptions, args); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return logLevelRun(cmd.Context(), opts)
		},
	}
	end := flagGroup(cmd, groupOutput)
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
	end()
	addSessionFlag(cmd, &opts.ConnOptions)
	return markSessionOnly(cmd)
}

func logLevelRun(ctx context.Context, opts *LogLevelOptions) error {
	return opts.inSession(ctx, func(h *daemon.Held) error {
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
	ConnOptions
	URI         string
	Unsubscribe bool
}

// NewCmdSubscribe returns `mcpi subscribe URI`.
func NewCmdSubscribe(f *Factory, runF func(context.Context, *SubscribeOptions) error) *cobra.Command {
	opts := &SubscribeOptions{ConnOptions: f.conn()}
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
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return flagErrorf("give one resource URI")
			}
			opts.URI = args[0]
			if err := sessionOnly(cmd, &opts.ConnOptions, args); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return subscribeRun(cmd.Context(), opts)
		},
	}
	end := flagGroup(cmd, groupArgs)
	cmd.Flags().BoolVar(&opts.Unsubscribe, "unsubscribe", false, "end the subscription instead")
	end()
	end = flagGroup(cmd, groupOutput)
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
	end()
	addSessionFlag(cmd, &opts.ConnOptions)
	return markSessionOnly(cmd)
}

func subscribeRun(ctx context.Context, opts *SubscribeOptions) error {
	uri, subscribe := opts.URI, !opts.Unsubscribe
	return opts.inSession(ctx, func(h *daemon.Held) error {
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
		fmt.Fprintf(opts.IO.ErrOut, "%s %s.\n", what, sanitize(uri, false))
		return nil
	})
}

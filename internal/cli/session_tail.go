package cli

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpi-dev/mcpi/internal/daemon"
	"github.com/mcpi-dev/mcpi/internal/mcp"
)

// NewCmdTail returns `mcpi tail`.
func NewCmdTail(f *Factory) *cobra.Command {
	o := f.connOptions()
	var wire bool
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
			return sessionOnly(cmd, o, args, func(h *daemon.Held) error {
				ctx := cmd.Context()
				if o.JSON {
					o.IO.jsonStream.Store(true)
				}
				sub := h.Hub().Subscribe(wire)
				defer h.Hub().Unsubscribe(sub)
				dropped := func() error {
					n := sub.Dropped()
					if n == 0 {
						return nil
					}
					if o.JSON {
						return writeJSONLine(o.IO, daemon.TailEvent{Time: time.Now(), Kind: "dropped", Dropped: n})
					}
					_, err := fmt.Fprintf(o.IO.ErrOut, "mcpi: %d event(s) dropped: this tail read too slowly\n", n)
					return err
				}
				ended := func(why string) error {
					dropped()
					fmt.Fprintf(o.IO.ErrOut, "mcpi: session %s ended: %s\n", h.Name(), why)
					return nil
				}
				for {
					select {
					case <-sub.Ready():
						for {
							e, ok := sub.TryPop()
							if !ok {
								break
							}
							if err := dropped(); err != nil {
								return err
							}
							var err error
							if o.JSON {
								err = writeJSONLine(o.IO, e)
							} else {
								_, err = fmt.Fprintln(o.IO.Out, tailText(e))
							}
							if err != nil {
								return err
							}
						}
					case <-h.Gone():
						why := "the connection ended"
						if err := h.Client().Err(); err != nil {
							why = oneLine(err.Error())
						}
						return ended(why)
					case <-h.Ended():
						// Stopped, or its idle timeout passed.
						return ended(h.End().Reason)
					case <-ctx.Done():
						if st := h.End(); st != nil {
							// The daemon cancels what runs once the session
							// ended: that is the session's end, not Ctrl-C.
							return ended(st.Reason)
						}
						dropped()
						return ctx.Err()
					}
				}
			})
		},
	}
	end := flagGroup(cmd, groupOutput)
	cmd.Flags().BoolVar(&wire, "wire", false, "show every frame sent and received, too")
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print JSON Lines, one event per line")
	end()
	addSessionFlag(cmd, o)
	return markSessionOnly(cmd)
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

// NewCmdLogLevel returns `mcpi log-level LEVEL`.
func NewCmdLogLevel(f *Factory) *cobra.Command {
	o := f.connOptions()
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
			level := mcp.LoggingLevel(args[0])
			if !slices.Contains(mcp.LoggingLevels, level) {
				return flagErrorf("invalid LEVEL %q: want %s", args[0], levelNames())
			}
			return sessionOnly(cmd, o, args, func(h *daemon.Held) error {
				if err := h.SetLogLevel(cmd.Context(), level); err != nil {
					return err
				}
				if o.JSON {
					return writeJSON(o.IO, map[string]any{"level": level})
				}
				fmt.Fprintf(o.IO.ErrOut, "Log level set to %s.\n", level)
				return nil
			})
		},
	}
	end := flagGroup(cmd, groupOutput)
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print JSON")
	end()
	addSessionFlag(cmd, o)
	return markSessionOnly(cmd)
}

func levelNames() string {
	names := make([]string, len(mcp.LoggingLevels))
	for i, l := range mcp.LoggingLevels {
		names[i] = string(l)
	}
	return strings.Join(names, ", ")
}

// NewCmdSubscribe returns `mcpi subscribe URI`.
func NewCmdSubscribe(f *Factory) *cobra.Command {
	o := f.connOptions()
	var unsubscribe bool
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
			uri := args[0]
			return sessionOnly(cmd, o, args, func(h *daemon.Held) error {
				ctx := cmd.Context()
				what := "Subscribed to"
				if unsubscribe {
					what = "Unsubscribed from"
				}
				note, err := h.Subscribe(ctx, uri, !unsubscribe)
				if err == nil && note != "" {
					fmt.Fprintln(o.IO.ErrOut, "warning: "+note)
				}
				if err != nil {
					return err
				}
				if o.JSON {
					return writeJSON(o.IO, map[string]any{"uri": uri, "subscribed": !unsubscribe})
				}
				fmt.Fprintf(o.IO.ErrOut, "%s %s.\n", what, sanitize(uri, false))
				return nil
			})
		},
	}
	end := flagGroup(cmd, groupArgs)
	cmd.Flags().BoolVar(&unsubscribe, "unsubscribe", false, "end the subscription instead")
	end()
	end = flagGroup(cmd, groupOutput)
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print JSON")
	end()
	addSessionFlag(cmd, o)
	return markSessionOnly(cmd)
}

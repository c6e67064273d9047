package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpi-dev/mcpi/internal/bounds"
	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/record"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// tailEvent is one line of mcpi tail --json.
type tailEvent struct {
	Time    time.Time       `json:"time"`
	Kind    string          `json:"kind"` // notification, frame or dropped
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Dir     string          `json:"dir,omitempty"`
	Frame   json.RawMessage `json:"frame,omitempty"`
	Dropped int64           `json:"dropped,omitempty"`
}

// tailBuffer is how many events a tail holds for its reader, and
// tailBytes how many bytes of them; beyond that they are dropped and
// counted: a slow tail never holds up the session, nor fills its memory.
const (
	tailBuffer = 1024
	tailBytes  = 4 << 20
)

type tailSub struct {
	q       *bounds.Queue[tailEvent]
	wire    bool
	dropped atomic.Int64
}

func (e *tailEvent) size() int64 { return int64(len(e.Params) + len(e.Frame)) }

// tailHub hands a session's notifications and frames to its tails, and
// every event of its connection and every notification to the attached
// clients; it remembers the connection's events for the clients to come.
type tailHub struct {
	mu     sync.Mutex
	subs   []*tailSub
	wire   atomic.Int32 // tails that want frames
	redact *record.Redactor

	watchers  []*watcher
	hist      []transport.Event // redacted, oldest first
	histBytes int
	forgotten int64 // events dropped from the front of hist
}

// watch registers w and returns the history so far, and how many events
// before it are forgotten.
func (h *tailHub) watch(w *watcher) ([]transport.Event, int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.watchers = append(h.watchers, w)
	return slices.Clone(h.hist), h.forgotten
}

func (h *tailHub) unwatch(w *watcher) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.watchers = slices.DeleteFunc(h.watchers, func(x *watcher) bool { return x == w })
}

// remember adds an event to the history, forgetting the oldest beyond its
// bounds. h.mu is held.
func (h *tailHub) remember(e transport.Event) {
	h.hist = append(h.hist, e)
	h.histBytes += eventSize(&e)
	for len(h.hist) > historyEvents || h.histBytes > historyBytes {
		h.histBytes -= eventSize(&h.hist[0])
		h.hist[0] = transport.Event{}
		h.hist = h.hist[1:]
		h.forgotten++
	}
}

func eventSize(e *transport.Event) int { return len(e.Data) + len(e.Text) + len(e.Err) + 64 }

// usage returns the budgets of the tails' and attached clients' queues.
func (h *tailHub) usage() []bounds.Usage {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []bounds.Usage
	for _, s := range h.subs {
		out = append(out, s.q.Budget().Usage())
	}
	for _, w := range h.watchers {
		out = append(out, w.budget.Usage())
	}
	return out
}

func (h *tailHub) subscribe(wire bool) *tailSub {
	s := &tailSub{q: bounds.NewQueue[tailEvent](bounds.NewBudget("tail", tailBuffer, tailBytes)), wire: wire}
	h.mu.Lock()
	h.subs = append(h.subs, s)
	h.mu.Unlock()
	if wire {
		h.wire.Add(1)
	}
	return s
}

func (h *tailHub) unsubscribe(s *tailSub) {
	h.mu.Lock()
	h.subs = slices.DeleteFunc(h.subs, func(x *tailSub) bool { return x == s })
	h.mu.Unlock()
	if s.wire {
		h.wire.Add(-1)
	}
}

// publish never blocks: a tail whose buffer is full misses the event.
func (h *tailHub) publish(e tailEvent, wireOnly bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, s := range h.subs {
		if wireOnly && !s.wire {
			continue
		}
		if s.q.Push(e, e.size()) != nil {
			s.dropped.Add(1)
		}
	}
}

func (h *tailHub) notify(n session.Notification) {
	n.Params = append(json.RawMessage(nil), n.Params...)
	h.mu.Lock()
	for _, w := range h.watchers {
		w.offer(watchItem{note: &n})
	}
	none := len(h.subs) == 0
	h.mu.Unlock()
	if none {
		return
	}
	h.publish(tailEvent{Time: n.Time, Kind: "notification", Method: n.Method, Params: append(json.RawMessage(nil), n.Params...)}, false)
}

// tap sees every event of the session's connection, for the history, the
// attached clients and (frames) the tails given --wire; secrets are
// redacted as in a trace.
func (h *tailHub) tap() transport.Tap {
	return transport.TapFunc(func(e transport.Event) {
		ev := h.redact.Event(e)
		ev.Data = append([]byte(nil), ev.Data...)
		h.mu.Lock()
		h.remember(ev)
		for _, w := range h.watchers {
			w.offer(watchItem{ev: &ev})
		}
		h.mu.Unlock()
		if h.wire.Load() == 0 || e.Kind != transport.KindFrame || !json.Valid(ev.Data) {
			return
		}
		h.publish(tailEvent{Time: e.Time, Kind: "frame", Dir: e.Dir.String(), Frame: ev.Data}, true)
	})
}

// NewCmdTail returns `mcpi tail`.
func NewCmdTail(f *Factory) *cobra.Command {
	o := &ConnOptions{IO: f.IO, Args: f.Args}
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
			return sessionOnly(cmd, o, args, func(h *heldSession) error {
				ctx := cmd.Context()
				if o.JSON {
					o.IO.jsonStream.Store(true)
				}
				sub := h.hub.subscribe(wire)
				defer h.hub.unsubscribe(sub)
				dropped := func() error {
					n := sub.dropped.Swap(0)
					if n == 0 {
						return nil
					}
					if o.JSON {
						return writeJSONLine(o.IO, tailEvent{Time: time.Now(), Kind: "dropped", Dropped: n})
					}
					_, err := fmt.Fprintf(o.IO.ErrOut, "mcpi: %d event(s) dropped: this tail read too slowly\n", n)
					return err
				}
				ended := func(why string) error {
					dropped()
					fmt.Fprintf(o.IO.ErrOut, "mcpi: session %s ended: %s\n", h.name, why)
					return nil
				}
				for {
					select {
					case <-sub.q.Ready():
						for {
							e, ok := sub.q.TryPop()
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
					case <-h.gone:
						why := "the connection ended"
						if err := h.client().Err(); err != nil {
							why = oneLine(err.Error())
						}
						return ended(why)
					case <-h.ended:
						// Stopped, or its idle timeout passed.
						return ended(h.end.Load().Reason)
					case <-ctx.Done():
						if st := h.end.Load(); st != nil {
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
func tailText(e tailEvent) string {
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
	o := &ConnOptions{IO: f.IO, Args: f.Args}
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
			return sessionOnly(cmd, o, args, func(h *heldSession) error {
				if err := h.client().SetLogLevel(cmd.Context(), level); err != nil {
					return err
				}
				h.stateMu.Lock()
				h.logLevel = level
				h.stateMu.Unlock()
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
	o := &ConnOptions{IO: f.IO, Args: f.Args}
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
			return sessionOnly(cmd, o, args, func(h *heldSession) error {
				ctx := cmd.Context()
				what := "Subscribed to"
				if unsubscribe {
					what = "Unsubscribed from"
				}
				note, err := h.subscribe(ctx, uri, !unsubscribe)
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

// subscribe subscribes the session to uri's updates, or ends that. A
// legacy server is sent resources/subscribe or resources/unsubscribe. In
// the modern era the session's subscriptions/listen for resources is
// opened anew with the new set (and acknowledged) before the old one is
// closed, so no update falls between the two. It returns a note when
// nothing was to be done, or the server acknowledged less than was asked.
func (h *heldSession) subscribe(ctx context.Context, uri string, on bool) (string, error) {
	h.subMu.Lock()
	defer h.subMu.Unlock()
	has := slices.Contains(h.subURIs, uri)
	switch {
	case on && has:
		return "session " + h.name + " was subscribed to " + sanitize(uri, false) + " already", nil
	case !on && !has:
		return "", flagErrorf("session %s is not subscribed to %s", h.name, sanitize(uri, false))
	}
	uris := slices.Clone(h.subURIs)
	if on {
		uris = append(uris, uri)
	} else {
		uris = slices.DeleteFunc(uris, func(u string) bool { return u == uri })
	}
	if h.client().Era() != session.EraModern {
		var err error
		if on {
			err = h.client().Subscribe(ctx, uri)
		} else {
			err = h.client().Unsubscribe(ctx, uri)
		}
		if err != nil {
			return "", err
		}
		h.subURIs = uris
		return "", nil
	}
	var next *session.Subscription
	note := ""
	if len(uris) > 0 {
		sub, err := h.client().Listen(ctx, mcp.SubscriptionFilter{ResourceSubscriptions: uris})
		if err != nil {
			return "", err
		}
		next = sub
		if on && !slices.Contains(sub.Acknowledged.ResourceSubscriptions, uri) {
			note = "the server's acknowledgement does not list " + sanitize(uri, false) + ": it may send no updates about it"
		}
	}
	if h.subs != nil {
		h.subs.Close()
	}
	h.subs, h.subURIs = next, uris
	return note, nil
}

package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/mcpi-dev/mcpi/internal/command"
	"github.com/mcpi-dev/mcpi/internal/daemon"
	"github.com/mcpi-dev/mcpi/internal/live"
	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/tui"
)

// connectSession opens the TUI on the live session name.
func connectSession(ctx context.Context, opts *ConnectOptions, r *command.ConnRun, name string, noColor bool) error {
	dir := opts.RuntimeDir
	if dir == "" {
		dir = live.DefaultDir()
	}
	// The first attachment is made here, so that a session that is not
	// there is said so before the screen changes; the TUI's reconnections
	// attach again.
	conn, info, err := attach(dir, name)
	if err != nil {
		return command.WithJSONError(opts.IO, false, err)
	}
	var first sync.Once
	dial := func(ctx context.Context, h tui.Hooks) (*session.Client, error) {
		c, i := (*live.Conn)(nil), info
		first.Do(func() { c = conn })
		if c == nil {
			var err error
			if c, i, err = attach(dir, name); err != nil {
				return nil, err
			}
		}
		r.TapSampling(h.Tap)
		rc := daemon.NewRelayConn(c, i, dir, daemon.ClientHooks{Tap: h.Tap, OnPast: h.OnPast, OnRoots: h.OnRoots})
		sopts := daemon.RelayOptions(i)
		sopts.Handler, sopts.OnNotification, sopts.OnWarning, sopts.OnHealth = h.Handler, h.OnNotification, h.OnWarning, h.OnHealth
		return session.Connect(ctx, rc, sopts)
	}
	return tui.Run(ctx, tui.Options{
		Version:  command.Version,
		Dial:     dial,
		Target:   "session " + name,
		Session:  name,
		NoColor:  noColor,
		Roots:    info.Roots,
		SaveDir:  opts.Save,
		Mouse:    opts.Mouse,
		Sampling: tuiSampling(r),
		SetRoots: func(ctx context.Context, roots []mcp.Root) error {
			return setSessionRoots(ctx, dir, name, roots)
		},
	})
}

// attach attaches to the live session name.
func attach(dir, name string) (*live.Conn, daemon.AttachInfo, error) {
	var info daemon.AttachInfo
	conn, raw, err := live.Attach(dir, name)
	if err != nil {
		return nil, info, command.SessionError(dir, name, err)
	}
	if err := json.Unmarshal(raw, &info); err != nil {
		conn.Close()
		return nil, info, fmt.Errorf("%w: session %s: the daemon's answer: %v", command.ErrConnect, name, err)
	}
	return conn, info, nil
}

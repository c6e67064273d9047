package tui

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mcpi-dev/mcpi/internal/check"
	"github.com/mcpi-dev/mcpi/internal/mcptest"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// checkPeer returns a Check option that runs the checks against the test
// binary re-executed as peer, on connections of their own, as the CLI's
// does.
func checkPeer(peer string) func(ctx context.Context, live *session.Client, progress func(string)) (*check.Report, error) {
	return func(ctx context.Context, _ *session.Client, progress func(string)) (*check.Report, error) {
		spawn := func(context.Context) (transport.Conn, error) {
			return transport.Spawn(transport.StdioOptions{Command: os.Args[0], Args: []string{"-test.run=^$"},
				Env: []string{mcptest.PeerEnv + "=" + peer}})
		}
		conn, err := spawn(ctx)
		if err != nil {
			return nil, err
		}
		obs := &check.Observer{}
		c, err := session.Connect(ctx, conn, session.Options{Handler: session.DeclineHandler{}, OnWarning: obs.OnWarning, Timeout: 30 * time.Second})
		if err != nil {
			return nil, err
		}
		defer c.Close()
		return check.Run(ctx, c, obs, check.Options{Transport: "stdio", Dial: spawn, Progress: progress}), nil
	}
}

// TestCheckPane runs the checks against the demo server from the Check
// pane, opens a finding in full and goes back.
func TestCheckPane(t *testing.T) {
	h := startLoaded(t, 100, 30, func(o *Options) { o.Check = checkPeer("demo") })
	h.press("alt+k")
	h.waitText("enter or ctrl+l runs the checks")
	h.press("enter")
	s := h.waitText("WARNINGS (", "rules ·")
	if !strings.Contains(s, "k Check (1)") {
		t.Errorf("the tab does not count errors and warnings:\n%s", s)
	}
	h.golden(s)
	h.press("enter")
	h.waitText("hosts/gemini/type-array  warning", "source")
	h.press("esc")
	h.waitText("WARNINGS (", "> hosts/gemini/type-array")
}

// TestCheckPaneFinding shows a finding opened in full.
func TestCheckPaneFinding(t *testing.T) {
	h := startLoaded(t, 100, 30, func(o *Options) { o.Check = checkPeer("demo") })
	h.press("alt+k", "ctrl+l")
	h.waitText("WARNINGS (")
	h.press("enter")
	h.golden(h.waitText("hosts/gemini/type-array  warning", "source"))
}

// TestCheckPaneSaysWhereItRuns: on a stdio connection the pane says the
// checks run on the TUI's session, not on connections of their own, and
// which tool they call; on a session it says checks are not available
// there and offers no key to run them.
func TestCheckPaneSaysWhereItRuns(t *testing.T) {
	h := startLoaded(t, 100, 30, func(o *Options) { o.Check = checkPeer("demo") })
	h.press("alt+k")
	s := h.waitText("enter or ctrl+l runs the checks", "They run on this session", "They call none of the server's tools")
	if strings.Contains(s, "open connections of their own") || strings.Contains(s, "call no tool") {
		t.Errorf("the Check pane says the checks open connections of their own:\n%s", s)
	}

	h2 := startLoaded(t, 100, 30, func(o *Options) { o.Session = "s1" })
	h2.press("alt+k")
	s = h2.waitText("Checks are not available on a session")
	if strings.Contains(s, "enter or ctrl+l") || strings.Contains(s, "run checks") {
		t.Errorf("the Check pane offers to run checks on a session:\n%s", s)
	}
	h2.press("enter")
	h2.waitText("Checks are not available on a session")
	if s := h2.p.Screen(); strings.Contains(s, "no server to connect to") {
		t.Errorf("enter says there is no server:\n%s", s)
	}
}

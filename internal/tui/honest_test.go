package tui

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpi-dev/mcpi/internal/demoserver"
	"github.com/mcpi-dev/mcpi/internal/mcptest"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// clock is a test's clock that the test moves.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// The Info pane counts a state's time from when the state began, not from
// the connection, and its clock moves on its own.
func TestInfoStateSince(t *testing.T) {
	srv := mcptest.NewRestartable(t, demoserver.HTTPHandler(demoserver.Options{Era: demoserver.EraLegacy}))
	clk := &clock{now: frozen}
	h := start(t, 100, 30, func(o *Options) {
		o.Target = srv.URL()
		o.Now = clk.Now
		o.Dial = func(ctx context.Context, hk Hooks) (*session.Client, error) {
			conn, err := transport.DialHTTP(ctx, transport.ModeAuto, transport.HTTPOptions{URL: srv.URL(), Tap: hk.Tap})
			if err != nil {
				return nil, err
			}
			return session.Connect(ctx, conn, session.Options{
				Handler: hk.Handler, OnNotification: hk.OnNotification, OnWarning: hk.OnWarning,
				OnHealth: hk.OnHealth, KeepAlive: 200 * time.Millisecond, Era: session.EraLegacy,
				Timeout: 5 * time.Second,
			})
		}
	})
	h.waitText(toolsLoaded, "● connected")
	h.press("alt+i")
	h.waitText("connected for")
	clk.add(10 * time.Second)
	// Nothing else happens: the pane's own clock redraws it.
	h.waitText("connected for 10.00s")
	clk.add(10 * time.Minute)
	srv.Stop()
	h.waitText("✗ unreachable", "state", "unreachable for 0µs")
	clk.add(5 * time.Second)
	h.waitText("unreachable for 5.00s")
}

// "connected for" moves while nothing else happens.
func TestInfoClockMoves(t *testing.T) {
	clk := &clock{now: frozen}
	h := start(t, 100, 30, func(o *Options) { o.Now = clk.Now })
	h.waitText(toolsLoaded, "● connected")
	h.waitAllLoaded()
	h.press("alt+i")
	h.waitText("connected for")
	h.waitQuiet()
	clk.add(10 * time.Second)
	h.waitText("connected for 10.00s")
}

// A pane's tab shows its list: letters typed after alt+1 filter the tools
// and never reach a result's keys (e then enter sent the last call again).
func TestTabShowsTheList(t *testing.T) {
	h := startLoaded(t, 100, 30)
	h.typeText("echo")
	h.press("enter")
	h.waitText("Call echo")
	h.typeText("once")
	h.press("ctrl+s")
	h.waitText("echo · call #1 · ✓ done")
	h.press("alt+7")
	h.waitText("[7 Wire")
	h.press("alt+1", "esc") // the list, its filter cleared
	h.typeText("delete")
	h.waitText("(1/18)")
	h.press("enter")
	h.waitText("Call delete_file")
	h.press("alt+1")
	h.waitText("(1/18)")
	h.press("esc")
	h.waitText(toolsLoaded)
	if n := len(h.final().Tools().Calls()); n != 1 {
		t.Errorf("%d calls, want 1", n)
	}
}

// ctrl+r tells the new session what the old one was asked (the log level,
// the subscriptions: session.Client.Reapply), says so, and the
// subscriptions shown are the server's again.
func TestReconnectReapplies(t *testing.T) {
	for _, peer := range []string{"demo-legacy", "demo"} {
		t.Run(peer, func(t *testing.T) {
			h := start(t, 100, 30, func(o *Options) {
				o.Dial = func(ctx context.Context, hk Hooks) (*session.Client, error) { return dialPeer(ctx, hk, peer) }
			})
			h.waitText(toolsLoaded)
			h.press("alt+2")
			h.waitText("16 resources")
			h.selectLine("demo://counter")
			h.press("u")
			h.waitText("›● demo://counter")
			h.press("alt+8", "+", "L")
			h.waitText("asked the server for info and above")
			h.press("ctrl+r")
			h.waitText("applied again to the new session: the log level and 1 subscription(s)")
			h.press("alt+2")
			h.waitText("subscribed again to 1 resource", "›● demo://counter")
			h.press("alt+1")
			h.callTool("bump_counter", "")
			h.waitText("✓ done")
			h.press("alt+2")
			h.waitText("✱")
		})
	}
}

// A server without the tools capability: the pane says tools/list was not
// sent and names the key that sends it anyway, which does.
func TestToolsWithoutCapability(t *testing.T) {
	h := start(t, 80, 24, skillsServer(mcptest.SkillsHonest))
	s := h.waitText("tools/list was not", "ctrl+l sends it anyway")
	if strings.Contains(s, "force to send") {
		t.Errorf("the pane names no key:\n%s", s)
	}
	h.press("ctrl+l")
	h.waitText("0 tools listed")
	h.press("alt+7")
	h.waitText("tools/list")
}

// The forced listing (ctrl+l on a server without the tools capability)
// follows the session's one pagination rule: a server whose cursors go
// round in a circle gets a listing said to be incomplete, not passed off
// as the whole list.
func TestForcedToolsListingTruncatedIsSaid(t *testing.T) {
	h := start(t, 120, 24, func(o *Options) {
		o.Dial = func(ctx context.Context, hk Hooks) (*session.Client, error) {
			return dialPeerWith(ctx, hk, mcptest.ListsPrefix+mcptest.BoundsCyclingNoTools, func(so *session.Options) { so.Era = session.EraLegacy })
		}
	})
	h.waitText("tools/list was not", "ctrl+l sends it anyway")
	h.press("ctrl+l")
	h.waitText("incomplete", "repeated cursor")
}

// A request written raw from the composer is answered without a warning
// about an unknown id; ctrl+u clears the field, so the next frame is
// not glued onto the last.
func TestComposerFrameAnswered(t *testing.T) {
	h := startLoaded(t, 100, 30)
	h.waitAllLoaded()
	h.press("ctrl+e", "tab")
	h.typeText(`{"jsonrpc":"2.0","id":"raw-1","method":"ping"}`)
	h.press("ctrl+f")
	h.waitText("✓ frame written")
	h.press("ctrl+u")
	h.typeText(`{"jsonrpc":"2.0","id":"raw-2","method":"ping"}`)
	h.press("ctrl+f")
	h.waitText("✓ frame written")
	h.press("esc", "alt+7")
	s := h.waitFor("both answers", func(s string) bool { return strings.Count(s, "response · ping") == 2 })
	if strings.Contains(s, "unknown") || strings.Contains(s, "warnings") || strings.Contains(s, "not JSON") {
		t.Errorf("an answered raw frame was warned about:\n%s", s)
	}
}

// alt+r without --save records into the working directory and says it in
// full; at 80 columns the file's name and the end of its directory show.
func TestRecordingPathInFull(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	h := startLoaded(t, 200, 30, func(o *Options) { o.SaveDir = "" })
	h.press("alt+r")
	h.waitText("● rec "+dir+"/mcpi-", "recording started in "+dir+" (alt+r stops it)")
	h.press("down")
	h.waitText("● rec " + dir + "/mcpi-")
	h.press("alt+r")
	h.waitText("recording stopped: " + dir + "/mcpi-")
	if m, _ := filepath.Glob(filepath.Join(dir, "mcpi-*.jsonl")); len(m) != 1 {
		t.Errorf("traces in the working directory: %v", m)
	}

	h2 := start(t, 80, 24, func(o *Options) { o.SaveDir = "" })
	h2.waitText(toolsLoaded)
	// alt+r starts the recording in the background: its notice comes
	// when it started, and the next key clears it.
	h2.press("alt+r")
	h2.waitText("● rec ", "recording started")
	h2.press("down")
	s := h2.waitFor("the path alone", func(s string) bool {
		return strings.Contains(s, "● rec ") && !strings.Contains(s, "recording started")
	})
	if !strings.Contains(s, filepath.Base(dir)+"/mcpi-") {
		t.Errorf("the directory's end is not shown:\n%s", s)
	}
}

// The trace of --record shows on the status line from the start, as one
// alt+r starts does; alt+r's own shows while it runs, then --record's again.
func TestRecordFlagShowsOnTheStatusLine(t *testing.T) {
	trace := filepath.Join(t.TempDir(), "run.jsonl")
	h := startLoaded(t, 200, 30, func(o *Options) { o.RecordPath = trace })
	h.waitText("● rec " + trace)
	h.press("alt+r")
	h.waitText("● rec "+h.m.c.SaveDir+"/mcpi-", "recording started")
	h.press("alt+r")
	h.waitText("recording stopped: ")
	h.press("down")
	h.waitText("● rec " + trace)
}

// A 2026-07-28 server with serverInfo at the top level of its
// server/discover result: shown in the header and the Info pane, with a
// warning that says where it was found.
func TestServerInfoAtTheTopLevel(t *testing.T) {
	h := start(t, 100, 30, func(o *Options) {
		o.Dial = func(ctx context.Context, hk Hooks) (*session.Client, error) {
			return dialPeer(ctx, hk, mcptest.ModernBrokenPrefix+"handshake/server-info")
		}
	})
	h.waitText("mcpi · modern-broken 1.0", "warnings 1")
	h.press("alt+i")
	h.waitText("name            modern-broken", "version         1.0")
	h.press("alt+7")
	h.waitText("server-info: serverInfo is at the top level")
}

// ctrl+c with only a call running says so, and offers no way to set an
// answer aside, since there is none.
func TestCtrlCWithACallRunning(t *testing.T) {
	h := startLoaded(t, 80, 24)
	h.typeText("long_running")
	h.press("enter")
	h.waitText("Call long_running")
	h.press("ctrl+s")
	h.waitText("long_running · call #1")
	h.press("alt+2", "ctrl+c")
	s := h.waitText("ctrl+c again quits: 1 call running")
	if strings.Contains(s, "aside") {
		t.Errorf("a way to set aside an answer that does not exist:\n%s", s)
	}
}

// The user's secret values (-e values, a configuration's headers) are
// hidden in the Wire pane as in a trace.
func TestWireHidesTheUsersSecrets(t *testing.T) {
	h := startLoaded(t, 120, 30, func(o *Options) { o.TraceOptions.SecretValues = []string{"TOPSECRET4242"} })
	h.waitAllLoaded()
	h.press("ctrl+e", "tab")
	h.typeText(`{"jsonrpc":"2.0","id":"TOPSECRET4242","method":"ping"}`)
	h.press("ctrl+f")
	h.waitText("✓ frame written")
	h.press("esc", "alt+7", "end")
	s := h.waitFor("the frame's row", func(s string) bool { return strings.Contains(s, `"[RED`) })
	if strings.Contains(s, "TOPSECRET4242") {
		t.Errorf("the secret is on screen:\n%s", s)
	}
}

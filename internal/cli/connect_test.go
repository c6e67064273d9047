package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpi-dev/mcpi/internal/mcptest"
	"github.com/mcpi-dev/mcpi/internal/record"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/transport"
	"github.com/mcpi-dev/mcpi/internal/tui"
)

func TestConnectFlags(t *testing.T) {
	for _, tc := range []struct {
		name    string
		argv    []string
		wantErr bool
		check   func(t *testing.T, o *ConnectOptions)
	}{
		{
			name: "stdio",
			argv: []string{"--root", "/a", "--save", "out", "--record", "t.jsonl", "--", "node", "server.js"},
			check: func(t *testing.T, o *ConnectOptions) {
				if !reflect.DeepEqual(o.Target.Command, []string{"node", "server.js"}) || o.Save != "out" || o.Record != "t.jsonl" ||
					!reflect.DeepEqual(o.Roots, []string{"/a"}) {
					t.Errorf("options %+v", o)
				}
			},
		},
		{
			name: "url",
			argv: []string{"http://127.0.0.1:8080/mcp", "-H", "Authorization: Bearer x", "--era", "modern", "--no-color"},
			check: func(t *testing.T, o *ConnectOptions) {
				if o.Target.URL != "http://127.0.0.1:8080/mcp" || o.Target.Era != "modern" || !o.NoColor {
					t.Errorf("options %+v", o)
				}
			},
		},
		{name: "server", argv: []string{"--server", "github", "--config", "x.json"}},
		{
			name: "no target picks a configured server",
			argv: []string{"--config", "x.json"},
			check: func(t *testing.T, o *ConnectOptions) {
				if !o.Pick || o.Target.Server != "" || o.Target.Config != "x.json" {
					t.Errorf("options %+v", o)
				}
			},
		},
		{name: "bad flag without target", argv: []string{"--era", "old"}, wantErr: true},
		{name: "extra argument", argv: []string{"what", "--", "s"}, wantErr: true},
		{name: "one-shot flags are not the TUI's", argv: []string{"--sampling-reply", "x", "--", "s"}, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseArgs(NewCmdConnect, tc.argv)
			if (err != nil) != tc.wantErr {
				t.Fatalf("error %v, want error %v", err, tc.wantErr)
			}
			if tc.check != nil && got != nil {
				tc.check(t, got)
			}
		})
	}
}

func TestConnectNeedsATerminal(t *testing.T) {
	ios, _, _, errOut := Test()
	code := run(context.Background(), &Factory{IO: ios, Executable: os.Executable}, append([]string{"connect"}, peerArgs("demo")...))
	if code != ExitUsage || !strings.Contains(errOut.String(), "terminal") {
		t.Errorf("exit %d, stderr %s", code, errOut)
	}
}

// TestTUIDial connects the way the TUI does: its hooks wired into the
// session, the recording tap first, and a second dial for a reconnect.
func TestTUIDial(t *testing.T) {
	ios, _, _, _ := Test()
	trace := filepath.Join(t.TempDir(), "trace.jsonl")
	var got *ConnectOptions
	cmd := NewCmdConnect(&Factory{IO: ios}, func(_ context.Context, o *ConnectOptions) error { got = o; return nil })
	cmd.SetArgs(append([]string{"--record", trace}, peerArgs("demo")...))
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	o := &got.ConnOptions
	if err := o.validate(); err != nil {
		t.Fatal(err)
	}
	if err := o.startRecording(); err != nil {
		t.Fatal(err)
	}
	var frames atomic.Int64
	hooks := tui.Hooks{
		Handler: session.DeclineHandler{},
		Tap: transport.TapFunc(func(e transport.Event) {
			if e.Kind == transport.KindFrame {
				frames.Add(1)
			}
		}),
		OnNotification: func(session.Notification) {},
		OnWarning:      func(session.Warning) {},
	}
	ctx := context.Background()
	for range 2 {
		c, err := o.tuiDial(ctx, hooks)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.AllTools(ctx); err != nil {
			t.Fatal(err)
		}
		c.Close()
	}
	if err := o.recorder.Close(); err != nil {
		t.Fatal(err)
	}
	if frames.Load() < 8 {
		t.Errorf("the TUI's tap saw %d frames", frames.Load())
	}
	data, err := os.ReadFile(trace)
	if err != nil || strings.Count(string(data), `"tools/list"`) < 2 {
		t.Errorf("trace (%v):\n%s", err, data)
	}
	if label := targetLabel(&o.Target); !strings.HasPrefix(label, "stdio: ") {
		t.Errorf("label %q", label)
	}
}

// TestDemoWithoutTerminalPrints: without a terminal `mcpi demo` prints the
// demo server's info and tools (scripts and CI have no terminal).
func TestDemoWithoutTerminalPrints(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("uses a shell script as the mcpi binary")
	}
	// The demo runs "<executable> demo-server": a script stands in for
	// mcpi and runs this test binary as the demo server.
	exe := filepath.Join(t.TempDir(), "mcpi")
	script := fmt.Sprintf("#!/bin/sh\nexec env %s=demo %q -test.run='^$'\n", mcptest.PeerEnv, os.Args[0])
	if err := os.WriteFile(exe, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	ios, _, out, errOut := Test()
	opts := &DemoOptions{IO: ios, Executable: func() (string, error) { return exe, nil }}
	if err := demoRun(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "Connected to mcpi-demo") || !strings.Contains(out.String(), "long_running") {
		t.Errorf("stdout:\n%s", out)
	}
	if !strings.Contains(errOut.String(), "no terminal") {
		t.Errorf("stderr:\n%s", errOut)
	}
	// --print says nothing about the terminal.
	ios, _, out, errOut = Test()
	opts = &DemoOptions{IO: ios, Executable: func() (string, error) { return exe, nil }, Print: true}
	if err := demoRun(context.Background(), opts); err != nil || errOut.Len() != 0 || !strings.Contains(out.String(), "echo") {
		t.Errorf("--print: %v\n%s\n%s", err, out, errOut)
	}
}

// A trace started with alt+r in the TUI has the header --record would
// write: mcpi's version, the command line and the target with its
// transport, and the same redaction.
func TestTUITraceHeader(t *testing.T) {
	o := &ConnOptions{Target: TargetOptions{Command: []string{"node", "server.js"}}, Args: []string{"connect", "--", "node", "server.js"}}
	h := o.traceHeader()
	if h.Mcpi != Version || h.Target.Transport != record.TransportStdio || len(h.Args) != 4 || len(h.Target.Command) != 2 {
		t.Errorf("header %+v", h)
	}
	o = &ConnOptions{Target: TargetOptions{URL: "http://127.0.0.1:1/mcp", Transport: "sse"}}
	if h := o.traceHeader(); h.Target.Transport != record.TransportSSE || h.Target.URL == "" {
		t.Errorf("header %+v", h)
	}
}

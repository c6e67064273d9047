package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpi-dev/mcpi/internal/command"
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
	ios, _, _, errOut := command.Test()
	code := run(context.Background(), &command.Factory{IO: ios, Executable: os.Executable}, append([]string{"connect"}, peerArgs("demo")...))
	if code != command.ExitUsage || !strings.Contains(errOut.String(), "terminal") {
		t.Errorf("exit %d, stderr %s", code, errOut)
	}
}

// TestTUIDial connects the way the TUI does: its hooks wired into the
// session, the recording tap first, and a second dial for a reconnect.
func TestTUIDial(t *testing.T) {
	ios, _, _, _ := command.Test()
	trace := filepath.Join(t.TempDir(), "trace.jsonl")
	var got *ConnectOptions
	cmd := NewCmdConnect(&command.Factory{IO: ios}, func(_ context.Context, o *ConnectOptions) error { got = o; return nil })
	cmd.SetArgs(append([]string{"--record", trace}, peerArgs("demo")...))
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	o := got.ConnOptions.NewRun()
	if err := o.Prepare(); err != nil {
		t.Fatal(err)
	}
	if err := o.StartTrace(); err != nil {
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
		c, err := tuiDial(o)(ctx, hooks)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.AllTools(ctx); err != nil {
			t.Fatal(err)
		}
		c.Close()
	}
	if err := o.Close(); err != nil {
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
	ios, _, out, errOut := command.Test()
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
	ios, _, out, errOut = command.Test()
	opts = &DemoOptions{IO: ios, Executable: func() (string, error) { return exe, nil }, Print: true}
	if err := demoRun(context.Background(), opts); err != nil || errOut.Len() != 0 || !strings.Contains(out.String(), "echo") {
		t.Errorf("--print: %v\n%s\n%s", err, out, errOut)
	}
}

// A trace started with alt+r in the TUI has the header --record would
// write: mcpi's version, the command line and the target with its
// transport, and the same redaction.
func TestTUITraceHeader(t *testing.T) {
	o := &command.ConnOptions{Target: command.TargetOptions{Command: []string{"node", "server.js"}}, Args: []string{"connect", "--", "node", "server.js"}}
	h := o.NewRun().TraceHeader()
	if h.Mcpi != command.Version || h.Target.Transport != record.TransportStdio || len(h.Args) != 4 || len(h.Target.Command) != 2 {
		t.Errorf("header %+v", h)
	}
	o = &command.ConnOptions{Target: command.TargetOptions{URL: "http://127.0.0.1:1/mcp", Transport: "sse"}}
	if h := o.NewRun().TraceHeader(); h.Target.Transport != record.TransportSSE || h.Target.URL == "" {
		t.Errorf("header %+v", h)
	}
}

func TestConnectWatchFlags(t *testing.T) {
	got, err := parseArgs(NewCmdConnect, []string{"--watch", "src", "--watch", "tools.json", "--watch-run", "go build ./...", "--", "./server"})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Watch, []string{"src", "tools.json"}) || got.WatchRun != "go build ./..." {
		t.Errorf("options %+v", got)
	}
	for _, argv := range [][]string{
		{"--watch", "src", "http://127.0.0.1:8080/mcp"},
		{"--watch", "src", "--session", "dev"},
		{"--watch-run", "make", "--", "./server"},
	} {
		_, err := parseArgs(NewCmdConnect, argv)
		var fe *command.FlagError
		if !errors.As(err, &fe) {
			t.Errorf("%q: err %v, want a usage error", argv, err)
		}
	}
}

func TestConnectWatchRun(t *testing.T) {
	dir := t.TempDir()
	out, err := runBuild(t.Context(), "pwd; echo oops >&2; exit 3", dir)
	if err == nil || !strings.Contains(err.Error(), "exit status 3") {
		t.Errorf("err = %v, want the exit status", err)
	}
	if !strings.Contains(out, dir) || !strings.Contains(out, "oops") {
		t.Errorf("output %q: want the directory and stderr", out)
	}
	out, err = runBuild(t.Context(), "head -c 400000 /dev/zero | tr '\\0' x", dir)
	if err != nil || len(out) > watchRunBytes+100 || !strings.Contains(out, "more not kept") {
		t.Errorf("err %v, %d bytes kept: want at most %d and the rest counted", err, len(out), watchRunBytes)
	}
}

// TestConnectWatchReloads: a change under --watch runs the build and
// hands the TUI one Reload; a failed build says so.
func TestConnectWatchReloads(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "tools.json")
	if err := os.WriteFile(f, []byte("[]"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := parseArgs(NewCmdConnect, []string{"--watch", f, "--watch-run", "cat tools.json; test -s ok", "--cwd", dir, "--", "./server"})
	if err != nil {
		t.Fatal(err)
	}
	reloads, err := got.startWatch(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	next := func() tui.Reload {
		t.Helper()
		select {
		case r := <-reloads:
			return r
		case <-time.After(10 * time.Second):
			t.Fatal("no reload")
		}
		return tui.Reload{}
	}
	if err := os.WriteFile(f, []byte(`["v2"]`), 0o644); err != nil {
		t.Fatal(err)
	}
	r := next()
	if r.Err == nil || !strings.Contains(r.Output, `["v2"]`) || len(r.Changed) != 1 || r.Changed[0] != f {
		t.Errorf("reload %+v: want the build failed, its output, the file", r)
	}
	if err := os.WriteFile(filepath.Join(dir, "ok"), []byte("y"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f, []byte(`["v3"]`), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := next(); r.Err != nil || !strings.Contains(r.Output, `["v3"]`) {
		t.Errorf("reload %+v: want the build passed", r)
	}
}

package tui

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/mcpi-dev/mcpi/internal/attach"
	"github.com/mcpi-dev/mcpi/internal/intercept"
	"github.com/mcpi-dev/mcpi/internal/mcptest"
	"github.com/mcpi-dev/mcpi/internal/proxy"
	"github.com/mcpi-dev/mcpi/internal/query"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// lateTap hands events to a tap given later (the TUI's inbox).
type lateTap struct {
	mu    sync.Mutex
	tap   transport.Tap
	all   []transport.Event
	moved chan struct{}
}

func (l *lateTap) Observe(e transport.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.all = append(l.all, e)
	if l.tap != nil {
		l.tap.Observe(e)
	}
	select {
	case l.moved <- struct{}{}:
	default:
	}
}

// waitText waits for an event whose text has s.
func (l *lateTap) waitText(t *testing.T, s string) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		l.mu.Lock()
		for _, e := range l.all {
			if strings.Contains(e.Text, s) {
				l.mu.Unlock()
				return
			}
		}
		l.mu.Unlock()
		select {
		case <-l.moved:
		case <-deadline:
			t.Fatalf("no event says %q", s)
		}
	}
}

// The proxy's TUI with breakpoints on a host's calls and notifications,
// between a simulated host and the demo server: a call held and its
// argument edited, a notification dropped, a call answered in the
// server's place.
func TestProxyTUIBreakpoints(t *testing.T) {
	var breaks []query.Query
	for _, b := range []string{"method:tools/call dir:out", "method:notifications/cancelled"} {
		q, _ := query.Parse(b)
		breaks = append(breaks, q)
	}
	late := &lateTap{moved: make(chan struct{}, 1)}
	g := intercept.NewGate(intercept.GateOptions{Breaks: breaks, Tap: late})
	hostIn, proxyOut := io.Pipe()
	proxyIn, hostOut := io.Pipe()
	host := mcptest.NewHost(hostOut, hostIn)
	var script string // what the editor does to the file ($1)
	m := NewProxy(context.Background(), ProxyOptions{
		Title: "demo", Gate: g, NoColor: true, Width: 120, Height: 24,
		EditCmd: func(path string) *exec.Cmd { return exec.Command("sh", "-c", script, "sh", path) },
		Run: func(ctx context.Context, tap transport.Tap) error {
			late.mu.Lock()
			late.tap = tap
			late.mu.Unlock()
			_, err := proxy.RunStdio(ctx, proxy.StdioOptions{Command: []string{os.Args[0]}, Env: []string{mcptest.PeerEnv + "=demo-legacy"},
				Stdin: proxyIn, Stdout: proxyOut, Stderr: io.Discard, Tap: late, Gate: g})
			proxyOut.Close()
			return err
		},
	})
	t.Cleanup(m.Close)
	t.Cleanup(func() { hostOut.Close() })
	tm := teatest.NewTestModel(t, screen{m}, teatest.WithInitialTermSize(120, 24),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.ASCII)))
	waitScreen := func(what string) {
		t.Helper()
		teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return strings.Contains(ansi.Strip(string(b)), what) },
			teatest.WithDuration(10*time.Second))
	}
	host.Initialize(t)

	host.Request(t, "tools/call", map[string]any{"name": "add", "arguments": map[string]any{"a": 1, "b": 2}})
	late.waitText(t, "held tools/call id 2")
	waitScreen("add #2")
	// In the TUI's editor, an edit that is not JSON is refused, and the
	// call stays held; esc leaves it.
	tm.Send(keyMsg("ctrl+e"))
	waitScreen("ctrl+s send · esc cancel")
	tm.Type("x")
	tm.Send(keyMsg("ctrl+s"))
	waitScreen("the edit is not JSON")
	tm.Send(keyMsg("esc"))
	// In $EDITOR, the argument is changed, and the edit is sent.
	script = `sed -i 's/"a": 1,/"a": 40,/' "$1"`
	tm.Send(keyMsg("alt+e"))
	if line, _ := host.Recv(t); !bytes.Contains(line, []byte("42")) {
		t.Errorf("the edited call got %s", line)
	}
	waitScreen("sent the edit of tools/call add #2")

	host.Send(t, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}`)
	late.waitText(t, "held notifications/cancelled")
	waitScreen("→ notifications/cancelled")
	tm.Send(keyMsg("ctrl+x"))
	// Each decision says what it did: the edit's notice is not left
	// standing over the next one.
	waitScreen("dropped notifications/cancelled")

	host.Request(t, "tools/call", map[string]any{"name": "delete_file", "arguments": map[string]any{"path": "/"}})
	late.waitText(t, "held tools/call id 3")
	waitScreen("delete_file #3")
	// The answer's template, sent as it is, answers in the server's place.
	tm.Send(keyMsg("ctrl+o"))
	waitScreen("in the peer's place: a result")
	tm.Send(keyMsg("ctrl+s"))
	if line, _ := host.Recv(t); !bytes.Contains(line, []byte(`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":""}]}}`)) || !bytes.Contains(line, []byte(`"id":3`)) {
		t.Errorf("the answer in the server's place: %s", line)
	}
	waitScreen("answered tools/call delete_file #3 in the peer's place")
	tm.Send(keyMsg("q"))
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))

	var actions []string
	late.mu.Lock()
	for _, e := range late.all {
		if e.Kind == transport.KindIntercept {
			actions = append(actions, strings.SplitN(strings.TrimPrefix(string(e.Data), `{"action":"`), `"`, 2)[0])
		}
	}
	late.mu.Unlock()
	if strings.Join(actions, ",") != "edit,drop,answer" {
		t.Errorf("intercept events %v, want edit, drop, answer", actions)
	}
}

// The TUI attached to a proxy over its socket (mcpi proxy attach): the
// proxy runs on its own, between a simulated host and the demo server,
// its gate served by internal/attach; the TUI shows the events of before
// it attached, edits a held call's argument, answers another in the
// server's place; quitting it leaves the proxy running.
func TestProxyTUIAttached(t *testing.T) {
	q, _ := query.Parse("method:tools/call dir:out")
	var srv *attach.Server
	tap := transport.TapFunc(func(e transport.Event) { srv.Observe(e) })
	g := intercept.NewGate(intercept.GateOptions{Breaks: []query.Query{q}, Tap: tap, OnChange: func() { srv.Changed() }})
	srv = attach.NewServer(attach.Options{Info: attach.Info{Name: "demo", Title: "demo"}, Gate: g})
	dir, err := os.MkdirTemp("", "mcpi-tui")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o700)
	ln, err := attach.Listen(dir, "demo")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)

	hostIn, proxyOut := io.Pipe()
	proxyIn, hostOut := io.Pipe()
	host := mcptest.NewHost(hostOut, hostIn)
	ran := make(chan error, 1)
	go func() {
		_, err := proxy.RunStdio(context.Background(), proxy.StdioOptions{Command: []string{os.Args[0]}, Env: []string{mcptest.PeerEnv + "=demo-legacy"},
			Stdin: proxyIn, Stdout: proxyOut, Stderr: io.Discard, Tap: tap, Gate: g})
		proxyOut.Close()
		ran <- err
	}()
	t.Cleanup(func() {
		hostOut.Close()
		<-ran
		ln.Close()
		srv.Close("the test ended")
	})
	host.Initialize(t)

	c, err := attach.Dial(dir, "demo")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var script string
	m := NewProxy(context.Background(), ProxyOptions{
		Title: "demo · attached to demo", Gate: c, Changes: c.Changes(), NoColor: true, Width: 100, Height: 24,
		EditCmd: func(path string) *exec.Cmd { return exec.Command("sh", "-c", script, "sh", path) },
		Run:     c.Run,
	})
	t.Cleanup(m.Close)
	tm := teatest.NewTestModel(t, screen{m}, teatest.WithInitialTermSize(100, 24),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.ASCII)))
	waitScreen := func(what string) {
		t.Helper()
		teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return strings.Contains(ansi.Strip(string(b)), what) },
			teatest.WithDuration(10*time.Second))
	}
	// The handshake, from before the TUI attached.
	waitScreen("initialize")

	host.Request(t, "tools/call", map[string]any{"name": "add", "arguments": map[string]any{"a": 1, "b": 2}})
	waitScreen("add #2")
	script = `sed -i 's/"a": 1,/"a": 40,/' "$1"`
	tm.Send(keyMsg("alt+e"))
	if line, _ := host.Recv(t); !bytes.Contains(line, []byte("42")) {
		t.Errorf("the edited call got %s", line)
	}

	host.Request(t, "tools/call", map[string]any{"name": "delete_file", "arguments": map[string]any{"path": "/"}})
	waitScreen("delete_file #3")
	tm.Send(keyMsg("ctrl+o"))
	waitScreen("in the peer's place: a result")
	tm.Send(keyMsg("ctrl+s"))
	if line, _ := host.Recv(t); !bytes.Contains(line, []byte(`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":""}]}}`)) {
		t.Errorf("the answer in the server's place: %s", line)
	}
	waitScreen("answered tools/call delete_file #3 in the peer's place")
	tm.Send(keyMsg("q"))
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))

	// The proxy goes on without its TUI.
	if line := host.Call(t, "ping", map[string]any{}); !bytes.Contains(line, []byte(`"result":{}`)) {
		t.Errorf("ping after the TUI quit: %s", line)
	}
}

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

	host.Send(t, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}`)
	late.waitText(t, "held notifications/cancelled")
	waitScreen("→ notifications/cancelled")
	tm.Send(keyMsg("ctrl+x"))

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
	waitScreen("answered in the peer's place")
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

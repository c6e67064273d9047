package cli

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	proxysock "github.com/mcpi-dev/mcpi/internal/attach"
	"github.com/mcpi-dev/mcpi/internal/command"
	"github.com/mcpi-dev/mcpi/internal/iostreams"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// privateRuntime gives the test a runtime directory of its own, short
// enough for a socket's path.
func privateRuntime(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "mcpi-rt")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	t.Setenv("XDG_RUNTIME_DIR", dir)
	return dir
}

func TestProxyAttachFlags(t *testing.T) {
	privateRuntime(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"proxy", "--", "x"}, "--record TRACE is required (or --ui)"},
		{[]string{"proxy", "--ui=bad", "--", "x"}, "--ui=bad: one of auto"},
		{[]string{"proxy", "--record", "t.jsonl", "--name", "fs", "--", "x"}, "--name names the proxy mcpi proxy attach reaches: it goes with --ui"},
		{[]string{"proxy", "--ui=tty", "--name", "fs", "--", "x"}, "--name goes with --ui or --ui=attach"},
		{[]string{"proxy", "--ui", "--name", "../fs", "--", "x"}, `--name: invalid session name "../fs"`},
		{[]string{"proxy", "--ui", "attach", "--", "x"}, `write --ui=attach, with "="`},
		{[]string{"proxy", "--record", "t.jsonl", "--ui", "tty", "--listen", "127.0.0.1:0", "--url", "http://127.0.0.1:1/"}, `write --ui=tty, with "="`},
		{[]string{"proxy", "attach", "--", "x"}, "mcpi proxy attach runs no command"},
		{[]string{"proxy", "attach", "a", "b"}, "accepts at most 1 arg"},
		{[]string{"proxy", "attach", "fs"}, "the TUI needs a terminal"},
	} {
		code, _, errOut := runCLI(t, "", c.args...)
		if code != command.ExitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d %q, want %q", c.args, code, errOut, c.want)
		}
	}
	if code, _, errOut := runCLI(t, "", "proxy", "list"); code != 0 || !strings.Contains(errOut, "No proxy to attach to") {
		t.Errorf("proxy list: exit %d %q", code, errOut)
	}
	if code, out, _ := runCLI(t, "", "proxy", "list", "--json"); code != 0 || strings.TrimSpace(out) != "[]" {
		t.Errorf("proxy list --json: exit %d %q", code, out)
	}
}

// watched is a buffer whose writes are told on a channel.
type watched struct {
	mu    sync.Mutex
	b     strings.Builder
	moved chan struct{}
}

func (w *watched) Write(p []byte) (int, error) {
	w.mu.Lock()
	w.b.Write(p)
	w.mu.Unlock()
	select {
	case w.moved <- struct{}{}:
	default:
	}
	return len(p), nil
}

func (w *watched) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

func (w *watched) waitFor(t *testing.T, s string) {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for !strings.Contains(w.String(), s) {
		select {
		case <-w.moved:
		case <-deadline:
			t.Fatalf("no %q in %q", s, w.String())
		}
	}
}

// A named proxy with no terminal serves its socket and says on stderr
// how to attach; a client attached over it answers the host's held call
// in the server's place; the socket is gone at the end.
func TestProxyAttachServes(t *testing.T) {
	dir := privateRuntime(t)
	hostIn, host := io.Pipe()
	out, errOut := &watched{moved: make(chan struct{}, 1)}, &watched{moved: make(chan struct{}, 1)}
	f := &command.Factory{IO: iostreams.New(hostIn, out, errOut), Executable: func() (string, error) { return os.Args[0], nil }}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const secret = "supersecretvalue123"
	args := append([]string{"proxy", "--ui", "--name", "fs", "--break", "method:tools/call dir:out", "-e", "API_TOKEN=" + secret}, peerArgs("demo")...)
	done := make(chan command.ExitCode, 1)
	go func() { done <- run(ctx, f, args) }()
	errOut.waitFor(t, "mcpi proxy: attach it from a terminal with: mcpi proxy attach fs (socket "+dir+"/mcpi/proxy/fs.sock)")
	errOut.waitFor(t, "a frame a breakpoint holds goes on after --hold-timeout (1m0s)")
	// A TAB after mcpi proxy attach offers the running proxy.
	if code, comp, _ := runCLI(t, "", "__complete", "proxy", "attach", ""); code != 0 || !strings.Contains(comp, "fs\t") {
		t.Errorf("completion of proxy attach: exit %d\n%s", code, comp)
	}

	c, err := proxysock.Dial(filepath.Join(dir, "mcpi"), "fs")
	if err != nil {
		t.Fatal(err)
	}
	var seen watched
	seen.moved = make(chan struct{}, 1)
	fed := make(chan error, 1)
	go func() {
		fed <- c.Run(ctx, transport.TapFunc(func(e transport.Event) { seen.Write(append(append([]byte(e.Text), e.Data...), '\n')) }))
	}()
	io.WriteString(host, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2,"token":"`+secret+`"}}}
`)
	deadline := time.After(20 * time.Second)
	for len(c.Held()) == 0 {
		select {
		case <-c.Changes():
		case <-deadline:
			t.Fatal("the call was not held")
		}
	}
	// What the TUI sees is redacted as the trace is.
	if h := c.Held()[0]; bytes.Contains(h.Data, []byte(secret)) || !bytes.Contains(h.Data, []byte("[REDACTED]")) {
		t.Errorf("the held call reached the TUI as %s", h.Data)
	}
	seen.waitFor(t, `"token":"[REDACTED]"`)
	if strings.Contains(seen.String(), secret) {
		t.Errorf("an event reached the TUI with the secret: %s", seen.String())
	}
	if err := c.Answer(c.Held()[0].ID, []byte(`{"content":[{"type":"text","text":"in place"}]}`), 0, ""); err != nil {
		t.Fatal(err)
	}
	out.waitFor(t, `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"in place"}]}}`)
	host.Close()
	if code := <-done; code != 0 {
		t.Errorf("exit %d: %s", code, errOut.String())
	}
	if err := <-fed; err != nil {
		t.Errorf("the attached feed ended with %v, want the proxy's goodbye", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "mcpi", "proxy", "fs.sock")); !os.IsNotExist(err) {
		t.Errorf("the socket is left: %v", err)
	}
}

// The HTTP proxy serves its socket when asked (--ui=attach): its banner
// and the attach line on stderr, its status on the socket; it ends with
// its context, and its socket with it.
func TestProxyAttachHTTP(t *testing.T) {
	dir := privateRuntime(t)
	errOut := &watched{moved: make(chan struct{}, 1)}
	f := &command.Factory{IO: iostreams.New(strings.NewReader(""), io.Discard, errOut)}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan command.ExitCode, 1)
	go func() {
		done <- run(ctx, f, []string{"proxy", "--ui=attach", "--listen", "127.0.0.1:0", "--url", "http://127.0.0.1:1/mcp"})
	}()
	errOut.waitFor(t, "-> http://127.0.0.1:1/mcp, recording nothing (no --record)")
	errOut.waitFor(t, "mcpi proxy: attach it from a terminal with: mcpi proxy attach 127.0.0.1-1 (socket ")
	info, err := proxysock.Status(filepath.Join(dir, "mcpi"), "127.0.0.1-1")
	if err != nil || !strings.HasPrefix(info.Title, "http://127.0.0.1:") || info.Clients != 0 {
		t.Errorf("the proxy's status: %+v, %v", info, err)
	}
	cancel()
	<-done
	if _, err := os.Stat(filepath.Join(dir, "mcpi", "proxy", "127.0.0.1-1.sock")); !os.IsNotExist(err) {
		t.Errorf("the socket is left: %v", err)
	}
}

package tui

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpi-dev/mcpi/internal/session"
)

// toolsFilePeer is the prefix of a peer whose tools/list answers the JSON
// array of the file named after it: a server a test changes by editing a
// file, as a person edits a server's code.
const toolsFilePeer = "toolsfile:"

// runToolsFile serves tools from the file at path over stdio, with the
// least of MCP: initialize, tools/list, ping, and tools/call, which says
// (notifications/tools/list_changed) that the tools changed when the
// file holds other tools than it listed last.
func runToolsFile(path string) {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(nil, 1<<20)
	out := json.NewEncoder(os.Stdout)
	var listed []byte
	for in.Scan() {
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				ProtocolVersion string `json:"protocolVersion"`
			} `json:"params"`
		}
		if json.Unmarshal(in.Bytes(), &msg) != nil || msg.ID == nil || msg.Method == "" {
			continue
		}
		resp := map[string]any{"jsonrpc": "2.0", "id": msg.ID}
		switch msg.Method {
		case "initialize":
			resp["result"] = map[string]any{
				"protocolVersion": msg.Params.ProtocolVersion,
				"capabilities":    map[string]any{"tools": map[string]any{"listChanged": true}},
				"serverInfo":      map[string]any{"name": "toolsfile", "version": "1"},
			}
		case "tools/call":
			if b, err := os.ReadFile(path); err == nil && !bytes.Equal(b, listed) {
				_ = out.Encode(map[string]any{"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
			}
			resp["result"] = map[string]any{"content": []any{map[string]any{"type": "text", "text": "called"}}}
		case "tools/list":
			b, err := os.ReadFile(path)
			listed = b
			var tools json.RawMessage
			if err == nil && json.Unmarshal(b, &tools) == nil {
				resp["result"] = map[string]any{"tools": tools}
			} else {
				resp["error"] = map[string]any{"code": -32603, "message": "the tools file cannot be read"}
			}
		case "ping":
			resp["result"] = map[string]any{}
		default:
			resp["error"] = map[string]any{"code": -32601, "message": "method not found"}
		}
		_ = out.Encode(resp)
	}
}

const toolsV1 = `[
 {"name": "echo", "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}},
 {"name": "fetch", "inputSchema": {"type": "object", "properties": {"url": {"type": "string"}}}}
]`

// toolsV2 drops fetch and makes echo require a new property.
const toolsV2 = `[
 {"name": "echo", "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}, "loud": {"type": "boolean"}}, "required": ["loud"]}}
]`

// TestWatchReload: a Reload restarts the server, the Diff view lists what
// moved with its classes and pointers, the notice sums it up, and the form
// being typed in is kept; a failed build leaves the server running and
// puts its output in the Stderr pane.
func TestWatchReload(t *testing.T) {
	file := filepath.Join(t.TempDir(), "tools.json")
	if err := os.WriteFile(file, []byte(toolsV1), 0o644); err != nil {
		t.Fatal(err)
	}
	reloads := make(chan Reload, 1)
	dials := 0
	h := start(t, 110, 30, func(o *Options) {
		o.Reloads = reloads
		o.Dial = func(ctx context.Context, hk Hooks) (*session.Client, error) {
			dials++
			return dialPeer(ctx, hk, toolsFilePeer+file)
		}
	})
	h.waitText("echo", "fetch", "(2/2)")
	h.waitModel("the start's surface listed", func(m *Model) bool { return m.surface != nil })
	h.press("enter")
	h.waitText("text")
	h.typeText("hello")
	h.waitText("hello")

	// A build that fails: the old server keeps running.
	reloads <- Reload{Changed: []string{file}, Count: 1, Err: errors.New("exit status 1"),
		Output: "\nserver.go:3:2: undefined: x\nmore detail\n"}
	h.waitText("build failed: server.go:3:2: undefined: x; the server keeps running")

	if err := os.WriteFile(file, []byte(toolsV2), 0o644); err != nil {
		t.Fatal(err)
	}
	reloads <- Reload{Changed: []string{file}, Count: 3}
	s := h.waitText("Diff · restarted: tools.json changed", "2 changes, 2 breaking")
	for _, want := range []string{"› ✗ breaking   tool fetch: tool fetch was removed", "tool echo: required property loud was added"} {
		if !strings.Contains(s, want) {
			t.Errorf("the Diff view lacks %q:\n%s", want, s)
		}
	}
	// enter opens the change under the cursor whole; esc goes back to the
	// list.
	h.press("down", "enter")
	h.waitText("change 2 of 2", "pointer   /tools/echo/inputSchema/properties/loud", "rule      input-required-property-added")
	h.press("esc")
	h.waitText("› ✗ breaking   tool echo")
	// What is typed at the Diff view stays there: nothing reaches the
	// form it covers, and ctrl+s sends no call.
	h.typeText("Zed")
	h.press("ctrl+s", "ctrl+s", "?")
	h.waitText("?/esc", "close help")
	h.press("esc")
	// The view closes; the form and what was typed are still there, and
	// the form follows the new schema: its new field is there.
	h.press("esc")
	s = h.waitText("hello", "loud")
	if strings.Contains(s, "Zed") || strings.Contains(s, "call #1") {
		t.Errorf("keys typed at the Diff view reached the form:\n%s", s)
	}
	h.press("alt+d")
	h.waitText("Diff · restarted")
	// The Diff view takes every key: a tab's key does not leave it.
	h.press("alt+0")
	h.waitText("the Diff view is in front: esc closes it")
	h.press("esc")
	h.press("alt+0")
	h.waitText("build: server.go:3:2: undefined: x", "build: more detail")

	// A restart that changes nothing says so.
	reloads <- Reload{Changed: []string{file}, Count: 1}
	h.waitText("restarted: tools.json changed: no change")
	m := h.final()
	if m.diff == nil || len(m.diff.changes) != 0 {
		t.Errorf("the last diff is not the empty one")
	}
}

// waitModel waits until cond holds of the model, checked while the event
// loop is held.
func (h *harness) waitModel(what string, cond func(*Model) bool) {
	h.t.Helper()
	deadline := time.After(30 * time.Second)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		block := blockMsg{blocked: make(chan struct{}), release: make(chan struct{})}
		go h.tm.Send(block)
		<-block.blocked
		ok := cond(h.m)
		close(block.release)
		if ok {
			return
		}
		select {
		case <-tick.C:
		case <-deadline:
			h.t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// TestListChangedShowsTheDiff: with --watch, a server that says its tools
// changed (no restart) gets its surface listed again, and the Diff view
// shows what moved.
func TestListChangedShowsTheDiff(t *testing.T) {
	file := filepath.Join(t.TempDir(), "tools.json")
	if err := os.WriteFile(file, []byte(toolsV1), 0o644); err != nil {
		t.Fatal(err)
	}
	h := start(t, 110, 30, func(o *Options) {
		o.Reloads = make(chan Reload)
		o.Dial = func(ctx context.Context, hk Hooks) (*session.Client, error) {
			return dialPeer(ctx, hk, toolsFilePeer+file)
		}
	})
	h.waitText("echo", "fetch", "(2/2)")
	h.waitModel("the start's surface listed", func(m *Model) bool { return m.surface != nil })
	if err := os.WriteFile(file, []byte(toolsV2), 0o644); err != nil {
		t.Fatal(err)
	}
	// A call makes the server look at its file, and say it changed.
	h.press("enter", "ctrl+s")
	s := h.waitText("the server's lists changed · 2 changes, 2 breaking")
	if !strings.Contains(s, "tool fetch: tool fetch was removed") {
		t.Errorf("the Diff view lacks the removed tool:\n%s", s)
	}
}

// TestRerunMeetsTheNewSchema: r on a result after a restart that changed
// the tool's schema sends nothing; the form opens on the old arguments with
// the problem said, as e then ctrl+s would.
func TestRerunMeetsTheNewSchema(t *testing.T) {
	file := filepath.Join(t.TempDir(), "tools.json")
	if err := os.WriteFile(file, []byte(toolsV1), 0o644); err != nil {
		t.Fatal(err)
	}
	reloads := make(chan Reload, 1)
	h := start(t, 110, 30, func(o *Options) {
		o.Reloads = reloads
		o.Dial = func(ctx context.Context, hk Hooks) (*session.Client, error) {
			return dialPeer(ctx, hk, toolsFilePeer+file)
		}
	})
	h.waitText("echo", "fetch", "(2/2)")
	h.waitModel("the start's surface listed", func(m *Model) bool { return m.surface != nil })
	h.press("enter")
	h.waitText("text")
	h.typeText("hi")
	h.press("ctrl+s")
	h.waitText("call #1", "called")
	if err := os.WriteFile(file, []byte(toolsV2), 0o644); err != nil {
		t.Fatal(err)
	}
	reloads <- Reload{Changed: []string{file}, Count: 1}
	h.waitText("Diff · restarted")
	h.press("esc")
	// The Tools pane has the new list (fetch gone), then its last result.
	h.press("alt+1")
	h.waitText("(1/1)")
	h.press("alt+l")
	h.waitText("call #1")
	h.press("r")
	s := h.waitText("press ctrl+s again to send anyway", "loud")
	if strings.Contains(s, "call #2") {
		t.Errorf("r sent the old arguments to the changed tool:\n%s", s)
	}
	// Sent anyway, as a debugger must be able to.
	h.press("ctrl+s")
	h.waitText("call #2")
}

// TestWhyLine: a failed build is summed up by the line that says why.
func TestWhyLine(t *testing.T) {
	for _, tc := range []struct{ out, want string }{
		{"Traceback (most recent call last):\n  File \"server.py\", line 3, in <module>\n    x()\nNameError: name 'x' is not defined\n", "NameError: name 'x' is not defined"},
		{"# example.com/server\n./server.go:3:2: undefined: x\n", "./server.go:3:2: undefined: x"},
		{"   Compiling server v0.1.0\nerror[E0425]: cannot find value `x` in this scope\n --> src/main.rs:2:5\n", "error[E0425]: cannot find value `x` in this scope"},
		{"/srv/index.js:3\n  x();\n  ^\n\nReferenceError: x is not defined\n    at Object.<anonymous> (/srv/index.js:3:3)\n", "ReferenceError: x is not defined"},
		{"\nserver.go:3:2: undefined: x\nmore detail\n", "server.go:3:2: undefined: x"},
		{"", ""},
	} {
		if got := whyLine(tc.out); got != tc.want {
			t.Errorf("whyLine(%q) = %q, want %q", tc.out, got, tc.want)
		}
	}
}

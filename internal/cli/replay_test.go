package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpi-dev/mcpi/internal/command"
	"github.com/mcpi-dev/mcpi/internal/mcptest"
	"github.com/mcpi-dev/mcpi/internal/record"
	"github.com/mcpi-dev/mcpi/internal/replay"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// roundTrip records each command against a live server, then runs it again
// against the trace served by `mcpi replay --serve` and wants the same
// output.
func roundTrip(t *testing.T, server []string, commands [][]string) {
	bin := mcpiBinary(t)
	dir := t.TempDir()
	for i, c := range commands {
		t.Run(strings.Join(c, " "), func(t *testing.T) {
			trace := filepath.Join(dir, strings.ReplaceAll(c[0], "/", "_")+"-"+string(rune('a'+i))+".jsonl")
			live := append(append(append([]string{}, c...), "--record", trace), server...)
			code, want, errOut := runCLI(t, "", live...)
			if code != 0 {
				t.Fatalf("live run: exit %d: %s", code, errOut)
			}
			mock := append(append([]string{}, c...), "--", bin, "replay", trace, "--serve")
			code, got, errOut := runCLI(t, "", mock...)
			if code != 0 {
				t.Fatalf("against the mock: exit %d: %s", code, errOut)
			}
			if got != want {
				t.Errorf("output differs\nlive:\n%s\nmock:\n%s", want, got)
			}
			// And the trace verifies against the live server.
			verify := append([]string{"replay", trace, "--verify"}, server...)
			if code, out, errOut := runCLI(t, "", verify...); code != 0 {
				t.Errorf("verify against the same server: exit %d\n%s\n%s", code, out, errOut)
			}
		})
	}
}

func TestReplayRoundTripDemo(t *testing.T) {
	t.Parallel()
	roundTrip(t, peerArgs("demo:both"), [][]string{
		{"tools"},
		{"resources"},
		{"templates"},
		{"prompts", "--json"},
		{"info"},
		{"call", "add", "a=2", "b=40"},
		{"call", "get_content_types"},
		{"call", "structured", "city=Oslo", "--json"},
		{"call", "sample", "prompt=hi", "--sampling-reply", "replayed"},
		{"call", "long_running", "steps=3", "interval_ms=5"},
		{"read", "demo://text/hello"},
		{"prompt", "greet", "name=Ada"},
		{"complete", "--prompt", "greet", "style=p"},
	})
}

func TestReplayRoundTripLegacy(t *testing.T) {
	t.Parallel()
	roundTrip(t, peerArgs("demo"), [][]string{
		{"tools", "--json"},
		{"call", "echo", "text=legacy"},
		{"call", "elicit", "--elicit-field", "name=Lee"},
		{"read", "demo://binary/logo.png"},
	})
}

func TestReplayRoundTripEverything(t *testing.T) {
	t.Parallel()
	ev := mcptest.Everything(t)
	roundTrip(t, append([]string{"--"}, ev...), [][]string{
		{"tools"},
		{"call", "echo", "message=replay me"},
		{"call", "get-sum", "a=1", "b=2", "--json"},
		{"prompt", "simple-prompt"},
	})
}

func TestReplayVerifyFindsChanges(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	trace := filepath.Join(dir, "t.jsonl")
	runCLIExit(t, command.ExitOK, with(peerArgs("hostile:"+mcptest.HostileGarbageFirst), "call", "echo", "--record", trace)...)
	// The same server: equal.
	if code, out, _ := runCLI(t, "", with(peerArgs("hostile:"+mcptest.HostileGarbageFirst), "replay", trace, "--verify")...); code != 0 || !strings.Contains(out, "✓ #") {
		t.Errorf("same server: exit %d\n%s", code, out)
	}
	// A server whose tool answers differently: a diff and exit 1.
	code, out, _ := runCLI(t, "", with(peerArgs("hostile:"+mcptest.HostileEscapes), "replay", trace, "--verify")...)
	if code != command.ExitToolError || !strings.Contains(out, "✗ #") || !strings.Contains(out, "result.content[0].text") {
		t.Errorf("changed server: exit %d\n%s", code, out)
	}
	// With --json the report is stdout's one document: each exchange,
	// equal or with its changes, and the exit the same.
	code, out, _ = runCLI(t, "", with(peerArgs("hostile:"+mcptest.HostileEscapes), "replay", trace, "--verify", "--json")...)
	var report replay.Report
	if code != command.ExitToolError || json.Unmarshal([]byte(out), &report) != nil || report.Equal || len(report.Exchanges) == 0 {
		t.Fatalf("--json: exit %d\n%s", code, out)
	}
	changed := false
	for _, e := range report.Exchanges {
		for _, ch := range e.Changes {
			changed = changed || ch.Path == "result.content[0].text"
		}
	}
	if !changed || strings.Contains(out, "✗") {
		t.Errorf("--json: the changed text is not reported as a change of the report:\n%s", out)
	}
	if code, _, errOut := runCLI(t, "", "replay", trace, "--print", "--json"); code != command.ExitUsage || !strings.Contains(errOut, "--json goes with --verify or --latency") {
		t.Errorf("--print --json: exit %d %s", code, errOut)
	}
	// Ignoring the field that changed makes them equal again, but the tool
	// list (a different tool name) still differs.
	code, out, _ = runCLI(t, "", with(peerArgs("hostile:"+mcptest.HostileEscapes), "replay", trace, "--verify", "--ignore", "result.content[*].text", "--ignore", "result.tools", "--ignore", "result.serverInfo")...)
	if code != 0 {
		t.Errorf("with --ignore: exit %d\n%s", code, out)
	}
}

func TestReplayDamagedTrace(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	trace := filepath.Join(dir, "t.jsonl")
	runCLIExit(t, command.ExitOK, with(peerArgs("demo"), "call", "echo", "text=before the damage", "--record", trace)...)
	data, _ := os.ReadFile(trace)
	// Cut the last line in half, as a crash mid-write would.
	cut := data[:len(data)-40]
	os.WriteFile(trace, cut, 0o600)
	code, out, errOut := runCLI(t, "", "replay", trace)
	if code != 0 || !strings.Contains(errOut, "warning") || !strings.Contains(out, "tools/call echo") {
		t.Errorf("print a damaged trace: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut = runCLI(t, "", "call", "echo", "text=before the damage", "--", mcpiBinary(t), "replay", trace, "--serve")
	if code != 0 || !strings.Contains(out, "before the damage") {
		t.Errorf("serve a damaged trace: exit %d\n%s\n%s", code, out, errOut)
	}
	// Not a trace at all.
	os.WriteFile(trace, []byte("hello\n"), 0o600)
	if code, _, errOut := runCLI(t, "", "replay", trace); code != command.ExitUsage || !strings.Contains(errOut, "not") {
		t.Errorf("not a trace: exit %d %s", code, errOut)
	}
}

func TestReplayServeHTTP(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	trace := filepath.Join(dir, "t.jsonl")
	runCLIExit(t, command.ExitOK, with(peerArgs("demo:both"), "call", "echo", "text=over http", "--record", trace)...)
	url := serveReplayHTTP(t, trace)
	code, out, errOut := runCLI(t, "", "call", "echo", "text=over http", url)
	if code != 0 || !strings.Contains(out, "over http") {
		t.Errorf("call over HTTP: exit %d %s %s", code, out, errOut)
	}
	code, _, errOut = runCLI(t, "", "call", "echo", "text=never recorded", url)
	if code != command.ExitProtocol || !strings.Contains(errOut, "closest recorded") {
		t.Errorf("unknown request: exit %d %s", code, errOut)
	}
}

// frames returns the frames of a trace in one direction, as recorded.
func frames(t *testing.T, path string, dir transport.Direction) []string {
	_, evs := readTrace(t, path)
	var out []string
	for _, e := range evs {
		if e.Type == record.TypeFrame && e.Dir == dir {
			out = append(out, string(e.Msg))
		}
	}
	return out
}

func TestProxyStdioByteIdentical(t *testing.T) {
	t.Parallel()
	bin := mcpiBinary(t)
	dir := t.TempDir()
	clientTrace := filepath.Join(dir, "client.jsonl")
	proxyTrace := filepath.Join(dir, "proxy.jsonl")
	// mcpi as the host on one side, the demo server on the other.
	code, out, errOut := runCLI(t, "", "call", "sample", "prompt=through the proxy", "--sampling-reply", "proxied", "--record", clientTrace, "--no-redact",
		"--", bin, "proxy", "--record", proxyTrace, "--", bin, "demo-server")
	if code != 0 || !strings.Contains(out, "proxied") {
		t.Fatalf("through the proxy: exit %d %s %s", code, out, errOut)
	}
	for _, d := range []transport.Direction{transport.Outgoing, transport.Incoming} {
		c, p := frames(t, clientTrace, d), frames(t, proxyTrace, d)
		if len(c) == 0 || strings.Join(c, "\n") != strings.Join(p, "\n") {
			t.Errorf("%v frames differ between the client's view and the proxy's:\nclient: %q\nproxy: %q", d, c, p)
		}
	}
	h, _ := readTrace(t, proxyTrace)
	if h.Role != record.RoleProxy {
		t.Errorf("header role %q", h.Role)
	}
}

func TestProxyWithSDKClient(t *testing.T) {
	t.Parallel()
	bin := mcpiBinary(t)
	trace := filepath.Join(t.TempDir(), "p.jsonl")
	ev := mcptest.Everything(t)
	// The official Go SDK's client as the host, server-everything as the server.
	client := gosdk.NewClient(&gosdk.Implementation{Name: "sdk-host", Version: "1"}, nil)
	args := append([]string{"proxy", "--record", trace, "--"}, ev...)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &gosdk.CommandTransport{Command: exec.Command(bin, args...)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &gosdk.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "host to server"}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res.Content)
	if !strings.Contains(string(b), "host to server") {
		t.Errorf("result %s", b)
	}
	cs.Close()
	// The trace holds both sides and the server's stderr.
	sent, recv := frames(t, trace, transport.Outgoing), frames(t, trace, transport.Incoming)
	if len(sent) < 2 || len(recv) < 2 || !strings.Contains(strings.Join(sent, ""), "host to server") {
		t.Errorf("trace: %d sent, %d received", len(sent), len(recv))
	}
}

func TestReplayOutputIsSafe(t *testing.T) {
	t.Parallel()
	trace := filepath.Join(t.TempDir(), "evil.jsonl")
	evil := "evil\x1b]52;c;cHduZWQ=\x07\x1b[2J\u202e"
	runCLI(t, "", with(peerArgs("hostile:"+mcptest.HostileEscapes), "call", evil, "--no-validate", "--record", trace)...)
	_, out, _ := runCLI(t, "", "replay", trace)
	if strings.ContainsAny(out, "\x1b\x07\u202e") || !strings.Contains(out, `\e]52`) {
		t.Errorf("timeline writes raw escapes:\n%q", out)
	}
	// Verified against a server that answers differently, the diff quotes
	// the server's text: made visible, never raw.
	_, out, _ = runCLI(t, "", with(peerArgs("hostile:"+mcptest.HostileGarbageFirst), "replay", trace, "--verify")...)
	if strings.ContainsAny(out, "\x1b\x07\u202e") || !strings.Contains(out, "✗") {
		t.Errorf("verify writes raw escapes:\n%q", out)
	}
}

func TestReplayFollow(t *testing.T) {
	t.Parallel()
	bin := mcpiBinary(t)
	trace := filepath.Join(t.TempDir(), "live.jsonl")
	// A recording that is still going on: slow keeps the trace open.
	rec := exec.Command(bin, "call", "long_running", "steps=4", "interval_ms=300", "--record", trace, "--", bin, "demo-server")
	if err := rec.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rec.Process.Kill(); rec.Wait() })
	poll(2*time.Second, func() bool { fi, err := os.Stat(trace); return err == nil && fi.Size() > 0 })
	follow := exec.Command(bin, "replay", trace, "--follow")
	stdout, _ := follow.StdoutPipe()
	lines := startLines(t, follow, stdout)
	deadline := time.After(30 * time.Second)
	for {
		select {
		case l := <-lines:
			// The call's result is written after the follower started.
			if strings.Contains(l, "result of tools/call") {
				return
			}
		case <-deadline:
			t.Fatal("--follow never showed the result written after it started")
		}
	}
}

func TestReplayOlderTrace(t *testing.T) {
	t.Parallel()
	trace := filepath.Join(mcptest.RepoRoot(), "testdata", "traces", "older.jsonl")
	code, out, errOut := runCLI(t, "", "replay", trace)
	if code != 0 || !strings.Contains(out, "#3 tools/call hello") || !strings.Contains(out, "stderr: old-server") {
		t.Errorf("print: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut = runCLI(t, "", "call", "hello", "--", mcpiBinary(t), "replay", trace, "--serve")
	if code != 0 || !strings.Contains(out, "hello from an old trace") {
		t.Errorf("serve: exit %d\n%s\n%s", code, out, errOut)
	}
}

// replay --serve --faults: the trace served behind the proxy's faults,
// over stdio (the host's call answered in the server's place, the change
// recorded and summed up) and over HTTP (the answer cut mid-event).
func TestReplayServeFaults(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	trace, faults, out := filepath.Join(dir, "t.jsonl"), filepath.Join(dir, "f.yaml"), filepath.Join(dir, "hostile.jsonl")
	runCLIExit(t, command.ExitOK, with(peerArgs("demo:both"), "call", "echo", "text=served", "--record", trace, "--era", "legacy")...)
	os.WriteFile(faults, []byte("faults:\n  - name: busy\n    match: dir:out method:tools/call\n    error: {code: -32001, message: busy}\n"), 0o600)
	code, _, errOut := runCLI(t, "", "call", "echo", "text=served", "--", mcpiBinary(t), "replay", trace, "--serve", "--faults", faults, "--seed", "4", "--record", out)
	if code == 0 || !strings.Contains(errOut, "busy") {
		t.Errorf("the call behind the faults: exit %d %s", code, errOut)
	}
	_, evs := readTrace(t, out)
	var actions []string
	for _, e := range evs {
		if e.Type == record.TypeIntercept {
			actions = append(actions, string(e.Msg))
		}
	}
	if len(actions) != 1 || !strings.Contains(actions[0], `"action":"error"`) {
		t.Errorf("intercept events %q", actions)
	}
	// Run by hand, with the host's frames on stdin: the summary on stderr.
	stdin := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"served"}}}` + "\n"
	code, stdout, errOut := runCLI(t, stdin, "replay", trace, "--serve", "--faults", faults, "--seed", "4")
	if code != 0 || strings.TrimSpace(stdout) != `{"jsonrpc":"2.0","id":2,"error":{"code":-32001,"message":"busy"}}` {
		t.Errorf("served behind the faults: exit %d %q %s", code, stdout, errOut)
	}
	if !strings.Contains(errOut, "fired 1 of 1 matching frames") || !strings.Contains(errOut, "seed 4") {
		t.Errorf("no summary of the faults on stderr: %s", errOut)
	}
	for _, c := range []struct{ args []string }{{[]string{"replay", trace, "--faults", faults}}, {[]string{"replay", trace, "--serve", "--seed", "1"}}} {
		if code, _, errOut := runCLI(t, "", c.args...); code != command.ExitUsage {
			t.Errorf("%v: exit %d %s", c.args, code, errOut)
		}
	}

	os.WriteFile(faults, []byte("faults:\n  - match: dir:in method:tools/call\n    cut: true\n"), 0o600)
	url := serveReplayHTTP(t, trace, "--faults", faults)
	code, _, errOut = runCLI(t, "", "call", "echo", "text=served", url, "--era", "legacy")
	if code == 0 {
		t.Errorf("a call whose answer is cut: exit 0 %s", errOut)
	}
}

// serveReplayHTTP runs mcpi replay TRACE --serve --http on a port of its
// own (with more flags), and returns the URL its first line gives.
func serveReplayHTTP(t *testing.T, trace string, more ...string) string {
	t.Helper()
	cmd := exec.Command(mcpiBinary(t), append([]string{"replay", trace, "--serve", "--http", "127.0.0.1:0"}, more...)...)
	stderr, _ := cmd.StderrPipe()
	lines := startLines(t, cmd, stderr)
	deadline := time.After(20 * time.Second)
	for {
		select {
		case l := <-lines:
			if i := strings.Index(l, "http://"); i >= 0 && strings.HasPrefix(l, "replaying") {
				return strings.Fields(l[i:])[0]
			}
		case <-deadline:
			t.Fatal("the replay server did not start")
		}
	}
}

// startLines starts cmd, killed when the test ends, and hands out the
// lines of out (one of its pipes) as they come.
func startLines(t *testing.T, cmd *exec.Cmd, out io.Reader) chan string {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	return lines
}

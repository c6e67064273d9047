package cli

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpi-dev/mcpi/internal/command"
	"github.com/mcpi-dev/mcpi/internal/mcptest"
	"github.com/mcpi-dev/mcpi/internal/record"
)

func TestProxyFaultsFlags(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("faults:\n  - drop: true\n    propability: 1\n"), 0o600)
	trace := filepath.Join(dir, "t.jsonl")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"proxy", "--record", trace, "--seed", "3", "--", "x"}, "--seed goes with --faults"},
		{[]string{"proxy", "--record", trace, "--faults", bad, "--", "x"}, `--faults: ` + bad + `: line 3: unknown key "propability"`},
		{[]string{"proxy", "--record", trace, "--faults", filepath.Join(dir, "none.yaml"), "--", "x"}, "--faults: open"},
		{[]string{"proxy", "--record", trace, "--break", "method:ping", "--", "x"}, "--break holds frames for you to decide on: it needs --ui"},
		{[]string{"proxy", "--record", trace, "--ui", "--break", "dur:>x", "--", "x"}, `--break "dur:>x": `},
		{[]string{"proxy", "--record", trace, "--hold-timeout", "5s", "--", "x"}, "--hold-timeout goes with --break"},
		{[]string{"proxy", "--record", trace, "--ui", "--break", "method:ping", "--hold-timeout", "0s", "--", "x"}, "--hold-timeout must be more than 0"},
		{[]string{"proxy", "--record", trace, "--ui", "--listen", "127.0.0.1:0", "--url", "http://127.0.0.1:1/"}, "--ui: the TUI needs a terminal"},
		{[]string{"proxy", "--record", trace, "--ui=tty", "--listen", "127.0.0.1:0", "--url", "http://127.0.0.1:1/"}, "--ui=tty: the TUI needs a terminal"},
		{[]string{"proxy", "--record", filepath.Join(dir, "none", "t.jsonl"), "--", "x"}, "--record: creating trace: "},
	} {
		code, _, errOut := runCLI(t, "", c.args...)
		if code != command.ExitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d %q, want %q", c.args, code, errOut, c.want)
		}
	}
}

// The proxy ends as its server does: with its exit status, said by the
// server alone; a server that cannot start is a connection failure.
func TestProxyExitStatus(t *testing.T) {
	trace := filepath.Join(t.TempDir(), "t.jsonl")
	code, _, errOut := runCLI(t, "", "proxy", "--record", trace, "-e", mcptest.PeerEnv+"=none", "--", os.Args[0], "-test.run=^$")
	if code != 2 || !strings.Contains(errOut, "unknown "+mcptest.PeerEnv) || strings.Contains(errOut, "mcpi:") {
		t.Errorf("a server that exits 2: exit %d %q", code, errOut)
	}
	code, _, errOut = runCLI(t, "", "proxy", "--record", trace, "--", filepath.Join(t.TempDir(), "none"))
	if code != command.ExitConnect || !strings.HasPrefix(errOut, "mcpi: could not connect: starting ") {
		t.Errorf("a server that cannot start: exit %d %q", code, errOut)
	}
}

// A faults run without a UI, as CI runs it: the host's ping is answered
// in the server's place, the change is in the trace, and the summary says
// which rule fired.
func TestProxyFaultsRun(t *testing.T) {
	dir := t.TempDir()
	faults, trace := filepath.Join(dir, "faults.yaml"), filepath.Join(dir, "t.jsonl")
	os.WriteFile(faults, []byte("faults:\n  - name: busy\n    match: method:ping dir:out\n    error: {code: -32001, message: busy}\n    count: 1\n"), 0o600)
	stdin := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"ping"}
`
	code, out, errOut := runCLI(t, stdin, append([]string{"proxy", "--record", trace, "--faults", faults, "--seed", "9"}, peerArgs("demo")...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, `{"jsonrpc":"2.0","id":2,"error":{"code":-32001,"message":"busy"}}`) {
		t.Errorf("stdout %s", out)
	}
	wantIn(t, "stderr", errOut, "seed 9 (--seed 9 repeats the run)", "busy", "fired 1 of 1 matching frames")
	r, err := record.Open(trace)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var found bool
	for {
		ev, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == record.TypeIntercept && strings.Contains(string(ev.Msg), `"action":"error","rule":"busy"`) {
			found = true
		}
	}
	if !found {
		t.Error("no intercept event in the trace")
	}
	// replay shows the change, and finds it by its kind.
	code, out, errOut = runCLI(t, "", "replay", trace, "--filter", "kind:intercept")
	if code != 0 || !strings.Contains(out, "→ intercept error busy: answered ping id 2 with error -32001 in the peer's place") || strings.Contains(out, "ping  ") {
		t.Errorf("replay: exit %d %q %s", code, out, errOut)
	}
}

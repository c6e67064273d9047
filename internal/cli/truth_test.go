package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpi-dev/mcpi/internal/command"
	"github.com/mcpi-dev/mcpi/internal/demoserver"
	"github.com/mcpi-dev/mcpi/internal/mcptest"
	"github.com/mcpi-dev/mcpi/internal/proxy"
	"github.com/mcpi-dev/mcpi/internal/record"
)

// TestAnswersAreTakenNotWaitedFor: a malformed answer that arrived is
// taken or fails the command at once, over stdio and HTTP; never a
// timeout.
func TestAnswersAreTakenNotWaitedFor(t *testing.T) {
	t.Parallel()
	g := func(mode string) []string {
		return with(peerArgs(mcptest.GarbledPrefix+mode), "--era", "legacy", "--timeout", "30s")
	}
	// An HTTP server whose answer to tools/list is cut short.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		switch {
		case req.ID == nil:
			w.WriteHeader(http.StatusAccepted)
		case req.Method == "initialize":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"cut","version":"1"}}}`, req.ID)
		default:
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"jsonrpc":"2.0","result":{"tools":[{"name":"a"`)
		}
	}))
	t.Cleanup(srv.Close)
	for _, tc := range []cliCase{
		{name: "bom", args: with(g("bom"), "call", "echo"), stdout: []string{"ok"}, stderr: []string{"byte order mark"}},
		{name: "bad utf-8", args: with(g("bad-utf8"), "call", "echo"), stdout: []string{"caf\ufffd au lait"}, stderr: []string{`\xe9`}},
		{name: "result and error", args: with(g("result-and-error"), "call", "echo"), code: command.ExitProtocol, stderr: []string{"both result and error", "server error: both"}},
		{name: "not json", args: with(g("not-json"), "call", "echo"), code: command.ExitProtocol, stderr: []string{"could not be read", "unterminated"}},
		{name: "not json --json", args: with(g("not-json"), "call", "echo", "--json"), code: command.ExitProtocol, jsonStdout: true, stdout: []string{`"exitCode":4`}},
		{name: "empty result to server/discover is no modern server", args: with(peerArgs(mcptest.GarbledPrefix+"empty-for-unknown"), "tools", "--era", "auto"), stdout: []string{"echo"}, stderr: []string{"not a DiscoverResult (no supportedVersions and capabilities)"}},
		{name: "http answer cut short", args: []string{"tools", "--transport", "http", "--era", "legacy", "--timeout", "30s", srv.URL}, code: command.ExitProtocol, stderr: []string{"could not be read"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// A command that waited for an answer that had come would
			// end on this clock: exit 5, which no case wants.
			if !slices.Contains(tc.args, "--timeout") {
				tc.args = append(slices.Clone(tc.args), "--timeout", "15s")
			}
			checkCase(t, tc)
		})
	}
}

// TestJSONIsOneDocument: with --json, stdout holds exactly one JSON
// document whatever the outcome, and an error object says what happened.
func TestJSONIsOneDocument(t *testing.T) {
	t.Parallel()
	demo := peerArgs("demo")
	for _, tc := range []struct {
		name string
		args []string
		code command.ExitCode
		want string // a member of the document
	}{
		{"tool error", with(demo, "call", "fail", "--json"), command.ExitToolError, `"isError":true`},
		{"protocol error", with(demo, "read", "demo://nope", "--json"), command.ExitProtocol, `"exitCode":4`},
		{"timeout", with(demo, "call", "slow", "ms=30000", "--timeout", "2s", "--json"), command.ExitTimeout, `"message":"tools/call: no answer within 2s"`}, // a clock the handshake keeps on a loaded machine
		{"usage", with(demo, "call", "add", "a=x", "--json"), command.ExitUsage, `"exitCode":2`},
		{"check errors", with(peerArgs(mcptest.BrokenPrefix+"tools/input-schema"), "check", "--json"), command.ExitToolError, `"findings"`},
		{"connect", with(peerArgs("hostile:"+mcptest.HostileStderrExit), "tools", "--json"), command.ExitConnect, `"exitCode":3`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			code, out, errOut := runCLI(t, "", tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d; stderr %s", code, tc.code, errOut)
			}
			dec := json.NewDecoder(strings.NewReader(out))
			var docs []json.RawMessage
			for {
				var d json.RawMessage
				if err := dec.Decode(&d); err == io.EOF {
					break
				} else if err != nil {
					t.Fatalf("stdout is not JSON: %v\n%s", err, out)
				}
				docs = append(docs, d)
			}
			if len(docs) != 1 {
				t.Fatalf("%d JSON documents on stdout:\n%s", len(docs), out)
			}
			if !strings.Contains(string(docs[0]), tc.want) {
				t.Errorf("the document lacks %s:\n%s", tc.want, docs[0])
			}
			if strings.Contains(string(docs[0]), `"message":"exit `) {
				t.Errorf("the error object does not say what happened: %s", docs[0])
			}
		})
	}
}

// TestRootsBeforeTheFirstRequest: the --root values are the server's
// before the call, though the server asks for them when the session starts
// and takes them in a little later (server-filesystem checks each one
// asynchronously: with it, 5 runs in 5 saw the old directory before).
func TestRootsBeforeTheFirstRequest(t *testing.T) {
	t.Parallel()
	root := filepath.ToSlash(t.TempDir())
	code, out, errOut := runCLI(t, "", with(peerArgs(mcptest.GarbledPrefix+"roots"), "call", "echo", "--era", "legacy", "--root", root)...)
	if code != command.ExitOK || !strings.Contains(out, "file://"+root) {
		t.Fatalf("exit %d: the server did not have the --root directory when the call came:\n%s%s", code, out, errOut)
	}
}

// TestNoLingering: --timeout bounds the start (probe and handshake
// together), and once the answer is printed a server that does not exit
// gets a short grace, not seconds.
func TestNoLingering(t *testing.T) {
	t.Parallel()
	// Each run is under runCLI's clock: one that lingered for its server
	// would be interrupted by it (exit 130), not end as wanted.
	code, _, errOut := runCLI(t, "", "tools", "--timeout", "500ms", "--", "sleep", "100")
	if code != command.ExitTimeout || !strings.Contains(errOut, "within 500ms") {
		t.Errorf("exit %d (want 5, the timeout's): %s", code, errOut)
	}
	code, out, errOut := runCLI(t, "", with(peerArgs(mcptest.GarbledPrefix+"linger"), "call", "echo", "--era", "legacy")...)
	if code != command.ExitOK || out != "ok\n" {
		t.Errorf("exit %d (a server that ignores stdin's end gets %v, then SIGTERM): %q %s", code, command.OneShotGrace, out, errOut)
	}
}

// TestEraRemembered: the era a server answered with is remembered (in a
// cache of its own and no MCPI_ERA), --era auto detects again, and
// MCPI_ERA sets the default. An era taken for legacy because
// server/discover got no answer in time is a guess (a server still
// starting is silent too): it is never remembered.
func TestEraRemembered(t *testing.T) {
	t.Parallel()
	cache := t.TempDir()
	env := []string{}
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "MCPI_ERA=") && !strings.HasPrefix(e, "XDG_CACHE_HOME=") {
			env = append(env, e)
		}
	}
	env = append(env, "XDG_CACHE_HOME="+cache)
	run := func(peer string, extraEnv []string, args ...string) string {
		t.Helper()
		cmd := exec.Command(mcpiBinary(t), append(args, with(peerArgs(peer), "info", "--timeout", "4s")...)...)
		cmd.Env = append(append([]string{}, env...), extraEnv...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	memory := func() string {
		b, _ := os.ReadFile(filepath.Join(cache, "mcpi", "eras.json"))
		return string(b)
	}
	silent := mcptest.GarbledPrefix + "ignore-unknown"
	if out := run(silent, nil); !strings.Contains(out, "detected: server/discover got no answer within 2s") {
		t.Fatalf("the first run did not detect the era:\n%s", out)
	}
	if m := memory(); strings.Contains(m, `"era"`) {
		t.Fatalf("an era guessed from a time-out was remembered: %s", m)
	}
	if out := run(silent, nil); strings.Contains(out, "remembered") {
		t.Errorf("the second run used a remembered guess:\n%s", out)
	}
	if out := run("demo", nil); !strings.Contains(out, "detected:") {
		t.Fatalf("the legacy demo's era was not detected:\n%s", out)
	}
	if m := memory(); !strings.Contains(m, `"era":"legacy"`) {
		t.Fatalf("the era the server answered with was not remembered: %s", m)
	}
	if out := run("demo", nil); !strings.Contains(out, "remembered: this server spoke it last time") {
		t.Errorf("the second run did not use the remembered era:\n%s", out)
	}
	if out := run("demo", nil, "--era", "auto"); !strings.Contains(out, "detected:") {
		t.Errorf("--era auto did not detect again:\n%s", out)
	}
	if out := run("demo", []string{"MCPI_ERA=legacy"}); !strings.Contains(out, "forced by MCPI_ERA=legacy") {
		t.Errorf("MCPI_ERA=legacy was not the default:\n%s", out)
	}
}

// TestVerifyCannotPassVacuously: an --ignore that names nothing or ignores
// whole answers is a usage error, and a trace with no answer to compare
// fails; a verify speaks as the recorded host did.
func TestVerifyCannotPassVacuously(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	trace := filepath.Join(dir, "t.jsonl")
	demo := with(peerArgs("demo"), "--era", "legacy")
	runCLIExit(t, command.ExitOK, with(demo, "call", "echo", "text=hi", "--record", trace)...)
	for _, bad := range []string{"", ".", "..", "[", "[]", "**", "*", "result", "error"} {
		code, _, errOut := runCLI(t, "", with(demo, "replay", trace, "--verify", "--ignore", bad)...)
		if code != command.ExitUsage || !strings.Contains(errOut, "--ignore") {
			t.Errorf("--ignore %q: exit %d, %s", bad, code, errOut)
		}
	}
	if code, _, errOut := runCLI(t, "", with(demo, "replay", trace, "--verify", "--ignore", "result._meta")...); code != command.ExitOK {
		t.Errorf("a real --ignore: exit %d, %s", code, errOut)
	}
	// A header and nothing else.
	b, _ := os.ReadFile(trace)
	header := filepath.Join(dir, "header.jsonl")
	os.WriteFile(header, []byte(strings.SplitAfter(string(b), "\n")[0]), 0o600)
	if code, _, errOut := runCLI(t, "", with(demo, "replay", header, "--verify")...); code != command.ExitToolError || !strings.Contains(errOut, "nothing was verified") {
		t.Errorf("a header-only trace: exit %d, %s", code, errOut)
	}
	// The recorded host's name and capabilities are the ones sent.
	other := filepath.Join(dir, "other.jsonl")
	os.WriteFile(other, []byte(strings.Replace(string(b), `"clientInfo":{"name":"mcpi"`, `"clientInfo":{"name":"another-host"`, 1)), 0o600)
	again := filepath.Join(dir, "again.jsonl")
	runCLIExit(t, command.ExitOK, with(demo, "replay", other, "--verify", "--record", again)...)
	if b, _ := os.ReadFile(again); !strings.Contains(string(b), `"clientInfo":{"name":"another-host"`) {
		t.Errorf("the verify did not introduce itself as the recorded host:\n%s", b)
	}
}

// TestServeAnswersWhatEveryClientSends: a replayed trace answers ping and
// logging/setLevel though they were never recorded, and an older revision
// the client asks for.
func TestServeAnswersWhatEveryClientSends(t *testing.T) {
	t.Parallel()
	trace := filepath.Join(t.TempDir(), "t.jsonl")
	runCLIExit(t, command.ExitOK, with(peerArgs("demo"), "--era", "legacy", "tools", "--record", trace)...)
	serve := []string{"--era", "legacy", "--", mcpiBinary(t), "replay", trace, "--serve"}
	for _, tc := range []cliCase{
		{name: "ping", args: append([]string{"ping"}, serve...), stdout: []string{"pong"}},
		{name: "older revision", args: append([]string{"info", "--protocol-version", "2025-03-26"}, serve[2:]...), stdout: []string{"Protocol:   2025-03-26"}},
		{name: "recorded request", args: append([]string{"tools"}, serve...), stdout: []string{"echo"}},
	} {
		checkCase(t, tc)
	}
}

// TestCorruptLineSkippedEverywhere: a corrupt line in the middle of a trace
// is skipped, with one warning naming it, by print, verify and serve alike;
// what follows it is used.
func TestCorruptLineSkippedEverywhere(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	trace := filepath.Join(dir, "t.jsonl")
	demo := with(peerArgs("demo"), "--era", "legacy")
	runCLIExit(t, command.ExitOK, with(demo, "call", "echo", "text=after the damage", "--record", trace)...)
	b, _ := os.ReadFile(trace)
	lines := strings.SplitAfter(string(b), "\n")
	bad := append(append(append([]string{}, lines[:3]...), "{\"type\":\"frame\",\"seq\":3,\"oops\n"), lines[3:]...)
	os.WriteFile(trace, []byte(strings.Join(bad, "")), 0o600)
	want := "line 4 (byte offset"
	code, out, errOut := runCLI(t, "", "replay", trace)
	if code != command.ExitOK || strings.Count(errOut, want) != 1 || !strings.Contains(errOut, "was skipped") || !strings.Contains(out, "tools/call echo") {
		t.Errorf("print: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut = runCLI(t, "", with(demo, "replay", trace, "--verify")...)
	if code != command.ExitOK || strings.Count(errOut, want) != 1 || !strings.Contains(out, "✓ #3 tools/call echo") {
		t.Errorf("verify: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut = runCLI(t, "", "call", "echo", "text=after the damage", "--era", "legacy", "--", mcpiBinary(t), "replay", trace, "--serve")
	if code != command.ExitOK || !strings.Contains(out, "after the damage") {
		t.Errorf("serve: exit %d\n%s\n%s", code, out, errOut)
	}
}

// TestProxyHARURLsAreTrue: the HAR of a trace recorded by the HTTP proxy
// names the upstream endpoint each request went to, as an absolute URL, for
// POST, GET and DELETE alike, though the host spoke to another path.
func TestProxyHARURLsAreTrue(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	mux.Handle("/mcp", demoserver.HTTPHandler(demoserver.Options{Era: demoserver.EraLegacy}))
	upstream := httptest.NewServer(mux)
	t.Cleanup(upstream.Close)
	trace := filepath.Join(t.TempDir(), "proxy.jsonl")
	w, err := record.Create(trace, record.Header{Role: record.RoleProxy}, record.Options{})
	if err != nil {
		t.Fatal(err)
	}
	up, _ := url.Parse(upstream.URL + "/mcp")
	front := httptest.NewServer(proxy.Handler(up, w))
	t.Cleanup(front.Close)
	runCLIExit(t, command.ExitOK, "tools", "--era", "legacy", front.URL+"/")
	front.Close()
	w.Close()
	out, _ := runCLIExit(t, command.ExitOK, "trace", "export", "--har", trace)
	var har record.HAR
	if err := json.Unmarshal([]byte(out), &har); err != nil {
		t.Fatal(err)
	}
	methods := map[string]bool{}
	for _, e := range har.Log.Entries {
		methods[e.Request.Method] = true
		if e.Request.URL != upstream.URL+"/mcp" {
			t.Errorf("%s entry URL %q, want %s/mcp", e.Request.Method, e.Request.URL, upstream.URL)
		}
	}
	if !methods["POST"] || !methods["DELETE"] {
		t.Errorf("the HAR lacks POST or DELETE entries: %v", methods)
	}
}

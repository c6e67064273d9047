package cli

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpi-dev/mcpi/internal/command"
	"github.com/mcpi-dev/mcpi/internal/demoserver"
	"github.com/mcpi-dev/mcpi/internal/mcptest"
)

// wantIn fails the test, and goes on, for each of wants that text (what
// names it) lacks.
func wantIn(t *testing.T, what, text string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(text, want) {
			t.Errorf("no %q in %s:\n%s", want, what, text)
		}
	}
}

// runCLIExit is runCLI for a command whose exit code is known: any other
// stops the test, with what the command wrote.
func runCLIExit(t *testing.T, want command.ExitCode, args ...string) (stdout, stderr string) {
	t.Helper()
	code, out, errOut := runCLI(t, "", args...)
	if code != want {
		t.Fatalf("mcpi %s: exit %d, want %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, want, out, errOut)
	}
	return out, errOut
}

// runCLI runs mcpi in-process with test streams.
func runCLI(t *testing.T, stdin string, args ...string) (code command.ExitCode, stdout, stderr string) {
	t.Helper()
	ios, in, out, errOut := command.Test()
	in.WriteString(stdin)
	f := &command.Factory{IO: ios, Executable: func() (string, error) { return os.Args[0], nil }}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	code = run(ctx, f, args)
	return code, out.String(), errOut.String()
}

func with(args []string, more ...string) []string {
	return append(append([]string{}, more...), args...)
}

type cliCase struct {
	name       string
	args       []string
	stdin      string
	code       command.ExitCode
	stdout     []string // substrings
	stderr     []string
	notStdout  []string
	jsonStdout bool
	// progress says the command tells what it does on stderr as it goes
	// (check --all): its stderr is more than the one line of an error.
	progress bool
}

func checkCase(t *testing.T, tc cliCase) {
	t.Helper()
	code, out, errOut := runCLI(t, tc.stdin, tc.args...)
	if code != tc.code {
		t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.code, out, errOut)
	}
	for _, s := range tc.stdout {
		if !strings.Contains(out, s) {
			t.Errorf("stdout lacks %q:\n%s", s, out)
		}
	}
	for _, s := range tc.notStdout {
		if strings.Contains(out, s) {
			t.Errorf("stdout has %q:\n%s", s, out)
		}
	}
	for _, s := range tc.stderr {
		if !strings.Contains(errOut, s) {
			t.Errorf("stderr lacks %q:\n%s", s, errOut)
		}
	}
	if tc.jsonStdout {
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			if !json.Valid([]byte(line)) {
				t.Errorf("stdout line is not JSON: %s", line)
			}
		}
	}
	if code != command.ExitOK && code != command.ExitToolError && strings.Count(strings.TrimSpace(errOut), "\n") > 1 && code != command.ExitUsage && !tc.progress {
		t.Errorf("errors should be one line on stderr, got:\n%s", errOut)
	}
}

func TestCommandsAgainstDemo(t *testing.T) {
	t.Parallel()
	demo := peerArgs("demo")
	rootA, rootB := filepath.ToSlash(t.TempDir()), filepath.ToSlash(t.TempDir())
	for _, tc := range []cliCase{
		{name: "tools", args: with(demo, "tools"), stdout: []string{"NAME", "echo", "delete_file", "destructive", "read-only"}},
		{name: "tools json", args: with(demo, "tools", "--json"), jsonStdout: true, stdout: []string{`"name":"echo"`, `"inputSchema"`}},
		{name: "resources", args: with(demo, "resources"), stdout: []string{"demo://text/hello", "demo://items/12"}},
		{name: "templates", args: with(demo, "templates"), stdout: []string{"demo://greeting/{lang}/{name}"}},
		{name: "prompts", args: with(demo, "prompts"), stdout: []string{"greet", "name*"}},
		{name: "call coerces by schema", args: with(demo, "call", "add", "a=2", "b=3.5"), stdout: []string{"5.5"}},
		{name: "string stays string", args: with(demo, "call", "echo", "text=007"), stdout: []string{"007"}},
		{name: "call json", args: with(demo, "call", "echo", "text=hi", "--json"), jsonStdout: true, stdout: []string{`"content":[{"type":"text","text":"hi"}]`}},
		{name: "call args json", args: with(demo, "call", "echo", `--args={"text":"from args"}`), stdout: []string{"from args"}},
		{name: "call args stdin", args: with(demo, "call", "echo", "--args=-"), stdin: `{"text":"from stdin"}`, stdout: []string{"from stdin"}},
		{name: "raw json value", args: with(demo, "call", "echo", `text:="quoted"`), stdout: []string{"quoted"}},
		{name: "raw json value checked", args: with(demo, "call", "echo", `text:=12`), code: command.ExitUsage, stderr: []string{"/text"}},
		{name: "isError exits 1", args: with(demo, "call", "fail"), code: command.ExitToolError, stdout: []string{"always fails"}, stderr: []string{"isError"}},
		{name: "validation names the field", args: with(demo, "call", "add", "a=x", "b=1"), code: command.ExitUsage, stderr: []string{"argument a", "not a number"}},
		{name: "missing required", args: with(demo, "call", "add", "a=1"), code: command.ExitUsage, stderr: []string{"b"}},
		{name: "unknown argument", args: with(demo, "call", "add", "a=1", "b=2", "c=3"), code: command.ExitUsage, stderr: []string{`no argument "c"`}},
		{name: "content types", args: with(demo, "call", "get_content_types"), stdout: []string{"[image image/png", "[audio audio/wav", "[resource link] demo://text/hello", "[resource] demo://binary/logo.png (image/png): blob"}},
		{name: "structured output", args: with(demo, "call", "structured", "city=Oslo"), stdout: []string{`"city":"Oslo"`}},
		{name: "read text", args: with(demo, "read", "demo://text/hello"), stdout: []string{"Hello from the mcpi demo server"}},
		{name: "read blob", args: with(demo, "read", "demo://binary/logo.png"), stdout: []string{"blob, 108 bytes"}},
		{name: "read missing is a protocol error", args: with(demo, "read", "demo://nope"), code: command.ExitProtocol, stderr: []string{"resources/read"}},
		{name: "read missing json", args: with(demo, "read", "demo://nope", "--json"), code: command.ExitProtocol, jsonStdout: true, stdout: []string{`"exitCode":4`, `"code":`}},
		{name: "prompt", args: with(demo, "prompt", "greet", "name=Ada", "style=pirate"), stdout: []string{"[user]", "pirate"}},
		{name: "prompt missing argument", args: with(demo, "prompt", "greet"), code: command.ExitUsage, stderr: []string{"needs argument(s) name"}},
		{name: "prompt unknown argument", args: with(demo, "prompt", "greet", "name=Ada", "stlye=pirate"), code: command.ExitUsage, stderr: []string{`prompt greet has no argument "stlye" (it takes: name, style)`}},
		{name: "prompt unknown argument forced", args: with(demo, "prompt", "greet", "name=Ada", "stlye=pirate", "--force"), stdout: []string{"[user]"}},
		{name: "complete template", args: with(demo, "complete", "--template", "demo://greeting/{lang}/{name}", "lang=f"), stdout: []string{"fr"}},
		{name: "complete prompt", args: with(demo, "complete", "--prompt", "greet", "style=p"), stdout: []string{"pirate"}},
		{name: "ping", args: with(demo, "ping"), stdout: []string{"pong in"}},
		{name: "info", args: with(demo, "info"), stdout: []string{"mcpi-demo", "2025-11-25", "stdio", "resources", "Instructions:"}},
		{name: "info json", args: with(demo, "info", "--json"), jsonStdout: true, stdout: []string{`"protocolVersion":"2025-11-25"`, `"transport":"stdio"`}},
		{name: "old revision", args: with(demo, "info", "--protocol-version", "2024-11-05"), stdout: []string{"2024-11-05"}},
		{name: "roots", args: with(demo, "call", "list_roots", "--root", rootA, "--root", "file://"+rootB), stdout: []string{"file://" + rootA, "file://" + rootB}},
		{name: "missing root", args: with(demo, "call", "list_roots", "--root", "/no/such/dir"), code: command.ExitUsage, stderr: []string{`invalid --root: root "/no/such/dir": "/no/such/dir" does not exist`}},
		{name: "root of another scheme", args: with(demo, "call", "list_roots", "--root", "https://example.com/repo"), code: command.ExitUsage, stderr: []string{"roots are paths or file:// URIs, not https URIs"}},
		{name: "no roots", args: with(demo, "call", "list_roots"), stdout: []string{"no roots"}},
		{name: "sampling reply", args: with(demo, "call", "sample", "prompt=hi", "--sampling-reply", "I am a model"), stdout: []string{"I am a model"}},
		{name: "sampling declined without terminal", args: with(demo, "call", "sample", "prompt=hi"), code: command.ExitProtocol, stderr: []string{"sampling declined", "--sampling-reply"}},
		{name: "elicit accept with defaults", args: with(demo, "call", "elicit", "--elicit", "accept", "--elicit-field", "name=Bob"), stdout: []string{`"action": "accept"`, `"name": "Bob"`, `"color": "green"`}},
		{name: "elicit field coerced", args: with(demo, "call", "elicit", "--elicit-field", "name=Bob", "--elicit-field", "age=41"), stdout: []string{`"age": 41`}},
		{name: "elicit decline", args: with(demo, "call", "elicit", "--elicit", "decline"), stdout: []string{`"action": "decline"`}},
		{name: "elicit cancel", args: with(demo, "call", "elicit", "--elicit", "cancel"), stdout: []string{`"action": "cancel"`}},
		{name: "elicit unknown field json", args: with(demo, "call", "elicit", "--elicit-field", "nosuchfield=1", "--json"), code: command.ExitUsage, jsonStdout: true, stdout: []string{`"kind":"usage"`, `"exitCode":2`, `the form has no field`}, notStdout: []string{`"content"`, "\n{"}, stderr: []string{`the form has no field "nosuchfield"`}},
		{name: "elicit invalid field", args: with(demo, "call", "elicit", "--elicit-field", "age=old"), code: command.ExitUsage, stderr: []string{"field age", "the server was answered cancel"}, stdout: []string{`"action": "cancel"`}},
		{name: "elicit unknown field", args: with(demo, "call", "elicit", "--elicit", "accept", "--elicit-field", "nosuchfield=1"), code: command.ExitUsage, stderr: []string{`the form has no field "nosuchfield"`, "the server was answered cancel", "mcpi call --help"}, stdout: []string{`"action": "cancel"`}},
		{name: "elicit email format refused", args: with(demo, "call", "elicit", "--elicit-field", "email=bob"), code: command.ExitUsage, stderr: []string{"field email: 'bob' is not a valid email: expected an email address, like name@example.com", "the server was answered cancel"}, stdout: []string{`"action": "cancel"`}},
		{name: "elicit email format", args: with(demo, "call", "elicit", "--elicit-field", "email=bob@example.com"), stdout: []string{`"action": "accept"`, `"email": "bob@example.com"`}},
		{name: "call format refused", args: with(demo, "call", "nested_args", "name=Ada", `address:={"city":"Paris"}`, "when=tomorrow"), code: command.ExitUsage, stderr: []string{"/when: 'tomorrow' is not a valid date-time: expected a date and time", "--no-validate sends them anyway"}},
		{name: "tools --signatures", args: with(demo, "tools", "--signatures"), stdout: []string{"add(a: number, b: number) — Adds a and b.\n", `fail(message?: string, kind?: "tool"|"protocol") — Fails on purpose.`}},
		{name: "tools --signatures --json", args: with(demo, "tools", "--signatures", "--json"), stdout: []string{`{"name":"add","signature":"add(a: number, b: number)","summary":"Adds a and b."}`}},
		{name: "complete unknown prompt argument", args: with(demo, "complete", "--prompt", "greet", "nosuch=1"), code: command.ExitUsage, stderr: []string{`prompt greet has no argument "nosuch" (it takes: name, style)`}},
		{name: "complete unknown context argument", args: with(demo, "complete", "--prompt", "greet", "style=p", "--context", "nme=x"), code: command.ExitUsage, stderr: []string{`prompt greet has no argument "nme" (--context)`}},
		{name: "complete unknown prompt", args: with(demo, "complete", "--prompt", "nope", "style=p"), code: command.ExitUsage, stderr: []string{`the server lists no prompt "nope"`}},
		{name: "complete unknown template variable", args: with(demo, "complete", "--template", "demo://greeting/{lang}/{name}", "langg=f"), code: command.ExitUsage, stderr: []string{`has no argument "langg" (it takes: lang, name)`}},
		{name: "call coercion refused", args: with(demo, "call", "add", "a=two", "b=3"), code: command.ExitUsage, stderr: []string{`argument a: "two" is not a number`, "--no-validate sends it as the string typed"}},
		{name: "call coercion sent anyway", args: with(demo, "call", "add", "a=two", "b=3", "--no-validate"), code: command.ExitToolError, stderr: []string{"tool add returned an error"}},
		{name: "call format sent anyway", args: with(demo, "call", "nested_args", "name=Ada", `address:={"city":"Paris"}`, "when=tomorrow", "--no-validate"), stdout: []string{`"when": "tomorrow"`}},
		{name: "elicit url", args: with(demo, "call", "elicit_url", "--elicit", "accept"), stderr: []string{"asks you to open https://"}, stdout: []string{`"action": "accept"`}},
		{name: "timeout", args: with(demo, "call", "slow", "ms=5000", "--timeout", "200ms"), code: command.ExitTimeout, stderr: []string{"no answer within 200ms"}},
		{name: "save", args: with(demo, "call", "get_content_types", "--save", filepath.Join(t.TempDir(), "out")), stderr: []string{"saved ", "2-image.png"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			checkCase(t, tc)
		})
	}
}

func TestHostileServers(t *testing.T) {
	t.Parallel()
	h := func(mode string) []string { return peerArgs("hostile:" + mode) }
	for _, tc := range []cliCase{
		{name: "garbage is reported and the command goes on", args: with(h(mcptest.HostileGarbageFirst), "call", "echo"), stdout: []string{"ok"}, stderr: []string{"warning: frame is not JSON", "«Starting server... \\e[31mred\\e[0m»", "not valid UTF-8"}},
		{name: "crash", args: with(h(mcptest.HostileCrash), "call", "echo"), code: command.ExitConnect, stderr: []string{"server exited with status 3", "panic: something broke"}},
		{name: "exit before initialize", args: with(h(mcptest.HostileStderrExit), "tools"), code: command.ExitConnect, stderr: []string{"status 7", "config file not found"}},
		{name: "hang", args: with(h(mcptest.HostileHang), "call", "echo", "--timeout", "300ms"), code: command.ExitTimeout},
		{name: "silent", args: with(h(mcptest.HostileSilent), "tools", "--timeout", "300ms"), code: command.ExitTimeout, stderr: []string{"initialize"}},
		{name: "unknown revision", args: with(h(mcptest.HostileUnknownVersion), "info"), code: command.ExitProtocol, stderr: []string{"2099-01-01", "does not speak"}},
		{name: "unknown id", args: with(h(mcptest.HostileUnknownID), "ping"), stderr: []string{"warning: response to unknown request id 9999"}},
		{name: "capability missing", args: with(h(mcptest.HostileOldVersion), "resources"), code: command.ExitProtocol, stderr: []string{`did not declare the "resources" capability`}},
		{name: "capability forced", args: with(h(mcptest.HostileOldVersion), "resources", "--force"), code: command.ExitProtocol, stderr: []string{"method not found"}},
		{name: "escapes are shown, not sent", args: with(h(mcptest.HostileEscapes), "call", "evil\x1b]52;c;cHduZWQ=\x07\x1b[2J\u202e", "--no-validate"), stdout: []string{`\e[2J`, `\e]8;;http://evil.example\x07`, `\u202e`}, notStdout: []string{"\x1b", "\u202e"}},
		{name: "escapes in listings", args: with(h(mcptest.HostileEscapes), "tools"), stdout: []string{`evil\e]52;c;cHduZWQ=\x07\e[2J\u202e`}, notStdout: []string{"\x1b", "\x07"}},
		{name: "escapes in JSON", args: with(h(mcptest.HostileEscapes), "tools", "--json"), jsonStdout: true, stdout: []string{`\u202e`}, notStdout: []string{"\x1b", "\x07", "\u202e"}},
		{name: "escapes in call JSON", args: with(h(mcptest.HostileEscapes), "call", "evil\x1b]52;c;cHduZWQ=\x07\x1b[2J\u202e", "--no-validate", "--json"), jsonStdout: true, notStdout: []string{"\x1b", "\x07", "\u202e"}},
		{name: "escapes in info", args: with(h(mcptest.HostileEscapes), "info"), notStdout: []string{"\x1b", "\x07", "\u202e"}},
		{name: "huge line", args: with(h(mcptest.HostileHuge), "call", "echo", "--json"), jsonStdout: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			checkCase(t, tc)
		})
	}
}

func TestUsageErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []cliCase{
		{name: "no target", args: []string{"tools"}, code: command.ExitUsage, stderr: []string{"no server given"}},
		{name: "unknown flag", args: []string{"tools", "--nope", "--", "x"}, code: command.ExitUsage, stderr: []string{"unknown flag"}},
		{name: "bad url", args: []string{"tools", "--url", "ftp://x"}, code: command.ExitUsage, stderr: []string{"invalid server URL"}},
		{name: "-v is verbose, not the version", args: []string{"-v"}, code: command.ExitOK, stdout: []string{"Usage:"}, notStdout: []string{"mcpi version"}},
		{name: "--version", args: []string{"--version"}, code: command.ExitOK, stdout: []string{"mcpi version " + command.Version}},
		{name: "misspelt url", args: []string{"tools", "htp://host/mcp"}, code: command.ExitUsage, stderr: []string{`invalid server URL "htp://host/mcp": give an http:// or https:// URL with a host`}},
		{name: "misspelt --url", args: []string{"tools", "--url", "htp://host/mcp"}, code: command.ExitUsage, stderr: []string{`invalid server URL "htp://host/mcp": give an http:// or https:// URL with a host`}},
		{name: "both url and command", args: []string{"tools", "http://127.0.0.1:1/mcp", "--", "x"}, code: command.ExitUsage},
		{name: "bad transport", args: []string{"tools", "--transport", "pigeon", "http://127.0.0.1:1/mcp"}, code: command.ExitUsage},
		{name: "bad header", args: []string{"tools", "-H", "nocolon", "http://127.0.0.1:1/mcp"}, code: command.ExitUsage, stderr: []string{"invalid --header"}},
		{name: "bad env", args: []string{"tools", "-e", "NOVALUE", "--", "x"}, code: command.ExitUsage},
		{name: "bad elicit", args: with(peerArgs("demo"), "tools", "--elicit", "maybe"), code: command.ExitUsage},
		{name: "unknown revision flag", args: []string{"tools", "--protocol-version", "1999-01-01", "--", "x"}, code: command.ExitUsage},
		{name: "call without tool", args: []string{"call", "--", "x"}, code: command.ExitUsage, stderr: []string{"no tool name"}},
		{name: "bad pair", args: []string{"call", "echo", "novalue", "--", "x"}, code: command.ExitUsage},
		{name: "pairs and args", args: []string{"call", "echo", "a=1", "--args", "{}", "--", "x"}, code: command.ExitUsage},
		{name: "complete needs one ref", args: []string{"complete", "a=b", "--", "x"}, code: command.ExitUsage},
		{name: "spawn failure", args: []string{"tools", "--", "/no/such/server"}, code: command.ExitConnect, stderr: []string{"/no/such/server"}},
		{name: "connection refused", args: []string{"tools", "http://127.0.0.1:1/mcp"}, code: command.ExitConnect, stderr: []string{"127.0.0.1:1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			checkCase(t, tc)
		})
	}
}

func TestHTTPTargets(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	mux.Handle("/mcp", demoserver.HTTPHandler(demoserver.Options{Era: demoserver.EraLegacy}))
	mux.Handle("/sse", demoserver.SSEHandler(demoserver.Options{Era: demoserver.EraLegacy}))
	private := demoserver.HTTPHandler(demoserver.Options{Era: demoserver.EraLegacy})
	mux.HandleFunc("/private", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer let-me-in" {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		private.ServeHTTP(w, r)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	for _, tc := range []cliCase{
		{name: "streamable", args: []string{"info", srv.URL + "/mcp"}, stdout: []string{"streamable-http"}},
		{name: "url flag", args: []string{"call", "echo", "text=over http", "--url", srv.URL + "/mcp"}, stdout: []string{"over http"}},
		{name: "sse fallback", args: []string{"info", srv.URL + "/sse"}, stdout: []string{"Transport:  sse"}},
		{name: "sse forced", args: []string{"tools", "--transport", "sse", srv.URL + "/sse"}, stdout: []string{"echo"}},
		{name: "unauthorized", args: []string{"tools", srv.URL + "/private"}, code: command.ExitAuth, stderr: []string{"401"}},
		{name: "header", args: []string{"tools", "-H", "Authorization: Bearer let-me-in", srv.URL + "/private"}, stdout: []string{"echo"}},
		{name: "not found", args: []string{"tools", srv.URL + "/nothing-here"}, code: command.ExitConnect, stderr: []string{"404"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			checkCase(t, tc)
		})
	}
}

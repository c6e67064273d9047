package cli

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpi-dev/mcpi/internal/check/matrix"
	"github.com/mcpi-dev/mcpi/internal/command"
	"github.com/mcpi-dev/mcpi/internal/mcptest"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

func TestCheckCommand(t *testing.T) {
	t.Parallel()
	clean := peerArgs(mcptest.BrokenPrefix)
	broken := peerArgs(mcptest.BrokenPrefix + "tools/input-schema")
	for _, tc := range []cliCase{
		{name: "clean", args: with(clean, "check"), stdout: []string{"mcpi check: broken 1.0", "0 error(s), 0 warning(s), 0 note(s)"}},
		{name: "errors exit 1", args: with(broken, "check"), code: command.ExitToolError, stdout: []string{"ERRORS (2)", "tools/input-schema", "MCP 2025-11-25 server/tools § Tool"}},
		{name: "json", args: with(broken, "check", "--json"), code: command.ExitToolError, jsonStdout: true, stdout: []string{`"rule":"tools/input-schema"`, `"severity":"error"`}},
		{name: "sarif", args: with(broken, "check", "--sarif"), code: command.ExitToolError, jsonStdout: true, stdout: []string{`"version":"2.1.0"`, `"ruleId":"tools/input-schema"`}},
		{name: "json and sarif", args: with(broken, "check", "--json", "--sarif"), code: command.ExitUsage, stderr: []string{"give one"}},
		{name: "call", args: with(peerArgs(mcptest.BrokenPrefix+"tools/call-result"), "check", "--call"), code: command.ExitToolError, stdout: []string{"tools/call-result", "structuredContent does not match"}},
		{name: "no call without --call", args: with(peerArgs(mcptest.BrokenPrefix+"tools/call-result"), "check"), stdout: []string{"0 error(s)"}},
		{name: "host matrix", args: with(clean, "check"), stdout: []string{"HOSTS", "OpenAI (function calling)", "accepted"}},
		{name: "a named host rejects: exit 1", args: with(peerArgs(mcptest.HostsPrefix+"openai"), "check", "--host", "openai"), code: command.ExitToolError, stdout: []string{"ERRORS (1)", "hosts/openai/name-length", "* OpenAI (function calling)"}},
		{name: "a host not named rejects: exit 0", args: with(peerArgs(mcptest.HostsPrefix+"openai"), "check", "--host", "anthropic"), stdout: []string{"WARNINGS", "hosts/openai/name-length", "0 error(s)"}},
		{name: "a strict mode named: no error", args: with(peerArgs(mcptest.HostsPrefix+"openai-strict"), "check", "--host", "openai-strict"), stdout: []string{"needs rewriting for strict mode", "0 error(s)"}},
		{name: "unknown host", args: with(clean, "check", "--host", "netscape"), code: command.ExitUsage, stderr: []string{`--host "netscape": no such host`}},
		{name: "the environment failed: exit 9", args: with(peerArgs(mcptest.HostsPrefix+mcptest.HostsBackendDown), "check"), code: command.ExitEnvironment, stdout: []string{"NOT CHECKED: THE SERVER'S ENVIRONMENT (1)", "ECONNREFUSED"}},
		{name: "the environment in json", args: with(peerArgs(mcptest.HostsPrefix+mcptest.HostsBackendDown), "check", "--json"), code: command.ExitEnvironment, jsonStdout: true, stdout: []string{`"environment":[`, `"why":"a service the server connects to refused the connection`}},
		{name: "connect failure", args: with(peerArgs("hostile:"+mcptest.HostileStderrExit), "check"), code: command.ExitConnect,
			stdout: []string{"Step by step:", "FAIL the server starts and stays up: server exited with status 7", "what to do:"}},
		{name: "a command not found", args: []string{"check", "--", "mcpi-no-such-command"}, code: command.ExitConnect,
			stdout: []string{"FAIL the command is found: mcpi-no-such-command: not found on PATH", "what to do: install it", "-    the handshake"}},
		{name: "nothing listens", args: []string{"check", "http://127.0.0.1:1/mcp"}, code: command.ExitConnect,
			stdout: []string{"ok   DNS: 127.0.0.1 is an address", "FAIL TCP: 127.0.0.1:1", "is the server running"}},
		{name: "the doctor in json", args: []string{"check", "--json", "--", "mcpi-no-such-command"}, code: command.ExitConnect, jsonStdout: true,
			stdout: []string{`"connection":{"target":"mcpi-no-such-command","steps":[{"name":"the command is found","status":"failed"`, `"kind":"unreachable"`}},
		{name: "a server whose database is down", args: []string{"check", "--", "sh", "-c", "echo 'Error: connect ECONNREFUSED 127.0.0.1:5432' >&2; exit 1"}, code: command.ExitEnvironment,
			stdout: []string{"ECONNREFUSED", "This looks like the server's environment, not its protocol"}},
		{name: "a handshake that fails", args: with(peerArgs("hostile:"+mcptest.HostileUnknownVersion), "check"), code: command.ExitToolError,
			stdout: []string{"mcpi check: the handshake did not complete", "handshake/completes  initialize: the handshake failed", "2099-01-01", "OpenAI (function calling)                   unknown"}},
		{name: "a handshake that fails, in sarif", args: with(peerArgs("hostile:"+mcptest.HostileUnknownVersion), "check", "--sarif"), code: command.ExitToolError, jsonStdout: true,
			stdout: []string{`"ruleId":"handshake/completes"`, `"level":"error"`}},
		{name: "poison in sarif, written as built, is escaped", args: with(peerArgs("hostile:"+mcptest.HostilePoison), "check", "--sarif"), code: command.ExitToolError, jsonStdout: true,
			stdout: []string{`"ruleId":"security/hidden-text"`}, notStdout: []string{"\u202e", "\u200b", "\x1b"}},
		{name: "poison is shown safely", args: with(peerArgs("hostile:"+mcptest.HostilePoison), "check"), code: command.ExitToolError, stdout: []string{"security/hidden-text", `\e]0;pwned`}, notStdout: []string{"\x1b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			checkCase(t, tc)
		})
	}
}

// TestCheckAll: check --all says what it will start before starting it,
// checks each configured server one at a time, never shows a secret the
// configuration holds, and ends with the server × host matrix; its exit
// is the worst outcome (errors, then a server not reached).
func TestCheckAll(t *testing.T) {
	t.Parallel()
	const secret = "sk-live-0123456789abcdef"
	peer := func(mode string) map[string]any {
		return map[string]any{"command": os.Args[0], "args": []string{"-test.run=^$"}, "env": map[string]string{mcptest.PeerEnv: mode}}
	}
	cfg := map[string]any{"mcpServers": map[string]any{
		"clean":      peer(mcptest.HostsPrefix + "clean"),
		"long-names": peer(mcptest.HostsPrefix + "openai"),
		"gone":       map[string]any{"command": "mcpi-no-such-server", "args": []string{"--token", secret}, "env": map[string]string{"GONE_API_KEY": secret}},
		"off":        map[string]any{"command": "mcpi-no-such-server", "disabled": true},
	}}
	b, _ := json.Marshal(cfg)
	file := filepath.Join(t.TempDir(), "mcp.json")
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []cliCase{
		{name: "matrix", args: []string{"check", "--all", "--config", file}, code: command.ExitConnect,
			stdout:    []string{"SERVER", "openai-strict", "clean", "long-names", "REJECT", "gone", "unreachable", "off", "skipped", "disabled in", "mcpi check --server NAME --config " + matrix.ShellWord(file) + " shows one server's findings"},
			stderr:    []string{"4 server(s), one at a time:", "gone (" + file + "): mcpi-no-such-server --token"},
			notStdout: []string{secret}, progress: true},
		{name: "a named host rejects", args: []string{"check", "--all", "--config", file, "--host", "openai"}, code: command.ExitToolError, stdout: []string{"long-names"}, progress: true},
		{name: "json", args: []string{"check", "--all", "--config", file, "--json"}, code: command.ExitConnect, jsonStdout: true,
			stdout: []string{`"servers":[`, `"outcome":"checked"`, `"outcome":"unreachable"`, `"connection":{`}, notStdout: []string{secret}, progress: true},
		{name: "no target with --all", args: []string{"check", "--all", "--", "x"}, code: command.ExitUsage, stderr: []string{"give no TARGET"}},
		{name: "no --call with --all", args: []string{"check", "--all", "--call"}, code: command.ExitUsage, stderr: []string{"never calls tools"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			checkCase(t, tc)
			_, _, errOut := runCLI(t, "", tc.args...)
			if strings.Contains(errOut, secret) {
				t.Errorf("stderr shows the configuration's secret:\n%s", errOut)
			}
		})
	}
}

// TestCheckProbesUnderTheUsersClock: mcpi check's era probe waits as long
// as --timeout lets it (the session gives it half, the handshake the
// rest), not a fixed 5 s: a server that starts in 6 s under --timeout 30s
// is probed in its own era, not guessed legacy.
func TestCheckProbesUnderTheUsersClock(t *testing.T) {
	for _, timeout := range []string{"30s", "2m"} {
		opts, err := parseArgs(NewCmdCheck, []string{"--timeout", timeout, "--", "server"})
		if err != nil {
			t.Fatal(err)
		}
		hk, _ := opts.hooksFor()
		if want, _ := time.ParseDuration(timeout); hk.ProbeTimeout != want {
			t.Errorf("--timeout %s: the probe gets %v", timeout, hk.ProbeTimeout)
		}
		sopts := opts.NewRun().SessionOptions(hk, nil, nil)
		if sopts.ProbeTimeout != opts.Target.Timeout {
			t.Errorf("--timeout %s: the session's probe gets %v", timeout, sopts.ProbeTimeout)
		}
	}
}

// TestCheckSaysWhatHappened: a server that could not be checked is told
// as it was: a 403 without an authorization challenge (a Host allowlist)
// is the server refusing the request, not an authorization refused (exit
// 3, kind refused); an HTTP 500 to initialize is a server reached whose
// handshake failed (its one finding, exit 1), not one that could not be
// reached; a command given as a path that names nothing is not looked for
// on PATH; and the error line has mcpi's prefix once.
func TestCheckSaysWhatHappened(t *testing.T) {
	t.Parallel()
	answer := func(code int, body string) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(code)
			io.WriteString(w, body)
		}))
		t.Cleanup(srv.Close)
		return srv.URL + "/mcp"
	}
	allowlist, failing := answer(http.StatusForbidden, "Invalid Host header"), answer(http.StatusInternalServerError, "boom")
	nope := filepath.Join(t.TempDir(), "nope-server")
	for _, tc := range []cliCase{
		{name: "a host allowlist's 403", args: []string{"check", allowlist}, code: command.ExitConnect,
			stdout: []string{"mcpi check was refused by " + allowlist + ". Step by step:", "FAIL HTTP: POST /mcp: 403 Forbidden", "refused (403 without an authorization challenge)", "a Host or Origin allowlist"}, notStdout: []string{"could not reach"}, stderr: []string{"mcpi: the server refused the check's request (HTTP 403 without an authorization challenge"}},
		{name: "a host allowlist's 403 in json", args: []string{"check", "--json", allowlist}, code: command.ExitConnect, jsonStdout: true, stdout: []string{`"kind":"refused"`}},
		{name: "a 500 to initialize", args: []string{"check", failing}, code: command.ExitToolError,
			stdout: []string{"handshake/completes  initialize: the handshake failed", "500 Internal Server Error"}, notStdout: []string{"could not reach"}},
		{name: "a path that names nothing", args: []string{"check", "--", nope}, code: command.ExitConnect,
			stdout: []string{"FAIL the command is found: " + nope + ": no such file", "what to do: check the path"}, notStdout: []string{"on PATH", "give its full path"},
			stderr: []string{"mcpi: the check could not reach the server"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			checkCase(t, tc)
			_, _, errOut := runCLI(t, tc.stdin, tc.args...)
			if strings.Contains(errOut, "mcpi: mcpi") || strings.Contains(errOut, "authorization required") || strings.Contains(errOut, "authorization was refused") {
				t.Errorf("stderr: %s", errOut)
			}
		})
	}
}

// TestA403WithoutAChallengeIsNoAuthFailure: exit 6 is an authorization
// refused (a 401, or a 403 that challenges for a scope); a 403 without a
// challenge is the server refusing the request itself: exit 3, kind
// refused.
func TestA403WithoutAChallengeIsNoAuthFailure(t *testing.T) {
	bare := &transport.HTTPError{StatusCode: http.StatusForbidden, Status: "403 Forbidden", Header: http.Header{}}
	scoped := &transport.HTTPError{StatusCode: http.StatusForbidden, Status: "403 Forbidden", Header: http.Header{"Www-Authenticate": {`Bearer error="insufficient_scope"`}}}
	unauthorized := &transport.HTTPError{StatusCode: http.StatusUnauthorized, Status: "401 Unauthorized", Header: http.Header{}}
	for _, c := range []struct {
		err  error
		code command.ExitCode
		kind string
	}{{bare, command.ExitConnect, command.KindRefused}, {scoped, command.ExitAuth, command.KindAuth}, {unauthorized, command.ExitAuth, command.KindAuth}} {
		if code, kind := command.ExitCodeFor(c.err), command.ErrorKind(c.err); code != c.code || kind != c.kind {
			t.Errorf("%s %v: exit %d %s, want %d %s", c.err, c.err.(*transport.HTTPError).Header, code, kind, c.code, c.kind)
		}
	}
}

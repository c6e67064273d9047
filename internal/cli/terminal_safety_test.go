package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpi-dev/mcpi/internal/command"
	"github.com/mcpi-dev/mcpi/internal/mcptest"
	"github.com/mcpi-dev/mcpi/internal/safetext"
)

// poisonShown matches Poison's OSC title once made visible (as the sink
// shows it, Go-quoted, or JSON-escaped): proof that a field carrying it
// reached the output, so that a case cannot pass by printing nothing.
var poisonShown = regexp.MustCompile(`«(\\e|\\x1b|\\u001b)\]0;pwned`)

// TestNoRawControlReachesAPerson drives every command and error path in
// human mode with mcptest.Poison in every field a server, a trace or a
// configuration file controls, and fails if any byte a terminal could act
// on reaches stdout or stderr raw.
func TestNoRawControlReachesAPerson(t *testing.T) {
	t.Parallel()
	p := peerArgs("hostile:" + mcptest.HostilePoison)
	sp := peerArgs(mcptest.SkillsPrefix + mcptest.SkillsPoison)
	dir := t.TempDir()

	// A configuration file whose server names, and a VS Code one whose
	// input ids, are poison.
	mcpJSON := filepath.Join(dir, ".mcp.json")
	writeJSONFile(t, mcpJSON, map[string]any{"mcpServers": map[string]any{
		mcptest.Poison: map[string]any{"command": "x" + mcptest.Poison},
		"ok":           map[string]any{"command": "true"},
	}})
	vscode := filepath.Join(dir, ".vscode", "mcp.json")
	os.MkdirAll(filepath.Dir(vscode), 0o755)
	writeJSONFile(t, vscode, map[string]any{
		"inputs":  []any{map[string]any{"id": mcptest.Poison, "type": "promptString", "description": mcptest.Poison}},
		"servers": map[string]any{"s": map[string]any{"command": "x", "env": map[string]any{"K": "${input:" + mcptest.Poison + "}"}}},
	})

	// A trace of a session with the poison server, and a trace made by hand
	// with poison in every field of every kind of event, and a corrupt line.
	recorded := filepath.Join(dir, "recorded.jsonl")
	runCLIExit(t, command.ExitOK, with(p, "call", "progress", "-v", "--no-redact", "--record", recorded)...)
	crafted := filepath.Join(dir, "crafted.jsonl")
	writeLines(t, crafted,
		map[string]any{"type": "header", "format": "mcpi-trace", "version": 1, "mcpi": mcptest.Poison, "created": "2026-03-14T15:09:26Z", "role": "client",
			"target": map[string]any{"transport": mcptest.Poison, "command": []string{mcptest.Poison}, "url": "http://x/" + mcptest.Poison, "server": mcptest.Poison, "config": mcptest.Poison},
			"args":   []string{mcptest.Poison}, "protocolVersion": mcptest.Poison},
		map[string]any{"type": "frame", "t": "2026-03-14T15:09:26.002000000Z", "seq": 1, "dir": "send", "http": map[string]any{"method": mcptest.Poison, "url": "http://x/" + mcptest.Poison, "requestHeaders": map[string]any{mcptest.Poison: []string{mcptest.Poison}}},
			"msg": map[string]any{"jsonrpc": "2.0", "id": 1, "method": mcptest.Poison, "params": map[string]any{"name": mcptest.Poison}}},
		map[string]any{"type": "frame", "t": "2026-03-14T15:09:26.003000000Z", "seq": 2, "dir": "recv", "msg": map[string]any{"jsonrpc": "2.0", "id": 1, "error": map[string]any{"code": 1, "message": mcptest.Poison}}},
		map[string]any{"type": "http", "t": "2026-03-14T15:09:26.004000000Z", "seq": 3, "text": mcptest.Poison, "http": map[string]any{"method": mcptest.Poison, "url": mcptest.Poison, "status": 500, "sseEventId": mcptest.Poison, "sseEvent": mcptest.Poison}},
		map[string]any{"type": "stderr", "t": "2026-03-14T15:09:26.005000000Z", "seq": 4, "text": mcptest.Poison},
		map[string]any{"type": "bad-frame", "t": "2026-03-14T15:09:26.006000000Z", "seq": 5, "dir": "recv", "error": mcptest.Poison, "data": mcptest.Poison},
		map[string]any{"type": "lifecycle", "t": "2026-03-14T15:09:26.007000000Z", "seq": 6, "text": mcptest.Poison},
		map[string]any{"type": "note", "t": "2026-03-14T15:09:26.008000000Z", "seq": 7, "kind": mcptest.Poison, "data": map[string]any{mcptest.Poison: mcptest.Poison}},
		map[string]any{"type": mcptest.Poison, "t": "2026-03-14T15:09:26.009000000Z", "seq": 8, "text": mcptest.Poison},
	)
	f, _ := os.OpenFile(crafted, os.O_APPEND|os.O_WRONLY, 0)
	fmt.Fprintf(f, "{\"type\":\"frame\",\"seq\":9,\"oops %s\n", mcptest.Poison)
	f.Close()

	// A collection whose step fails on the poison server's texts.
	coll := filepath.Join(dir, "poison.yaml")
	os.WriteFile(coll, []byte("steps:\n  - call: iserr\n    expect: {text: {equals: x}}\n  - call: fail\n    expect: {error: {code: 1}}\n"), 0o600)

	// An HTTP server whose errors, challenges and metadata are poison.
	mux := http.NewServeMux()
	mux.HandleFunc("/500", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(500)
		fmt.Fprint(w, mcptest.Poison)
	})
	mux.HandleFunc("/json", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID json.RawMessage `json:"id"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		if req.ID == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		msg, _ := json.Marshal(mcptest.Poison)
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32600,"message":%s}}`, req.ID, msg)
	})
	mux.HandleFunc("/sse", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", strings.ReplaceAll(mcptest.Poison, "\r", ""), strings.ReplaceAll(mcptest.Poison, "\r", ""))
	})
	var srvURL string
	mux.HandleFunc("/401", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+srvURL+`/prm", error_description="`+strings.NewReplacer("\r", "", "\x00", "", "\x7f", "").Replace(mcptest.Poison)+`"`)
		w.WriteHeader(401)
		fmt.Fprint(w, mcptest.Poison)
	})
	mux.HandleFunc("/prm", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		p, _ := json.Marshal(mcptest.Poison)
		fmt.Fprintf(w, `{"resource":%s,"authorization_servers":[%s]}`, p, p)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	srvURL = srv.URL

	for _, tc := range []struct {
		name  string
		args  []string
		shown bool // the output must show the poison, made visible
	}{
		{"info", with(p, "info", "-v"), true},
		{"tools", with(p, "tools"), true},
		{"resources", with(p, "resources"), true},
		{"templates", with(p, "templates"), true},
		{"prompts", with(p, "prompts"), true},
		{"missing required argument", with(p, "call", "t"), true},
		{"unknown argument", with(p, "call", "t", "nosuch=1"), true},
		{"enum", with(p, "call", "t", "e=zzz"), true},
		{"coercion", with(p, "call", "t", "n=abc"), false},
		{"schema problems", with(p, "call", "t", "n=0", "e=zzz"), true},
		{"structured and text", with(p, "call", mcptest.Poison[:2], "--no-validate"), true},
		{"JSON-RPC error", with(p, "call", "fail"), true},
		{"isError", with(p, "call", "iserr"), true},
		{"progress and logs", with(p, "call", "progress", "-v"), true},
		{"elicitation unknown field", with(p, "call", "elicit", "--elicit-field", "nosuch=1"), true},
		{"elicitation enum", with(p, "call", "elicit", "--elicit-field", "e=zzz"), true},
		{"elicitation missing field", with(p, "call", "elicit", "--elicit", "accept"), true},
		{"elicitation declined", with(p, "call", "elicit"), true},
		{"sampling", with(p, "call", "sample", "--sampling-reply", "hi"), true},
		{"sampling declined", with(p, "call", "sample"), false},
		{"prompt missing argument", with(p, "prompt", "p"), true},
		{"prompt error", with(p, "prompt", "p2"), true},
		{"read", with(p, "read", "poison://ok"), true},
		{"read error", with(p, "read", "poison://nope"), true},
		{"skills", with(sp, "skills"), true},
		{"read dir", with(sp, "read", "--dir", "skill://pdf"+mcptest.Poison), true},
		{"read dir error", with(sp, "read", "--dir", "skill://pdf"+mcptest.Poison+"/SKILL.md"), true},
		{"skill", with(sp, "skill", "pdf-processing"), true},
		{"skill json", with(sp, "skill", "pdf-processing", "--json"), false},
		{"skill that fails", with(sp, "skill", "pdf-processing", "Poison/"+mcptest.Poison), true},
		{"completion", with(p, "complete", "--prompt", "p2", "a=x"), true},
		{"ping", with(p, "ping", "-v"), true},
		{"check", with(p, "check"), true},
		{"check json", with(p, "check", "--json"), false},
		{"json", with(p, "tools", "--json"), false},
		{"config: unknown server", []string{"tools", "--server", "nosuch", "--config", mcpJSON}, true},
		{"config: listing", []string{"servers", "--config", mcpJSON}, true},
		{"config: server that fails", []string{"tools", "--server", mcptest.Poison, "--config", mcpJSON}, true},
		{"config: missing input", []string{"tools", "--server", "s", "--config", vscode}, true},
		{"trace: recorded", []string{"replay", recorded}, true},
		{"trace: crafted", []string{"replay", crafted}, true},
		{"trace: crafted verbose", []string{"replay", crafted, "-v"}, true},
		{"trace: verify", with(p, "replay", recorded, "--verify"), false},
		{"trace: verify crafted", with(p, "replay", crafted, "--verify"), false},
		{"trace: export", []string{"trace", "export", "--har", crafted}, false},
		{"http: 500", []string{"tools", srv.URL + "/500"}, true},
		{"http: JSON error", []string{"tools", "--transport", "http", srv.URL + "/json"}, true},
		{"http: SSE", []string{"tools", "--transport", "http", srv.URL + "/sse", "--timeout", "1s", "-v"}, true},
		{"http: auth", []string{"tools", srv.URL + "/401", "--oauth-headless"}, true},
		{"test", with(p, "test", coll), true},
		{"test tap", with(p, "test", coll, "--tap"), false}, // quoted as YAML strings: shown escaped twice
		{"bench: tool errors", with(p, "bench", "fail", "-n", "3", "-c", "1"), true},
		{"bench: a collection", with(p, "bench", coll, "-n", "2", "-c", "1"), true},
		{"trace: filter", []string{"replay", crafted, "--print", "--filter", "status:error"}, true},
		{"trace: latency", []string{"replay", crafted, "--latency"}, true},
		{"trace: otlp", []string{"trace", "export", "--otlp", crafted}, false},
		{"usage: tool name", []string{"call", mcptest.Poison}, false},
		{"usage: flag value", []string{"tools", "--era", mcptest.Poison, "--", "x"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			code, out, errOut := runCLI(t, "", tc.args...)
			for name, s := range map[string]string{"stdout": out, "stderr": errOut} {
				if !safetext.Clean(s) {
					t.Errorf("exit %d: raw control reached %s: %q", code, name, s)
				}
			}
			if tc.shown && !poisonShown.MatchString(out+errOut) {
				t.Errorf("exit %d: the poisoned field was not shown\nstdout: %s\nstderr: %s", code, out, errOut)
			}
		})
	}
}

func writeJSONFile(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// writeLines writes each value as one JSON line.
func writeLines(t *testing.T, path string, lines ...any) {
	t.Helper()
	var b []byte
	for _, l := range lines {
		j, err := json.Marshal(l)
		if err != nil {
			t.Fatal(err)
		}
		b = append(append(b, j...), '\n')
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestReadRaw: read --raw writes a resource's exact bytes for a file or a
// pipe, and refuses a terminal unless told twice.
func TestReadRaw(t *testing.T) {
	t.Parallel()
	demo := peerArgs("demo")
	code, out, errOut := runCLI(t, "", with(demo, "read", "demo://binary/logo.png", "--raw")...)
	if code != command.ExitOK || !strings.HasPrefix(out, "\x89PNG\r\n\x1a\n") || len(out) != 108 {
		t.Errorf("exit %d, %d bytes %q, stderr %s", code, len(out), out[:min(len(out), 16)], errOut)
	}
	code, out, _ = runCLI(t, "", with(peerArgs("hostile:"+mcptest.HostilePoison), "read", "poison://ok", "--raw")...)
	if code != command.ExitOK || out != mcptest.Poison+"hi" {
		t.Errorf("exit %d, stdout %q: want the text and the blob's bytes exactly", code, out)
	}
	for _, tc := range []struct {
		args []string
		code command.ExitCode
		err  string
	}{
		{with(demo, "read", "demo://binary/logo.png", "--raw"), command.ExitUsage, "redirect stdout"},
		{with(demo, "read", "demo://binary/logo.png", "--raw", "--raw-terminal"), command.ExitOK, ""},
		{with(demo, "read", "demo://binary/logo.png", "--raw-terminal"), command.ExitUsage, "goes with --raw"},
		{with(demo, "read", "demo://binary/logo.png", "--raw", "--json"), command.ExitUsage, "neither --json nor --save"},
	} {
		ios, _, out, errOut := command.Test()
		ios.StdoutTTY = true
		code := run(context.Background(), &command.Factory{IO: ios, Executable: os.Executable}, tc.args)
		if code != tc.code || !strings.Contains(errOut.String(), tc.err) {
			t.Errorf("%v: exit %d, stderr %s", tc.args, code, errOut)
		}
		if tc.code == command.ExitUsage && out.Len() > 0 {
			t.Errorf("%v: wrote %d bytes to the terminal", tc.args, out.Len())
		}
	}
}

// TestVerboseRedacts: -v shows URLs and transport errors with credentials
// redacted by the rule traces and the TUI follow.
func TestVerboseRedacts(t *testing.T) {
	t.Parallel()
	_, _, errOut := runCLI(t, "", "tools", "-v", "--transport", "http", "http://127.0.0.1:1/mcp?access_token=sekrit-123456789")
	var verbose []string
	for _, l := range strings.Split(errOut, "\n") {
		if strings.HasPrefix(l, "http: ") || strings.HasPrefix(l, "transport: ") {
			verbose = append(verbose, l)
		}
	}
	if len(verbose) == 0 {
		t.Fatalf("no -v line:\n%s", errOut)
	}
	for _, l := range verbose {
		if strings.Contains(l, "sekrit") {
			t.Errorf("a -v line shows the credential: %s", l)
		}
	}
}

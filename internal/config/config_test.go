package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// summary is a Server with Err as text, so tables can compare with DeepEqual.
type summary struct {
	Server
	ErrText string
}

func summarize(servers []Server) []summary {
	var out []summary
	for _, s := range servers {
		sum := summary{Server: s}
		if s.Err != nil {
			sum.ErrText = s.Err.Error()
			sum.Err = nil
		}
		out = append(out, sum)
	}
	return out
}

func TestLoad(t *testing.T) {
	const (
		desktop   = "testdata/claude-desktop/claude_desktop_config.json"
		mcpJSON   = "testdata/claude-code/.mcp.json"
		claude    = "testdata/claude-code/.claude.json"
		vscode    = "testdata/vscode/.vscode/mcp.json"
		settings  = "testdata/vscode-settings/settings.json"
		cursor    = "testdata/cursor/.cursor/mcp.json"
		inspector = "testdata/inspector/mcp.json"
		windsurf  = "testdata/windsurf/mcp_config.json"
		generic   = "testdata/generic/servers.json"
	)
	apiKey := Input{ID: "api-key", Type: "promptString", Description: "Perplexity API Key", Password: true}
	region := Input{ID: "region", Type: "pickString", Description: "Region", Default: "eu", Options: []string{"eu", "us-east"}}

	tests := []struct {
		path string
		want []Server
	}{
		{desktop, []Server{
			{Name: "filesystem", Source: desktop, Format: FormatClaudeDesktop, Transport: TransportStdio,
				Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-filesystem", "/Users/me/Desktop", "${HOME}"},
				Env: map[string]string{"DEBUG": "1", "PORT": "8080", "VERBOSE": "true"}},
			{Name: "remote", Source: desktop, Format: FormatClaudeDesktop, Transport: TransportHTTP, URL: "https://example.com/mcp"},
		}},
		{mcpJSON, []Server{
			{Name: "api", Source: mcpJSON, Format: FormatClaudeCode, Transport: TransportHTTP,
				URL:     "${API_BASE_URL:-https://api.example.com}/mcp",
				Headers: map[string]string{"Authorization": "Bearer ${API_KEY}"}},
			{Name: "local", Source: mcpJSON, Format: FormatClaudeCode, Transport: TransportStdio,
				Command: "${TOOLS}/server", Args: []string{"--root", "${ROOT:-.}", "${env:NOT_CLAUDE_SYNTAX}", "$PLAIN"},
				Env: map[string]string{"TOKEN": "${TOKEN}"}},
			{Name: "events", Source: mcpJSON, Format: FormatClaudeCode, Transport: TransportSSE, URL: "http://localhost:9000/sse"},
		}},
		{claude, []Server{
			{Name: "github", Source: claude, Format: FormatClaudeCode, Transport: TransportStdio, Command: "gh-mcp"},
			{Name: "db", Source: claude, Format: FormatClaudeCode, Project: "/home/me/work", Transport: TransportStdio,
				Command: "db-mcp", Args: []string{"--ro"}},
			{Name: "db", Source: claude, Format: FormatClaudeCode, Project: "/home/me/work/app", Transport: TransportStdio,
				Command: "db-mcp", Args: []string{"--rw"}},
		}},
		{vscode, []Server{
			{Name: "perplexity", Source: vscode, Format: FormatVSCode, Transport: TransportStdio,
				Command: "docker", Args: []string{"run", "-i", "--rm", "-e", "PERPLEXITY_API_KEY", "mcp/perplexity-ask"},
				Env:     map[string]string{"PERPLEXITY_API_KEY": "${input:api-key}", "REGION": "${input:region}"},
				EnvFile: "${workspaceFolder}/.env",
				Inputs:  []Input{apiKey, region}},
			{Name: "github", Source: vscode, Format: FormatVSCode, Transport: TransportHTTP,
				URL:     "https://api.githubcopilot.com/mcp/",
				Headers: map[string]string{"X-Note": "/* not a comment */", "X-Home": "${userHome}${/}x"}},
			{Name: "fetch", Source: vscode, Format: FormatVSCode, Transport: TransportStdio, Command: "uvx",
				Args: []string{"mcp-server-fetch", "${workspaceFolderBasename}", "${env:PATH_EXTRA}", "${config:editor.fontSize}"},
				Cwd:  "tools"},
		}},
		{settings, []Server{
			{Name: "time", Source: settings, Format: FormatVSCode, Transport: TransportStdio, Command: "uvx", Args: []string{"mcp-server-time"}},
		}},
		{cursor, []Server{
			{Name: "linear", Source: cursor, Format: FormatCursor, URL: "https://mcp.linear.app/sse",
				Headers: map[string]string{"Authorization": "Bearer ${env:LINEAR_TOKEN}"}},
			{Name: "local", Source: cursor, Format: FormatCursor, Transport: TransportStdio, Command: "node",
				Args: []string{"${workspaceFolder}/server.js"},
				Env:  map[string]string{"HOME_COPY": "${userHome}", "OLD": "${OLD}"}},
			{Name: "off", Source: cursor, Format: FormatCursor, Transport: TransportStdio, Command: "x", Disabled: true},
		}},
		{inspector, []Server{
			{Name: "everything", Source: inspector, Format: FormatInspector, Transport: TransportStdio, Command: "npx",
				Args: []string{"@modelcontextprotocol/server-everything"}, Env: map[string]string{"hello": "Hello MCP!"}},
			{Name: "everything-sse", Source: inspector, Format: FormatInspector, Transport: TransportSSE, URL: "http://localhost:3001/sse"},
			{Name: "everything-http", Source: inspector, Format: FormatInspector, Transport: TransportHTTP, URL: "http://localhost:3001/mcp"},
		}},
		{windsurf, []Server{
			{Name: "figma", Source: windsurf, Format: FormatWindsurf, URL: "https://mcp.figma.com/mcp",
				Headers: map[string]string{"X-Token": "${env:FIGMA_TOKEN}"}},
			{Name: "git", Source: windsurf, Format: FormatWindsurf, Transport: TransportStdio, Command: "uvx", Args: []string{"mcp-server-git"}},
		}},
		{generic, []Server{
			{Name: "mixed", Source: generic, Format: FormatGeneric, Transport: TransportStdio, Command: "run",
				Args:   []string{"${A}", "${B:-bee}", "${env:C}", "${input:d}", "${not a var}", "${unclosed"},
				Inputs: []Input{{ID: "d"}}},
			{Name: "gemini", Source: generic, Format: FormatGeneric, Transport: TransportHTTP, URL: "https://example.com/mcp"},
			{Name: "argv", Source: generic, Format: FormatGeneric, Transport: TransportStdio, Command: "python", Args: []string{"-m", "srv", "--x"}},
			{Name: "cline", Source: generic, Format: FormatGeneric, Transport: TransportSSE, URL: "http://localhost:1/sse"},
		}},
		{"testdata/empty/mcp.json", nil},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			got, err := Load(tt.path)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(summarize(got), summarize(tt.want)) {
				t.Errorf("Load(%s)\n got %+v\nwant %+v", tt.path, got, tt.want)
			}
		})
	}
}

func TestLoadBrokenFiles(t *testing.T) {
	tests := []struct {
		path       string
		line, col  int    // 0 when the error is not a *SyntaxError
		wantSubstr string // in the message, which must also name the file
	}{
		{"testdata/broken/missing-comma.json", 4, 5, "after object key:value pair"},
		{"testdata/broken/unterminated-comment.json", 3, 27, "unterminated /* comment"},
		{"testdata/broken/truncated.json", 3, 32, "unexpected end"},
		{"testdata/broken/array.json", 0, 0, "the top level is array, want an object"},
		{"testdata/broken/no-servers.json", 0, 0, `no "mcpServers" or "servers" object`},
		{"testdata/broken/does-not-exist.json", 0, 0, "no such file"},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.path), func(t *testing.T) {
			servers, err := Load(tt.path)
			if err == nil {
				t.Fatalf("Load(%s) = %v, want an error", tt.path, servers)
			}
			msg := err.Error()
			if !strings.Contains(msg, tt.path) || !strings.Contains(msg, tt.wantSubstr) {
				t.Errorf("error %q: want the path and %q in it", msg, tt.wantSubstr)
			}
			var se *SyntaxError
			if tt.line == 0 {
				if errors.As(err, &se) {
					t.Errorf("got a *SyntaxError %v, want another error", err)
				}
				return
			}
			if !errors.As(err, &se) {
				t.Fatalf("error %v is not a *SyntaxError", err)
			}
			if se.Line != tt.line || se.Column != tt.col {
				t.Errorf("position %d:%d, want %d:%d (%v)", se.Line, se.Column, tt.line, tt.col, err)
			}
			if want := fmt.Sprintf("%s:%d:%d: ", tt.path, tt.line, tt.col); !strings.Contains(msg, want) {
				t.Errorf("error %q does not contain %q", msg, want)
			}
		})
	}
}

func TestLoadBadEntries(t *testing.T) {
	const path = "testdata/bad-entries/mcp.json"
	servers, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct{ name, err string }{
		{"ok", ""},
		{"nothing", `has neither "command" nor "url"`},
		{"weird-type", `unknown type "websocket"`},
		{"stdio-no-command", `type "stdio" needs a "command"`},
		{"http-no-url", `type "http" needs a "url"`},
		{"args-string", `"args": want an array of strings, got string`},
		{"env-object", `"env": "A": want a string, got object`},
		{"not-object", "want an object, got string"},
		{"dup", ""},
	}
	if len(servers) != len(want) {
		t.Fatalf("got %d servers, want %d: %+v", len(servers), len(want), servers)
	}
	for i, w := range want {
		s := servers[i]
		if s.Name != w.name {
			t.Errorf("server %d is %q, want %q", i, s.Name, w.name)
		}
		switch {
		case w.err == "" && s.Err != nil:
			t.Errorf("%s: unexpected error %v", s.Name, s.Err)
		case w.err != "" && s.Err == nil:
			t.Errorf("%s: no error, want %q", s.Name, w.err)
		case w.err != "":
			prefix := fmt.Sprintf("config: %s: server %q: ", path, w.name)
			if msg := s.Err.Error(); !strings.HasPrefix(msg, prefix) || !strings.Contains(msg, w.err) {
				t.Errorf("%s: error %q, want %q after %q", s.Name, msg, w.err, prefix)
			}
		}
	}
	// A repeated key keeps its first place and its last value, like JSON.parse.
	if dup := servers[8]; dup.Command != "second" {
		t.Errorf("dup: command %q, want the last definition", dup.Command)
	}
	if _, err := Find(servers, "nothing"); err == nil || !strings.Contains(err.Error(), "neither") {
		t.Errorf("Find of a broken entry: error %v, want its own", err)
	}
	if _, err := servers[1].Resolve(nil, nil, ""); err == nil {
		t.Error("Resolve of a broken entry succeeded")
	}
}

func TestStripJSONC(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"a": 1}`, `{"a": 1}`},
		{"{\"a\": 1 // c\n}", "{\"a\": 1     \n}"},
		{"{\"a\": /* x\ny */ 1}", "{\"a\":     \n     1}"},
		{`{"u": "http://x/*y*/", "v": "a\"//b"}`, `{"u": "http://x/*y*/", "v": "a\"//b"}`},
		{`{"a": [1, 2, ], }`, `{"a": [1, 2  ]  }`},
		{"{\"a\": 1, // c\n}", "{\"a\": 1      \n}"},
		{`{"a": ",}", "b": "\\"}`, `{"a": ",}", "b": "\\"}`},
		{`["x",/**/]`, `["x"     ]`},
	}
	for _, tt := range tests {
		got, err := stripJSONC([]byte(tt.in))
		if err != nil {
			t.Errorf("stripJSONC(%q): %v", tt.in, err)
			continue
		}
		if string(got) != tt.want {
			t.Errorf("stripJSONC(%q)\n got %q\nwant %q", tt.in, got, tt.want)
		}
	}
}

func FuzzParse(f *testing.F) {
	paths, _ := filepath.Glob("testdata/*/*.json")
	more, _ := filepath.Glob("testdata/*/.*/*.json")
	for _, p := range append(paths, more...) {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(p, data)
		}
	}
	f.Add("x/.vscode/mcp.json", []byte(`{"servers": {"a": {"command": "${input:x}"}}, "inputs": [1, {"id": "x"}]}`))
	f.Fuzz(func(t *testing.T, path string, data []byte) {
		servers, err := Parse(path, data)
		var se *SyntaxError
		if errors.As(err, &se) && (se.Line < 1 || se.Column < 1) {
			t.Errorf("bad position in %v", err)
		}
		for _, s := range servers {
			if s.Err == nil && s.Command == "" && s.URL == "" {
				t.Errorf("server %q has neither command nor URL but no error", s.Name)
			}
			s.EnvFile = "" // not a file the fuzzer should make us read
			_, _ = s.Resolve(map[string]string{}, nil, "/ws")
		}
	})
}

// TestOAuthEntry: an entry's "oauth" object, its scopes in both forms,
// Claude Code's callbackPort, paths resolved against the file with
// ${env:...} expanded; a secret written in the entry is refused.
func TestOAuthEntry(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "mcp.json")
	data := `{"mcpServers": {
		"m2m": {"url": "https://h/mcp", "oauth": {"clientId": "c1", "grant": "client_credentials",
			"clientSecretFile": "${env:SECRETS}/c1", "clientAssertionKey": "keys/c1.pem", "scopes": "a b", "dpop": true,
			"idp": {"issuer": "https://idp"}, "callbackPort": 8765}},
		"leaky": {"url": "https://h/mcp", "oauth": {"clientId": "c1", "clientSecret": "s3cret"}}
	}}`
	servers, err := Parse(path, []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	m2m, err := Find(servers, "m2m")
	if err != nil {
		t.Fatal(err)
	}
	r, err := m2m.Resolve(nil, func(k string) (string, bool) { return "/run/secrets", k == "SECRETS" }, "")
	if err != nil {
		t.Fatal(err)
	}
	o := r.OAuth
	if o == nil || o.ClientID != "c1" || o.Grant != "client_credentials" || o.ClientSecretFile != "/run/secrets/c1" ||
		o.ClientAssertionKey != filepath.Join(dir, "keys/c1.pem") || !reflect.DeepEqual(o.Scopes, []string{"a", "b"}) ||
		!o.DPoP || o.IDP.Issuer != "https://idp" || o.RedirectPort != 8765 {
		t.Errorf("oauth %+v", o)
	}
	if m2m.OAuth.ClientSecretFile != "${env:SECRETS}/c1" {
		t.Errorf("Resolve changed the entry it was called on: %+v", m2m.OAuth)
	}
	var leaky Server
	for _, s := range servers {
		if s.Name == "leaky" {
			leaky = s
		}
	}
	if leaky.Err == nil || !strings.Contains(leaky.Err.Error(), "clientSecretFile") {
		t.Errorf("a clientSecret in the entry: %v", leaky.Err)
	}
}

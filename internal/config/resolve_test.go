package config

import (
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func envOf(vars map[string]string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		v, ok := vars[name]
		return v, ok
	}
}

func mustFind(t *testing.T, path, name string) Server {
	t.Helper()
	servers, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Find(servers, name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func mustAbs(t *testing.T, path string) string {
	t.Helper()
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

func TestResolve(t *testing.T) {
	vscodeDir := mustAbs(t, "testdata/vscode")
	cursorDir := mustAbs(t, "testdata/cursor")
	sep := string(filepath.Separator)

	type fields struct {
		Command string
		Args    []string
		Env     map[string]string
		EnvFile string
		Cwd     string
		URL     string
		Headers map[string]string
	}
	tests := []struct {
		name      string
		path      string
		server    string
		inputs    map[string]string
		env       map[string]string
		workspace string
		want      fields
		wantErr   string
	}{
		{
			name: "claude code default used", path: "testdata/claude-code/.mcp.json", server: "api",
			env:  map[string]string{"API_KEY": "k1"},
			want: fields{URL: "https://api.example.com/mcp", Headers: map[string]string{"Authorization": "Bearer k1"}},
		},
		{
			name: "claude code value over default", path: "testdata/claude-code/.mcp.json", server: "api",
			env:  map[string]string{"API_KEY": "k1", "API_BASE_URL": "http://localhost:1"},
			want: fields{URL: "http://localhost:1/mcp", Headers: map[string]string{"Authorization": "Bearer k1"}},
		},
		{
			name: "claude code unset variable", path: "testdata/claude-code/.mcp.json", server: "api",
			wantErr: "environment variable API_KEY is not set",
		},
		{
			name: "claude code only its own syntax", path: "testdata/claude-code/.mcp.json", server: "local",
			env: map[string]string{"TOOLS": "/opt", "TOKEN": "t", "ROOT": "", "NOT_CLAUDE_SYNTAX": "x", "PLAIN": "x"},
			want: fields{Command: "/opt/server", Args: []string{"--root", ".", "${env:NOT_CLAUDE_SYNTAX}", "$PLAIN"},
				Env: map[string]string{"TOKEN": "t"}},
		},
		{
			name: "claude desktop expands nothing", path: "testdata/claude-desktop/claude_desktop_config.json", server: "filesystem",
			env: map[string]string{"HOME": "/home/u"},
			want: fields{Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-filesystem", "/Users/me/Desktop", "${HOME}"},
				Env: map[string]string{"DEBUG": "1", "PORT": "8080", "VERBOSE": "true"}},
		},
		{
			name: "vscode inputs and envFile", path: "testdata/vscode/.vscode/mcp.json", server: "perplexity",
			inputs: map[string]string{"api-key": "sk-1", "region": "us-east"},
			want: fields{Command: "docker", Args: []string{"run", "-i", "--rm", "-e", "PERPLEXITY_API_KEY", "mcp/perplexity-ask"},
				Env: map[string]string{"PERPLEXITY_API_KEY": "sk-1", "REGION": "us-east",
					"FROM_FILE": "1", "QUOTED": "a b\n c", "SINGLE": "x $y"},
				EnvFile: filepath.Join(vscodeDir, ".env")},
		},
		{
			name: "vscode predefined variables", path: "testdata/vscode/.vscode/mcp.json", server: "fetch",
			env:       map[string]string{"PATH_EXTRA": "/p"},
			workspace: "/ignored/because/the/file/belongs/to/a/project",
			want: fields{Command: "uvx", Args: []string{"mcp-server-fetch", "vscode", "/p", "${config:editor.fontSize}"},
				Cwd: filepath.Join(vscodeDir, "tools")},
		},
		{
			name: "vscode userHome and path separator", path: "testdata/vscode/.vscode/mcp.json", server: "github",
			env: map[string]string{"HOME": "/home/u"},
			want: fields{URL: "https://api.githubcopilot.com/mcp/",
				Headers: map[string]string{"X-Note": "/* not a comment */", "X-Home": "/home/u" + sep + "x"}},
		},
		{
			name: "cursor", path: "testdata/cursor/.cursor/mcp.json", server: "local",
			env: map[string]string{"HOME": "/home/u", "OLD": "old"},
			want: fields{Command: "node", Args: []string{filepath.Join(cursorDir, "server.js")},
				Env: map[string]string{"HOME_COPY": "/home/u", "OLD": "${OLD}"}},
		},
		{
			name: "cursor unset env is empty", path: "testdata/cursor/.cursor/mcp.json", server: "linear",
			want: fields{URL: "https://mcp.linear.app/sse", Headers: map[string]string{"Authorization": "Bearer "}},
		},
		{
			name: "windsurf", path: "testdata/windsurf/mcp_config.json", server: "figma",
			env:  map[string]string{"FIGMA_TOKEN": "f"},
			want: fields{URL: "https://mcp.figma.com/mcp", Headers: map[string]string{"X-Token": "f"}},
		},
		{
			name: "generic takes both syntaxes", path: "testdata/generic/servers.json", server: "mixed",
			env: map[string]string{"A": "a", "C": "c"}, inputs: map[string]string{"d": "D"},
			want: fields{Command: "run", Args: []string{"a", "bee", "c", "D", "${not a var}", "${unclosed"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mustFind(t, tt.path, tt.server)
			r, err := s.Resolve(tt.inputs, envOf(tt.env), tt.workspace)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), tt.path) {
					t.Fatalf("error %v, want %q naming %s", err, tt.wantErr, tt.path)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := fields{r.Command, r.Args, r.Env, r.EnvFile, r.Cwd, r.URL, r.Headers}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Resolve\n got %+v\nwant %+v", got, tt.want)
			}
			if r.Name != s.Name || r.Source != s.Source || r.Transport != s.Transport {
				t.Errorf("Resolve changed identity: %+v", r)
			}
		})
	}
}

func TestResolveLeavesOriginalAlone(t *testing.T) {
	s := mustFind(t, "testdata/claude-code/.mcp.json", "local")
	before := s.Env["TOKEN"]
	if _, err := s.Resolve(nil, envOf(map[string]string{"TOOLS": "/t", "TOKEN": "secret"}), ""); err != nil {
		t.Fatal(err)
	}
	if s.Env["TOKEN"] != before {
		t.Errorf("Resolve changed the original's Env: %q", s.Env["TOKEN"])
	}
}

func TestResolveMissingInputs(t *testing.T) {
	s := mustFind(t, "testdata/vscode/.vscode/mcp.json", "perplexity")
	_, err := s.Resolve(map[string]string{"region": "eu"}, nil, "")
	var mi *MissingInputError
	if !errors.As(err, &mi) {
		t.Fatalf("error %v, want a *MissingInputError", err)
	}
	want := &MissingInputError{
		Server: "perplexity", Source: "testdata/vscode/.vscode/mcp.json", IDs: []string{"api-key"},
		Inputs: []Input{{ID: "api-key", Type: "promptString", Description: "Perplexity API Key", Password: true}},
	}
	if !reflect.DeepEqual(mi, want) {
		t.Errorf("got %+v\nwant %+v", mi, want)
	}
	if msg := err.Error(); !strings.Contains(msg, "api-key") || !strings.Contains(msg, "perplexity") {
		t.Errorf("message %q", msg)
	}

	// An input referenced but never declared is reported with just its ID.
	g := mustFind(t, "testdata/generic/servers.json", "mixed")
	_, err = g.Resolve(nil, envOf(map[string]string{"A": "a"}), "")
	if !errors.As(err, &mi) || !reflect.DeepEqual(mi.Inputs, []Input{{ID: "d"}}) {
		t.Errorf("generic: error %#v", err)
	}
}

func TestResolveWorkspace(t *testing.T) {
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	user := filepath.Join(home, ".config", "Code", "User", "mcp.json")
	cursorUser := filepath.Join(home, ".cursor", "mcp.json")
	writeFile(t, user, `{"servers": {"s": {"command": "${workspaceFolder}/bin/s", "cwd": "sub"}}}`)
	writeFile(t, cursorUser, `{"mcpServers": {"c": {"command": "${workspaceFolderBasename}"}}}`)
	env := envOf(map[string]string{"HOME": home})

	s := mustFind(t, user, "s")
	if _, err := s.Resolve(nil, env, ""); err == nil || !strings.Contains(err.Error(), "no workspace folder") {
		t.Errorf("user file without a workspace: error %v", err)
	}
	r, err := s.Resolve(nil, env, "/proj")
	if err != nil {
		t.Fatal(err)
	}
	if r.Command != "/proj/bin/s" || r.Cwd != filepath.Join("/proj", "sub") {
		t.Errorf("got command %q cwd %q", r.Command, r.Cwd)
	}

	// ~/.cursor/mcp.json is the user's file, not a project in the home folder.
	c := mustFind(t, cursorUser, "c")
	r, err = c.Resolve(nil, env, "/work/app")
	if err != nil {
		t.Fatal(err)
	}
	if r.Command != "app" {
		t.Errorf("got command %q, want the basename of the given workspace", r.Command)
	}
}

func TestResolveEnvFileMissing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, ".vscode", "mcp.json")
	writeFile(t, path, `{"servers": {"s": {"command": "x", "envFile": "missing.env", "env": {"A": "1"}}}}`)
	s := mustFind(t, path, "s")
	if _, err := s.Resolve(nil, nil, ""); err == nil || !strings.Contains(err.Error(), "envFile") {
		t.Errorf("error %v, want one about envFile", err)
	}
}

package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func noEnv(string) string { return "" }

func TestLocations(t *testing.T) {
	j := filepath.Join
	project := func(dir string) []string {
		return []string{j(dir, ".mcp.json"), j(dir, ".vscode", "mcp.json"), j(dir, ".cursor", "mcp.json")}
	}
	root := string(filepath.Separator)
	tests := []struct {
		name string
		opts SearchOptions
		user []string // after the project files of /w and /
	}{
		{
			name: "linux defaults",
			opts: SearchOptions{GOOS: "linux", WorkDir: j(root, "w"), Env: func(k string) string {
				return map[string]string{"HOME": "/h"}[k]
			}},
			user: []string{"/h/.claude.json", "/h/.cursor/mcp.json",
				"/h/.config/Code/User/mcp.json", "/h/.config/Code - Insiders/User/mcp.json",
				"/h/.config/Claude/claude_desktop_config.json", "/h/.codeium/windsurf/mcp_config.json"},
		},
		{
			name: "linux XDG and CLAUDE_CONFIG_DIR",
			opts: SearchOptions{GOOS: "linux", WorkDir: j(root, "w"), Home: "/h", Env: func(k string) string {
				return map[string]string{"XDG_CONFIG_HOME": "/xdg", "CLAUDE_CONFIG_DIR": "/cc"}[k]
			}},
			user: []string{"/cc/.claude.json", "/h/.cursor/mcp.json",
				"/xdg/Code/User/mcp.json", "/xdg/Code - Insiders/User/mcp.json",
				"/xdg/Claude/claude_desktop_config.json", "/h/.codeium/windsurf/mcp_config.json"},
		},
		{
			name: "macOS",
			opts: SearchOptions{GOOS: "darwin", WorkDir: j(root, "w"), Home: "/Users/me", Env: noEnv},
			user: []string{"/Users/me/.claude.json", "/Users/me/.cursor/mcp.json",
				"/Users/me/Library/Application Support/Code/User/mcp.json",
				"/Users/me/Library/Application Support/Code - Insiders/User/mcp.json",
				"/Users/me/Library/Application Support/Claude/claude_desktop_config.json",
				"/Users/me/.codeium/windsurf/mcp_config.json"},
		},
		{
			name: "windows",
			opts: SearchOptions{GOOS: "windows", WorkDir: j(root, "w"), Env: func(k string) string {
				return map[string]string{"USERPROFILE": "/u", "HOME": "/wrong", "APPDATA": "/u/AppData/Roaming"}[k]
			}},
			user: []string{"/u/.claude.json", "/u/.cursor/mcp.json",
				"/u/AppData/Roaming/Code/User/mcp.json", "/u/AppData/Roaming/Code - Insiders/User/mcp.json",
				"/u/AppData/Roaming/Claude/claude_desktop_config.json", "/u/.codeium/windsurf/mcp_config.json"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := append(project(j(root, "w")), project(root)...)
			for _, p := range tt.user {
				want = append(want, filepath.FromSlash(p))
			}
			if got := Locations(tt.opts); !reflect.DeepEqual(got, want) {
				t.Errorf("Locations\n got %q\nwant %q", got, want)
			}
		})
	}
}

// TestSearch builds a home and a work tree and checks what is found, what is
// reported, and how Find deals with names defined in several files.
func TestSearch(t *testing.T) {
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	work := filepath.Join(dir, "work")
	proj := filepath.Join(work, "proj")
	sub := filepath.Join(proj, "sub")

	writeFile(t, filepath.Join(sub, ".vscode", "mcp.json"), `{
		// JSONC
		"servers": {"vs": {"type": "http", "url": "http://localhost:1/mcp",},},
	}`)
	writeFile(t, filepath.Join(sub, ".cursor"), "a file where a directory would be")
	writeFile(t, filepath.Join(proj, ".mcp.json"), `{"mcpServers": {"shared": {"command": "project-version"}}}`)
	if err := os.MkdirAll(filepath.Join(work, ".mcp.json"), 0o755); err != nil { // unreadable
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(home, ".claude.json"), `{
		"mcpServers": {"github": {"type": "stdio", "command": "gh-mcp", "args": [], "env": {}}},
		"projects": {
			"`+filepath.ToSlash(proj)+`": {"mcpServers": {"db": {"command": "db-mcp"}}},
			"`+filepath.ToSlash(sub)+`": {"mcpServers": {"db": {"command": "db-mcp", "args": ["--sub"]}}},
			"`+filepath.ToSlash(work)+`x": {"mcpServers": {"elsewhere": {"command": "x"}}}
		}
	}`)
	writeFile(t, filepath.Join(home, ".cursor", "mcp.json"), `{"mcpServers": {"github": {"command": "gh-mcp"}}}`)
	writeFile(t, filepath.Join(home, ".config", "Code", "User", "mcp.json"), `{"servers": {"time": {"command": "uvx", "args": ["mcp-server-time"]}}}`)
	writeFile(t, filepath.Join(home, ".config", "Claude", "claude_desktop_config.json"),
		`{"mcpServers": {"shared": {"command": "desktop-version"}, "filesystem": {"command": "npx"}}}`)
	windsurf := filepath.Join(home, ".codeium", "windsurf", "mcp_config.json")
	writeFile(t, windsurf, "{\n  \"mcpServers\": {\n    \"w\": {\"command\": \"x\"}}\n  }\n}\n")

	servers, problems := Search(SearchOptions{Home: home, WorkDir: sub, GOOS: "linux", Env: noEnv})

	type found struct{ Name, Source, Project string }
	var got []found
	for _, s := range servers {
		got = append(got, found{s.Name, s.Source, s.Project})
	}
	claudeJSON := filepath.Join(home, ".claude.json")
	desktop := filepath.Join(home, ".config", "Claude", "claude_desktop_config.json")
	want := []found{
		{"vs", filepath.Join(sub, ".vscode", "mcp.json"), ""},
		{"shared", filepath.Join(proj, ".mcp.json"), ""},
		{"db", claudeJSON, filepath.ToSlash(sub)},
		{"db", claudeJSON, filepath.ToSlash(proj)},
		{"github", claudeJSON, ""},
		{"github", filepath.Join(home, ".cursor", "mcp.json"), ""},
		{"time", filepath.Join(home, ".config", "Code", "User", "mcp.json"), ""},
		{"shared", desktop, ""},
		{"filesystem", desktop, ""},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Search found\n%q\nwant\n%q", got, want)
	}

	var problemPaths []string
	for _, p := range problems {
		problemPaths = append(problemPaths, p.Path)
		if !strings.Contains(p.String(), p.Path) {
			t.Errorf("problem %q does not name its file", p)
		}
	}
	if want := []string{filepath.Join(work, ".mcp.json"), windsurf}; !reflect.DeepEqual(problemPaths, want) {
		t.Errorf("problems %q, want %q", problems, want)
	}
	var se *SyntaxError
	if len(problems) == 2 && (!errors.As(problems[1].Err, &se) || se.Line != 5 || se.Column != 1) {
		t.Errorf("windsurf problem %v, want a syntax error at 5:1", problems[1].Err)
	}

	t.Run("same definition twice is not ambiguous", func(t *testing.T) {
		s, err := Find(servers, "github")
		if err != nil {
			t.Fatal(err)
		}
		if s.Source != claudeJSON {
			t.Errorf("got %s, want the first", s.Source)
		}
	})
	t.Run("different definitions are", func(t *testing.T) {
		_, err := Find(servers, "shared")
		var ae *AmbiguousError
		if !errors.As(err, &ae) {
			t.Fatalf("error %v, want an *AmbiguousError", err)
		}
		if want := []string{filepath.Join(proj, ".mcp.json"), desktop}; !reflect.DeepEqual(ae.Sources, want) {
			t.Errorf("sources %q, want %q", ae.Sources, want)
		}
		for _, src := range ae.Sources {
			if !strings.Contains(err.Error(), src) {
				t.Errorf("message %q does not name %s", err, src)
			}
		}
	})
	t.Run("projects of one file", func(t *testing.T) {
		_, err := Find(servers, "db")
		if err == nil || !strings.Contains(err.Error(), "(project "+filepath.ToSlash(sub)+")") {
			t.Errorf("error %v, want the projects named", err)
		}
	})
	t.Run("not found", func(t *testing.T) {
		_, err := Find(servers, "GitHub")
		var nf *NotFoundError
		if !errors.As(err, &nf) {
			t.Fatalf("error %v, want a *NotFoundError", err)
		}
		if want := []string{"db", "filesystem", "github", "shared", "time", "vs"}; !reflect.DeepEqual(nf.Available, want) {
			t.Errorf("available %q, want %q", nf.Available, want)
		}
		if msg := err.Error(); !strings.Contains(msg, `did you mean "github"`) || !strings.Contains(msg, "available: db, filesystem") {
			t.Errorf("message %q", msg)
		}
	})
	t.Run("nothing configured", func(t *testing.T) {
		_, err := Find(nil, "x")
		if err == nil || !strings.Contains(err.Error(), "no servers configured") {
			t.Errorf("error %v", err)
		}
	})
}

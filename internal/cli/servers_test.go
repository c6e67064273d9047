package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcpi-dev/mcpi/internal/command"
	"github.com/mcpi-dev/mcpi/internal/mcptest"
)

func TestServerFromConfig(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	vscode := map[string]any{
		"inputs": []any{map[string]any{"type": "promptString", "id": "peer", "description": "which peer"}},
		"servers": map[string]any{
			"demo":   map[string]any{"type": "stdio", "command": os.Args[0], "args": []string{"-test.run=^$"}, "env": map[string]string{mcptest.PeerEnv: "${input:peer}"}},
			"remote": map[string]any{"type": "http", "url": "http://127.0.0.1:1/mcp"},
		},
	}
	claude := map[string]any{"mcpServers": map[string]any{
		"demo": map[string]any{"command": os.Args[0], "args": []string{"-test.run=^$"}, "env": map[string]string{mcptest.PeerEnv: "demo"}},
	}}
	write := func(name string, v any) string {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		b, _ := json.Marshal(v)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	vs := write(".vscode/mcp.json", vscode)
	cd := write("claude_desktop_config.json", claude)
	for _, tc := range []cliCase{
		{name: "servers", args: []string{"servers", "--config", vs}, stdout: []string{"demo", "stdio", "remote", "http://127.0.0.1:1/mcp", "vscode"}},
		{name: "servers json", args: []string{"servers", "--config", vs, "--json"}, jsonStdout: true, stdout: []string{`"name":"remote"`}},
		{name: "claude desktop", args: []string{"ping", "--server", "demo", "--config", cd}, stdout: []string{"pong"}},
		{name: "vscode with input", args: []string{"info", "--server", "demo", "--config", vs, "--input", "peer=demo"}, stdout: []string{"mcpi-demo"}},
		{name: "missing input", args: []string{"info", "--server", "demo", "--config", vs}, code: command.ExitUsage, stderr: []string{"--input peer=VALUE"}},
		{name: "unknown server", args: []string{"info", "--server", "nope", "--config", vs}, code: command.ExitUsage, stderr: []string{"available: demo, remote"}},
		{name: "remote entry", args: []string{"info", "--server", "remote", "--config", vs}, code: command.ExitConnect, stderr: []string{"127.0.0.1:1"}},
		{name: "config without server", args: []string{"info", "--config", vs}, code: command.ExitUsage},
		{name: "bad config file", args: []string{"servers", "--config", filepath.Join(dir, "missing.json")}, code: command.ExitUsage},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			checkCase(t, tc)
		})
	}
}

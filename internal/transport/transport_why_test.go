package transport

import "testing"

// TestStderrWhy: a server that dies at start is explained by the lines
// that say why, not by Node's version banner.
func TestStderrWhy(t *testing.T) {
	node := []string{"/tmp/[eval]:1", `throw new Error("boom")`, "^", "", "Error: boom", "    at [eval]:1:7", "    at runScriptInThisContext (node:internal/vm:209:10)",
		"    at node:internal/process/execution:118:14", "", "Node.js v22.11.0"}
	python := []string{"Traceback (most recent call last):", `  File "server.py", line 3, in <module>`, "    import mcp", "ModuleNotFoundError: No module named 'mcp'"}
	tests := []struct {
		tail []string
		want string
	}{
		{node, "Error: boom | at [eval]:1:7 | at runScriptInThisContext (node:internal/vm:209:10)"},
		{python, "ModuleNotFoundError: No module named 'mcp'"},
		{[]string{"starting", "listening on stdio"}, "listening on stdio"},
		{[]string{"npm ERR! code E404", "npm ERR! 404 Not Found - GET https://registry.npmjs.org/nosuch"}, "npm ERR! 404 Not Found - GET https://registry.npmjs.org/nosuch"},
		{nil, ""},
		// A frame of a function named ...Error is no reason: the line above
		// the frames is.
		{[]string{`{"level":"fatal","message":"Authentication failed - check your Slack tokens"}`, "Error: Command failed: slack-mcp-server --transport stdio",
			"    at checkExecSyncError (node:child_process:890:11)", "    at Object.execFileSync (node:child_process:926:15)", "", "Node.js v20.20.2"},
			"Error: Command failed: slack-mcp-server --transport stdio | at checkExecSyncError (node:child_process:890:11) | at Object.execFileSync (node:child_process:926:15)"},
	}
	for _, tt := range tests {
		if got := StderrWhy(tt.tail); got != tt.want {
			t.Errorf("StderrWhy(%q) = %q, want %q", tt.tail, got, tt.want)
		}
	}
	e := &ServerExitError{ExitCode: 1, StderrTail: node}
	if got := e.Error(); got != "server exited with status 1; stderr: Error: boom | at [eval]:1:7 | at runScriptInThisContext (node:internal/vm:209:10)" {
		t.Errorf("Error() = %q", got)
	}
}

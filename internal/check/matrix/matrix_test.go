package matrix

import (
	"strings"
	"testing"

	"github.com/mcpi-dev/mcpi/internal/check"
	"github.com/mcpi-dev/mcpi/internal/check/doctor"
	"github.com/mcpi-dev/mcpi/internal/config"
)

// TestShellWord: the footer's --config FILE is one word a shell reads
// back as the path.
func TestShellWord(t *testing.T) {
	for in, want := range map[string]string{"/tmp/mcp.json": "/tmp/mcp.json", "/tmp/my mcp.json": "'/tmp/my mcp.json'", "it's.json": `'it'\''s.json'`} {
		if got := ShellWord(in); got != want {
			t.Errorf("ShellWord(%q) = %s, want %s", in, got, want)
		}
	}
}

// A configured server is described without what its entry holds secret,
// and what is said of one that could not be checked loses those too.
func TestTargetAndRedactKeepSecretsOut(t *testing.T) {
	s := config.Server{Name: "gh", Source: "mcp.json", Command: "npx", Args: []string{"server", "--token", "ghp_0123456789abcdefghij"},
		Env: map[string]string{"GITHUB_TOKEN": "ghp_0123456789abcdefghij"}}
	if got := Target(s); strings.Contains(got, "ghp_0123456789abcdefghij") || !strings.HasPrefix(got, "npx server --token") {
		t.Errorf("Target = %q", got)
	}
	u := config.Server{Name: "web", URL: "https://mcp.example/mcp?key=v", Headers: map[string]string{"Authorization": "Bearer s3cr3t-value-x"}}
	line := Line{Name: u.Name, Outcome: "unreachable", Reason: "refused Bearer s3cr3t-value-x",
		Connection: &doctor.Report{Steps: []doctor.Step{{Detail: "sent s3cr3t-value-x"}}}}
	line.Target = Target(u)
	line.Redact(u)
	if strings.Contains(line.Reason, "s3cr3t") || strings.Contains(line.Connection.Steps[0].Detail, "s3cr3t") || line.Connection.Target != line.Target {
		t.Errorf("redacted: %+v %+v", line, line.Connection)
	}
}

// The matrix: a line per server, a cell per host, the reasons said once
// each and made safe for a terminal, and the footer's command for one.
func TestWrite(t *testing.T) {
	ids := check.HostIDs()
	results := []Line{
		{Name: "good", Outcome: "checked", Errors: 0, Warnings: 2, Notes: 1,
			Hosts: []check.HostVerdict{{Host: ids[0], Verdict: "accepted"}, {Host: ids[1], Verdict: "rejected"}}},
		{Name: "gone\x1b[2J", Outcome: "unreachable", Reason: "connection refused\nagain"},
	}
	var b strings.Builder
	Write(&b, results, "/tmp/my mcp.json")
	out := b.String()
	lines := strings.Split(out, "\n")
	if !strings.HasPrefix(lines[0], "SERVER") || !strings.Contains(lines[0], ids[0]) {
		t.Fatalf("header: %q", lines[0])
	}
	if f := strings.Fields(lines[1]); len(f) < 5 || f[2] != "0/2/1" || f[3] != "ok" || f[4] != "REJECT" {
		t.Errorf("a checked server's line: %q", lines[1])
	}
	if f := strings.Fields(lines[2]); f[2] != "-" || strings.ContainsRune(lines[2], 0x1b) {
		t.Errorf("an unreachable server's line: %q", lines[2])
	}
	if strings.ContainsRune(out, 0x1b) || !strings.Contains(out, "connection refused again") {
		t.Errorf("reasons:\n%s", out)
	}
	if !strings.Contains(out, "mcpi check --server NAME --config '/tmp/my mcp.json' shows one server's findings") {
		t.Errorf("footer:\n%s", out)
	}
}

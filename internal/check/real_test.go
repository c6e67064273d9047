package check

import (
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mcpi-dev/mcpi/internal/mcptest"
	"github.com/mcpi-dev/mcpi/internal/session"
)

// TestRealServers runs check on servers nobody here wrote. Every finding
// must be one docs/check.md explains as true (listed here by rule); a new
// one is a bug in the check or a change in the server, to read either way.
func TestRealServers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		cmd      func(t *testing.T) []string
		expected []string // the rules docs/check.md shows this server breaks
	}{
		{"server-everything", func(t *testing.T) []string { return mcptest.Everything(t) },
			[]string{"errors/unknown-resource", "errors/unknown-tool", "prompts/get-with-arguments", "wire/stderr"}},
		{"server-filesystem", func(t *testing.T) []string { return mcptest.Reference(t, "filesystem", t.TempDir()) },
			[]string{"errors/unknown-tool", "security/shadowing", "wire/stderr"}},
		{"server-memory", func(t *testing.T) []string { return mcptest.Reference(t, "memory") },
			[]string{"errors/unknown-resource", "errors/unknown-tool", "wire/stderr"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := []string{"MEMORY_FILE_PATH=" + t.TempDir() + "/memory.jsonl"}
			rep := checkStdio(t, tc.cmd(t), env, session.EraAuto, 20*time.Second, Options{Call: true})
			got := map[string]bool{}
			for _, f := range rep.Findings {
				got[f.Rule] = true
			}
			var rules []string
			for r := range got {
				rules = append(rules, r)
			}
			sort.Strings(rules)
			want := map[string]bool{}
			for _, r := range tc.expected {
				want[r] = true
				if !got[r] {
					t.Errorf("the documented %s finding is gone (found: %v): update docs/check.md", r, rules)
				}
			}
			for _, f := range rep.Findings {
				if f.Rule == "errors/unknown-tool" && !strings.Contains(f.Message, "TypeScript SDK's McpServer default") {
					t.Errorf("the unknown-tool finding does not say it is the TypeScript SDK's default: %s", f.Message)
				}
				if !want[f.Rule] {
					t.Errorf("a finding docs/check.md does not explain: %s %s: %s", f.Rule, f.Subject, f.Message)
				}
			}
			if len(rep.Rules) < 30 {
				t.Errorf("only %d rules checked", len(rep.Rules))
			}
		})
	}
}

package cli

import (
	"testing"

	"github.com/mcpi-dev/mcpi/internal/mcptest"
)

func TestCheckCommand(t *testing.T) {
	t.Parallel()
	clean := peerArgs(mcptest.BrokenPrefix)
	broken := peerArgs(mcptest.BrokenPrefix + "tools/input-schema")
	for _, tc := range []cliCase{
		{name: "clean", args: with(clean, "check"), stdout: []string{"mcpi check: broken 1.0", "0 error(s), 0 warning(s), 0 note(s)"}},
		{name: "errors exit 1", args: with(broken, "check"), code: ExitToolError, stdout: []string{"ERRORS (2)", "tools/input-schema", "MCP 2025-11-25 server/tools § Tool"}},
		{name: "json", args: with(broken, "check", "--json"), code: ExitToolError, jsonStdout: true, stdout: []string{`"rule":"tools/input-schema"`, `"severity":"error"`}},
		{name: "sarif", args: with(broken, "check", "--sarif"), code: ExitToolError, jsonStdout: true, stdout: []string{`"version":"2.1.0"`, `"ruleId":"tools/input-schema"`}},
		{name: "json and sarif", args: with(broken, "check", "--json", "--sarif"), code: ExitUsage, stderr: []string{"give one"}},
		{name: "call", args: with(peerArgs(mcptest.BrokenPrefix+"tools/call-result"), "check", "--call"), code: ExitToolError, stdout: []string{"tools/call-result", "structuredContent does not match"}},
		{name: "no call without --call", args: with(peerArgs(mcptest.BrokenPrefix+"tools/call-result"), "check"), stdout: []string{"0 error(s)"}},
		{name: "connect failure", args: with(peerArgs("hostile:"+mcptest.HostileStderrExit), "check"), code: ExitConnect},
		{name: "poison is shown safely", args: with(peerArgs("hostile:"+mcptest.HostilePoison), "check"), code: ExitToolError, stdout: []string{"security/hidden-text", `\e]0;pwned`}, notStdout: []string{"\x1b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			checkCase(t, tc)
		})
	}
}

package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpi-dev/mcpi/internal/bounds"
	"github.com/mcpi-dev/mcpi/internal/command"
	"github.com/mcpi-dev/mcpi/internal/mcptest"
)

// TestNoServerDecidesTheLengthOfALine drives commands against a server
// whose words are megabytes long where mcpi quotes them (a skill's digest,
// 20,000 frontmatter fields, a tool's error, a frame mcpi warns about, its
// stderr under -v): no line of standard error, and no message of a --json
// error document, is longer than bounds.MaxLine and the few bytes that say
// how much was cut. Machine output (a --json result) is not cut.
func TestNoServerDecidesTheLengthOfALine(t *testing.T) {
	t.Parallel()
	longest := bounds.MaxLine + len("… (1023.9 MiB more)")
	peer := peerArgs("hostile:" + mcptest.HostileLongText)
	for _, tc := range []struct {
		args []string
		code command.ExitCode
		json bool
	}{
		{args: []string{"skill", mcptest.LongTextDigest}, code: command.ExitVerify},
		{args: []string{"skill", mcptest.LongTextFields}, code: command.ExitVerify},
		{args: []string{"skill", mcptest.LongTextDigest, "--json"}, code: command.ExitVerify},
		{args: []string{"skill", mcptest.LongTextFields, "--json"}, code: command.ExitVerify},
		{args: []string{"call", "fail"}, code: command.ExitProtocol},
		{args: []string{"call", "fail", "--json"}, code: command.ExitProtocol, json: true},
		{args: []string{"call", "warn"}},
		{args: []string{"call", "warn", "-v"}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			t.Parallel()
			code, out, errOut := runCLI(t, "", with(peer, append(tc.args, "--era", "legacy")...)...)
			if code != tc.code {
				t.Errorf("exit %d, want %d", code, tc.code)
			}
			cut := false
			for i, line := range strings.Split(errOut, "\n") {
				if len(line) > longest {
					t.Errorf("stderr line %d is %d bytes (at most %d): %.200q…", i+1, len(line), longest, line)
				}
				cut = cut || strings.Contains(line, " more)")
			}
			if !cut {
				t.Errorf("no line of stderr says what was cut:\n%.2000s", errOut)
			}
			if tc.json {
				var doc command.JSONErrorObject
				if err := json.Unmarshal([]byte(out), &doc); err != nil {
					t.Fatalf("stdout is not a JSON error document: %v\n%.2000s", err, out)
				}
				if n := len(doc.Error.Message); n > longest || !strings.HasSuffix(doc.Error.Message, " more)") {
					t.Errorf("the JSON error's message is %d bytes (at most %d, saying what was cut): %.200q…", n, longest, doc.Error.Message)
				}
			}
		})
	}
}

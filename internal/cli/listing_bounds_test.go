package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpi-dev/mcpi/internal/command"
	"github.com/mcpi-dev/mcpi/internal/mcptest"
)

// TestTruncatedListingSaysSo: a server whose cursors never end, or come
// round again, gets every listing printed as far as it went, then the
// truncation said on stderr with exit 4: never a listing passed off as
// whole, never a JSON-RPC code the server did not send.
func TestTruncatedListingSaysSo(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		mode, verb, first, why string
	}{
		{mcptest.BoundsEndlessCursor, "tools", "t1", "still gave a next cursor after 10000 pages, the most one listing reads; stopped with 10000 item(s)"},
		{mcptest.BoundsEndlessCursor, "skills", "s1", "still gave a next cursor after 10000 pages"},
		{mcptest.BoundsCyclingCursor, "tools", "t1", `after 3 page(s) the server repeated cursor "a", which leads back to a page already listed; stopped with 3 item(s)`},
		{mcptest.BoundsCyclingCursor, "prompts", "p3", `the server repeated cursor "a"`},
		{mcptest.BoundsCyclingCursor, "skills", "s2", `the server repeated cursor "a"`},
	} {
		t.Run(tc.mode+"-"+tc.verb, func(t *testing.T) {
			t.Parallel()
			code, out, errOut := runCLI(t, "", with(peerArgs(mcptest.ListsPrefix+tc.mode), tc.verb, "--era", "legacy")...)
			if code != command.ExitProtocol || !strings.Contains(out, tc.first) || !strings.Contains(errOut, "the listing is incomplete") || !strings.Contains(errOut, tc.why) {
				t.Errorf("exit %d, stdout %.200q, stderr %q", code, out, errOut)
			}
			if strings.Contains(errOut, "-32602") || strings.Contains(errOut, "server error") {
				t.Errorf("the truncation is passed off as the server's error: %q", errOut)
			}
		})
	}
	// --json: the items as one array on stdout, the truncation on stderr.
	code, out, errOut := runCLI(t, "", with(peerArgs(mcptest.ListsPrefix+mcptest.BoundsCyclingCursor), "tools", "--era", "legacy", "--json")...)
	var tools []struct{ Name string }
	if err := json.Unmarshal([]byte(out), &tools); err != nil || len(tools) != 3 || code != command.ExitProtocol || !strings.Contains(errOut, "the listing is incomplete") {
		t.Errorf("--json: exit %d, %v, stdout %q, stderr %q", code, err, out, errOut)
	}
}

package cli

import (
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/mcpi-dev/mcpi/internal/command"
	"github.com/mcpi-dev/mcpi/internal/demoserver"
)

func TestEras(t *testing.T) {
	t.Parallel()
	modern, both, legacy := peerArgs("demo:modern"), peerArgs("demo:both"), peerArgs("demo")
	root := filepath.ToSlash(t.TempDir())
	srv := httptest.NewServer(demoserver.HTTPHandler(demoserver.Options{Era: demoserver.EraBoth}))
	t.Cleanup(srv.Close)
	for _, tc := range []cliCase{
		{name: "auto detects modern", args: with(both, "info"), stdout: []string{"2026-07-28 (modern era; detected: the server answered server/discover)"}},
		{name: "auto detects legacy", args: with(legacy, "info"), stdout: []string{"2025-11-25 (legacy era; detected"}},
		{name: "forced legacy", args: with(both, "info", "--era", "legacy"), stdout: []string{"2025-11-25 (legacy era; forced by --era legacy)"}},
		{name: "forced revision", args: with(both, "info", "--protocol-version", "2026-07-28"), stdout: []string{"modern era; forced by --protocol-version 2026-07-28"}},
		{name: "forced modern on legacy", args: with(legacy, "info", "--era", "modern"), code: command.ExitProtocol, stderr: []string{"2025-11-25"}},
		{name: "info json", args: with(modern, "info", "--json"), jsonStdout: true, stdout: []string{`"era":"modern"`, `"supportedVersions":["2026-07-28"]`}},
		{name: "ping is discover", args: with(modern, "ping"), stdout: []string{"server/discover"}},
		{name: "tools", args: with(modern, "tools"), stdout: []string{"long_running"}},
		{name: "call", args: with(modern, "call", "add", "a=1", "b=2"), stdout: []string{`"sum":3`}},
		{name: "MRTR sampling", args: with(modern, "call", "sample", "prompt=hi", "--sampling-reply", "from the model"), stdout: []string{"from the model"}},
		{name: "MRTR sampling declined", args: with(modern, "call", "sample", "prompt=hi"), code: command.ExitProtocol, stderr: []string{"sampling declined"}},
		{name: "MRTR elicitation", args: with(modern, "call", "elicit", "--elicit-field", "name=Mo"), stdout: []string{`"name": "Mo"`}},
		{name: "MRTR roots", args: with(modern, "call", "list_roots", "--root", root), stdout: []string{"file://" + root}},
		{name: "read", args: with(modern, "read", "demo://text/hello"), stdout: []string{"Hello from the mcpi demo server"}},
		{name: "missing resource", args: with(modern, "read", "demo://nope"), code: command.ExitProtocol, stderr: []string{"-32602"}},
		{name: "prompt", args: with(modern, "prompt", "greet", "name=Ada"), stdout: []string{"[user]"}},
		{name: "http auto modern", args: []string{"info", srv.URL}, stdout: []string{"modern era", "streamable-http"}},
		{name: "http forced legacy", args: []string{"info", "--era", "legacy", srv.URL}, stdout: []string{"legacy era"}},
		{name: "http call", args: []string{"call", "echo", "text=over modern http", srv.URL}, stdout: []string{"over modern http"}},
		{name: "resource URI before the server URL", args: []string{"read", "https://example.com/not-a-server", srv.URL}, code: command.ExitProtocol, stderr: []string{"resources/read"}},
		{name: "bad era", args: with(modern, "info", "--era", "future"), code: command.ExitUsage},
		{name: "era and revision disagree", args: with(modern, "info", "--era", "legacy", "--protocol-version", "2026-07-28"), code: command.ExitUsage},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			checkCase(t, tc)
		})
	}
}

package cli

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpi-dev/mcpi/internal/command"
	"github.com/mcpi-dev/mcpi/internal/demoserver"
	"github.com/mcpi-dev/mcpi/internal/mcptest"
	"github.com/mcpi-dev/mcpi/internal/surface"
)

func TestSnapshotFlags(t *testing.T) {
	got, err := parseArgs(NewCmdSnapshot, []string{"-o", "s.json", "--ignore", "/serverInfo/version", "--ignore", "/tools/*/_meta", "--", "srv"})
	if err != nil {
		t.Fatal(err)
	}
	if got.Output != "s.json" || len(got.Ignore) != 2 || got.Target.Command[0] != "srv" {
		t.Fatalf("got %+v", got)
	}
	for _, tc := range []struct{ argv []string }{
		{[]string{"--ignore", "serverInfo", "--", "srv"}},
		{[]string{"--ignore", "", "--", "srv"}},
		{[]string{"extra", "--", "srv"}},
		{[]string{}},
	} {
		if _, err := parseArgs(NewCmdSnapshot, tc.argv); err == nil || command.ExitCodeFor(err) != command.ExitUsage {
			t.Errorf("%q: err = %v, want a usage error", tc.argv, err)
		}
	}
}

func TestDiffFlags(t *testing.T) {
	for _, tc := range []struct {
		name, old, new, url, server string
		argv                        []string
		cmd                         bool
		wantErr                     string
	}{
		{name: "two files", argv: []string{"a.json", "b.jsonl"}, old: "a.json", new: "b.jsonl"},
		{name: "a command", argv: []string{"a.json", "--markdown", "--", "./server", "--flag"}, old: "a.json", cmd: true},
		{name: "a URL", argv: []string{"a.json", "http://127.0.0.1:1/mcp"}, old: "a.json", url: "http://127.0.0.1:1/mcp"},
		{name: "a configured server", argv: []string{"a.json", "--server", "weather"}, old: "a.json", server: "weather"},
		{name: "one file", argv: []string{"a.json"}, wantErr: "give OLD and NEW"},
		{name: "three files", argv: []string{"a", "b", "c"}, wantErr: "give OLD and NEW"},
		{name: "no OLD before the server", argv: []string{"--", "./server"}, wantErr: "give OLD"},
		{name: "bad fail-on", argv: []string{"a", "b", "--fail-on", "never"}, wantErr: "invalid --fail-on"},
		{name: "json and markdown", argv: []string{"a", "b", "--json", "--markdown"}, wantErr: "give one"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseArgs(NewCmdDiff, tc.argv)
			if !errorLike(t, err, tc.wantErr) {
				return
			}
			if got.Old != tc.old || got.New != tc.new || got.Target.URL != tc.url || got.Target.Server != tc.server || (got.Target.Command != nil) != tc.cmd || got.FailOn != "breaking" {
				t.Errorf("got old %q new %q url %q server %q command %q fail-on %q", got.Old, got.New, got.Target.URL, got.Target.Server, got.Target.Command, got.FailOn)
			}
		})
	}
}

// An unchanged server is byte-identical to its own snapshot and diffs
// clean against it, over stdio and HTTP, in either era and both.
func TestSnapshotUnchangedServer(t *testing.T) {
	t.Parallel()
	both := httptest.NewServer(demoserver.HTTPHandler(demoserver.Options{Era: demoserver.EraBoth}))
	t.Cleanup(both.Close)
	legacy := httptest.NewServer(demoserver.HTTPHandler(demoserver.Options{Era: demoserver.EraLegacy}))
	t.Cleanup(legacy.Close)
	modern := httptest.NewServer(demoserver.HTTPHandler(demoserver.Options{Era: demoserver.EraModern}))
	t.Cleanup(modern.Close)
	for _, tc := range []struct {
		name   string
		target []string
		eras   string
	}{
		{"stdio legacy", peerArgs("demo"), `["legacy"]`},
		{"stdio both eras", peerArgs("demo:both"), `["modern","legacy"]`},
		// The SDK's stdio server answers a legacy initialize whatever its
		// revisions: a modern demo speaks both there.
		{"stdio modern", peerArgs("demo:modern"), `["modern","legacy"]`},
		{"http modern", []string{modern.URL}, `["modern"]`},
		{"http both eras", []string{both.URL}, `["modern","legacy"]`},
		{"http legacy", []string{legacy.URL}, `["legacy"]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			a, b := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
			runCLIExit(t, command.ExitOK, with(tc.target, "snapshot", "-o", a)...)
			code, stdout, stderr := runCLI(t, "", with(tc.target, "snapshot")...)
			if code != command.ExitOK {
				t.Fatalf("snapshot: exit %d: %s", code, stderr)
			}
			os.WriteFile(b, []byte(stdout), 0o600)
			ab, _ := os.ReadFile(a)
			if !bytes.Equal(ab, []byte(stdout)) {
				t.Fatalf("two snapshots differ:\n%s\n---\n%s", ab, stdout)
			}
			var s struct {
				Format string          `json:"format"`
				Eras   json.RawMessage `json:"eras"`
				Tools  []any           `json:"tools"`
			}
			if err := json.Unmarshal(ab, &s); err != nil || s.Format != surface.Format || len(s.Tools) == 0 {
				t.Fatalf("not a snapshot (%v): %.300s", err, ab)
			}
			var eras []string
			json.Unmarshal(s.Eras, &eras)
			if g, _ := json.Marshal(eras); string(g) != tc.eras {
				t.Errorf("eras %s, want %s", g, tc.eras)
			}
			code, stdout, stderr = runCLI(t, "", with(tc.target, "diff", a)...)
			if code != command.ExitOK || strings.TrimSpace(stdout) != "no changes" {
				t.Fatalf("diff against the server: exit %d\n%s%s", code, stdout, stderr)
			}
			code, stdout, stderr = runCLI(t, "", "diff", a, b, "--fail-on", "any")
			if code != command.ExitOK || strings.TrimSpace(stdout) != "no changes" {
				t.Fatalf("diff of the files: exit %d\n%s%s", code, stdout, stderr)
			}
		})
	}
}

// writeSnapshot writes s as a snapshot file.
func writeSnapshot(t *testing.T, path string, s *surface.Snapshot) {
	t.Helper()
	b, err := surface.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func entry(t *testing.T, s string) surface.Entry {
	t.Helper()
	var e surface.Entry
	if err := json.Unmarshal([]byte(s), &e); err != nil {
		t.Fatal(err)
	}
	return e
}

func TestDiffFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	base := func(tools ...surface.Entry) *surface.Snapshot {
		return &surface.Snapshot{Format: surface.Format, Surface: surface.Surface{Era: "legacy", Revision: "2025-11-25",
			ServerInfo: map[string]any{"name": "s", "version": "1"}, Capabilities: map[string]any{"tools": map[string]any{}},
			ClientCapabilities: map[string]any{}, Tools: tools, Resources: []surface.Entry{}, Templates: []surface.Entry{}, Prompts: []surface.Entry{}}}
	}
	old, new, desc, pattern := filepath.Join(dir, "old.json"), filepath.Join(dir, "new.json"), filepath.Join(dir, "desc.json"), filepath.Join(dir, "pattern.json")
	writeSnapshot(t, old, base(entry(t, `{"name":"fetch","description":"Fetch a URL","inputSchema":{"type":"object","properties":{"url":{"type":"string","pattern":"^http"}}}}`),
		entry(t, `{"name":"echo","inputSchema":{"type":"object"}}`)))
	writeSnapshot(t, new, base(entry(t, `{"name":"fetch","description":"Fetch a URL","inputSchema":{"type":"object","properties":{"url":{"type":"string","pattern":"^http"}},"required":["url"]}}`)))
	writeSnapshot(t, desc, base(entry(t, `{"name":"fetch","description":"Fetch a URL <img src=x onerror=alert(1)> @team \u001b]0;owned\u0007","inputSchema":{"type":"object","properties":{"url":{"type":"string","pattern":"^http"}}}}`),
		entry(t, `{"name":"echo","inputSchema":{"type":"object"}}`)))
	writeSnapshot(t, pattern, base(entry(t, `{"name":"fetch","description":"Fetch a URL","inputSchema":{"type":"object","properties":{"url":{"type":"string","pattern":"^https"}}}}`),
		entry(t, `{"name":"echo","inputSchema":{"type":"object"}}`)))
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"format":"mcpi.surface/7"}`), 0o600)
	for _, tc := range []cliCase{
		{name: "breaking exits 1", args: []string{"diff", old, new}, code: command.ExitToolError,
			stdout: []string{"2 change(s): 2 breaking", "Breaking (2)", "tool echo: tool echo was removed", "/tools/echo  [tool-removed]",
				"/tools/fetch/inputSchema/required  [input-required-grown]"}},
		{name: "the other way", args: []string{"diff", new, old}, stdout: []string{"Non-breaking (2)", "input-required-shrunk", "tool-added"}},
		{name: "changed alone passes", args: []string{"diff", old, desc}, stdout: []string{"Changed (1)", "was: Fetch a URL", "now: Fetch a URL <img"}},
		{name: "fail on any", args: []string{"diff", old, desc, "--fail-on", "any"}, code: command.ExitToolError},
		{name: "possibly passes by default", args: []string{"diff", old, pattern}, stdout: []string{"Possibly breaking (1)", "input-pattern-changed"}},
		{name: "fail on possibly", args: []string{"diff", old, pattern, "--fail-on", "possibly"}, code: command.ExitToolError},
		{name: "json", args: []string{"diff", old, new, "--json"}, code: command.ExitToolError, jsonStdout: true,
			stdout: []string{`"class":"breaking"`, `"kind":"tool-removed"`, `"pointer":"/tools/echo"`, `"counts":{`}},
		{name: "unknown format", args: []string{"diff", bad, new}, code: command.ExitUsage, stderr: []string{`snapshot format "mcpi.surface/7" is not one this mcpi reads`}},
		{name: "no such file", args: []string{"diff", filepath.Join(dir, "nope.json"), new}, code: command.ExitUsage, stderr: []string{"OLD: open"}},
		{name: "not a snapshot", args: []string{"diff", old, filepath.Join("testdata", "nonexistent")}, code: command.ExitUsage},
	} {
		t.Run(tc.name, func(t *testing.T) { checkCase(t, tc) })
	}
}

func TestDiffMarkdown(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mk := func(name, desc string) string {
		p := filepath.Join(dir, name)
		writeSnapshot(t, p, &surface.Snapshot{Format: surface.Format, Surface: surface.Surface{Era: "legacy",
			ServerInfo: map[string]any{"name": "s"}, Capabilities: map[string]any{"tools": map[string]any{}}, ClientCapabilities: map[string]any{},
			Tools: []surface.Entry{entry(t, `{"name":"a|b_*","description":`+desc+`,"inputSchema":{}}`), entry(t, `{"name":"gone","inputSchema":{}}`)}[:map[bool]int{true: 2, false: 1}[name == "old.json"]]}})
		return p
	}
	old, new := mk("old.json", `"x"`), mk("new.json", `"<script>alert(1)</script> ping @everyone **now**"`)
	stdout, _ := runCLIExit(t, command.ExitToolError, "diff", old, new, "--markdown")
	wantIn(t, "stdout", stdout,
		"### mcpi diff: 1 breaking change(s)\n",
		"#### Breaking (1)\n\n- **tool gone**: tool gone was removed: clients that use it fail `/tools/gone` `tool-removed`\n",
		"#### Changed (1)\n\n- **tool a\\|b\\_\\***: the description changed `/tools/a|b_*/description` `tool-description-changed`\n",
		"  - now: &lt;script&gt;alert\\(1\\)&lt;/script&gt; ping \\@everyone \\*\\*now\\*\\*\n",
	)
	if strings.Contains(stdout, "<script>") || strings.Contains(stdout, " @everyone") {
		t.Errorf("server text reached the Markdown raw:\n%s", stdout)
	}
}

// A trace holds the lists it listed; the others are unknown, not removed.
func TestDiffTrace(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	snap, trace := filepath.Join(dir, "s.json"), filepath.Join(dir, "t.jsonl")
	demo := peerArgs("demo")
	runCLIExit(t, command.ExitOK, with(demo, "snapshot", "-o", snap)...)
	if code, _, stderr := runCLI(t, "", with(demo, "tools", "--record", trace)...); code != command.ExitOK {
		t.Fatalf("tools: %s", stderr)
	}
	code, stdout, stderr := runCLI(t, "", "diff", snap, trace)
	if code != command.ExitOK || !strings.HasPrefix(stdout, "no changes\n") || !strings.Contains(stdout, "not compared: prompts: NEW does not hold them") {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
}

// TestSnapshotOfAChangingServer: a list that changes while it is
// listed is listed again; a server whose lists never stand still gets
// no snapshot, but an error saying so (exit 4, listing_incomplete).
func TestSnapshotOfAChangingServer(t *testing.T) {
	t.Parallel()
	for _, tc := range []cliCase{
		{name: "changes once", args: with(peerArgs(mcptest.HostsPrefix+mcptest.HostsChangingOnce), "snapshot"), stdout: []string{`"name": "get_weather"`}},
		{name: "churns", args: with(peerArgs(mcptest.HostsPrefix+mcptest.HostsChurning), "snapshot", "--json"), code: command.ExitProtocol,
			stdout: []string{`"kind":"listing_incomplete"`, "changed while they were listed, 3 times"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			checkCase(t, tc)
		})
	}
}

package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpi-dev/mcpi/internal/mcptest"
)

// TestAppInfo: app-info declares the extension, reads a tool's App and
// says its posture; --json is one document; a tool without an App is exit
// 10 (kind no_app); the deprecated flat key, a loose CSP, an undeclared
// script origin and the wrong type are warned about; a resource that is
// missing or too large is a protocol error.
func TestAppInfo(t *testing.T) {
	good := peerArgs(mcptest.AppsPrefix + mcptest.AppsGood)
	code, out, errOut := runCLI(t, "", with(good, "app-info", "show-chart")...)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"ui://charts/chart  (listed)", "text/html;profile=mcp-app", "connectDomains: https://api.example.com",
		"resourceDomains: https://cdn.example.com", "connect-src 'self' https://api.example.com", "clipboard-write", "prefers a border", "script https://cdn.example.com/chart.js", "visible to: model, app"} {
		if !strings.Contains(out, want) {
			t.Errorf("app-info lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "warnings") {
		t.Errorf("the good App has warnings:\n%s", out)
	}
	code, out, _ = runCLI(t, "", with(good, "app-info", "refresh-chart", "--json")...)
	var in struct {
		Tool       string   `json:"tool"`
		Visibility []string `json:"visibility"`
		Size       int      `json:"size"`
		Listed     bool     `json:"listed"`
		Policy     string   `json:"policy"`
	}
	if code != ExitOK || json.Unmarshal([]byte(out), &in) != nil || in.Tool != "refresh-chart" || strings.Join(in.Visibility, ",") != "app" || in.Size != len(mcptest.AppHTML) || !in.Listed || in.Policy == "" {
		t.Errorf("--json: exit %d, %+v, %s", code, in, out)
	}
	code, out, errOut = runCLI(t, "", with(good, "app-info", "plain-echo", "--json")...)
	if code != ExitNoApp || !strings.Contains(out, `"kind": "no_app"`) && !strings.Contains(out, `"kind":"no_app"`) {
		t.Errorf("no App: exit %d, %s %s", code, out, errOut)
	}
	if code, _, errOut := runCLI(t, "", with(good, "app-info", "nosuch")...); code != ExitUsage || !strings.Contains(errOut, "no tool named") {
		t.Errorf("no such tool: exit %d, %s", code, errOut)
	}

	code, out, _ = runCLI(t, "", with(peerArgs(mcptest.AppsPrefix+mcptest.AppsLegacy), "app-info", "show-chart")...)
	if code != ExitOK || !strings.Contains(out, "deprecated") {
		t.Errorf("legacy key: exit %d\n%s", code, out)
	}
	code, out, _ = runCLI(t, "", with(peerArgs(mcptest.AppsPrefix+mcptest.AppsLoose), "app-info", "show-chart")...)
	for _, want := range []string{`"*": allows every origin`, `"http://api.example.com": plain http`, `"api.example.com": not an origin`,
		"loads a script from https://evil.example.net", `MIME type is "text/html"`, "not listed"} {
		if code != ExitOK || !strings.Contains(out, want) {
			t.Errorf("loose: exit %d, lacks %q:\n%s", code, want, out)
		}
	}
	for name, args := range map[string][]string{
		"missing": with(peerArgs(mcptest.AppsPrefix+mcptest.AppsMissing), "app-info", "show-chart"),
		"too big": with(peerArgs(mcptest.AppsPrefix+mcptest.AppsHuge), "app-info", "show-chart"),
	} {
		if code, _, errOut := runCLI(t, "", args...); code != ExitProtocol {
			t.Errorf("%s: exit %d, %s", name, code, errOut)
		}
	}
}

// TestToolsMarkApps: mcpi tools marks App tools and their visibility, and
// lists them only with --apps, which declares the extension.
func TestToolsMarkApps(t *testing.T) {
	good := peerArgs(mcptest.AppsPrefix + mcptest.AppsGood)
	code, out, _ := runCLI(t, "", with(good, "tools")...)
	if code != ExitOK || strings.Contains(out, "show-chart") {
		t.Errorf("without --apps the server listed its App tools: %s", out)
	}
	code, out, _ = runCLI(t, "", with(good, "tools", "--apps")...)
	lines := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			lines[f[0]] = l
		}
	}
	for tool, want := range map[string]string{"show-chart": "app", "refresh-chart": "app,app-only", "delete-chart": "app,app-only,destructive", "model-note": "model-only"} {
		if f := strings.Fields(lines[tool]); code != ExitOK || len(f) < 2 || f[1] != want {
			t.Errorf("%s: %q, want the badges %q", tool, lines[tool], want)
		}
	}
}

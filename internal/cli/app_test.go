package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpi-dev/mcpi/internal/command"
	"github.com/mcpi-dev/mcpi/internal/mcptest"
	"github.com/mcpi-dev/mcpi/internal/record"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// TestAppInfo: app-info declares the extension, reads a tool's App and
// says its posture; --json is one document; a tool without an App is exit
// 10 (kind no_app); the deprecated flat key, a loose CSP, an undeclared
// script origin and the wrong type are warned about; a resource that is
// missing or too large is a protocol error.
func TestAppInfo(t *testing.T) {
	good := peerArgs(mcptest.AppsPrefix + mcptest.AppsGood)
	out, _ := runCLIExit(t, command.ExitOK, with(good, "app-info", "show-chart")...)
	wantIn(t, "app-info", out, "ui://charts/chart  (listed)", "text/html;profile=mcp-app", "connectDomains: https://api.example.com",
		"resourceDomains: https://cdn.example.com", "connect-src 'self' https://api.example.com", "clipboard-write", "prefers a border", "script https://cdn.example.com/chart.js", "visible to: model, app")
	if strings.Contains(out, "warnings") {
		t.Errorf("the good App has warnings:\n%s", out)
	}
	code, out, _ := runCLI(t, "", with(good, "app-info", "refresh-chart", "--json")...)
	var in struct {
		Tool       string   `json:"tool"`
		Visibility []string `json:"visibility"`
		Size       int      `json:"size"`
		Listed     bool     `json:"listed"`
		Policy     string   `json:"policy"`
	}
	if code != command.ExitOK || json.Unmarshal([]byte(out), &in) != nil || in.Tool != "refresh-chart" || strings.Join(in.Visibility, ",") != "app" || in.Size != len(mcptest.AppHTML) || !in.Listed || in.Policy == "" {
		t.Errorf("--json: exit %d, %+v, %s", code, in, out)
	}
	code, out, errOut := runCLI(t, "", with(good, "app-info", "plain-echo", "--json")...)
	if code != command.ExitNoApp || !strings.Contains(out, `"kind": "no_app"`) && !strings.Contains(out, `"kind":"no_app"`) {
		t.Errorf("no App: exit %d, %s %s", code, out, errOut)
	}
	if code, _, errOut := runCLI(t, "", with(good, "app-info", "nosuch")...); code != command.ExitUsage || !strings.Contains(errOut, "no tool named") {
		t.Errorf("no such tool: exit %d, %s", code, errOut)
	}

	code, out, _ = runCLI(t, "", with(peerArgs(mcptest.AppsPrefix+mcptest.AppsLegacy), "app-info", "show-chart")...)
	if code != command.ExitOK || !strings.Contains(out, "deprecated") {
		t.Errorf("legacy key: exit %d\n%s", code, out)
	}
	code, out, _ = runCLI(t, "", with(peerArgs(mcptest.AppsPrefix+mcptest.AppsLoose), "app-info", "show-chart")...)
	for _, want := range []string{`"*": allows every origin`, `"http://api.example.com": plain http`, `"api.example.com": not an origin`,
		"loads a script from https://evil.example.net", `MIME type is "text/html"`, "not listed"} {
		if code != command.ExitOK || !strings.Contains(out, want) {
			t.Errorf("loose: exit %d, lacks %q:\n%s", code, want, out)
		}
	}
	for name, args := range map[string][]string{
		"missing": with(peerArgs(mcptest.AppsPrefix+mcptest.AppsMissing), "app-info", "show-chart"),
		"too big": with(peerArgs(mcptest.AppsPrefix+mcptest.AppsHuge), "app-info", "show-chart"),
	} {
		if code, _, errOut := runCLI(t, "", args...); code != command.ExitProtocol {
			t.Errorf("%s: exit %d, %s", name, code, errOut)
		}
	}
}

// TestToolsMarkApps: mcpi tools marks App tools and their visibility, and
// lists them only with --apps, which declares the extension.
func TestToolsMarkApps(t *testing.T) {
	good := peerArgs(mcptest.AppsPrefix + mcptest.AppsGood)
	code, out, _ := runCLI(t, "", with(good, "tools")...)
	if code != command.ExitOK || strings.Contains(out, "show-chart") {
		t.Errorf("without --apps the server listed its App tools: %s", out)
	}
	code, out, _ = runCLI(t, "", with(good, "tools", "--apps")...)
	lines := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			lines[f[0]] = l
		}
	}
	for tool, want := range map[string]string{"show-chart": "app,read-only", "refresh-chart": "app,app-only,read-only", "delete-chart": "app,app-only,destructive", "model-note": "model-only"} {
		if f := strings.Fields(lines[tool]); code != command.ExitOK || len(f) < 2 || f[1] != want {
			t.Errorf("%s: %q, want the badges %q", tool, lines[tool], want)
		}
	}
}

// TestAppCommand runs mcpi app against the Apps server and plays its
// page: the App initializes, gets the tool's input and result, calls an
// app-only tool through mcpi; the trace holds every App message as an
// "app" event, and the frames of the server's session as frames; Ctrl-C
// tears the App down and ends the command with exit 0.
func TestAppCommand(t *testing.T) {
	trace := filepath.Join(t.TempDir(), "app.jsonl")
	ios, _, out, errOut := command.Test()
	f := &command.Factory{IO: ios}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	urls := make(chan string, 1)
	cmd := NewCmdApp(f, func(ctx context.Context, o *AppOptions) error {
		o.ready = func(u string) { urls <- u }
		return appRun(ctx, o)
	})
	cmd.SetArgs(append([]string{"show-chart", "series=a", "--no-open", "--record", trace}, peerArgs(mcptest.AppsPrefix+mcptest.AppsGood)...))
	cmd.SetContext(ctx)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	done := make(chan error, 1)
	go func() { done <- cmd.Execute() }()
	var base string
	select {
	case base = <-urls:
	case err := <-done:
		t.Fatalf("mcpi app ended: %v %s", err, errOut)
	}
	page := mcptest.OpenAppPage(t, base)
	page.Post(`{"jsonrpc":"2.0","id":1,"method":"ui/initialize","params":{"appCapabilities":{},"appInfo":{"name":"t","version":"1"},"protocolVersion":"2026-01-26"}}`)
	page.Wait(`"jsonrpc":"2.0","id":1,"result"`)
	page.Post(`{"jsonrpc":"2.0","method":"ui/notifications/initialized","params":{}}`)
	page.Wait(`ui/notifications/tool-input`)
	page.Wait(`ui/notifications/tool-result`)
	page.Post(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"refresh-chart","arguments":{"series":"b"}}}`)
	page.Wait(`refresh-chart {\"series\":\"b\"}`)
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("mcpi app: %v", err)
	}
	if !strings.Contains(out.String(), "show-chart") {
		t.Errorf("stdout %q: no result of the tool", out.String())
	}
	r, err := record.Open(trace)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var app, frames []string
	r.Each(func(ev record.Event) {
		switch ev.Type {
		case record.TypeApp:
			app = append(app, ev.Dir.String()+" "+string(ev.Msg))
		case record.TypeFrame:
			frames = append(frames, string(ev.Msg))
		}
	})
	all := strings.Join(app, "\n")
	wantIn(t, "the trace's App events", all, `recv {"jsonrpc":"2.0","id":1,"method":"ui/initialize"`, `send {"jsonrpc":"2.0","id":1,"result"`, `ui/notifications/tool-result`, `recv {"jsonrpc":"2.0","id":2,"method":"tools/call"`, `ui/resource-teardown`)
	if !strings.Contains(strings.Join(frames, "\n"), `"name":"refresh-chart"`) {
		t.Errorf("the App's call is not among the session's frames")
	}
}

// TestReplayShowsAppEvents: replay prints a trace's App messages, and
// --filter kind:app keeps only them.
func TestReplayShowsAppEvents(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.jsonl")
	w, err := record.Create(path, record.Header{Mcpi: "test"}, record.Options{})
	if err != nil {
		t.Fatal(err)
	}
	w.Observe(transport.Event{Time: time.Now(), Kind: transport.KindFrame, Dir: transport.Outgoing, Data: []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"show-chart"}}`)})
	w.Observe(transport.Event{Time: time.Now(), Kind: transport.KindApp, Dir: transport.Incoming, Data: []byte(`{"jsonrpc":"2.0","id":1,"method":"ui/initialize","params":{}}`)})
	w.Observe(transport.Event{Time: time.Now(), Kind: transport.KindApp, Dir: transport.Outgoing, Data: []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`)})
	w.Close()
	code, out, errOut := runCLI(t, "", "replay", path)
	if code != command.ExitOK || !strings.Contains(out, "← app #1 ui/initialize") || !strings.Contains(out, "→ app") || !strings.Contains(out, "tools/call show-chart") {
		t.Fatalf("replay: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ = runCLI(t, "", "replay", path, "--filter", "kind:app")
	if code != command.ExitOK || strings.Contains(out, "tools/call") || strings.Count(out, " app ") != 2 {
		t.Errorf("--filter kind:app:\n%s", out)
	}
}

// TestAppInfoMissingToolAgreesWithTheTable: the exit of app-info for a
// tool the server does not list is one docs/cli.md's kinds table gives
// tool_not_found for app-info, and its --json error says that kind.
func TestAppInfoMissingToolAgreesWithTheTable(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../docs/cli.md")
	if err != nil {
		t.Fatal(err)
	}
	var row string
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "| `tool_not_found` |") {
			row = line
		}
	}
	cells := strings.Split(strings.Trim(row, "| "), " | ")
	if len(cells) != 3 {
		t.Fatalf("the kinds table's tool_not_found row: %q", row)
	}
	code, out, _ := runCLI(t, "", with(peerArgs(mcptest.AppsPrefix+mcptest.AppsGood), "app-info", "nosuch", "--json")...)
	if want := fmt.Sprintf("%d (`app-info`", code); !strings.Contains(cells[2], want) || !strings.Contains(out, `"kind":"tool_not_found"`) {
		t.Errorf("app-info nosuch --json: exit %d, %s; the table says %q", code, out, cells[2])
	}
}

// TestAppExamplesUseTheirFlags: every flag the examples of app and
// app-info give is one of theirs (--no-browser is OAuth's, --no-open the
// App page's).
func TestAppExamplesUseTheirFlags(t *testing.T) {
	ios, _, _, _ := command.Test()
	f := &command.Factory{IO: ios}
	for _, cmd := range []*cobra.Command{NewCmdApp(f, nil), NewCmdAppInfo(f, nil)} {
		for _, word := range strings.Fields(cmd.Example) {
			name, ok := strings.CutPrefix(word, "--")
			if !ok || name == "" {
				continue
			}
			if flag := cmd.Flags().Lookup(strings.SplitN(name, "=", 2)[0]); flag == nil {
				t.Errorf("%s's example gives %s, which it has no flag for", cmd.Name(), word)
			} else if cmd.Name() == "app" && name == "no-browser" {
				t.Errorf("app's example opens no App page with the OAuth flag %s", word)
			}
		}
	}
}

package cli

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpi-dev/mcpi/internal/command"
	"github.com/mcpi-dev/mcpi/internal/mcptest"
	"github.com/mcpi-dev/mcpi/internal/record"
)

// TestAppInChromium is the smoke test of MCP Apps with real parts: a server
// built on @modelcontextprotocol/ext-apps (testdata/apps-server.mjs), whose
// App uses ext-apps' App class, rendered by Debian's headless Chromium
// through mcpi app. The App renders, receives the tool's result, calls its
// app-only tool through mcpi; the test reads those messages back from
// mcpi's trace.
func TestAppInChromium(t *testing.T) {
	chromium, err := exec.LookPath("chromium-headless-shell")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("chromium-headless-shell is not installed: scripts/deps.sh should have installed it")
		}
		t.Skip("chromium-headless-shell is not installed: run scripts/deps.sh as root")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	server := filepath.Join(mcptest.RepoRoot(), "testdata", "apps-server.mjs")
	if _, err := os.Stat(filepath.Join(mcptest.NPMDir(), "node_modules", "@modelcontextprotocol", "ext-apps")); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("@modelcontextprotocol/ext-apps is not installed: scripts/deps.sh should have installed it")
		}
		t.Skip("@modelcontextprotocol/ext-apps is not installed: run scripts/deps.sh")
	}
	trace := filepath.Join(t.TempDir(), "app.jsonl")
	ios, _, out, errOut := command.Test()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	urls := make(chan string, 1)
	cmd := NewCmdApp(&command.Factory{IO: ios}, func(ctx context.Context, o *AppOptions) error {
		o.ready = func(u string) { urls <- u }
		return appRun(ctx, o)
	})
	cmd.SetArgs([]string{"show-chart", "series=a", "--no-open", "--record", trace, "-e", "MCPI_NPM_DIR=" + mcptest.NPMDir(), "--", node, server})
	cmd.SetContext(ctx)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	done := make(chan error, 1)
	go func() { done <- cmd.Execute() }()
	var url string
	select {
	case url = <-urls:
	case err := <-done:
		t.Fatalf("mcpi app ended: %v\n%s", err, errOut)
	case <-ctx.Done():
		t.Fatal("mcpi app did not start")
	}
	// The browser stays on the page until the test ends it: with
	// --dump-dom it would quit at the page's load, which can come before
	// the App's own call.
	browser := exec.Command(chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--user-data-dir="+t.TempDir(), url)
	browser.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := browser.Start(); err != nil {
		t.Fatal(err)
	}
	stopBrowser := func() {
		syscall.Kill(-browser.Process.Pid, syscall.SIGKILL)
		browser.Wait()
	}
	defer stopBrowser()
	// Wait for the App's call to come back to it through mcpi.
	want := []string{`"method":"ui/initialize"`, `"ui/notifications/tool-result"`, `"name":"refresh-chart"`, `refreshed b`}
	poll(60*time.Second, func() bool { return containsAll(appTrace(trace), want) })
	stopBrowser()
	cancel()
	if err := <-done; err != nil {
		t.Errorf("mcpi app: %v", err)
	}
	seen := appTrace(trace)
	if !containsAll(seen, want) {
		t.Fatalf("the App's messages in the trace lack some of %q:\n%s\nstderr: %s", want, seen, errOut)
	}
	for _, w := range []string{`recv {"method":"ui/initialize"`, `send {"jsonrpc":"2.0","method":"ui/notifications/tool-input","params":{"arguments":{"series":"a"}}}`, `recv {"method":"tools/call","params":{"name":"refresh-chart"`} {
		if !strings.Contains(seen, w) {
			t.Errorf("the trace lacks %s:\n%s", w, seen)
		}
	}
	if !strings.Contains(out.String(), "chart of a") {
		t.Errorf("stdout %q", out.String())
	}
}

// appTrace is the trace's App events, one per line, "DIR MSG".
func appTrace(path string) string {
	r, err := record.Open(path)
	if err != nil {
		return ""
	}
	defer r.Close()
	var b strings.Builder
	r.Each(func(ev record.Event) {
		if ev.Type == record.TypeApp {
			b.WriteString(ev.Dir.String() + " " + string(ev.Msg) + "\n")
		}
	})
	return b.String()
}

func containsAll(s string, subs []string) bool {
	for _, x := range subs {
		if !strings.Contains(s, x) {
			return false
		}
	}
	return true
}

package tui

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpi-dev/mcpi/internal/apps"
	"github.com/mcpi-dev/mcpi/internal/mcptest"
	"github.com/mcpi-dev/mcpi/internal/record"
	"github.com/mcpi-dev/mcpi/internal/session"
)

// TestAppInTUI: the Tools pane marks App tools; alt+a on a call of one
// hosts its App, handing it the call's input and result; the App's call
// of a destructive tool waits in the Requests pane for the person, and
// goes to the server when allowed; the App's messages are wire rows of
// kind app.
func TestAppInTUI(t *testing.T) {
	urls := make(chan string, 2)
	trace := filepath.Join(t.TempDir(), "t.jsonl")
	rec, err := record.Create(trace, record.Header{Mcpi: "test"}, record.Options{})
	if err != nil {
		t.Fatal(err)
	}
	clk := &clock{now: frozen}
	h := start(t, 120, 36, func(o *Options) {
		o.Now = clk.Now
		o.Record = rec
		o.Dial = func(ctx context.Context, hk Hooks) (*session.Client, error) {
			h := hk
			return dialPeerWith(ctx, h, mcptest.AppsPrefix+mcptest.AppsGood, func(so *session.Options) {
				so.Extensions = map[string]json.RawMessage{apps.Extension: apps.Declaration()}
			})
		}
		o.OpenURL = func(u string) error { urls <- u; return nil }
	})
	h.waitText("show-chart", "app-only", "model-only")
	h.callTool("show-chart", "a")
	h.waitText("✓ done", "alt+a run its App")
	h.press("alt+a")
	var base string
	select {
	case base = <-urls:
	case <-time.After(20 * time.Second):
		t.Fatal("the App's page was not opened")
	}
	h.waitText("App at http://127.0.0.1:")
	page := mcptest.OpenAppPage(t, base)
	page.Post(`{"jsonrpc":"2.0","id":1,"method":"ui/initialize","params":{"appCapabilities":{},"appInfo":{"name":"t","version":"1"},"protocolVersion":"2026-01-26"}}`)
	page.Wait(`"hostInfo"`)
	page.Post(`{"jsonrpc":"2.0","method":"ui/notifications/initialized","params":{}}`)
	page.Wait(`ui/notifications/tool-input`)
	page.Wait(`ui/notifications/tool-result`)
	page.Post(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"delete-chart","arguments":{"series":"a"}}}`)
	h.waitText("an MCP App asks you", "delete-chart")
	// A keystroke that comes with the question is not an answer.
	h.press("ctrl+s")
	h.waitText("ctrl+s again to allow")
	clk.add(consentGuard)
	h.press("ctrl+s")
	page.Wait(`delete-chart {\"series\":\"a\"}`)
	// The question is in front until the allowed call is sent: a key
	// pressed while it shows is its own (no pane below it moves).
	h.waitFor("the App's question answered", func(s string) bool { return !strings.Contains(s, "an MCP App asks you") })
	h.press("alt+7")
	h.waitText("app", "ui/initialize", "ui/notifications/tool-result")
	// The command's trace (--record) has the App's messages too.
	rec.Close()
	b, _ := os.ReadFile(trace)
	if !strings.Contains(string(b), `"type":"app"`) || !strings.Contains(string(b), "ui/initialize") {
		t.Errorf("the trace lacks the App's messages:\n%.2000s", b)
	}
}

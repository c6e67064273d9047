package mcptest

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// AppsPrefix names, in PeerEnv, a stdio server with MCP Apps
// (io.modelcontextprotocol/ui): "apps:MODE".
const AppsPrefix = "apps:"

// The Apps servers' modes. Each lists its App tools only to a client that
// declares the extension in initialize (as @modelcontextprotocol/ext-apps
// servers do with getUiCapability), except AppsAlways.
const (
	// AppsGood is a correct App server: show-chart (visible to both, its
	// App ui://charts/chart with a CSP and a script from a declared CDN),
	// refresh-chart (app only), delete-chart (app, destructive), and
	// plain-echo (no App).
	AppsGood = "good"
	// AppsLegacy names its resource with the deprecated flat key.
	AppsLegacy = "legacy"
	// AppsLoose declares `*` and plain http: domains, a malformed one, an
	// App-only tool the model sees, a script from an undeclared origin,
	// the wrong MIME type, and a resource it does not list.
	AppsLoose = "loose"
	// AppsAlways lists its App tools to every client, declared or not.
	AppsAlways = "always"
	// AppsMissing names a resource that does not exist, and one that is
	// not a ui:// URI.
	AppsMissing = "missing"
	// AppsHuge serves an App's HTML larger than mcpi reads.
	AppsHuge = "huge"
	// AppsNoCSP is AppsGood whose resource declares no CSP and whose HTML
	// loads nothing from elsewhere: the restrictive default, no fault.
	AppsNoCSP = "no-csp"
	// AppsOnlyLeak is AppsGood that also lists, to every client, an
	// App-only tool without a resource of its own (visibility ["app"], no
	// resourceUri): a client without Apps gives it to the model.
	AppsOnlyLeak = "app-only-leak"
)

// AppHTML is the good App's document: it speaks the App↔host protocol
// with postMessage, as the specification shows without an SDK: it
// initializes, waits for the tool's input and result, shows them, and
// calls refresh-chart when asked by the test (window.callRefresh).
const AppHTML = `<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Chart</title>
<script src="https://cdn.example.com/chart.js"></script>
</head><body><h1 id="title">Chart</h1><pre id="out">waiting</pre>
<script>
let next = 1; const waiting = {};
function send(m) { window.parent.postMessage(m, "*"); }
function request(method, params) {
  const id = next++;
  send({jsonrpc: "2.0", id, method, params});
  return new Promise((resolve, reject) => { waiting[id] = {resolve, reject}; });
}
const seen = [];
window.addEventListener("message", (e) => {
  const m = e.data;
  if (!m || m.jsonrpc !== "2.0") return;
  if (m.id !== undefined && waiting[m.id]) { const w = waiting[m.id]; delete waiting[m.id]; m.error ? w.reject(m.error) : w.resolve(m.result); return; }
  seen.push(m.method);
  if (m.method === "ui/notifications/tool-result") {
    document.getElementById("out").textContent = "result: " + JSON.stringify(m.params.structuredContent || m.params.content);
    request("tools/call", {name: "refresh-chart", arguments: {series: "b"}}).then((r) => {
      document.getElementById("title").textContent = "refreshed: " + r.content[0].text;
    });
  }
  if (m.id !== undefined && m.method === "ui/resource-teardown") send({jsonrpc: "2.0", id: m.id, result: {}});
});
request("ui/initialize", {appCapabilities: {availableDisplayModes: ["inline"]}, appInfo: {name: "chart", version: "1"}, protocolVersion: "2026-01-26"}).then((r) => {
  document.body.dataset.host = r.hostInfo.name;
  send({jsonrpc: "2.0", method: "ui/notifications/initialized", params: {}});
  send({jsonrpc: "2.0", method: "ui/notifications/size-changed", params: {width: 400, height: 300}});
});
</script></body></html>`

// RunApps serves an Apps server on stdin and stdout.
func RunApps(mode string) {
	out := bufio.NewWriter(os.Stdout)
	send := func(format string, args ...any) {
		fmt.Fprintf(out, format+"\n", args...)
		out.Flush()
	}
	declared := mode == AppsAlways
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	for {
		line, err := in.ReadBytes('\n')
		if err != nil {
			return
		}
		var m hostileMsg
		if json.Unmarshal(line, &m) != nil || len(m.ID) == 0 {
			continue
		}
		switch m.Method {
		case "initialize":
			var p struct {
				Capabilities struct {
					Extensions map[string]struct {
						MimeTypes []string `json:"mimeTypes"`
					} `json:"extensions"`
				} `json:"capabilities"`
			}
			json.Unmarshal(m.Params, &p)
			for _, t := range p.Capabilities.Extensions["io.modelcontextprotocol/ui"].MimeTypes {
				declared = declared || t == "text/html;profile=mcp-app"
			}
			send(`{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"resources":{}},"serverInfo":{"name":"apps-%s","version":"1"}}}`, m.ID, mode)
		case "ping":
			send(`{"jsonrpc":"2.0","id":%s,"result":{}}`, m.ID)
		case "tools/list":
			send(`{"jsonrpc":"2.0","id":%s,"result":{"tools":[%s]}}`, m.ID, appTools(mode, declared))
		case "resources/list":
			send(`{"jsonrpc":"2.0","id":%s,"result":{"resources":[%s]}}`, m.ID, appResources(mode))
		case "resources/read":
			var p struct {
				URI string `json:"uri"`
			}
			json.Unmarshal(m.Params, &p)
			if c, ok := appContents(mode, p.URI); ok {
				send(`{"jsonrpc":"2.0","id":%s,"result":{"contents":[%s]}}`, m.ID, c)
			} else {
				send(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32002,"message":"no resource %s"}}`, m.ID, p.URI)
			}
		case "tools/call":
			var p struct {
				Name      string          `json:"name"`
				Arguments json.RawMessage `json:"arguments"`
			}
			json.Unmarshal(m.Params, &p)
			text, _ := json.Marshal(p.Name + " " + string(p.Arguments))
			send(`{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":%s}],"structuredContent":{"points":[1,2,3]}}}`, m.ID, text)
		default:
			send(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"no method"}}`, m.ID)
		}
	}
}

func appTools(mode string, declared bool) string {
	plain := `{"name":"plain-echo","inputSchema":{"type":"object"}}`
	if mode == AppsOnlyLeak {
		plain += `,{"name":"refresh-data","description":"Refresh the App's data","inputSchema":{"type":"object"},"_meta":{"ui":{"visibility":["app"]}}}`
	}
	if !declared {
		return plain
	}
	schema := `"inputSchema":{"type":"object","properties":{"series":{"type":"string"}}}`
	switch mode {
	case AppsLegacy:
		return plain + `,{"name":"show-chart",` + schema + `,"_meta":{"ui/resourceUri":"ui://charts/chart"}}`
	case AppsLoose:
		return plain + `,{"name":"show-chart",` + schema + `,"_meta":{"ui":{"resourceUri":"ui://charts/chart"}}}` +
			`,{"name":"secret-admin",` + schema + `,"_meta":{"ui":{"resourceUri":"ui://charts/chart","visibility":["model","robot"]}}}`
	case AppsMissing:
		return plain + `,{"name":"show-chart",` + schema + `,"_meta":{"ui":{"resourceUri":"ui://charts/gone"}}}` +
			`,{"name":"show-web",` + schema + `,"_meta":{"ui":{"resourceUri":"https://example.com/app.html"}}}`
	}
	return plain + `,{"name":"show-chart","description":"Show a chart",` + schema + `,"annotations":{"readOnlyHint":true},"_meta":{"ui":{"resourceUri":"ui://charts/chart","visibility":["model","app"]}}}` +
		`,{"name":"refresh-chart","description":"Refresh the chart's data",` + schema + `,"annotations":{"readOnlyHint":true},"_meta":{"ui":{"resourceUri":"ui://charts/chart","visibility":["app"]}}}` +
		`,{"name":"delete-chart","description":"Delete the chart",` + schema + `,"annotations":{"destructiveHint":true},"_meta":{"ui":{"resourceUri":"ui://charts/chart","visibility":["app"]}}}` +
		`,{"name":"model-note","description":"A note for the model",` + schema + `,"_meta":{"ui":{"visibility":["model"]}}}`
}

func appResources(mode string) string {
	switch mode {
	case AppsLoose, AppsMissing:
		return `{"uri":"demo://plain","name":"plain","mimeType":"text/plain"}`
	}
	return `{"uri":"ui://charts/chart","name":"chart","mimeType":"text/html;profile=mcp-app"}`
}

func appContents(mode, uri string) (string, bool) {
	if uri == "demo://plain" {
		return `{"uri":"demo://plain","mimeType":"text/plain","text":"plain"}`, true
	}
	if uri != "ui://charts/chart" || mode == AppsMissing {
		return "", false
	}
	html, _ := json.Marshal(AppHTML)
	meta := `{"ui":{"csp":{"connectDomains":["https://api.example.com"],"resourceDomains":["https://cdn.example.com"]},"permissions":{"clipboardWrite":{}},"prefersBorder":true}}`
	mime := "text/html;profile=mcp-app"
	switch mode {
	case AppsLoose:
		loose := strings.Replace(AppHTML, "https://cdn.example.com/chart.js", "https://evil.example.net/x.js", 1)
		html, _ = json.Marshal(loose)
		meta = `{"ui":{"csp":{"connectDomains":["*","http://api.example.com","api.example.com"],"resourceDomains":["https://cdn.example.com"]}}}`
		mime = "text/html"
	case AppsNoCSP:
		html, _ = json.Marshal(strings.Replace(AppHTML, `<script src="https://cdn.example.com/chart.js"></script>`, "", 1))
		meta = `{"ui":{"prefersBorder":true}}`
	case AppsHuge:
		big := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("<p>x</p>", 600_000)))
		return fmt.Sprintf(`{"uri":%q,"mimeType":%q,"blob":%q}`, uri, mime, big), true
	}
	return fmt.Sprintf(`{"uri":%q,"mimeType":%q,"text":%s,"_meta":%s}`, uri, mime, html, meta), true
}

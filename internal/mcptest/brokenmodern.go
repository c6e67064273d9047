package mcptest

import (
	"bufio"
	"encoding/json"
	"os"
)

// ModernBrokenPrefix names a modern (2026-07-28) stdio server that is
// correct but for one defect, named after the "mcpi check" rule it breaks:
// "modern-broken:" alone is the correct server. It has one read-only tool,
// "confirm", that asks the user (elicitation) before it answers.
const ModernBrokenPrefix = "modern-broken:"

// ModernBrokenDefects are the defects RunModernBroken knows, each named
// by the rule of internal/check that must find it.
// ("handshake/server-info": serverInfo at the top level of the
// server/discover result, where initialize had it, not in its _meta;
// "subscriptions/list-changed": tools.listChanged declared, and a
// subscriptions/listen asking for it acknowledged without it.)
var ModernBrokenDefects = []string{"errors/missing-capability", "handshake/server-info", "subscriptions/list-changed"}

// RunModernBroken serves the correct modern server with one defect on
// stdin and stdout.
func RunModernBroken(defect string) {
	out := bufio.NewWriter(os.Stdout)
	send := jsonSender(out)
	reply := func(id json.RawMessage, r map[string]any) {
		r["resultType"] = "complete"
		send(map[string]any{"jsonrpc": "2.0", "id": id, "result": r})
	}
	fail := func(id json.RawMessage, code int, msg string, data any) {
		e := map[string]any{"code": code, "message": msg}
		if data != nil {
			e["data"] = data
		}
		send(map[string]any{"jsonrpc": "2.0", "id": id, "error": e})
	}
	info := map[string]any{"name": "modern-broken", "version": "1.0"}
	caps := map[string]any{"tools": map[string]any{"listChanged": true}}
	tool := map[string]any{"name": "confirm", "description": "Asks the user to confirm, then says what they answered.",
		"inputSchema": map[string]any{"type": "object", "properties": map[string]any{}}, "annotations": map[string]any{"readOnlyHint": true}}
	eachMessage(func(line []byte, m hostileMsg) {
		if m.Method == "" || m.ID == nil {
			return
		}
		var p struct {
			Name           string                     `json:"name"`
			InputResponses map[string]json.RawMessage `json:"inputResponses"`
			Meta           struct {
				Version string `json:"io.modelcontextprotocol/protocolVersion"`
				Caps    *struct {
					Elicitation json.RawMessage `json:"elicitation"`
				} `json:"io.modelcontextprotocol/clientCapabilities"`
			} `json:"_meta"`
		}
		json.Unmarshal(m.Params, &p)
		switch {
		case m.Method == "initialize":
			fail(m.ID, -32601, "initialize is not a method of 2026-07-28", nil)
		case p.Meta.Version != "2026-07-28" || p.Meta.Caps == nil:
			if p.Meta.Version != "" && p.Meta.Version != "2026-07-28" {
				fail(m.ID, -32022, "unsupported protocol version", map[string]any{"supported": []string{"2026-07-28"}, "requested": p.Meta.Version})
			} else {
				fail(m.ID, -32602, "_meta lacks the protocol version or the client capabilities", nil)
			}
		case m.Method == "server/discover" && defect == "handshake/server-info":
			reply(m.ID, map[string]any{"supportedVersions": []string{"2026-07-28"}, "capabilities": caps,
				"instructions": "Confirms.", "ttlMs": 0, "cacheScope": "public", "serverInfo": info})
		case m.Method == "server/discover":
			reply(m.ID, map[string]any{"supportedVersions": []string{"2026-07-28"}, "capabilities": caps,
				"instructions": "Confirms.", "ttlMs": 0, "cacheScope": "public", "_meta": map[string]any{"io.modelcontextprotocol/serverInfo": info}})
		case m.Method == "subscriptions/listen":
			// Acknowledged, and held open until the client cancels it.
			var lp struct {
				Notifications map[string]any `json:"notifications"`
			}
			json.Unmarshal(m.Params, &lp)
			kept := map[string]any{}
			if lp.Notifications["toolsListChanged"] == true && defect != "subscriptions/list-changed" {
				kept["toolsListChanged"] = true
			}
			send(map[string]any{"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged", "params": map[string]any{
				"_meta": map[string]any{"io.modelcontextprotocol/subscriptionId": m.ID}, "notifications": kept}})
		case m.Method == "ping":
			reply(m.ID, map[string]any{})
		case m.Method == "tools/list":
			reply(m.ID, map[string]any{"tools": []any{tool}, "ttlMs": 0, "cacheScope": "public"})
		case m.Method == "tools/call" && p.Name == "confirm":
			declared := p.Meta.Caps.Elicitation != nil
			switch {
			case len(p.InputResponses["ok"]) > 0:
				reply(m.ID, map[string]any{"content": []any{map[string]any{"type": "text", "text": "answered " + string(p.InputResponses["ok"])}}})
			case !declared && defect != "errors/missing-capability":
				fail(m.ID, -32021, "confirm needs elicitation", map[string]any{"requiredCapabilities": map[string]any{"elicitation": map[string]any{}}})
			default:
				send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{"resultType": "input_required", "inputRequests": map[string]any{
					"ok": map[string]any{"method": "elicitation/create", "params": map[string]any{"mode": "form", "message": "Confirm?",
						"requestedSchema": map[string]any{"type": "object", "properties": map[string]any{"ok": map[string]any{"type": "boolean"}}}}}}}})
			}
		case m.Method == "tools/call":
			fail(m.ID, -32602, "unknown tool", nil)
		default:
			fail(m.ID, -32601, "method not found", nil)
		}
	})
}

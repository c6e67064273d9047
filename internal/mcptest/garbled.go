package mcptest

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"
	"sync"
	"time"
)

// GarbledPrefix names a stdio server (legacy era) whose answers are
// malformed but addressable, one way per mode:
//   - "bom": every frame starts with a UTF-8 byte order mark;
//   - "bad-utf8": the answer to tools/call holds invalid UTF-8;
//   - "crlf": frames end with CRLF;
//   - "result-and-error": the answer to tools/call has both;
//   - "not-json": the answer to tools/call is not JSON, but names its id;
//   - "linger": correct, but it does not exit when its stdin ends;
//   - "empty-for-unknown": answers every method it does not know, such as
//     server/discover, with an empty result;
//   - "ignore-unknown": never answers a method it does not know;
//   - "roots": asks for the roots once initialized and takes them in a
//     little later (as servers that check them asynchronously do); its
//     tool "echo" answers with the roots it has.
const GarbledPrefix = "garbled:"

// RunGarbled serves one garbled mode on stdin and stdout.
func RunGarbled(mode string) {
	out := bufio.NewWriter(os.Stdout)
	eol := "\n"
	if mode == "crlf" {
		eol = "\r\n"
	}
	sendRaw := func(s string) {
		if mode == "bom" {
			out.WriteString("\ufeff")
		}
		out.WriteString(s)
		out.WriteString(eol)
		out.Flush()
	}
	send := func(v any) {
		b, _ := json.Marshal(v)
		sendRaw(string(b))
	}
	var rootsMu sync.Mutex
	roots := "none"
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	for {
		line, err := in.ReadBytes('\n')
		var m hostileMsg
		if len(line) > 0 && json.Unmarshal(line, &m) == nil && mode == "roots" {
			switch {
			case m.Method == "notifications/initialized":
				send(map[string]any{"jsonrpc": "2.0", "id": "roots-1", "method": "roots/list"})
			case m.Method == "" && string(m.ID) == `"roots-1"`:
				answer := string(line)
				time.AfterFunc(5*time.Millisecond, func() {
					rootsMu.Lock()
					roots = answer
					rootsMu.Unlock()
				})
			case m.Method == "tools/call":
				rootsMu.Lock()
				text := roots
				rootsMu.Unlock()
				send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}}})
				continue
			}
		}
		if len(line) > 0 && json.Unmarshal(line, &m) == nil && m.Method != "" && m.ID != nil {
			switch m.Method {
			case "initialize":
				send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{
					"protocolVersion": "2025-11-25", "capabilities": map[string]any{"tools": map[string]any{}},
					"serverInfo": map[string]any{"name": "garbled-" + mode, "version": "1"}}})
			case "tools/list":
				send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{"tools": []any{
					map[string]any{"name": "echo", "description": "Echoes.", "inputSchema": map[string]any{"type": "object"}}}}})
			case "tools/call":
				id := string(m.ID)
				switch mode {
				case "bad-utf8":
					sendRaw(`{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[{"type":"text","text":"caf` + "\xe9" + ` au lait"}]}}`)
				case "result-and-error":
					sendRaw(`{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[]},"error":{"code":-32603,"message":"both"}}`)
				case "not-json":
					sendRaw(`{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[{"type":"text","text":"unterminated}]}`)
				default:
					send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{"content": []any{map[string]any{"type": "text", "text": "ok"}}}})
				}
			case "ping":
				send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{}})
			default:
				if mode == "ignore-unknown" {
					break
				}
				if mode == "empty-for-unknown" {
					send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{}})
					break
				}
				send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32601, "message": "method not found: " + strings.ReplaceAll(m.Method, `"`, "")}})
			}
		}
		if err != nil {
			if mode == "linger" {
				time.Sleep(time.Minute)
			}
			return
		}
	}
}

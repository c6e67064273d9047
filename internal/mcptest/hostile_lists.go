package mcptest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// ListsPrefix, then a mode, names a stdio server (legacy era, 2025-11-25,
// with tools, resources, prompts and the skills extension) that tests one
// of mcpi's bounds:
//   - BoundsSilentUnknowns answers what it has (one tool "echo", one
//     resource "mem://known", one prompt "hello", ping, the lists) and never
//     answers anything else: an unknown method, tool, resource or prompt
//     gets no response at all, as JSON-RPC forbids;
//   - BoundsEndlessCursor gives a new nextCursor with every page of every
//     list (tools, resources, templates, prompts, skills), forever;
//   - BoundsCyclingCursor gives cursor "a", then "b", then "a" again: its
//     lists go round in a circle;
//   - BoundsCyclingNoTools is BoundsCyclingCursor on a server that
//     declares no tools capability (a tools/list is answered anyway).
//
// Every page of BoundsEndlessCursor and BoundsCyclingCursor has one item,
// named after the page ("t1", "t2"...).
const ListsPrefix = "lists:"

// The modes of ListsPrefix.
const (
	BoundsSilentUnknowns = "silent-unknowns"
	BoundsEndlessCursor  = "endless-cursor"
	BoundsCyclingCursor  = "cycling-cursor"
	BoundsCyclingNoTools = "cycling-cursor-no-tools"
)

// RunLists serves one mode of ListsPrefix on stdin and stdout until stdin
// ends.
func RunLists(mode string) {
	out := bufio.NewWriter(os.Stdout)
	send := jsonSender(out)
	reply := func(id json.RawMessage, r any) { send(map[string]any{"jsonrpc": "2.0", "id": id, "result": r}) }
	fail := func(id json.RawMessage, code int, msg string) {
		send(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": msg}})
	}
	// page returns the page a cursor asks for (1 for none) and the cursor
	// of the next one.
	page := func(cursor string) (int, string) {
		n := 1
		if cursor != "" {
			n, _ = strconv.Atoi(strings.TrimPrefix(cursor, "p"))
		}
		switch mode {
		case BoundsEndlessCursor:
			return n, fmt.Sprintf("p%d", n+1)
		case BoundsCyclingCursor, BoundsCyclingNoTools:
			switch cursor {
			case "":
				return 1, "a"
			case "a":
				return 2, "b"
			default:
				return 3, "a"
			}
		}
		return n, ""
	}
	eachMessage(func(line []byte, m hostileMsg) {
		if m.Method == "" || m.ID == nil {
			return
		}
		var p struct {
			Cursor string `json:"cursor"`
			Name   string `json:"name"`
			URI    string `json:"uri"`
		}
		json.Unmarshal(m.Params, &p)
		n, next := page(p.Cursor)
		list := func(member string, item map[string]any) {
			r := map[string]any{member: []any{item}}
			if next != "" {
				r["nextCursor"] = next
			}
			reply(m.ID, r)
		}
		switch m.Method {
		case "initialize":
			caps := map[string]any{"tools": map[string]any{}, "resources": map[string]any{}, "prompts": map[string]any{},
				"extensions": map[string]any{"io.modelcontextprotocol/skills": map[string]any{}}}
			if mode == BoundsCyclingNoTools {
				delete(caps, "tools")
			}
			reply(m.ID, map[string]any{"protocolVersion": "2025-11-25", "capabilities": caps,
				"serverInfo": map[string]any{"name": "bounds-" + mode, "version": "1"}})
		case "ping":
			reply(m.ID, map[string]any{})
		case "tools/list":
			list("tools", map[string]any{"name": fmt.Sprintf("t%d", n), "description": "A tool.", "inputSchema": map[string]any{"type": "object", "properties": map[string]any{}}})
		case "resources/list":
			uri := "mem://known"
			if mode != BoundsSilentUnknowns {
				uri = fmt.Sprintf("mem://r%d", n)
			}
			list("resources", map[string]any{"uri": uri, "name": "r", "mimeType": "text/plain"})
		case "resources/templates/list":
			list("resourceTemplates", map[string]any{"uriTemplate": fmt.Sprintf("mem://t%d/{x}", n), "name": "t"})
		case "prompts/list":
			name := "hello"
			if mode != BoundsSilentUnknowns {
				name = fmt.Sprintf("p%d", n)
			}
			list("prompts", map[string]any{"name": name, "description": "A prompt."})
		case "skills/list":
			uri := fmt.Sprintf("skill://s%d/SKILL.md", n)
			list("skills", map[string]any{"uri": uri, "frontmatter": map[string]any{"name": fmt.Sprintf("s%d", n), "description": "A skill."}, "resources": "dynamic"})
		case "tools/call":
			if mode == BoundsSilentUnknowns && p.Name != "echo" && p.Name != "t1" {
				break // silence
			}
			reply(m.ID, map[string]any{"content": []any{map[string]any{"type": "text", "text": "ok"}}})
		case "resources/read":
			if mode == BoundsSilentUnknowns && p.URI != "mem://known" {
				break
			}
			reply(m.ID, map[string]any{"contents": []any{map[string]any{"uri": p.URI, "mimeType": "text/plain", "text": "known"}}})
		case "prompts/get":
			if mode == BoundsSilentUnknowns && p.Name != "hello" {
				break
			}
			reply(m.ID, map[string]any{"messages": []any{map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": "hi"}}}})
		default:
			if mode == BoundsSilentUnknowns {
				break
			}
			fail(m.ID, -32601, "method not found")
		}
	})
}

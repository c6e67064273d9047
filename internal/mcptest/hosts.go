package mcptest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// HostsPrefix, then a host's id (internal/check/hosts), names a stdio
// server (legacy era, 2025-11-25, tools only) whose tools break that host's
// profile and no other rule of the host it is named after; "hosts:clean"
// lists tools every host takes, strict modes included; HostsBackendDown
// lists no tools: its tools/list fails as a server whose database is not
// running does (-32603, "connect ECONNREFUSED 127.0.0.1:5432").
const HostsPrefix = "hosts:"

// HostsBackendDown is the mode of HostsPrefix whose backend is missing;
// HostsHeavy's tools are what a hostile server gives a linter to chew on:
// 5,000 tools, one schema nested 2,000 objects deep, one 100,000
// properties wide (about 5 MB).
const (
	HostsBackendDown = "backend-down"
	HostsHeavy       = "heavy"
	// HostsChangingOnce says its tools changed (notifications/tools/
	// list_changed) while the first tools/list was under way;
	// HostsChurning says so during every one.
	HostsChangingOnce = "changing-once"
	HostsChurning     = "churning"
	// HostsLongDescription lists a tool whose description has 5,079
	// characters: past OpenAI's 1,024 and past check's own 4,096.
	HostsLongDescription = "long-description"
)

// cleanTool is a tool every host takes.
const cleanTool = `{"name":"get_weather","description":"The weather of a city.","inputSchema":{"type":"object","properties":{"city":{"type":"string","description":"A city."}},"required":["city"],"additionalProperties":false}}`

// hostTools are, by host, tools that break its profile.
var hostTools = map[string][]string{
	"clean":              {cleanTool},
	HostsBackendDown:     nil,
	HostsHeavy:           nil, // heavyTools(), made when served
	HostsChangingOnce:    {cleanTool},
	HostsChurning:        {cleanTool},
	HostsLongDescription: {cleanTool, fmt.Sprintf(`{"name":"explain","description":%q,"inputSchema":{"type":"object","properties":{},"additionalProperties":false}}`, strings.Repeat("Explains. ", 507)+"All done.")},
	"openai":             {cleanTool, toolJSON("weather_"+strings.Repeat("x", 60), `{"type":"object","properties":{},"additionalProperties":false}`)},
	"openai-strict":      {cleanTool, toolJSON("search", `{"type":"object","properties":{"q":{"type":"string"},"limit":{"type":"integer"}},"required":["q"],"additionalProperties":false}`)},
	"anthropic":          {cleanTool, toolJSON("either", `{"type":"object","anyOf":[{"properties":{"a":{"type":"string"}},"required":["a"]},{"properties":{"b":{"type":"string"}},"required":["b"]}]}`)},
	"anthropic-strict":   {cleanTool, toolJSON("page", `{"type":"object","properties":{"n":{"type":"integer","minimum":1}},"required":["n"],"additionalProperties":false}`)},
	"gemini":             {cleanTool, toolJSON("pick", `{"type":"object","properties":{"level":{"type":"integer","enum":[1,2,3]}},"required":["level"],"additionalProperties":false}`)},
	"vscode":             {cleanTool, toolJSON("tags", `{"type":"object","properties":{"tags":{"type":"array"}},"required":["tags"],"additionalProperties":false}`)},
	"cursor":             {cleanTool, toolJSON("get_the_weather_forecast_for_the_next_seven_days_in_one_city", `{"type":"object","properties":{},"additionalProperties":false}`)},
	"windsurf":           manyTools(101),
	"claude-desktop":     {cleanTool, toolJSON("weather_"+strings.Repeat("y", 60), `{"type":"object","properties":{},"additionalProperties":false}`)},
	"claude-code":        {cleanTool, toolJSON(strings.Repeat("z", 121), `{"type":"object","properties":{},"additionalProperties":false}`)},
}

func toolJSON(name, schema string) string {
	return fmt.Sprintf(`{"name":%q,"description":"Does one thing.","inputSchema":%s}`, name, schema)
}

func manyTools(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = toolJSON(fmt.Sprintf("tool_%d", i), `{"type":"object","properties":{},"additionalProperties":false}`)
	}
	return out
}

// RunHosts serves the tools of host on stdin and stdout until stdin ends.
func RunHosts(host string) {
	tools, ok := hostTools[host]
	if host == HostsHeavy {
		tools = heavyTools()
	}
	if !ok {
		fmt.Fprintf(os.Stderr, "no tools for host %q\n", host)
		os.Exit(2)
	}
	list := json.RawMessage("[" + strings.Join(tools, ",") + "]")
	out := bufio.NewWriter(os.Stdout)
	send := jsonSender(out)
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	lists := 0
	for {
		line, err := in.ReadBytes('\n')
		var m hostileMsg
		if len(line) > 0 && json.Unmarshal(line, &m) == nil && m.Method != "" && m.ID != nil {
			var result any
			switch m.Method {
			case "initialize":
				result = map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{"tools": map[string]any{}},
					"serverInfo": map[string]any{"name": "w", "version": "1"}}
			case "tools/list":
				if host == HostsChurning || host == HostsChangingOnce && lists == 0 {
					send(map[string]any{"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
				}
				lists++
				if host == HostsBackendDown {
					send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32603, "message": "connect ECONNREFUSED 127.0.0.1:5432"}})
					continue
				}
				result = map[string]any{"tools": list}
			case "tools/call":
				send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32602, "message": "Unknown tool"}})
				continue
			case "ping":
				result = map[string]any{}
			default:
				send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32601, "message": "Method not found"}})
				continue
			}
			send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": result})
		}
		if err != nil {
			return
		}
	}
}

// heavyTools are HostsHeavy's tools.
func heavyTools() []string {
	tools := manyTools(5000)
	deep := `{"type":"string"}`
	for range 2000 { // 4,000 levels of JSON: encoding/json takes at most 10,000
		deep = `{"type":"object","properties":{"k":` + deep + `}}`
	}
	var wide strings.Builder
	wide.WriteString(`{"type":"object","properties":{`)
	for i := range 100000 {
		if i > 0 {
			wide.WriteByte(',')
		}
		fmt.Fprintf(&wide, `"p%06d":{"type":"string","description":"a property of a very wide tool"}`, i)
	}
	wide.WriteString(`}}`)
	return append(tools, toolJSON("deep", deep), toolJSON("wide", wide.String()))
}

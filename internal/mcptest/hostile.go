package mcptest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/mcpi-dev/mcpi/internal/demoserver"
)

// PeerEnv is the environment variable that turns a re-executed test binary
// into a test server: "hostile:MODE" runs RunHostile(MODE).
const PeerEnv = "MCPI_TEST_PEER"

// Hostile modes: each is a stdio server that answers initialize and then
// gets one thing wrong.
const (
	HostileGarbageFirst   = "garbage-first"   // text, bad UTF-8 and escapes on stdout before the first frame
	HostileHuge           = "huge"            // a 50 MB single-line result to tools/call
	HostileCrash          = "crash"           // exits with status 3 in the middle of tools/call
	HostileHang           = "hang"            // never answers tools/call; reports notifications/cancelled on stderr
	HostileFlood          = "flood"           // 100,000 notifications before answering tools/call
	HostileBadUTF8        = "bad-utf8"        // an invalid UTF-8 line between valid frames
	HostileOldVersion     = "old-version"     // answers initialize with 2024-11-05
	HostileUnknownVersion = "unknown-version" // answers initialize with a revision nobody knows
	HostileStringIDs      = "string-ids"      // echoes numeric ids as strings
	HostileBatch          = "batch"           // 2025-03-26, answers tools/list in a batch with a notification
	HostileUnknownID      = "unknown-id"      // sends a response to a request never made
	HostileServerRequests = "server-requests" // asks roots, sampling and elicitation during tools/call
	HostileSilent         = "silent"          // never answers anything, not even initialize
	HostileStderrExit     = "stderr-exit"     // writes to stderr and exits 7 before answering initialize
	HostileEscapes        = "escapes"         // tool names and content full of terminal escape sequences
)

// HugeSize is the size of the text in HostileHuge's result.
const HugeSize = 50 << 20

type hostileMsg struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   json.RawMessage `json:"error,omitempty"`
}

// protocolVersion is the revision an initialize request offers.
func (m hostileMsg) protocolVersion() string {
	var p struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	json.Unmarshal(m.Params, &p)
	return p.ProtocolVersion
}

// RunHostile serves one hostile mode on stdin and stdout until stdin ends.
func RunHostile(mode string) {
	out := bufio.NewWriterSize(os.Stdout, 1<<20)
	send, sendJSON := lineSender(out), jsonSender(out)
	result := func(id json.RawMessage, r any) {
		if mode == HostileStringIDs {
			id = json.RawMessage(fmt.Sprintf("%q", id))
		}
		sendJSON(map[string]any{"jsonrpc": "2.0", "id": id, "result": r})
	}
	switch mode {
	case HostileMRTR:
		runMRTR()
		return
	case HostilePoison:
		runPoison()
		return
	case HostileLongText:
		runLongText()
		return
	case HostileOrphan:
		startOrphan()
	case hostileOrphanChild:
		runOrphanChild()
		return
	case HostileGarbageFirst:
		send("Starting server... \x1b[31mred\x1b[0m")
		send("\xff\xfe not utf-8")
		send("{not json")
	case HostileStderrExit:
		fmt.Fprintln(os.Stderr, "fatal: config file not found")
		os.Exit(7)
	}
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	version := "2025-11-25"
	nextID := 1000
	pending := map[string]string{} // our request ids -> method
	var callID json.RawMessage
	answers := map[string]json.RawMessage{}
	for {
		line, err := in.ReadBytes('\n')
		if len(strings.TrimSpace(string(line))) == 0 {
			if err != nil {
				return
			}
			continue
		}
		var m hostileMsg
		if json.Unmarshal(line, &m) != nil {
			fmt.Fprintf(os.Stderr, "hostile: cannot parse %q\n", line)
			continue
		}
		if m.Method == "" {
			// An answer to one of our requests.
			if method, ok := pending[string(m.ID)]; ok {
				answers[method] = line
				delete(pending, string(m.ID))
				if len(pending) == 0 && callID != nil {
					all, _ := json.Marshal(answers)
					result(callID, map[string]any{"content": []any{map[string]any{"type": "text", "text": string(all)}}})
					callID = nil
				}
			}
			continue
		}
		switch m.Method {
		case "initialize":
			version = m.protocolVersion()
			switch mode {
			case HostileSilent:
				continue
			case HostileOldVersion:
				version = "2024-11-05"
			case HostileUnknownVersion:
				version = "2099-01-01"
			case HostileBatch:
				version = "2025-03-26"
			}
			result(m.ID, map[string]any{
				"protocolVersion": version,
				"capabilities":    map[string]any{"tools": map[string]any{}, "logging": map[string]any{}},
				"serverInfo":      map[string]any{"name": "hostile-" + mode, "version": "1.0"},
			})
		case "notifications/initialized":
			if mode == HostileBadUTF8 {
				send("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"\xc3\x28\"}}")
			}
			if mode == HostileUnknownID {
				send(`{"jsonrpc":"2.0","id":9999,"result":{}}`)
			}
		case "notifications/cancelled":
			fmt.Fprintf(os.Stderr, "hostile: got notifications/cancelled %s\n", m.Params)
			if mode == HostileHang {
				// Answer all the same, as if the answer had crossed the
				// cancellation.
				var p struct {
					RequestID json.RawMessage `json:"requestId"`
				}
				if json.Unmarshal(m.Params, &p) == nil && p.RequestID != nil {
					result(p.RequestID, map[string]any{"content": []any{map[string]any{"type": "text", "text": "too late"}}})
				}
			}
		case "ping":
			result(m.ID, map[string]any{})
		case "tools/list":
			name := "echo"
			if mode == HostileEscapes {
				name = "evil\x1b]52;c;cHduZWQ=\x07\x1b[2J\u202e"
			}
			tools := map[string]any{"tools": []any{map[string]any{
				"name": name, "description": "Echoes\x1b[31m text", "inputSchema": map[string]any{"type": "object"},
			}}}
			if mode == HostileBatch {
				b, _ := json.Marshal([]any{
					map[string]any{"jsonrpc": "2.0", "method": "notifications/message", "params": map[string]any{"level": "info", "data": "batched"}},
					map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": tools},
				})
				send(string(b))
				continue
			}
			result(m.ID, tools)
		case "tools/call":
			switch mode {
			case HostileHuge:
				b := make([]byte, 0, HugeSize+200)
				b = append(b, `{"jsonrpc":"2.0","id":`...)
				b = append(b, m.ID...)
				b = append(b, `,"result":{"content":[{"type":"text","text":"`...)
				b = append(b, strings.Repeat("x", HugeSize)...)
				b = append(b, `"}]}}`...)
				send(string(b))
				continue
			case HostileCrash:
				fmt.Fprintln(os.Stderr, "panic: something broke in the tool")
				os.Exit(3)
			case HostileHang:
				continue
			case HostileFlood:
				for i := range 100000 {
					fmt.Fprintf(out, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"debug","data":"flood %d"}}`+"\n", i)
				}
				out.Flush()
			case HostileServerRequests:
				callID = m.ID
				for i, method := range []string{"roots/list", "sampling/createMessage", "elicitation/create"} {
					var id json.RawMessage
					if i%2 == 0 {
						id = json.RawMessage(fmt.Sprint(nextID))
					} else {
						id = json.RawMessage(fmt.Sprintf(`"req-%d"`, nextID))
					}
					nextID++
					pending[string(id)] = method
					var params any
					switch method {
					case "sampling/createMessage":
						params = map[string]any{"messages": []any{map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": "hi"}}}, "maxTokens": 10}
					case "elicitation/create":
						params = map[string]any{"message": "name?", "requestedSchema": map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}}
					}
					sendJSON(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
				}
				continue
			}
			text := "ok"
			if mode == HostileEscapes {
				text = "line1\x1b[2J\x1b]8;;http://evil.example\x07link\x1b]8;;\x07\u202eevil"
			}
			result(m.ID, map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}})
		default:
			if len(m.ID) > 0 {
				sendJSON(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32601, "message": "method not found"}})
			}
		}
		if err == io.EOF {
			return
		}
	}
}

// peerRunners are the test servers named "PREFIX:MODE" in PeerEnv.
var peerRunners = []struct {
	prefix string
	run    func(mode string)
}{
	{GarbledPrefix, RunGarbled},
	{BrokenPrefix, RunBroken},
	{ModernBrokenPrefix, RunModernBroken},
	{SkillsPrefix, RunSkills},
	{BoundsPrefix, RunBounds},
	{LoadPrefix, RunLoad},
	{SessionPrefix, RunHostileSession},
	{ListsPrefix, RunLists},
	{HostsPrefix, RunHosts},
	{AppsPrefix, RunApps},
	{"hostile:", RunHostile},
}

// ServePeer turns a re-executed test binary into a stdio MCP server when
// PeerEnv is set: "demo" or "demo:ERA" runs the demo server (legacy era by
// default), "hostile:MODE" a hostile one. It returns false when PeerEnv is
// not set; otherwise it serves until stdin ends and exits the process.
// Call it first thing in TestMain.
func ServePeer() bool {
	peer := os.Getenv(PeerEnv)
	switch {
	case peer == "":
		return false
	case peer == "demo" || strings.HasPrefix(peer, "demo:"):
		era := strings.TrimPrefix(strings.TrimPrefix(peer, "demo"), ":")
		if era == "" {
			era = demoserver.EraLegacy
		}
		if err := demoserver.RunStdio(context.Background(), demoserver.Options{Era: era}); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	case peer == TasksPeer:
		RunTasks()
		os.Exit(0)
	}
	for _, r := range peerRunners {
		if mode, ok := strings.CutPrefix(peer, r.prefix); ok {
			release := singleInstance()
			r.run(mode)
			release()
			os.Exit(0)
		}
	}
	fmt.Fprintf(os.Stderr, "unknown %s %q\n", PeerEnv, peer)
	os.Exit(2)
	return true
}

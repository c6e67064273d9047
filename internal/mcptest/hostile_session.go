package mcptest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// SessionPrefix names the hostile servers of a live session: PeerEnv
// "session:MODE:N:SIZE" runs RunHostileSession.
const SessionPrefix = "session:"

// Hostile modes against a live session's daemon.
const (
	// SessionFloodRequests answers tools/call "flood" with N
	// elicitation/create requests whose message is SIZE bytes, and answers
	// the call once every one of them was answered or refused (a JSON-RPC
	// error), saying how many were refused. Its stderr says each refusal.
	SessionFloodRequests = "flood-requests"
	// SessionJunkStdout writes N lines of SIZE junk bytes (not JSON) on
	// stdout when tools/call "junk" comes, then answers it: each line is a
	// bad frame the session warns about.
	SessionJunkStdout = "junk-stdout"
	// SessionStopsReading answers tools/call "fill", then sends N pings
	// and never reads its stdin again: mcpi's answers to its pings fill
	// the pipe, and every later write blocks. It exits after a minute.
	SessionStopsReading = "stops-reading"
)

// SessionPeer returns the PeerEnv value of a hostile session server.
func SessionPeer(mode string, n, size int) string {
	return fmt.Sprintf("%s%s:%d:%d", SessionPrefix, mode, n, size)
}

// RunHostileSession serves "MODE:N:SIZE" (see SessionPeer) on stdin and
// stdout until stdin ends.
func RunHostileSession(spec string) {
	parts := strings.Split(spec, ":")
	if len(parts) != 3 {
		fmt.Fprintf(os.Stderr, "hostile session: bad spec %q\n", spec)
		os.Exit(2)
	}
	mode := parts[0]
	n, _ := strconv.Atoi(parts[1])
	size, _ := strconv.Atoi(parts[2])
	out := bufio.NewWriterSize(os.Stdout, 1<<20)
	send := jsonSender(out)
	reply := func(id json.RawMessage, r any) { send(map[string]any{"jsonrpc": "2.0", "id": id, "result": r}) }
	text := func(s string) map[string]any {
		return map[string]any{"content": []any{map[string]any{"type": "text", "text": s}}}
	}
	var call json.RawMessage
	outstanding, refused := 0, 0
	eachMessage(func(line []byte, m hostileMsg) {
		switch {
		case m.Method == "" && m.ID != nil:
			// An answer to one of our requests.
			outstanding--
			if m.Error != nil {
				refused++
				fmt.Fprintf(os.Stderr, "refused: %s\n", m.Error)
			}
			if outstanding == 0 && call != nil {
				reply(call, text(fmt.Sprintf("%d of %d refused", refused, n)))
				call = nil
			}
		case m.Method == "initialize":
			reply(m.ID, map[string]any{
				"protocolVersion": m.protocolVersion(),
				"capabilities":    map[string]any{"tools": map[string]any{}},
				"serverInfo":      map[string]any{"name": "hostile-session-" + mode, "version": "1.0"},
			})
		case m.Method == "ping":
			reply(m.ID, map[string]any{})
		case m.Method == "tools/list":
			reply(m.ID, map[string]any{"tools": []any{
				map[string]any{"name": "flood", "inputSchema": map[string]any{"type": "object"}},
				map[string]any{"name": "junk", "inputSchema": map[string]any{"type": "object"}},
				map[string]any{"name": "fill", "inputSchema": map[string]any{"type": "object"}},
				map[string]any{"name": "echo", "inputSchema": map[string]any{"type": "object"}},
			}})
		case m.Method == "tools/call":
			var p struct {
				Name string `json:"name"`
			}
			json.Unmarshal(m.Params, &p)
			switch {
			case p.Name == "flood" && mode == SessionFloodRequests:
				call = m.ID
				msg := strings.Repeat("x", size)
				for i := range n {
					outstanding++
					send(map[string]any{"jsonrpc": "2.0", "id": 5000 + i, "method": "elicitation/create", "params": map[string]any{
						"message": msg, "requestedSchema": map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}},
					}})
				}
			case p.Name == "fill" && mode == SessionStopsReading:
				reply(m.ID, text("filling"))
				for i := range n {
					send(map[string]any{"jsonrpc": "2.0", "id": 7000 + i, "method": "ping"})
				}
				time.Sleep(time.Minute)
				os.Exit(0)
			case p.Name == "junk" && mode == SessionJunkStdout:
				junk := strings.Repeat("x", size) + "\n"
				for range n {
					out.WriteString(junk)
				}
				out.Flush()
				reply(m.ID, text("junk sent"))
			default:
				reply(m.ID, text("ok"))
			}
		case m.ID != nil:
			send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32601, "message": "method not found"}})
		}
	})
}

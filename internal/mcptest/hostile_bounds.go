package mcptest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"
)

// BoundsPrefix names, in PeerEnv, a stdio server that tries the bounds of
// mcpi's waits and queues: "bounds:MODE".
const BoundsPrefix = "bounds:"

// Bounds modes.
const (
	// BoundsStopsReading answers initialize and tools/list, then never reads
	// its stdin again (it exits after a minute): a request larger than the
	// pipe cannot be written.
	BoundsStopsReading = "stops-reading"
	// BoundsRequestBurst answers tools/call "burst" {"n": N} by sending N
	// requests (ping, roots/list, sampling, elicitation) in one burst while
	// it reads every answer, and answers the call with how many ids got
	// exactly one answer ("answered N of N, 0 twice") once each has one.
	// Its tool "ask" sends an elicitation and answers the call at once,
	// leaving the elicitation waiting; "hang" never answers.
	BoundsRequestBurst = "request-burst"
	// BoundsLegacyTaskForever is a 2025-11-25 server whose tool "forever"
	// runs as a task that stays working: tasks/get answers at once, and
	// tasks/result never. tasks/cancel is written on stderr as "cancelled
	// TASK".
	BoundsLegacyTaskForever = "legacy-task-forever"
)

// RunBounds serves one bounds mode on stdin and stdout.
func RunBounds(mode string) {
	out := bufio.NewWriter(os.Stdout)
	var wmu sync.Mutex
	send := func(s string) {
		wmu.Lock()
		out.WriteString(s)
		out.WriteByte('\n')
		out.Flush()
		wmu.Unlock()
	}
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	var mu sync.Mutex
	answers := map[string]int{}
	var burstCall json.RawMessage
	burstN := 0
	checkBurst := func() {
		if burstCall == nil || len(answers) < burstN {
			return
		}
		twice := 0
		for _, n := range answers {
			if n > 1 {
				twice++
			}
		}
		send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"answered %d of %d, %d twice"}]}}`, burstCall, len(answers), burstN, twice))
		burstCall = nil
	}
	for {
		line, err := in.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) == 0 {
			if err != nil {
				return
			}
			continue
		}
		var m hostileMsg
		if json.Unmarshal(line, &m) != nil {
			continue
		}
		if m.Method == "" {
			mu.Lock()
			var id string
			json.Unmarshal(m.ID, &id)
			if strings.HasPrefix(id, "b-") {
				answers[id]++
				checkBurst()
			}
			mu.Unlock()
			continue
		}
		if len(m.ID) == 0 {
			continue // a notification
		}
		result := func(r string) { send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, m.ID, r)) }
		switch m.Method {
		case "initialize":
			caps := `{"tools":{}}`
			if mode == BoundsLegacyTaskForever {
				caps = `{"tools":{},"tasks":{"cancel":{},"requests":{"tools":{"call":{}}}}}`
			}
			result(`{"protocolVersion":"2025-11-25","capabilities":` + caps + `,"serverInfo":{"name":"bounds-` + mode + `","version":"1"}}`)
		case "tools/list":
			switch mode {
			case BoundsLegacyTaskForever:
				result(`{"tools":[{"name":"forever","inputSchema":{"type":"object"},"execution":{"taskSupport":"required"}}]}`)
			default:
				result(`{"tools":[{"name":"burst","inputSchema":{"type":"object","properties":{"n":{"type":"integer"}}}},{"name":"echo","inputSchema":{"type":"object"}},{"name":"ask","inputSchema":{"type":"object"}},{"name":"hang","inputSchema":{"type":"object"}}]}`)
			}
			if mode == BoundsStopsReading {
				// Never read again: what mcpi writes fills the pipe.
				time.Sleep(time.Minute)
				return
			}
		case "tools/call":
			var p struct {
				Name      string `json:"name"`
				Arguments struct {
					N int `json:"n"`
				} `json:"arguments"`
			}
			json.Unmarshal(m.Params, &p)
			switch {
			case mode == BoundsLegacyTaskForever:
				result(`{"task":{"taskId":"t-1","status":"working","createdAt":"2025-11-25T00:00:00Z","lastUpdatedAt":"2025-11-25T00:00:00Z","ttl":null,"pollInterval":50}}`)
			case p.Name == "burst":
				mu.Lock()
				burstCall, burstN = m.ID, p.Arguments.N
				answers = map[string]int{}
				mu.Unlock()
				go func(n int) {
					methods := []string{
						`"method":"ping"`,
						`"method":"roots/list"`,
						`"method":"sampling/createMessage","params":{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":5}`,
						`"method":"elicitation/create","params":{"mode":"form","message":"name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}`,
					}
					for i := 1; i <= n; i++ {
						send(fmt.Sprintf(`{"jsonrpc":"2.0","id":"b-%d",%s}`, i, methods[i%len(methods)]))
					}
				}(p.Arguments.N)
			case p.Name == "ask":
				send(`{"jsonrpc":"2.0","id":"ask-1","method":"elicitation/create","params":{"mode":"form","message":"name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}}`)
				result(`{"content":[{"type":"text","text":"asked"}]}`)
			case p.Name == "hang":
			default:
				result(`{"content":[{"type":"text","text":"ok"}]}`)
			}
		case "tasks/get":
			result(`{"taskId":"t-1","status":"working","createdAt":"2025-11-25T00:00:00Z","lastUpdatedAt":"2025-11-25T00:00:00Z","ttl":null,"pollInterval":50}`)
		case "tasks/result":
			// Never answered.
		case "tasks/cancel":
			fmt.Fprintln(os.Stderr, "cancelled t-1")
			result(`{"taskId":"t-1","status":"cancelled","createdAt":"2025-11-25T00:00:00Z","lastUpdatedAt":"2025-11-25T00:00:00Z","ttl":null}`)
		default:
			send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"no method %s"}}`, m.ID, m.Method))
		}
	}
}

package mcptest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
)

// HostileMRTR is a modern (2026-07-28) stdio server with tools that test
// the multi round-trip pattern: "state" answers input_required with a
// requestState full of JSON escapes and checks that the retry echoes it
// byte for byte; "loop" asks for input forever; "nostate" asks without a
// requestState; "bare" answers without resultType.
const HostileMRTR = "mrtr"

// MRTRState is the requestState "state" sends, as raw JSON.
const MRTRState = `"st\u00e9te \"quoted\" \/ slash"`

func runMRTR() {
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	out := bufio.NewWriter(os.Stdout)
	send := func(id json.RawMessage, result string) {
		fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":%s}`+"\n", id, result)
		out.Flush()
	}
	const elicit = `{"ask":{"method":"elicitation/create","params":{"mode":"form","message":"ok?","requestedSchema":{"type":"object","properties":{"ok":{"type":"boolean","default":true}}}}}}`
	for {
		line, err := in.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
				Params struct {
					Name           string                     `json:"name"`
					RequestState   json.RawMessage            `json:"requestState"`
					InputResponses map[string]json.RawMessage `json:"inputResponses"`
				} `json:"params"`
			}
			json.Unmarshal(line, &m)
			switch m.Method {
			case "server/discover":
				send(m.ID, `{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"mrtr","version":"1"}}}`)
			case "tools/list":
				send(m.ID, `{"resultType":"complete","tools":[{"name":"state","inputSchema":{"type":"object"}},{"name":"loop","inputSchema":{"type":"object"}},{"name":"nostate","inputSchema":{"type":"object"}},{"name":"bare","inputSchema":{"type":"object"}}]}`)
			case "tools/call":
				text := func(s string) string {
					b, _ := json.Marshal(s)
					return `{"resultType":"complete","content":[{"type":"text","text":` + string(b) + `}]}`
				}
				switch m.Params.Name {
				case "state":
					if m.Params.RequestState == nil {
						send(m.ID, `{"resultType":"input_required","inputRequests":`+elicit+`,"requestState":`+MRTRState+`}`)
					} else if string(m.Params.RequestState) == MRTRState {
						send(m.ID, text("state echoed exactly; answer "+string(m.Params.InputResponses["ask"])))
					} else {
						send(m.ID, text("state mismatch: "+string(m.Params.RequestState)))
					}
				case "loop":
					send(m.ID, `{"resultType":"input_required","inputRequests":`+elicit+`,"requestState":"again"}`)
				case "nostate":
					if m.Params.InputResponses == nil {
						send(m.ID, `{"resultType":"input_required","inputRequests":`+elicit+`}`)
					} else if m.Params.RequestState != nil {
						send(m.ID, text("unexpected requestState"))
					} else {
						send(m.ID, text("no state, as it should be"))
					}
				case "bare":
					send(m.ID, `{"content":[{"type":"text","text":"complete without resultType"}]}`)
				}
			}
		}
		if err != nil {
			return
		}
	}
}

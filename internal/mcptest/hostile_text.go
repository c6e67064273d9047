package mcptest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// HostileLongText is a stdio server (legacy era, with the skills
// extension) whose words are megabytes long, where mcpi quotes them in a
// message: a server decides what it sends, never how long mcpi's lines
// are. It lists two skills:
//   - LongTextDigest, whose manifest gives SKILL.md a digest of
//     LongTextSize bytes (not sha256:, and escapes in it);
//   - LongTextFields, whose listed frontmatter has LongTextFieldCount
//     fields its SKILL.md does not have;
//
// its tool "fail" answers with a JSON-RPC error whose message is
// LongTextSize bytes, the tool "warn" makes mcpi warn about a frame whose
// jsonrpc member is that long, and every tools/call writes a line of
// LongTextSize/16 bytes on its stderr.
const HostileLongText = "long-text"

// The names, sizes and counts of HostileLongText.
const (
	LongTextDigest     = "huge-digest"
	LongTextFields     = "many-fields"
	LongTextSize       = 4 << 20
	LongTextFieldCount = 20000
)

// longText is n bytes of text with an escape sequence now and then.
func longText(n int) string {
	const unit = "long text \x1b[2J "
	return strings.Repeat(unit, n/len(unit)+1)[:n]
}

func runLongText() {
	body := func(name string) string {
		return "---\nname: " + name + "\ndescription: A skill\n---\n\nBody.\n"
	}
	digestMD, fieldsMD := body(LongTextDigest), body(LongTextFields)
	fields := map[string]any{"name": LongTextFields, "description": "A skill"}
	for i := range LongTextFieldCount {
		fields[fmt.Sprintf("field%05d", i)] = "a value the file does not have"
	}
	entries := []any{
		map[string]any{
			"uri":         "skill://" + LongTextDigest + "/SKILL.md",
			"frontmatter": map[string]any{"name": LongTextDigest, "description": "A skill"},
			"resources":   []any{map[string]any{"uri": "skill://" + LongTextDigest + "/SKILL.md", "size": len(digestMD), "digest": "sha256:" + longText(LongTextSize)}},
		},
		map[string]any{
			"uri":         "skill://" + LongTextFields + "/SKILL.md",
			"frontmatter": fields,
			"resources":   []any{map[string]any{"uri": "skill://" + LongTextFields + "/SKILL.md", "size": len(fieldsMD), "digest": skillDigest(fieldsMD)}},
		},
	}
	caps := `{"tools":{},"resources":{},"extensions":{"io.modelcontextprotocol/skills":{}}}`
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	out := bufio.NewWriterSize(os.Stdout, 1<<20)
	sendRaw := lineSender(out)
	send := func(id json.RawMessage, result any) {
		b, _ := json.Marshal(result)
		sendRaw(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, id, b))
	}
	for {
		line, err := in.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
				Params struct {
					URI  string `json:"uri"`
					Name string `json:"name"`
				} `json:"params"`
			}
			json.Unmarshal(line, &m)
			switch m.Method {
			case "initialize":
				send(m.ID, json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":`+caps+`,"serverInfo":{"name":"long-text","version":"1"}}`))
			case "skills/list":
				send(m.ID, map[string]any{"skills": entries})
			case "resources/read":
				text := digestMD
				if strings.Contains(m.Params.URI, LongTextFields) {
					text = fieldsMD
				}
				send(m.ID, map[string]any{"contents": []any{map[string]any{"uri": m.Params.URI, "mimeType": "text/markdown", "text": text}}})
			case "tools/list":
				tool := func(name string) map[string]any {
					return map[string]any{"name": name, "inputSchema": map[string]any{"type": "object"}}
				}
				send(m.ID, map[string]any{"tools": []any{tool("fail"), tool("warn")}})
			case "tools/call":
				fmt.Fprintf(os.Stderr, "stderr %s\n", longText(LongTextSize/16))
				if m.Params.Name == "warn" {
					b, _ := json.Marshal(longText(LongTextSize))
					sendRaw(fmt.Sprintf(`{"jsonrpc":%s,"method":"notifications/message","params":{"level":"info","data":"x"}}`, b))
					send(m.ID, map[string]any{"content": []any{map[string]any{"type": "text", "text": "warned"}}})
					break
				}
				b, _ := json.Marshal(map[string]any{"code": -32000, "message": longText(LongTextSize)})
				sendRaw(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":%s}`, m.ID, b))
			default:
				if len(m.ID) > 0 {
					sendRaw(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}`, m.ID))
				}
			}
		}
		if err != nil {
			return
		}
	}
}

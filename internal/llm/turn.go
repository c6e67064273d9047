package llm

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// turn is what every provider does with its stream: it hands events to
// the caller, keeps the text in one builder (no copy of the whole text
// per delta), checks each tool call against the tools offered, and
// assembles the Response.
type turn struct {
	c       *conn
	on      func(Event)
	start   time.Time
	offered map[string]bool
	text    strings.Builder
	resp    Response
	first   bool
}

func newTurn(c *conn, req *Request, on func(Event)) *turn {
	t := &turn{c: c, on: on, start: time.Now(), offered: make(map[string]bool, len(req.Tools))}
	for _, tool := range req.Tools {
		t.offered[tool.Name] = true
	}
	t.resp.Message.Role = RoleAssistant
	return t
}

func (t *turn) emit(e Event) {
	if t.on != nil {
		t.on(e)
	}
}

// firstToken marks the first text or tool call of the turn.
func (t *turn) firstToken() {
	if t.first {
		return
	}
	t.first = true
	t.resp.TimeToFirstToken = time.Since(t.start)
	t.emit(Event{Kind: EventFirstToken, TimeToFirstToken: t.resp.TimeToFirstToken})
}

func (t *turn) addText(s string) {
	if s == "" {
		return
	}
	t.firstToken()
	t.text.WriteString(s)
	t.emit(Event{Kind: EventText, Text: s})
}

// endText closes the text block under way, if any.
func (t *turn) endText() {
	if t.text.Len() == 0 {
		return
	}
	t.resp.Message.Content = append(t.resp.Message.Content, Block{Type: BlockText, Text: t.text.String()})
	t.text.Reset()
}

const maxRaw = 4 << 10

// toolCall records a complete tool call: an id is made when the provider
// gave none (some compatible servers), and the call is Invalid when its
// tool was not offered or its arguments are not a JSON object.
func (t *turn) toolCall(id, name, args string, extra json.RawMessage) {
	t.firstToken()
	t.endText()
	if id == "" {
		id = fmt.Sprintf("call_%d", len(t.resp.ToolCalls)+1)
	}
	call := ToolCall{ID: id, Name: name}
	if strings.TrimSpace(args) == "" {
		args = "{}"
	}
	switch {
	case !json.Valid([]byte(args)):
		call.Invalid = fmt.Sprintf("the arguments of the call to %q are not valid JSON; send the call again with a JSON object", clipSpec(name))
		call.Raw = args
		if len(call.Raw) > maxRaw {
			call.Raw = call.Raw[:maxRaw]
		}
	case !strings.HasPrefix(strings.TrimSpace(args), "{"):
		call.Invalid = fmt.Sprintf("the arguments of the call to %q are not a JSON object", clipSpec(name))
		call.Arguments = json.RawMessage(args)
	default:
		call.Arguments = json.RawMessage(args)
	}
	if !t.offered[name] {
		call.Invalid = fmt.Sprintf("the model called %q, a tool that was not offered; it was not run", clipSpec(name))
	}
	input := call.Arguments
	if call.Invalid != "" {
		input = json.RawMessage("{}")
	}
	t.resp.Message.Content = append(t.resp.Message.Content, Block{Type: BlockToolUse, ID: id, Name: name, Input: input, Extra: extra})
	t.resp.ToolCalls = append(t.resp.ToolCalls, call)
	t.emit(Event{Kind: EventToolCall, Call: &t.resp.ToolCalls[len(t.resp.ToolCalls)-1]})
}

// finish ends the turn: usage and finish reason are sent as events.
func (t *turn) finish(m *meter, u Usage, raw []string, f FinishReason, model, id string) *Response {
	t.endText()
	if f == FinishEndTurn && len(t.resp.ToolCalls) > 0 {
		// Some compatible servers say "stop" after tool calls.
		f = FinishToolUse
	}
	t.resp.Usage, t.resp.FinishReasons, t.resp.Finish = u, raw, f
	t.resp.Model, t.resp.ID = model, id
	t.resp.Duration = time.Since(t.start)
	t.resp.BytesRead = m.read.Load()
	t.emit(Event{Kind: EventUsage, Usage: u})
	t.emit(Event{Kind: EventFinish, Finish: f, FinishReasons: raw})
	return &t.resp
}

func (t *turn) warn(format string, args ...any) {
	t.resp.Warnings = append(t.resp.Warnings, fmt.Sprintf(format, args...))
}

// schemaMap decodes a tool's JSON Schema for the SDKs that take a map.
func schemaMap(s json.RawMessage) (map[string]any, error) {
	if len(s) == 0 {
		return map[string]any{"type": "object", "properties": map[string]any{}}, nil
	}
	var m map[string]any
	if err := json.Unmarshal(s, &m); err != nil {
		return nil, err
	}
	return m, nil
}

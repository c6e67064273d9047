package mcptest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
)

// TasksPeer names a modern (2026-07-28) stdio server of the tasks extension
// (io.modelcontextprotocol/tasks, SEP-2663); TasksHandler serves the same
// over Streamable HTTP. Its tools:
//   - greet: answers at once, no task;
//   - slow: a task, unasked for, working for two polls, then completed
//     with "slow done"; a notifications/tasks follows each state change
//     (stdio only);
//   - confirm: a task that asks for an elicitation (key "confirm") and
//     completes with what was answered;
//   - multi: a task that asks for two (keys "a" and "b"), answerable one at
//     a time;
//   - fail: a task that fails with a JSON-RPC error;
//   - iserr: a task that completes with isError;
//   - forever: a task that works until it is cancelled;
//   - asks: a task that asks for input forever, each round under a fresh
//     key, until it is cancelled.
//
// A tools/call whose clientCapabilities do not declare the extension is
// refused with -32021. Over HTTP, a tasks/* request whose Mcp-Name is not
// its taskId is refused with -32020. Each tasks/* request is echoed on
// stderr (stdio) as "METHOD ID".
const TasksPeer = "tasks"

type taskState struct {
	id, tool, status, message string
	polls                     int
	inputs                    map[string]json.RawMessage
	answers                   map[string]json.RawMessage
	result                    json.RawMessage
	err                       json.RawMessage
}

type tasksServer struct {
	mu     sync.Mutex
	tasks  map[string]*taskState
	n      int
	notify func(string) // sends a notification (stdio), or nil
	log    io.Writer
}

func newTasksServer() *tasksServer { return &tasksServer{tasks: map[string]*taskState{}} }

func textResult(text string, isError bool) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}, "isError": isError})
	return b
}

const elicitConfirm = `{"method":"elicitation/create","params":{"mode":"form","message":"Really?","requestedSchema":{"type":"object","properties":{"confirm":{"type":"boolean"}},"required":["confirm"]}}}`

func (s *tasksServer) view(t *taskState) map[string]any {
	v := map[string]any{"taskId": t.id, "status": t.status, "createdAt": "2026-07-28T00:00:00Z",
		"lastUpdatedAt": "2026-07-28T00:00:00Z", "ttlMs": nil, "pollIntervalMs": 50}
	if t.message != "" {
		v["statusMessage"] = t.message
	}
	switch t.status {
	case "input_required":
		pending := map[string]json.RawMessage{}
		for k, r := range t.inputs {
			if _, ok := t.answers[k]; !ok {
				pending[k] = r
			}
		}
		v["inputRequests"] = pending
	case "completed":
		v["result"] = t.result
	case "failed":
		v["error"] = t.err
	}
	return v
}

// advance moves a task on after a poll or an answer.
func (s *tasksServer) advance(t *taskState) {
	switch t.tool {
	case "slow":
		t.polls++
		if t.polls >= 2 && t.status == "working" {
			t.status, t.message, t.result = "completed", "", textResult("slow done", false)
		}
	case "asks":
		if t.status == "input_required" && len(t.answers) == len(t.inputs) {
			t.inputs[fmt.Sprintf("q%d", len(t.inputs)+1)] = json.RawMessage(elicitConfirm)
		}
	case "confirm", "multi":
		if t.status != "input_required" || len(t.answers) < len(t.inputs) {
			return
		}
		keys := make([]string, 0, len(t.answers))
		for k := range t.answers {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var parts []string
		for _, k := range keys {
			parts = append(parts, k+"="+string(t.answers[k]))
		}
		t.status, t.message, t.result = "completed", "", textResult("answered "+strings.Join(parts, " "), false)
	}
}

type rpcMsg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Name           string                     `json:"name"`
		TaskID         string                     `json:"taskId"`
		InputResponses map[string]json.RawMessage `json:"inputResponses"`
		Meta           struct {
			Caps struct {
				Extensions map[string]json.RawMessage `json:"extensions"`
			} `json:"io.modelcontextprotocol/clientCapabilities"`
		} `json:"_meta"`
	} `json:"params"`
}

// handle answers one message; nil for a notification. header is the HTTP
// request's (nil on stdio).
func (s *tasksServer) handle(line []byte, header http.Header) []byte {
	var m rpcMsg
	if json.Unmarshal(line, &m) != nil || len(m.ID) == 0 {
		return nil
	}
	ok := func(v any) []byte {
		b, _ := json.Marshal(v)
		return []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, m.ID, b))
	}
	fail := func(code int, msg string) []byte {
		b, _ := json.Marshal(msg)
		return []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%s}}`, m.ID, code, b))
	}
	with := func(v map[string]any) map[string]any {
		v["resultType"] = "complete"
		return v
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if strings.HasPrefix(m.Method, "tasks/") {
		if s.log != nil {
			fmt.Fprintf(s.log, "%s %s\n", m.Method, m.Params.TaskID)
		}
		if header != nil && header.Get("Mcp-Name") != m.Params.TaskID {
			return fail(-32020, "Mcp-Name "+header.Get("Mcp-Name")+" is not the taskId "+m.Params.TaskID)
		}
	}
	switch m.Method {
	case "server/discover":
		return ok(map[string]any{"resultType": "complete", "supportedVersions": []string{"2026-07-28"},
			"capabilities": map[string]any{"tools": map[string]any{}, "extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}},
			"_meta":        map[string]any{"io.modelcontextprotocol/serverInfo": map[string]any{"name": "tasks", "version": "1"}}})
	case "tools/list":
		var tools []any
		for _, n := range []string{"greet", "slow", "confirm", "multi", "fail", "iserr", "forever", "asks"} {
			tools = append(tools, map[string]any{"name": n, "inputSchema": map[string]any{"type": "object"}})
		}
		return ok(map[string]any{"resultType": "complete", "tools": tools})
	case "tools/call":
		if m.Params.Name == "greet" {
			return ok(map[string]any{"resultType": "complete", "content": []any{map[string]any{"type": "text", "text": "Hello!"}}})
		}
		if _, ok := m.Params.Meta.Caps.Extensions["io.modelcontextprotocol/tasks"]; !ok {
			return fail(-32021, "tool "+m.Params.Name+" runs as a task: declare io.modelcontextprotocol/tasks")
		}
		s.n++
		t := &taskState{id: fmt.Sprintf("t-%d", s.n), tool: m.Params.Name, status: "working", answers: map[string]json.RawMessage{}}
		switch t.tool {
		case "slow":
			t.message = "warming up"
		case "confirm":
			t.status, t.inputs = "input_required", map[string]json.RawMessage{"confirm": json.RawMessage(elicitConfirm)}
		case "asks":
			t.status, t.inputs = "input_required", map[string]json.RawMessage{"q1": json.RawMessage(elicitConfirm)}
		case "multi":
			t.status, t.inputs = "input_required", map[string]json.RawMessage{"a": json.RawMessage(elicitConfirm), "b": json.RawMessage(elicitConfirm)}
		case "fail":
			t.status, t.err = "failed", json.RawMessage(`{"code":-32603,"message":"boom"}`)
		case "iserr":
			t.status, t.result = "completed", textResult("it went wrong", true)
		}
		s.tasks[t.id] = t
		v := s.view(t)
		delete(v, "result")
		delete(v, "error")
		delete(v, "inputRequests")
		v["resultType"] = "task"
		return ok(v)
	case "tasks/get":
		t := s.tasks[m.Params.TaskID]
		if t == nil {
			return fail(-32602, "no task "+m.Params.TaskID)
		}
		before := t.status
		s.advance(t)
		if t.status != before && s.notify != nil {
			b, _ := json.Marshal(s.view(t))
			s.notify(`{"jsonrpc":"2.0","method":"notifications/tasks","params":` + string(b) + `}`)
		}
		return ok(with(s.view(t)))
	case "tasks/update":
		t := s.tasks[m.Params.TaskID]
		if t == nil {
			return fail(-32602, "no task "+m.Params.TaskID)
		}
		for k, v := range m.Params.InputResponses {
			if _, asked := t.inputs[k]; asked {
				t.answers[k] = v
			}
		}
		s.advance(t)
		return ok(map[string]any{"resultType": "complete"})
	case "tasks/cancel":
		t := s.tasks[m.Params.TaskID]
		if t == nil {
			return fail(-32602, "no task "+m.Params.TaskID)
		}
		if t.status == "working" || t.status == "input_required" {
			t.status, t.message = "cancelled", "cancelled on request"
		}
		return ok(map[string]any{"resultType": "complete"})
	}
	return fail(-32601, "no method "+m.Method)
}

// RunTasks serves the tasks server on stdin and stdout.
func RunTasks() {
	s := newTasksServer()
	s.log = os.Stderr
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	out := bufio.NewWriter(os.Stdout)
	var wmu sync.Mutex
	write := func(b string) {
		wmu.Lock()
		out.WriteString(b + "\n")
		out.Flush()
		wmu.Unlock()
	}
	s.notify = write
	for {
		line, err := in.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			if resp := s.handle(line, nil); resp != nil {
				write(string(resp))
			}
		}
		if err != nil {
			return
		}
	}
}

// TasksHandler serves the tasks server over Streamable HTTP (JSON answers).
func TasksHandler() http.Handler {
	s := newTasksServer()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		body, _ := io.ReadAll(r.Body)
		resp := s.handle(body, r.Header)
		if resp == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if bytes.Contains(resp, []byte(`"code":-32020`)) {
			w.WriteHeader(http.StatusBadRequest)
		}
		w.Write(resp)
	})
}

// Package apphost is mcpi's host of MCP Apps (SEP-1865): a page on a
// loopback port that renders an App's HTML in a sandboxed iframe, and the
// host side of the App↔host protocol, which it speaks in Go: the page
// only relays messages between the App's frame and mcpi. The App's
// tools/call and resources/read go through mcpi's session to the server;
// everything a person must allow (a destructive tool, a link) is asked
// in the terminal. Every message between the App and the host is a tap
// event (transport.KindApp).
package apphost

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/mcpi-dev/mcpi/internal/apps"
	"github.com/mcpi-dev/mcpi/internal/bounds"
	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/safetext"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// Bounds of what an App may send.
const (
	// MaxMessage bounds one message from the App.
	MaxMessage = 1 << 20
	// MaxInFlight bounds the App's requests under way at once (its
	// tools/call and resources/read wait on the server); past it a
	// request is refused.
	MaxInFlight = 8
	// QueueCount and QueueBytes bound the messages waiting for the page
	// to take them; past them the host stops, saying so.
	QueueCount = 1024
	QueueBytes = 16 << 20
	// MaxNotes bounds what the App's log and messages print; later ones
	// are counted.
	MaxNotes = 50
)

// JSON-RPC error codes the host answers with.
const (
	codeMethodNotFound = -32601
	codeInvalidParams  = -32602
	codeDenied         = -32000
)

// Server is mcpi's session to the MCP server, as the App reaches it.
type Server interface {
	CallTool(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error)
	ReadResource(ctx context.Context, uri string) (json.RawMessage, error)
}

// Options configure a bridge.
type Options struct {
	// Tool is the tool whose App this is; Args its arguments; Tools every
	// tool the server lists (an App may call those visible to "app").
	Tool  mcp.Tool
	Args  json.RawMessage
	Tools []mcp.Tool
	// Info is the App's resource, read.
	Info *apps.Info
	// Server carries the App's requests to the server.
	Server Server
	// Confirm asks the person; nil means there is nobody to ask, and
	// what needs asking is refused.
	Confirm func(ctx context.Context, question string) bool
	// Say tells the person something (one line, sanitised here): what the
	// App logs and does. Warn tells what mcpi refused the App or could not
	// do (Say when nil).
	Say  func(line string)
	Warn func(line string)
	// Open opens a link the person allowed (mcpi's one opener).
	Open func(url string) error
	// Tap sees every message between the App and the host.
	Tap transport.Tap
	// Version is mcpi's.
	Version string
}

// Bridge is the host side of one App.
type Bridge struct {
	o   Options
	out *bounds.Queue[[]byte]

	mu          sync.Mutex
	initialized bool
	inputSent   bool
	result      json.RawMessage // the tool's result, once it came
	callErr     error
	resultSent  bool
	nextID      int
	teardown    map[string]chan struct{}
	inFlight    int
	notes       int
	modelCtx    json.RawMessage
	size        [2]int
	stopped     error
	stop        chan struct{}
	stopOnce    sync.Once
}

// New returns a bridge.
func New(o Options) *Bridge {
	if o.Say == nil {
		o.Say = func(string) {}
	}
	if o.Warn == nil {
		o.Warn = o.Say
	}
	return &Bridge{o: o, out: bounds.NewQueue[[]byte](bounds.NewBudget("messages to the App's page", QueueCount, QueueBytes)),
		teardown: map[string]chan struct{}{}, stop: make(chan struct{})}
}

// Out is the queue of messages for the page: each is a JSON object,
// {"to":"app","msg":...} to hand to the App, or {"resize":{...}} or
// {"end":"why"} for the page itself.
func (b *Bridge) Out() *bounds.Queue[[]byte] { return b.out }

// Stopped is closed when the bridge stops (the queue to the page
// overflowed, or Stop).
func (b *Bridge) Stopped() <-chan struct{} { return b.stop }

// Err says why the bridge stopped on its own.
func (b *Bridge) Err() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.stopped
}

func (b *Bridge) halt(err error) {
	b.stopOnce.Do(func() {
		b.mu.Lock()
		b.stopped = err
		b.mu.Unlock()
		close(b.stop)
	})
}

// toPage queues a message for the page.
func (b *Bridge) toPage(v any) {
	data, _ := json.Marshal(v)
	if err := b.out.Push(data, int64(len(data))); err != nil {
		b.halt(fmt.Errorf("the App's page does not take what the host sends: %w", err))
	}
}

// toApp sends a message to the App (through the page), seen by the tap.
// toApp sends the App one message, encoded by internal/mcp's builders (a
// message that cannot be encoded is not sent).
func (b *Bridge) toApp(data []byte, err error) {
	if err != nil {
		return
	}
	b.observe(transport.Outgoing, data)
	b.toPage(struct {
		To  string          `json:"to"`
		Msg json.RawMessage `json:"msg"`
	}{"app", data})
}

func (b *Bridge) observe(dir transport.Direction, data []byte) {
	if b.o.Tap != nil {
		b.o.Tap.Observe(transport.Event{Time: time.Now(), Kind: transport.KindApp, Dir: dir, Data: data})
	}
}

// note says something the App sent or did, at most MaxNotes times.
func (b *Bridge) note(format string, args ...any) { b.tell(b.o.Say, format, args...) }

// refused says what mcpi refused the App, at most MaxNotes times.
func (b *Bridge) refused(format string, args ...any) { b.tell(b.o.Warn, format, args...) }

func (b *Bridge) tell(to func(string), format string, args ...any) {
	b.mu.Lock()
	b.notes++
	n := b.notes
	b.mu.Unlock()
	switch {
	case n <= MaxNotes:
		to(safetext.OneLine(fmt.Sprintf(format, args...)))
	case n == MaxNotes+1:
		b.o.Warn("app: more messages from the App are not printed (the wire and the trace have them)")
	}
}

// FromApp takes one message the App sent. A request is answered through
// the page; a long one (a tool call) in a goroutine of its own.
func (b *Bridge) FromApp(ctx context.Context, data []byte) {
	if len(data) > MaxMessage {
		b.observe(transport.Incoming, data[:256])
		b.refused("app: refused a message of %d bytes (at most %d)", len(data), MaxMessage)
		b.fail(json.RawMessage("null"), codeDenied, fmt.Sprintf("a message of %d bytes: mcpi's host takes at most %d", len(data), MaxMessage))
		return
	}
	b.observe(transport.Incoming, data)
	var m mcp.Message
	if err := json.Unmarshal(data, &m); err != nil {
		b.refused("app: a message that is not JSON was refused")
		b.fail(json.RawMessage("null"), -32700, "parse error: "+err.Error())
		return
	}
	if m.JSONRPC != "2.0" {
		b.refused("app: a message that is not JSON-RPC 2.0 was refused")
		if len(m.ID) > 0 && m.Method != "" {
			b.fail(m.ID, -32600, `invalid request: "jsonrpc" must be "2.0"`)
		}
		return
	}
	switch {
	case m.IsRequest():
		b.request(ctx, m)
	case m.IsNotification():
		b.notification(m)
	case m.IsResponse():
		b.response(m)
	default:
		b.refused("app: a message that is neither a request, a notification nor a response was ignored")
	}
}

func (b *Bridge) reply(id json.RawMessage, result any) {
	b.toApp(mcp.NewResult(id, result))
}

func (b *Bridge) fail(id json.RawMessage, code int, msg string) {
	b.toApp(mcp.NewErrorResponse(id, &mcp.RPCError{Code: code, Message: msg}))
}

// request answers a request of the App.
func (b *Bridge) request(ctx context.Context, m mcp.Message) {
	switch m.Method {
	case "ui/initialize":
		b.reply(m.ID, b.initializeResult())
	case "ping":
		b.reply(m.ID, struct{}{})
	case "tools/call", "resources/read", "ui/open-link":
		// Each waits (on the server, or on the person): at most
		// MaxInFlight at once.
		b.mu.Lock()
		if b.inFlight >= MaxInFlight {
			b.mu.Unlock()
			b.fail(m.ID, codeDenied, fmt.Sprintf("the App has %d requests under way: mcpi's host takes at most %d at once", MaxInFlight, MaxInFlight))
			return
		}
		b.inFlight++
		b.mu.Unlock()
		go func() {
			defer func() { b.mu.Lock(); b.inFlight--; b.mu.Unlock() }()
			switch m.Method {
			case "tools/call":
				b.callTool(ctx, m)
			case "resources/read":
				b.readResource(ctx, m)
			default:
				b.openLink(ctx, m)
			}
		}()
	case "ui/message":
		var p struct {
			Role    string `json:"role"`
			Content struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		}
		json.Unmarshal(m.Params, &p)
		b.note("app: the App sends a message for the conversation (%s): %s", p.Role, p.Content.Text)
		b.fail(m.ID, codeDenied, "mcpi has no conversation: the message is shown in the terminal, and sent to no model")
	case "ui/update-model-context":
		b.mu.Lock()
		b.modelCtx = m.Params
		b.mu.Unlock()
		b.note("app: the App updates the model's context (%d bytes; mcpi has no model: it keeps the last one, and shows it here)", len(m.Params))
		b.reply(m.ID, struct{}{})
	case "ui/request-display-mode":
		// mcpi's page shows the App inline, and only inline.
		b.reply(m.ID, map[string]string{"mode": "inline"})
	default:
		b.fail(m.ID, codeMethodNotFound, "mcpi's App host does not implement "+m.Method)
	}
}

// notification takes a notification of the App.
func (b *Bridge) notification(m mcp.Message) {
	switch m.Method {
	case "ui/notifications/initialized":
		b.mu.Lock()
		b.initialized = true
		b.mu.Unlock()
		b.deliver()
	case "ui/notifications/size-changed":
		var p struct {
			Width  float64 `json:"width"`
			Height float64 `json:"height"`
		}
		if json.Unmarshal(m.Params, &p) != nil {
			return
		}
		w, h := clamp(p.Width), clamp(p.Height)
		b.mu.Lock()
		b.size = [2]int{w, h}
		b.mu.Unlock()
		b.toPage(map[string]any{"resize": map[string]int{"width": w, "height": h}})
	case "notifications/message":
		var p struct {
			Level string          `json:"level"`
			Data  json.RawMessage `json:"data"`
		}
		json.Unmarshal(m.Params, &p)
		b.note("app log [%s]: %s", p.Level, string(p.Data))
	default:
		// Other notifications (sandbox-proxy ones, unknown ones) are seen
		// on the wire and otherwise ignored, as JSON-RPC has it.
	}
}

// clamp keeps a size the App asks for within a screen.
func clamp(v float64) int {
	switch {
	case v < 0 || v != v:
		return 0
	case v > 10000:
		return 10000
	}
	return int(v)
}

// response takes the App's answer to a request of the host's
// (ui/resource-teardown).
func (b *Bridge) response(m mcp.Message) {
	b.mu.Lock()
	ch, ok := b.teardown[string(m.ID)]
	delete(b.teardown, string(m.ID))
	b.mu.Unlock()
	if ok {
		close(ch)
	}
}

// initializeResult is the host's answer to ui/initialize.
func (b *Bridge) initializeResult() any {
	info := b.o.Info
	sandbox := map[string]any{}
	if info != nil && info.CSP != nil {
		sandbox["csp"] = info.CSP
	}
	if info != nil && len(info.Permissions) > 0 {
		perms := map[string]any{}
		for _, p := range info.Permissions {
			perms[map[string]string{"clipboard-write": "clipboardWrite"}[p]+strings.TrimPrefix(p, "clipboard-write")] = struct{}{}
		}
		sandbox["permissions"] = perms
	}
	return map[string]any{
		"protocolVersion": apps.Protocol,
		"hostInfo":        map[string]string{"name": "mcpi", "version": b.o.Version},
		"hostCapabilities": map[string]any{
			"openLinks":       struct{}{},
			"serverTools":     struct{}{},
			"serverResources": struct{}{},
			"logging":         struct{}{},
			"sandbox":         sandbox,
		},
		"hostContext": map[string]any{
			"toolInfo":              map[string]any{"tool": b.o.Tool},
			"theme":                 "light",
			"displayMode":           "inline",
			"availableDisplayModes": []string{"inline"},
			"containerDimensions":   map[string]int{"maxHeight": 2000, "maxWidth": 1600},
			"platform":              "web",
			"userAgent":             "mcpi/" + b.o.Version,
		},
	}
}

// Result hands the bridge the tool's result (or the error that ended the
// call), to deliver once the App is initialized.
func (b *Bridge) Result(raw json.RawMessage, err error) {
	b.mu.Lock()
	b.result, b.callErr = raw, err
	if err == nil && raw == nil {
		b.callErr = errors.New("no result")
	}
	b.mu.Unlock()
	b.deliver()
}

// deliver sends the tool's input once the App is initialized, and its
// result (or its cancellation) once both are there.
func (b *Bridge) deliver() {
	b.mu.Lock()
	if !b.initialized {
		b.mu.Unlock()
		return
	}
	sendInput := !b.inputSent
	b.inputSent = true
	var result json.RawMessage
	var callErr error
	sendResult := !b.resultSent && (b.result != nil || b.callErr != nil)
	if sendResult {
		b.resultSent = true
		result, callErr = b.result, b.callErr
	}
	b.mu.Unlock()
	if sendInput {
		args := b.o.Args
		if len(args) == 0 {
			args = json.RawMessage(`{}`)
		}
		b.toApp(mcp.NewNotification("ui/notifications/tool-input", map[string]json.RawMessage{"arguments": args}))
	}
	if !sendResult {
		return
	}
	if callErr != nil {
		b.toApp(mcp.NewNotification("ui/notifications/tool-cancelled", map[string]string{"reason": callErr.Error()}))
		return
	}
	b.toApp(mcp.NewNotification("ui/notifications/tool-result", result))
}

// callTool forwards the App's tools/call: to a tool of the same server
// whose visibility includes "app", after the person allows it when it may
// be destructive.
func (b *Bridge) callTool(ctx context.Context, m mcp.Message) {
	var p struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if json.Unmarshal(m.Params, &p) != nil || p.Name == "" {
		b.fail(m.ID, codeInvalidParams, "tools/call needs params.name")
		return
	}
	var tool *mcp.Tool
	for i := range b.o.Tools {
		if b.o.Tools[i].Name == p.Name {
			tool = &b.o.Tools[i]
		}
	}
	if tool == nil {
		b.refused("app: refused tools/call %q: the server lists no such tool", p.Name)
		b.fail(m.ID, codeInvalidParams, "no tool "+p.Name+" on this server")
		return
	}
	// A visibility that does not read is no permission.
	if ui := apps.ToolMeta(tool.Meta); !ui.Visible(apps.App) || ui.BadVisibility {
		b.refused("app: refused tools/call %q: its visibility does not include \"app\"", p.Name)
		b.fail(m.ID, codeDenied, "the tool "+p.Name+" is not visible to Apps (its _meta.ui.visibility lacks \"app\")")
		return
	}
	if tool.MayDestroy() {
		q := fmt.Sprintf("The App asks to call %s, which may be destructive, with %s. Allow?", p.Name, oneLine(string(p.Arguments), 200))
		if b.o.Confirm == nil || !b.o.Confirm(ctx, safetext.OneLine(q)) {
			why := "the person refused it"
			if b.o.Confirm == nil {
				why = "there is no terminal to ask the person"
			}
			b.refused("app: refused tools/call %q: %s", p.Name, why)
			b.fail(m.ID, codeDenied, "mcpi did not call "+p.Name+", which may be destructive: "+why)
			return
		}
	}
	b.note("app: tools/call %s", p.Name)
	raw, err := b.o.Server.CallTool(ctx, p.Name, p.Arguments)
	b.forward(m.ID, raw, err)
}

func (b *Bridge) readResource(ctx context.Context, m mcp.Message) {
	var p struct {
		URI string `json:"uri"`
	}
	if json.Unmarshal(m.Params, &p) != nil || p.URI == "" {
		b.fail(m.ID, codeInvalidParams, "resources/read needs params.uri")
		return
	}
	raw, err := b.o.Server.ReadResource(ctx, p.URI)
	b.forward(m.ID, raw, err)
}

// forward answers the App with the server's answer: its result, or its
// JSON-RPC error as it was, or the error mcpi met.
func (b *Bridge) forward(id json.RawMessage, raw json.RawMessage, err error) {
	if err == nil {
		b.toApp(mcp.NewResult(id, raw))
		return
	}
	var rpc *session.RPCError
	if errors.As(err, &rpc) && rpc.RPCError != nil {
		b.toApp(mcp.NewErrorResponse(id, rpc.RPCError))
		return
	}
	b.fail(id, codeDenied, err.Error())
}

// openLink asks the person before opening the link the App gives; only
// http and https links are opened.
func (b *Bridge) openLink(ctx context.Context, m mcp.Message) {
	var p struct {
		URL string `json:"url"`
	}
	json.Unmarshal(m.Params, &p)
	if b.o.Open == nil {
		b.fail(m.ID, codeDenied, "mcpi opens no link here")
		return
	}
	if err := checkLink(p.URL); err != nil {
		b.refused("app: refused to open %q: %v", p.URL, err)
		b.fail(m.ID, codeDenied, "Invalid URL: "+err.Error())
		return
	}
	u, _ := url.Parse(p.URL)
	if b.o.Confirm == nil || !b.o.Confirm(ctx, safetext.OneLine("The App asks to open a page on "+u.Host+": "+oneLine(p.URL, 200)+" Open it?")) {
		b.refused("app: did not open %s", p.URL)
		b.fail(m.ID, codeDenied, "Link opening denied by user")
		return
	}
	if err := b.o.Open(p.URL); err != nil {
		b.fail(m.ID, codeDenied, "could not open the link: "+err.Error())
		return
	}
	b.reply(m.ID, struct{}{})
}

// Teardown tells the App it is going (ui/resource-teardown) and waits
// for its answer, at most wait.
func (b *Bridge) Teardown(reason string, wait time.Duration) {
	b.mu.Lock()
	b.nextID++
	id := fmt.Sprintf(`"mcpi-teardown-%d"`, b.nextID)
	ch := make(chan struct{})
	b.teardown[id] = ch
	ready := b.initialized
	b.mu.Unlock()
	if ready {
		b.toApp(mcp.NewRequestID(json.RawMessage(id), "ui/resource-teardown", map[string]string{"reason": reason}))
		select {
		case <-ch:
		case <-bounds.After(wait):
		}
	}
	b.mu.Lock()
	delete(b.teardown, id)
	b.mu.Unlock()
	b.toPage(map[string]string{"end": reason})
}

// ModelContext is the last context the App gave for the model.
func (b *Bridge) ModelContext() json.RawMessage {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.modelCtx
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		s = s[:n] + "…"
	}
	return s
}

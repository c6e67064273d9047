package tui

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"

	"github.com/mcpi-dev/mcpi/internal/intercept"
	"github.com/mcpi-dev/mcpi/internal/transport"
	"github.com/mcpi-dev/mcpi/internal/tui/common"
)

// ProxyOptions configure the TUI of mcpi proxy --ui: the proxied
// conversation as the Wire and Timeline panes show a trace, live, and the
// frames a breakpoint holds, each to forward, edit, drop, answer in the
// peer's place or close the connection on.
type ProxyOptions struct {
	// Title names the proxied server in the header.
	Title string
	// Run runs the proxy, its events given to tap, until it ends or ctx
	// ends; it runs on a goroutine of its own.
	Run func(ctx context.Context, tap transport.Tap) error
	// Gate decides on the frames the breakpoints hold (nil: none): the
	// proxy's own gate, or a client of the gate of a proxy attached to.
	Gate intercept.Decider
	// Changes, when set, has a value when the frames held may have
	// changed: the bar is redrawn then rather than at its next tick.
	Changes <-chan struct{}
	// EditCmd is the editor run on a file to edit (default: $VISUAL,
	// $EDITOR, vi).
	EditCmd func(path string) *exec.Cmd

	In      io.Reader
	Out     io.Writer
	NoColor bool
	Width   int
	Height  int
	Mouse   bool
}

// ProxyModel is the root model of mcpi proxy --ui: a replay model fed
// live by the proxy, and a bar for the frame held.
type ProxyModel struct {
	*ReplayModel
	popts ProxyOptions
	held  []intercept.Held
	sel   int
	// editor, while open, takes every key: an edit of the held frame, or
	// an answer in the peer's place.
	editor *heldEditor
}

// heldEditor is the JSON editor of a held frame: what it holds is
// checked when it is sent, and a refusal keeps it open.
type heldEditor struct {
	id     uint64
	answer bool
	what   string
	ta     textarea.Model
	err    string
}

// heldTickMsg redraws the held frame's deadline.
type heldTickMsg struct{}

// heldChangedMsg says the frames held may have changed.
type heldChangedMsg struct{}

// decidedMsg is the outcome of a decision on a held frame, made off the
// UI's goroutine (the gate may wait on a peer that does not read).
type decidedMsg struct {
	done string // what to say when it worked
	err  error
	// editor says the decision came from the JSON editor, which stays
	// open on a refusal.
	editor bool
}

// editedMsg comes back from the editor.
type editedMsg struct {
	id     uint64
	path   string
	answer bool
	err    error
}

// NewProxy returns the proxy's model; Close releases it.
func NewProxy(ctx context.Context, opts ProxyOptions) *ProxyModel {
	r := NewReplay(ctx, ReplayOptions{Title: opts.Title, Feed: opts.Run, In: opts.In, Out: opts.Out,
		NoColor: opts.NoColor, Width: opts.Width, Height: opts.Height, Mouse: opts.Mouse, Name: "mcpi proxy", Live: true})
	if opts.EditCmd == nil {
		opts.EditCmd = editorCmd
	}
	return &ProxyModel{ReplayModel: r, popts: opts}
}

// editorCmd runs $VISUAL or $EDITOR (vi without either) on path.
func editorCmd(path string) *exec.Cmd {
	ed := os.Getenv("VISUAL")
	if ed == "" {
		ed = os.Getenv("EDITOR")
	}
	if ed == "" {
		ed = "vi"
	}
	f := strings.Fields(ed)
	return exec.Command(f[0], append(f[1:], path)...)
}

// Held returns the frames held, as the bar last saw them.
func (m *ProxyModel) Held() []intercept.Held { return m.held }

// Init starts the proxy and the clock of the held frame's deadline.
func (m *ProxyModel) Init() tea.Cmd {
	return tea.Batch(m.ReplayModel.Init(), m.tick(), m.watchHeld())
}

// watchHeld waits for the next change of the frames held.
func (m *ProxyModel) watchHeld() tea.Cmd {
	ch := m.popts.Changes
	if ch == nil {
		return nil
	}
	return func() tea.Msg {
		if _, ok := <-ch; !ok {
			return nil
		}
		return heldChangedMsg{}
	}
}

func (m *ProxyModel) tick() tea.Cmd {
	return tea.Tick(time.Second, func(time.Time) tea.Msg { return heldTickMsg{} })
}

// refresh reads the frames held from the gate.
func (m *ProxyModel) refresh() {
	if m.popts.Gate == nil {
		return
	}
	m.held = m.popts.Gate.Held()
	if m.sel >= len(m.held) {
		m.sel = 0
	}
}

// Update routes a message: the held frame's keys while one is held, the
// rest to the replay model.
func (m *ProxyModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case heldTickMsg:
		m.refresh()
		return m, m.tick()
	case heldChangedMsg:
		m.refresh()
		return m, m.watchHeld()
	case editedMsg:
		return m, m.edited(msg)
	case decidedMsg:
		switch {
		case msg.err != nil && msg.editor && m.editor != nil:
			m.editor.err = msg.err.Error()
		case msg.err != nil:
			m.notice.Fail(msg.err)
		default:
			if msg.editor {
				m.editor = nil
			}
			if msg.done != "" {
				m.notice.Set("%s", msg.done)
			}
		}
		m.refresh()
		return m, nil
	case *common.Batch:
		_, cmd := m.ReplayModel.Update(msg)
		m.refresh()
		return m, cmd
	case tea.KeyPressMsg:
		m.refresh()
		if m.editor != nil {
			return m, m.editorKey(msg)
		}
		if len(m.held) > 0 && !m.active().InputFocused() {
			if cmd, ok := m.heldKey(msg); ok {
				m.refresh()
				return m, cmd
			}
		}
	}
	_, cmd := m.ReplayModel.Update(msg)
	return m, cmd
}

// heldKey acts on the selected held frame; ok says the key was one of
// the held frame's.
func (m *ProxyModel) heldKey(msg tea.KeyPressMsg) (tea.Cmd, bool) {
	k, g, h := m.c.Keys, m.popts.Gate, m.held[m.sel]
	var decide func(uint64) error
	var done string
	what := describeHeld(h.Data)
	switch {
	case key.Matches(msg, k.HeldForward):
		decide, done = g.Forward, "forwarded "+what+" as it came"
	case key.Matches(msg, k.HeldDrop):
		decide, done = g.Drop, "dropped "+what
	case key.Matches(msg, k.HeldClose):
		decide, done = g.CloseConn, "closed the connection instead of sending "+what
	case key.Matches(msg, k.HeldRelease):
		decide, done = g.Release, "released: the frames behind "+what+" go on"
	case key.Matches(msg, k.HeldNext):
		m.sel = (m.sel + 1) % len(m.held)
		return nil, true
	case key.Matches(msg, k.HeldEdit):
		m.openEditor(h, false)
		return nil, true
	case key.Matches(msg, k.HeldEditor):
		return m.edit(h, false), true
	case key.Matches(msg, k.HeldAnswer):
		if !h.Answerable {
			m.notice.Failf("only a request the proxy can answer in the peer's place is answered: this frame is not one")
			return nil, true
		}
		m.openEditor(h, true)
		return nil, true
	default:
		return nil, false
	}
	id := h.ID
	return func() tea.Msg { return decidedMsg{done: done, err: decide(id)} }, true
}

// openEditor opens the JSON editor on the held frame, or on an answer's
// template.
func (m *ProxyModel) openEditor(h intercept.Held, answer bool) {
	ta := textarea.New()
	ta.ShowLineNumbers = false
	ta.SetStyles(m.c.Styles.TextArea)
	ta.SetWidth(max(10, m.width-2))
	ta.SetHeight(max(3, m.height-7))
	ta.SetValue(string(editable(h, answer)))
	ta.Focus()
	what := "edit " + describeHeld(h.Data) + ", then send it in its place"
	if answer {
		what = "answer " + describeHeld(h.Data) + " in the peer's place: a result, or an error with its code and message"
	}
	m.editor = &heldEditor{id: h.ID, answer: answer, what: what, ta: ta}
}

// editorKey: ctrl+s sends what the editor holds (a refusal keeps it
// open and says why), esc closes it; any other key edits.
func (m *ProxyModel) editorKey(msg tea.KeyPressMsg) tea.Cmd {
	k, e := m.c.Keys, m.editor
	switch {
	case key.Matches(msg, k.Submit):
		return m.apply(e.id, e.answer, []byte(e.ta.Value()), true)
	case key.Matches(msg, k.Back):
		m.editor = nil
		return nil
	}
	var cmd tea.Cmd
	e.ta, cmd = e.ta.Update(msg)
	return cmd
}

// editable is what an editor starts from: the frame, indented, or an
// answer's template.
func editable(h intercept.Held, answer bool) []byte {
	if answer {
		return answerTemplate(h.Data)
	}
	var buf bytes.Buffer
	if json.Indent(&buf, h.Data, "", "  ") == nil {
		return append(buf.Bytes(), '\n')
	}
	return h.Data
}

// answerTemplates are what an answer's editor starts from, by the
// request's method: the shape its result has.
var answerTemplates = map[string]string{
	"tools/call":             `{"content": [{"type": "text", "text": ""}]}`,
	"sampling/createMessage": `{"role": "assistant", "content": {"type": "text", "text": ""}, "model": ""}`,
	"elicitation/create":     `{"action": "decline"}`,
	"roots/list":             `{"roots": []}`,
	"resources/read":         `{"contents": []}`,
	"prompts/get":            `{"messages": []}`,
}

// answerTemplate is what the answer to the request frame starts from:
// its method's result, or an empty one.
func answerTemplate(frame []byte) []byte {
	var m struct {
		Method string `json:"method"`
	}
	json.Unmarshal(frame, &m)
	result, ok := answerTemplates[m.Method]
	if !ok {
		result = "{}"
	}
	return []byte("{\n  \"result\": " + result + "\n}\n")
}

// edit writes the held frame (or an answer's template) to a file and
// runs the editor on it.
func (m *ProxyModel) edit(h intercept.Held, answer bool) tea.Cmd {
	f, err := os.CreateTemp("", "mcpi-held-*.json")
	if err != nil {
		m.notice.Fail(err)
		return nil
	}
	_, err = f.Write(editable(h, answer))
	f.Close()
	if err != nil {
		os.Remove(f.Name())
		m.notice.Fail(err)
		return nil
	}
	id, path := h.ID, f.Name()
	return tea.ExecProcess(m.popts.EditCmd(path), func(err error) tea.Msg {
		return editedMsg{id: id, path: path, answer: answer, err: err}
	})
}

// edited sends what the external editor left.
func (m *ProxyModel) edited(msg editedMsg) tea.Cmd {
	data, rerr := os.ReadFile(msg.path)
	os.Remove(msg.path)
	switch {
	case msg.err != nil:
		m.notice.Failf("the editor failed (%v): the frame stays held", msg.err)
	case rerr != nil:
		m.notice.Fail(rerr)
	default:
		return m.apply(msg.id, msg.answer, data, false)
	}
	return nil
}

// apply sends an edit in a held frame's place, or an answer to it (a
// result, or an error with its code and message), off the UI's
// goroutine.
func (m *ProxyModel) apply(id uint64, answer bool, data []byte, editor bool) tea.Cmd {
	g, what := m.popts.Gate, "the held frame"
	for _, h := range m.held {
		if h.ID == id {
			what = describeHeld(h.Data)
		}
	}
	if !answer {
		return func() tea.Msg {
			return decidedMsg{done: "sent the edit of " + what, err: g.Edit(id, data), editor: editor}
		}
	}
	var a struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int64  `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	var send func() error
	err := json.Unmarshal(data, &a)
	switch {
	case err != nil:
		err = fmt.Errorf("the answer is not JSON (%v): the frame stays held", err)
	case a.Error != nil && a.Error.Code == 0:
		err = errors.New("an error answer needs a code other than 0: the frame stays held")
	case a.Error != nil:
		send = func() error { return g.Answer(id, nil, a.Error.Code, a.Error.Message) }
	case a.Result == nil:
		err = errors.New(`an answer is {"result": {...}} or {"error": {"code": …, "message": …}}: the frame stays held`)
	default:
		send = func() error { return g.Answer(id, a.Result, 0, "") }
	}
	return func() tea.Msg {
		if send != nil {
			err = send()
		}
		return decidedMsg{done: "answered " + what + " in the peer's place", err: err, editor: editor}
	}
}

// View lays out the screen: the replay's, with the held frame's bar
// above the help line.
func (m *ProxyModel) View() tea.View {
	v := m.ReplayModel.View()
	if m.width <= 0 || m.height <= 0 {
		return v
	}
	lines := strings.Split(v.Content, "\n")
	n := len(lines)
	if e := m.editor; e != nil && n >= 4 {
		st := m.c.Styles
		body := []string{common.Truncate(st.HeaderTitle.Render(common.Line(e.what)), m.width)}
		body = append(body, strings.Split(e.ta.View(), "\n")...)
		status := st.HeaderDim.Render("ctrl+s send · esc cancel")
		if e.err != "" {
			status = st.Error.Render("✗ " + common.Line(e.err))
		}
		body = append(body, common.Truncate(status, m.width))
		pane := strings.Split(common.Fit(strings.Join(body, "\n"), m.width, n-2), "\n")
		copy(lines[1:n-1], pane)
		v.Content = strings.Join(lines, "\n")
		return v
	}
	switch {
	case len(m.held) > 0 && n >= 4:
		// The pane's last lines say what is held, and the help line gives
		// its keys; a notice (an edit refused) goes above them.
		lines[n-2], lines[n-1] = m.heldBar(), m.heldKeys()
		if !m.notice.Empty() {
			lines[n-3] = common.Truncate(m.notice.View(m.c.Styles, m.width), m.width)
		}
	case !m.notice.Empty() && n >= 3:
		lines[n-2] = common.Truncate(m.notice.View(m.c.Styles, m.width), m.width)
	}
	v.Content = strings.Join(lines, "\n")
	return v
}

// heldBar says which frame is held, at which breakpoint, how many
// frames wait behind it and its deadline.
func (m *ProxyModel) heldBar() string {
	st, h := m.c.Styles, m.held[m.sel]
	arrow := "→"
	if h.Dir == transport.Incoming {
		arrow = "←"
	}
	left := max(time.Until(h.Deadline).Round(time.Second), 0)
	what := fmt.Sprintf("⏸ %d/%d %s %s", m.sel+1, len(m.held), arrow, common.Line(describeHeld(h.Data)))
	rest := fmt.Sprintf(" · %d waiting · %s left · break %s", h.Waiting, left, common.Line(h.Break))
	if h.Released {
		rest = " · released" + rest
	}
	return common.Truncate(st.Error.Render(what)+st.HeaderDim.Render(rest), m.width)
}

// heldKeys is the help line while a frame is held: what may be done
// with it.
func (m *ProxyModel) heldKeys() string {
	k, h := m.c.Keys, m.held[m.sel]
	keys := []key.Binding{k.HeldForward, k.HeldEdit, k.HeldEditor, k.HeldDrop}
	if h.Answerable {
		keys = append(keys, k.HeldAnswer)
	}
	keys = append(keys, k.HeldClose, k.HeldRelease)
	if len(m.held) > 1 {
		keys = append(keys, k.HeldNext)
	}
	return common.Fit(m.help.View(helpKeys{short: keys}), m.width, 1)
}

// describeHeld names a frame: its method and id, or the answer's id.
func describeHeld(data []byte) string {
	var f struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	if json.Unmarshal(data, &f) != nil {
		return "a frame"
	}
	s := f.Method
	if s == "" {
		s = "answer"
	}
	if f.Params.Name != "" {
		s += " " + f.Params.Name
	}
	if len(f.ID) > 0 {
		s += " #" + string(f.ID)
	}
	return s
}

// RunProxy runs the proxy's TUI until the user quits or ctx ends; the
// proxy stops with it.
func RunProxy(ctx context.Context, opts ProxyOptions) error {
	m := NewProxy(ctx, opts)
	defer m.Close()
	_, err := runProgram(ctx, m, programIO{In: opts.In, Out: opts.Out, NoColor: opts.NoColor, Width: opts.Width, Height: opts.Height})
	return err
}

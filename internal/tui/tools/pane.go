// Package tools is the tools pane: a filterable list of the server's tools
// with their details, a call form generated from each tool's inputSchema,
// and the results of the calls made, which run concurrently and can be
// cancelled.
package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/progress"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/mcpi-dev/mcpi/internal/apps"
	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/rows"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/tui/common"
	"github.com/mcpi-dev/mcpi/internal/tui/form"
	"github.com/mcpi-dev/mcpi/internal/tui/keymap"
)

type mode int

const (
	modeList mode = iota
	modeForm
	modeResult
)

// Pane is the tools pane.
type Pane struct {
	c      *common.Common
	client *session.Client
	// app is the MCP App the pane hosts (alt+a), if any; ui is what each
	// listed tool's _meta says of its App, by name.
	app *appRun
	ui  map[string]apps.Tool
	gen int

	loading bool
	down    bool // disconnected
	loadErr error
	tools   []mcp.Tool

	filter   string
	filtered []int // indexes into tools
	cursor   int   // index into filtered
	offset   int
	detailsY int

	mode     mode
	forms    map[string]*form.Model // the form last opened of each tool
	formTool mcp.Tool
	notice   common.Notice
	// taskAnyway is set when alt+t was refused once for a tool or server
	// without tasks: the next alt+t sends.
	taskAnyway bool
	// announce says the list asked for by the reload key is on its way.
	announce bool
	// forceNext sends tools/list to a server without the tools capability
	// (the reload key, once the pane said it was not sent).
	forceNext bool

	calls   []*Call
	current int // index into calls shown in the result view
	nextID  int
	ticking bool

	width, height int
}

// New returns the tools pane.
func New(c *common.Common) *Pane {
	return &Pane{c: c, forms: map[string]*form.Model{}}
}

// Title names the pane in the tab bar.
func (p *Pane) Title() string { return "Tools" }

// toolsMsg carries a tools/list result.
type toolsMsg struct {
	gen   int
	tools []mcp.Tool
	err   error
}

// tickMsg redraws running calls' elapsed time.
type tickMsg struct{}

// Reload lists the tools again (the reload key, list_changed, a new session).
func (p *Pane) Reload() tea.Cmd {
	if p.client == nil {
		return nil
	}
	client, gen, ctx := p.client, p.gen, p.c.Ctx
	p.loading = p.tools == nil
	if p.noCapability() {
		// A debugger may list what the server did not declare, but only
		// when asked: the reload key after the first refusal.
		if !p.forceNext {
			p.loading = false
			p.loadErr = errNoCapability
			return nil
		}
		return func() tea.Msg {
			tools, err := forcedTools(ctx, client)
			return toolsMsg{gen: gen, tools: tools, err: err}
		}
	}
	return func() tea.Msg {
		tools, err := client.AllTools(ctx)
		return toolsMsg{gen: gen, tools: tools, err: err}
	}
}

// errNoCapability is the list's state on a server without the tools
// capability: nothing was sent.
var errNoCapability = errors.New("the server declares no tools capability: tools/list was not sent")

// noCapability reports whether the server did not declare tools.
func (p *Pane) noCapability() bool {
	if p.client == nil {
		return false
	}
	ir := p.client.InitializeResult()
	return ir != nil && ir.Capabilities.Tools == nil
}

// forcedTools lists the tools of a server that did not declare them, with
// the capability check off, under the session's one pagination rule
// (session.Paginate): a listing cut short comes with a
// *session.TruncatedError, which the pane says.
func forcedTools(ctx context.Context, c *session.Client) ([]mcp.Tool, error) {
	return session.Paginate(c.Operation(ctx), "tools/list", c.MaxPages(), func(ctx context.Context, cursor string) ([]mcp.Tool, string, error) {
		var params any
		if cursor != "" {
			params = mcp.PaginatedParams{Cursor: cursor}
		}
		var r mcp.ListToolsResult
		if err := c.Call(ctx, "tools/list", params, &r, &session.CallOptions{Force: true}); err != nil {
			return nil, "", err
		}
		return r.Tools, r.NextCursor, nil
	})
}

// Running is how many calls are running.
func (p *Pane) Running() int {
	n := 0
	for _, c := range p.calls {
		if c.State == Running {
			n++
		}
	}
	return n
}

// Calls returns the calls made, oldest first.
func (p *Pane) Calls() []*Call { return p.calls }

// HasCalls reports whether the pane holds calls (ctrl+c may cancel one).
func (p *Pane) HasCalls() bool { return len(p.calls) > 0 }

// Tools returns the tools listed.
func (p *Pane) Tools() []mcp.Tool { return p.tools }

// ShowList shows the list of tools (the pane's tab was chosen): the form
// and the results wait for enter and alt+l.
func (p *Pane) ShowList() { p.mode = modeList }

// InputFocused reports whether a text field has the keys.
func (p *Pane) InputFocused() bool { return p.mode == modeForm }

// SetSize sets the pane's size.
func (p *Pane) SetSize(w, h int) {
	p.width, p.height = w, h
	for _, f := range p.forms {
		f.SetSize(w, max(1, h-2))
	}
	p.clampList()
}

// progress records the newest progress of calls.
func (p *Pane) progress(byCall map[int]mcp.ProgressParams) {
	for id, pp := range byCall {
		if c := p.call(id); c != nil && c.State == Running {
			pp := pp
			c.Progress = &pp
		}
	}
}

func (p *Pane) call(id int) *Call {
	for _, c := range p.calls {
		if c.ID == id {
			return c
		}
	}
	return nil
}

// CancelShown cancels the call on screen if it is running; it reports
// whether there was one.
func (p *Pane) CancelShown() bool {
	if p.mode != modeResult || p.current >= len(p.calls) {
		return false
	}
	c := p.calls[p.current]
	if c.State != Running {
		return false
	}
	c.cancel()
	return true
}

func (p *Pane) applyFilter() {
	p.filtered = p.filtered[:0]
	f := strings.ToLower(p.filter)
	for i, t := range p.tools {
		if f == "" || strings.Contains(strings.ToLower(t.Name), f) || strings.Contains(strings.ToLower(t.DisplayName()), f) {
			p.filtered = append(p.filtered, i)
		}
	}
	p.clampList()
}

func (p *Pane) listRows() int { return max(1, p.height-1) }

func (p *Pane) clampList() {
	p.cursor = max(0, min(p.cursor, len(p.filtered)-1))
	rows := p.listRows()
	if p.cursor < p.offset {
		p.offset = p.cursor
	}
	if p.cursor >= p.offset+rows {
		p.offset = p.cursor - rows + 1
	}
	p.offset = max(0, min(p.offset, len(p.filtered)-rows))
}

func (p *Pane) selected() *mcp.Tool {
	if len(p.filtered) == 0 {
		return nil
	}
	return &p.tools[p.filtered[p.cursor]]
}

// Update handles messages for the pane.
func (p *Pane) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case common.ConnectingMsg:
		// Calls in flight end on their own.
		p.client, p.down = nil, false
	case common.ConnectedMsg:
		p.client, p.gen, p.down = msg.Client, msg.Gen, false
		p.notice.Clear()
		p.forceNext, p.loadErr = false, nil
		return p.Reload()
	case common.DisconnectedMsg:
		p.client, p.down = nil, true
	case common.NotificationsMsg:
		if msg.Has("notifications/tools/list_changed") {
			return p.Reload()
		}
	case common.ProgressMsg:
		p.progress(msg.ByCall)
	case toolsMsg:
		return p.listed(msg)
	case callDoneMsg:
		p.callDone(msg)
		return nil
	case linkReadMsg:
		if c := p.call(msg.call); c != nil && c.links != nil {
			c.links[msg.block] = &linkRead{err: msg.err, blocks: msg.blocks}
			c.lines = nil
		}
		return nil
	case appStartedMsg:
		return p.appStarted(msg)
	case stepSavedMsg:
		if msg.err != nil {
			return common.Failuref("%s", msg.notice())
		}
		return common.Noticef("%s", msg.notice())
	case savedMsg:
		if c := p.call(msg.id); c != nil {
			c.Saved = append(c.Saved, msg.paths...)
			c.SaveErr = msg.err
			c.lines = nil
		}
		return nil
	case tickMsg:
		p.ticking = false
		return p.tick()
	case tea.KeyPressMsg:
		p.notice.Clear()
		switch p.mode {
		case modeForm:
			return p.updateForm(msg)
		case modeResult:
			return p.updateResult(msg)
		}
		return p.updateList(msg)
	case tea.PasteMsg:
		return p.paste(msg)
	}
	return nil
}

// listed takes an answer of tools/list: the list, the cursor kept on the
// tool it was on, and a notice when the user asked for the list.
func (p *Pane) listed(msg toolsMsg) tea.Cmd {
	if msg.gen != p.gen {
		return nil
	}
	p.loading = false
	p.loadErr = msg.err
	var cmd tea.Cmd
	if p.announce {
		p.announce = false
		if msg.err != nil {
			cmd = common.Failuref("tools/list: %v", msg.err)
		} else {
			cmd = common.Noticef("%s listed", common.Plural(len(msg.tools), "tool"))
		}
	}
	if msg.err == nil || len(msg.tools) > 0 {
		name := ""
		if t := p.selected(); t != nil {
			name = t.Name
		}
		p.followSchemas(msg.tools)
		p.tools = msg.tools
		// What each tool's _meta says of its App, read once a listing, not
		// at each frame.
		p.ui = make(map[string]apps.Tool, len(p.tools))
		for _, t := range p.tools {
			p.ui[t.Name] = apps.ToolMeta(t.Meta)
		}
		p.applyFilter()
		for i, idx := range p.filtered {
			if p.tools[idx].Name == name {
				p.cursor = i
			}
		}
		p.clampList()
	}
	return cmd
}

// followSchemas rebuilds the forms of the tools whose inputSchema changed
// (a server restarted with new code, a list_changed): the new fields
// appear, those gone go, and what was typed in the fields that remain is
// kept.
func (p *Pane) followSchemas(tools []mcp.Tool) {
	for _, t := range tools {
		f := p.forms[t.Name]
		if f == nil {
			continue // only the tools whose form was opened: no search per listed tool
		}
		old, ok := p.toolByName(t.Name)
		if !ok || sameJSON(old.InputSchema, t.InputSchema) {
			continue
		}
		values, _ := f.Value() // what was typed, even where it does not convert
		nf := form.New(p.c, t.InputSchema)
		nf.SetSize(p.width, max(1, p.height-2))
		nf.SetValues(values)
		p.forms[t.Name] = nf
		if p.formTool.Name == t.Name {
			p.formTool = t
		}
	}
}

// sameJSON reports whether two JSON documents say the same, whatever
// their spacing and key order.
func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return bytes.Equal(a, b)
	}
	return reflect.DeepEqual(x, y)
}

// callDone records how a call ended.
func (p *Pane) callDone(msg callDoneMsg) {
	c := p.call(msg.id)
	if c == nil {
		return
	}
	c.End = msg.end
	c.Raw, c.Result, c.Err = msg.raw, msg.result, msg.err
	c.blocks, c.structd, c.OutputProblems = msg.blocks, msg.structd, msg.outputProblems
	switch {
	case errors.Is(msg.err, context.Canceled):
		c.State = Cancelled
	case msg.err != nil:
		c.State = Failed
	default:
		c.State = Done
	}
	c.lines = nil
}

// paste goes to the form, or to the list's filter.
func (p *Pane) paste(msg tea.PasteMsg) tea.Cmd {
	switch p.mode {
	case modeForm:
		_, cmd := p.forms[p.formTool.Name].Update(msg)
		return cmd
	case modeList:
		p.filter += common.Line(msg.Content)
		p.applyFilter()
	}
	return nil
}

// tick keeps the elapsed time of running calls moving on screen.
func (p *Pane) tick() tea.Cmd {
	if p.ticking {
		return nil
	}
	for _, c := range p.calls {
		if c.State == Running {
			p.ticking = true
			return tea.Tick(200*time.Millisecond, func(time.Time) tea.Msg { return tickMsg{} })
		}
	}
	return nil
}

func (p *Pane) updateList(msg tea.KeyPressMsg) tea.Cmd {
	k := p.c.Keys
	switch {
	case key.Matches(msg, k.Up):
		p.cursor--
		p.detailsY = 0
	case key.Matches(msg, k.Down):
		p.cursor++
		p.detailsY = 0
	case key.Matches(msg, k.PageUp):
		p.cursor -= p.listRows()
		p.detailsY = 0
	case key.Matches(msg, k.PageDown):
		p.cursor += p.listRows()
		p.detailsY = 0
	case key.Matches(msg, k.Top):
		p.cursor = 0
	case key.Matches(msg, k.Bottom):
		p.cursor = len(p.filtered) - 1
	case key.Matches(msg, k.DetailsUp):
		p.detailsY = max(0, p.detailsY-3)
	case key.Matches(msg, k.DetailsDown):
		p.detailsY += 3
	case key.Matches(msg, k.Open):
		if t := p.selected(); t != nil {
			p.openForm(*t)
		}
	case key.Matches(msg, k.Calls):
		if len(p.calls) > 0 {
			p.mode = modeResult
		}
	case key.Matches(msg, k.Reload):
		if p.client == nil {
			return common.Failuref("not connected (ctrl+r reconnects)")
		}
		return p.reloadKey()
	case key.Matches(msg, k.Back), key.Matches(msg, k.ClearFilter):
		p.filter = ""
		p.applyFilter()
	case msg.Code == tea.KeyBackspace:
		if r := []rune(p.filter); len(r) > 0 {
			p.filter = string(r[:len(r)-1])
			p.applyFilter()
		}
	case msg.Text != "" && msg.Mod&^tea.ModShift == 0:
		p.filter += msg.Text
		p.cursor = 0
		p.applyFilter()
	}
	p.clampList()
	return nil
}

// openForm opens a fresh form of the tool, from its schema's defaults:
// the arguments of a call come back only through Edit.
func (p *Pane) openForm(t mcp.Tool) {
	f := form.New(p.c, t.InputSchema)
	f.SetSize(p.width, max(1, p.height-2))
	p.forms[t.Name] = f
	p.formTool = t
	p.mode = modeForm
}

// Form returns the form of a tool, if it was opened.
func (p *Pane) Form(name string) *form.Model { return p.forms[name] }

func (p *Pane) updateForm(msg tea.KeyPressMsg) tea.Cmd {
	k := p.c.Keys
	f := p.forms[p.formTool.Name]
	if f.EditingItem() {
		// An item's sub-form has every key, esc and ctrl+s included.
		_, cmd := f.Update(msg)
		return cmd
	}
	switch {
	case key.Matches(msg, k.Back):
		p.mode = modeList
		return nil
	case key.Matches(msg, k.Submit):
		return p.submit(f, false)
	case key.Matches(msg, k.AsTask):
		return p.submit(f, true)
	}
	p.taskAnyway = false
	submit, cmd := f.Update(msg)
	if submit {
		return tea.Batch(cmd, p.submit(f, false))
	}
	return cmd
}

// submit validates the form and starts the call. Arguments that fail the
// schema are refused once, with the problems shown; sending again sends
// them anyway, since a debugger must be able to send what a server should
// reject.
//
// asTask runs the call as a task; a tool whose execution.taskSupport is
// "required" always runs as one.
func (p *Pane) submit(f *form.Model, asTask bool) tea.Cmd {
	required := p.formTool.Execution != nil && p.formTool.Execution.TaskSupport == "required"
	if (asTask || required) && !p.taskAnyway {
		why, again := "", k(p.c.Keys.AsTask)
		switch {
		case required:
			why = p.noTaskPolls()
			if !asTask {
				again = k(p.c.Keys.Submit)
			}
		default:
			why = p.noTasks()
		}
		if why != "" {
			// A debugger may send what the server does not offer, but not
			// by surprise.
			p.taskAnyway = true
			p.notice.Failf("%s · %s again sends it as a task anyway", why, again)
			return nil
		}
	}
	p.taskAnyway = false
	args, refused, err := f.Send()
	if err != nil {
		p.notice.Fail(err)
		return nil
	}
	if refused != nil {
		p.notice = form.Refusal(refused, k(p.c.Keys.Submit), "send")
		return nil
	}
	if p.client == nil {
		p.notice.Failf("not connected (ctrl+r reconnects)")
		return nil
	}
	p.nextID++
	ctx, cancel := context.WithCancel(p.c.Ctx)
	if ex := p.formTool.Execution; ex != nil && ex.TaskSupport == "required" {
		asTask = true
	}
	call := &Call{ID: p.nextID, Tool: p.formTool, Args: args, AsTask: asTask, Start: p.c.Now(), State: Running, cancel: cancel}
	p.calls = append(p.calls, call)
	p.current = len(p.calls) - 1
	p.mode = modeResult
	return tea.Batch(callCmd(ctx, p.c, p.client, call), p.tick())
}

func k(b key.Binding) string { return b.Help().Key }

// rerun sends call c again, with its arguments, to the server as it is
// now: after --watch restarted it, the same call against the new code.
func (p *Pane) rerun(c *Call) tea.Cmd {
	if p.client == nil {
		p.notice.Failf("not connected (ctrl+r reconnects)")
		return nil
	}
	t, ok := p.toolByName(c.Tool.Name)
	if !ok {
		p.notice.Failf("the server does not list %s now", c.Tool.Name)
		return nil
	}
	// The arguments meet the tool's schema as it is now (a --watch restart
	// may have changed it), the same check as e then ctrl+s: where they no
	// longer fit, the form opens on them with the problems, and ctrl+s
	// there sends them anyway.
	p.openForm(t)
	f := p.forms[t.Name]
	f.SetValues(c.Args)
	if _, refused, err := f.Send(); err != nil || refused != nil {
		if err != nil {
			p.notice.Failf("call #%d's arguments do not fit %s now: %v", c.ID, t.Name, err)
		} else {
			p.notice = form.Refusal(refused, k(p.c.Keys.Submit), "send")
		}
		return nil
	}
	p.nextID++
	ctx, cancel := context.WithCancel(p.c.Ctx)
	again := &Call{ID: p.nextID, Tool: t, Args: c.Args, AsTask: c.AsTask, Start: p.c.Now(), State: Running, cancel: cancel}
	p.calls = append(p.calls, again)
	p.current = len(p.calls) - 1
	p.mode = modeResult
	return tea.Batch(callCmd(ctx, p.c, p.client, again), p.tick())
}

// reloadKey lists the tools again; on a server without the tools
// capability it sends tools/list anyway.
func (p *Pane) reloadKey() tea.Cmd {
	p.announce = true
	if p.noCapability() {
		p.forceNext = true
		return tea.Batch(p.Reload(), common.Noticef("sending tools/list anyway (the server declares no tools capability)"))
	}
	return tea.Batch(p.Reload(), common.Noticef("listing the tools again"))
}

// noTasks says why the tool on the form cannot be called as a task, or ""
// when the server and the tool both offer it.
// noTaskPolls says why a tool that runs only as a task could not be
// followed: a revision without tasks/get ("" when it can be).
func (p *Pane) noTaskPolls() string {
	if p.client == nil || p.client.Era() == session.EraModern {
		return ""
	}
	if p.client.Check("tasks/get") != nil {
		return "the tool runs only as a task, and " + p.client.ProtocolVersion() + " has no tasks/get to follow it"
	}
	return ""
}

func (p *Pane) noTasks() string {
	if p.client != nil && p.client.Era() == session.EraModern {
		// The tasks extension has no opt-in: the server decides, and every
		// call follows the task it may create. Nothing to refuse.
		return ""
	}
	if ex := p.formTool.Execution; ex == nil || ex.TaskSupport == "" || ex.TaskSupport == "forbidden" {
		return "the tool takes no tasks (taskSupport " + taskSupport(p.formTool) + ")"
	}
	if p.client == nil {
		return ""
	}
	ir := p.client.InitializeResult()
	if ir == nil || ir.Capabilities.Tasks == nil {
		return "the server has no tasks capability"
	}
	var req struct {
		Tools *struct {
			Call json.RawMessage `json:"call"`
		} `json:"tools"`
	}
	if json.Unmarshal(ir.Capabilities.Tasks.Requests, &req) != nil || req.Tools == nil || req.Tools.Call == nil {
		return "the server takes no tasks for tools/call"
	}
	return ""
}

func taskSupport(t mcp.Tool) string {
	if t.Execution == nil || t.Execution.TaskSupport == "" {
		return "absent = forbidden"
	}
	return common.Line(t.Execution.TaskSupport)
}

// overlapped reports whether another call ran while c did.
func (p *Pane) overlapped(c *Call) bool {
	for _, o := range p.calls {
		if o == c {
			continue
		}
		end := o.End
		if o.State == Running {
			end = p.c.Now()
		}
		if o.Start.Before(c.End) && end.After(c.Start) {
			return true
		}
	}
	return false
}

func (p *Pane) updateResult(msg tea.KeyPressMsg) tea.Cmd {
	k := p.c.Keys
	if len(p.calls) == 0 {
		p.mode = modeList
		return nil
	}
	c := p.calls[p.current]
	h := p.resultBodyHeight(c)
	switch {
	case key.Matches(msg, k.Cancel) && c.State == Running:
		c.cancel()
	case key.Matches(msg, k.Back):
		if t, ok := p.toolByName(c.Tool.Name); ok {
			p.openForm(t)
		} else {
			p.mode = modeList
		}
	case key.Matches(msg, k.Calls):
		p.mode = modeList
	case key.Matches(msg, k.Reload):
		if p.client == nil {
			return common.Failuref("not connected (ctrl+r reconnects)")
		}
		return p.reloadKey()
	case key.Matches(msg, k.Rerun) && c.State != Running:
		return p.rerun(c)
	case key.Matches(msg, k.Edit):
		t := c.Tool
		if lt, ok := p.toolByName(t.Name); ok {
			t = lt
		}
		p.openForm(t)
		p.forms[t.Name].SetValues(c.Args)
	case key.Matches(msg, k.PrevCall):
		p.current = max(0, p.current-1)
	case key.Matches(msg, k.NextCall):
		p.current = min(len(p.calls)-1, p.current+1)
	case key.Matches(msg, k.Save):
		if c.Result != nil {
			return saveCmd(p.c.SaveDir, c)
		}
	case key.Matches(msg, k.RunApp) && c.State != Running:
		return p.runApp(c)
	case key.Matches(msg, k.SaveStep) && c.State != Running:
		var answered []common.Answered
		if p.c.Answers != nil {
			answered = p.c.Answers.Between(c.Start, c.End)
		}
		note := ""
		if len(answered) > 0 && p.overlapped(c) {
			// Which call an answer was for is not known: none is kept.
			note = fmt.Sprintf(" (without the %s given while other calls ran: add them to its answers:)", common.Plural(len(answered), "answer"))
			answered = nil
		}
		s, err := c.step(answered)
		if err != nil {
			return common.Failuref("call #%d is not saved as a step: %v", c.ID, err)
		}
		s.Server = p.c.CollectionServer
		return saveStepCmd(p.c.Collection, c.ID, s, note)
	case key.Matches(msg, k.ReadLinks):
		if c.Result == nil {
			return nil
		}
		if p.client == nil {
			p.notice.Failf("not connected (ctrl+r reconnects)")
			return nil
		}
		cmd, n := readLinks(p.c.Ctx, p.c, p.client, c)
		c.lines = nil
		if n == 0 {
			return common.Noticef("no resource link left to read in this result")
		}
		return tea.Batch(cmd, common.Noticef("reading %s in place", common.Plural(n, "linked resource")))
	case key.Matches(msg, k.Copy):
		if len(c.Raw) > 0 {
			var b bytes.Buffer
			if json.Indent(&b, c.Raw, "", "  ") != nil {
				b.Reset()
				b.Write(c.Raw)
			}
			return common.Copy("the result's JSON", b.Bytes())
		}
	default:
		if off, ok := common.Step(p.c, msg, c.offset, len(c.lines)+1, h); ok {
			c.offset = off
		}
	}
	c.offset = max(0, min(c.offset, len(c.lines)-h))
	return nil
}

func (p *Pane) toolByName(name string) (mcp.Tool, bool) {
	for _, t := range p.tools {
		if t.Name == name {
			return t, true
		}
	}
	return mcp.Tool{}, false
}

// ShortHelp is the pane's help line.
func (p *Pane) ShortHelp() []key.Binding {
	k := p.c.Keys
	switch p.mode {
	case modeForm:
		return p.forms[p.formTool.Name].ShortHelp()
	case modeResult:
		out := []key.Binding{}
		if len(p.calls) > 0 && p.calls[p.current].State == Running {
			out = append(out, k.Cancel, k.Edit)
		} else {
			if p.uiOf(&p.calls[p.current].Tool).HasApp() {
				// The App first: it is what such a result is for.
				out = append(out, k.RunApp)
			}
			out = append(out, keymap.WithHelp(k.Back, "esc", "new form"), k.Edit, k.Rerun, k.Save, k.SaveStep, keymap.WithHelp(k.Copy, "y", "copy JSON"))
			if c := p.calls[p.current]; c.hasLinks() {
				out = append(out, k.ReadLinks)
			}
		}
		return append(out, keymap.WithHelp(k.PrevCall, "[/]", "other calls"), keymap.WithHelp(k.Calls, "alt+l", "tools"), k.Down)
	}
	return []key.Binding{keymap.WithHelp(k.Open, "enter", "call"), keymap.WithHelp(k.Up, "type", "filter"), k.Reload, k.Up, k.Down, k.DetailsDown, k.Calls}
}

// FullHelp is every key of the pane.
func (p *Pane) FullHelp() [][]key.Binding {
	k := p.c.Keys
	switch p.mode {
	case modeForm:
		return append(p.forms[p.formTool.Name].FullHelp(), []key.Binding{p.c.Keys.AsTask})
	case modeResult:
		first := []key.Binding{keymap.WithHelp(k.Back, "esc", "new form"), k.Edit, k.Rerun, k.Save, k.SaveStep, keymap.WithHelp(k.Copy, "y", "copy JSON"), k.ReadLinks, k.RunApp, keymap.WithHelp(k.Calls, "alt+l", "tools list"), k.Reload}
		if len(p.calls) > 0 && p.calls[p.current].State == Running {
			first = []key.Binding{k.Cancel, k.Edit, keymap.WithHelp(k.Calls, "alt+l", "tools list")}
		}
		return [][]key.Binding{first, {k.PrevCall, k.NextCall, k.Up, k.Down, k.PageUp, k.PageDown}}
	}
	return [][]key.Binding{
		{keymap.WithHelp(k.Open, "enter", "call"), keymap.WithHelp(k.Up, "type", "filter"), k.ClearFilter, k.Reload, k.Calls},
		{k.Up, k.Down, k.PageUp, k.PageDown, k.DetailsUp, k.DetailsDown},
	}
}

// View renders the pane.
func (p *Pane) View() string {
	switch p.mode {
	case modeForm:
		return p.formView()
	case modeResult:
		if len(p.calls) > 0 {
			return p.resultView()
		}
	}
	return p.listView()
}

// uiOf is what t's _meta says of its App: as read when the tools were
// listed, or read now for a tool the listing no longer has.
func (p *Pane) uiOf(t *mcp.Tool) apps.Tool {
	if ui, ok := p.ui[t.Name]; ok {
		return ui
	}
	return apps.ToolMeta(t.Meta)
}

// badges are the short annotation hints of a tool, as set explicitly.
func (p *Pane) badges(t *mcp.Tool, long bool) []string {
	st := p.c.Styles
	var out []string
	// The tool's MCP App, and who may see the tool.
	ui := p.uiOf(t)
	switch {
	case ui.HasApp() && long:
		out = append(out, st.OpenWorld.Render("App "+common.Line(ui.ResourceURI)))
	case ui.HasApp():
		out = append(out, st.OpenWorld.Render("app"))
	}
	switch {
	case !ui.Visible(apps.Model) && long:
		out = append(out, st.Warning.Render("App only: hidden from the model"))
	case !ui.Visible(apps.Model):
		out = append(out, st.Warning.Render("app-only"))
	case !ui.Visible(apps.App) && long:
		out = append(out, st.Dim.Render("model only: its App may not call it"))
	case !ui.Visible(apps.App):
		out = append(out, st.Dim.Render("model-only"))
	}
	a := t.Annotations
	if a == nil {
		return out
	}
	add := func(v *bool, style lipgloss.Style, short, full, fullFalse string) {
		if v == nil {
			return
		}
		switch {
		case *v && long:
			out = append(out, style.Render(full))
		case *v:
			out = append(out, style.Render(short))
		case long && fullFalse != "":
			out = append(out, st.Dim.Render(fullFalse))
		}
	}
	add(a.ReadOnlyHint, st.ReadOnly, "ro", "read-only", "not read-only")
	add(a.DestructiveHint, st.Destructive, "destr", "destructive", "not destructive")
	add(a.IdempotentHint, st.Idempotent, "idem", "idempotent", "not idempotent")
	add(a.OpenWorldHint, st.OpenWorld, "open", "open-world", "closed-world")
	return out
}

func (p *Pane) listView() string {
	st := p.c.Styles
	listW := min(max(30, p.width*2/5), p.width)
	detailW := p.width - listW - 1
	var left []string
	filter := "filter: " + common.Line(p.filter)
	if p.filter == "" {
		filter = st.Dim.Render("type to filter")
	}
	left = append(left, common.Truncate(fmt.Sprintf("%s %s", filter, st.Dim.Render(fmt.Sprintf("(%d/%d)", len(p.filtered), len(p.tools))))+st.Error.Render(common.Incomplete(p.loadErr)), listW))
	rows := p.listRows()
	switch {
	case p.client == nil && len(p.tools) == 0 && p.down:
		left = append(left, st.Dim.Render("  Not connected."))
	case p.client == nil && len(p.tools) == 0:
		left = append(left, st.Dim.Render("  Connecting…"))
	case p.loading:
		left = append(left, st.Dim.Render("  Loading tools…"))
	case errors.Is(p.loadErr, errNoCapability) && len(p.tools) == 0:
		for _, l := range common.Wrap("  The server declares no tools capability: tools/list was not sent. "+k(p.c.Keys.Reload)+" sends it anyway.", listW) {
			left = append(left, st.Dim.Render(l))
		}
	case p.loadErr != nil && len(p.tools) == 0:
		left = append(left, common.Wrap(st.Error.Render("✗ ")+common.Line(p.loadErr.Error()), listW)...)
	case len(p.tools) == 0:
		left = append(left, st.Dim.Render("  The server has no tools."))
	}
	for r := 0; r < rows && p.offset+r < len(p.filtered); r++ {
		i := p.offset + r
		t := &p.tools[p.filtered[i]]
		badges := strings.Join(p.badges(t, false), " ")
		name := common.Line(t.Name)
		bw := common.Width(badges)
		nameW := listW - 2 - bw - 1
		if nameW < 8 {
			badges, bw, nameW = "", 0, listW-2
		}
		line := common.Pad(name, nameW) + " " + badges
		if i == p.cursor {
			left = append(left, st.Cursor.Render("›")+" "+st.Selected.Render(common.Pad(name, nameW))+" "+badges)
		} else {
			left = append(left, "  "+line)
		}
	}
	leftView := common.Fit(strings.Join(left, "\n"), listW, p.height)
	if detailW < 10 {
		return leftView
	}
	sep := strings.TrimSuffix(strings.Repeat(st.Rule.Render("│")+"\n", p.height), "\n")
	return lipgloss.JoinHorizontal(lipgloss.Top, leftView, sep, common.Fit(p.detailsView(detailW), detailW, p.height))
}

func (p *Pane) detailsView(w int) string {
	st := p.c.Styles
	t := p.selected()
	if t == nil {
		return ""
	}
	var lines []string
	add := func(s string) { lines = append(lines, common.Wrap(s, w)...) }
	title := st.Title.Render(common.Line(t.Name))
	if dn := t.DisplayName(); dn != t.Name {
		title += " — " + common.Line(dn)
	}
	lines = append(lines, common.Truncate(title, w))
	if t.Description != "" {
		add(common.Block(t.Description))
	}
	if b := p.badges(t, true); len(b) > 0 {
		lines = append(lines, common.Truncate(strings.Join(b, " · "), w))
	}
	if t.Execution != nil && t.Execution.TaskSupport != "" {
		add(st.Dim.Render("tasks: ") + common.Line(t.Execution.TaskSupport))
	}
	lines = append(lines, "")
	lines = append(lines, st.Dim.Render("input schema"))
	if len(t.InputSchema) == 0 {
		lines = append(lines, st.Dim.Render("(none)"))
	} else {
		add(common.PrettyJSON(t.InputSchema, st))
	}
	if len(t.OutputSchema) > 0 {
		lines = append(lines, "", st.Dim.Render("output schema"))
		add(common.PrettyJSON(t.OutputSchema, st))
	}
	p.detailsY = max(0, min(p.detailsY, len(lines)-p.height))
	return strings.Join(lines[p.detailsY:], "\n")
}

func (p *Pane) formView() string {
	st := p.c.Styles
	f := p.forms[p.formTool.Name]
	t := p.formTool
	head := st.Title.Render("Call " + common.Line(t.Name))
	if dn := t.DisplayName(); dn != t.Name {
		head += st.Dim.Render(" — " + common.Line(dn))
	}
	if b := p.badges(&t, true); len(b) > 0 {
		head += "  " + strings.Join(b, " ")
	}
	return common.Truncate(head, p.width) + "\n" + f.View() + "\n" + p.notice.View(st, p.width)
}

func (p *Pane) statusLine(c *Call) string {
	st := p.c.Styles
	d := rows.FormatLatency(c.Duration(p.c.Now()))
	switch c.State {
	case Running:
		return st.Running.Render("⟳ running " + d)
	case Cancelled:
		return st.Cancelled.Render("⊘ cancelled after " + d)
	case Failed:
		return st.Error.Render("✗ failed after " + d)
	}
	if c.Result != nil && c.Result.IsError {
		return st.IsError.Render("✗ isError: the tool reported an error") + st.Dim.Render(" · "+d)
	}
	return st.OK.Render("✓ done in " + d)
}

// resultHeader is the part of the result view that does not scroll.
func (p *Pane) resultHeader(c *Call) []string {
	st := p.c.Styles
	w := p.width
	head := st.Title.Render(common.Line(c.Tool.Name)) + st.Dim.Render(fmt.Sprintf(" · call #%d · ", c.ID)) + p.statusLine(c)
	if len(p.calls) > 1 {
		head += st.Dim.Render(fmt.Sprintf("  [%d/%d]", p.current+1, len(p.calls)))
	}
	lines := []string{common.Truncate(head, w)}
	args := "{}"
	if len(c.Args) > 0 {
		b, _ := jsonMarshal(c.Args)
		args = common.CompactJSON(b)
	}
	lines = append(lines, common.Truncate(st.Dim.Render("arguments ")+args, w))
	if len(c.Saved) > 0 {
		names := make([]string, len(c.Saved))
		for i, s := range c.Saved {
			names[i] = filepath.Base(s)
		}
		lines = append(lines, common.Wrap(st.OK.Render("saved in "+common.Line(filepath.Dir(c.Saved[0]))+": ")+strings.Join(names, ", "), w)...)
	}
	if c.SaveErr != nil {
		lines = append(lines, common.Truncate(st.Error.Render("save: ")+common.Line(c.SaveErr.Error()), w))
	}
	if c.State == Running {
		bar := progress.New(progress.WithFillCharacters(st.ProgressFull, st.ProgressEmpty), progress.WithWidth(max(10, min(40, w/2))))
		if !st.Color {
			bar.FullColor, bar.EmptyColor = nil, nil
		}
		line := ""
		switch pr := c.Progress; {
		case pr == nil:
			line = st.Dim.Render("no progress reported yet · esc cancels")
		case pr.Total != nil && *pr.Total > 0:
			line = bar.ViewAs(pr.Progress/(*pr.Total)) + fmt.Sprintf(" %g/%g", pr.Progress, *pr.Total)
		default:
			line = fmt.Sprintf("progress %g (no total)", pr.Progress)
		}
		if pr := c.Progress; pr != nil && pr.Message != "" {
			line += " " + common.Line(pr.Message)
		}
		lines = append(lines, common.Truncate(line, w))
	}
	return lines
}

func (p *Pane) resultBodyHeight(c *Call) int {
	return max(1, p.height-len(p.resultHeader(c))-1)
}

// layout formats the result body for the pane's width once.
func (p *Pane) layout(c *Call) {
	if c.lines != nil && c.linesW == p.width {
		return
	}
	st := p.c.Styles
	w := max(10, p.width)
	var lines []string
	add := func(s string) { lines = append(lines, common.Wrap(s, w)...) }
	rule := func(title string) {
		lines = append(lines, st.Rule.Render("── ")+st.Title.Render(title)+" "+st.Rule.Render(strings.Repeat("─", max(0, w-4-common.Width(title)))))
	}
	switch {
	case c.State == Running:
		lines = append(lines, st.Dim.Render("Waiting for the result…"))
	case c.State == Cancelled:
		add(st.Cancelled.Render("⊘ Cancelled by you: mcpi stopped waiting and told the server (the wire pane shows how)."))
	case c.Err != nil:
		add(st.Error.Render("✗ ") + common.Block(c.Err.Error()))
		var re *session.RPCError
		if errors.As(c.Err, &re) && len(re.Data) > 0 {
			rule("error data")
			add(common.PrettyJSON(re.Data, st))
		}
	}
	if c.Result != nil {
		r := c.Result
		if r.Task != nil {
			rule("task")
			add(fmt.Sprintf("task %s: %s %s", common.Line(r.Task.TaskID), common.Line(r.Task.Status), common.Line(r.Task.StatusMessage)))
		}
		rule(fmt.Sprintf("content (%d)", len(c.blocks)))
		for i, b := range c.blocks {
			head := fmt.Sprintf("%d %s", i+1, b.head)
			if b.binary {
				head += st.Dim.Render("  (s saves)")
			}
			if r.IsError {
				head = st.IsError.Render(head)
			}
			add(head)
			if b.ann != "" {
				for _, l := range common.Wrap(st.Dim.Render(b.ann), w-2) {
					lines = append(lines, "  "+l)
				}
			}
			if b.body != "" {
				for _, l := range common.Wrap(b.body, w-2) {
					lines = append(lines, "  "+l)
				}
			}
			if lr := c.links[i]; lr != nil {
				lines = append(lines, p.linkLines(lr, w)...)
			} else if b.link != "" {
				lines = append(lines, "  "+st.Dim.Render("o reads it here"))
			}
		}
		if len(r.StructuredContent) > 0 || len(c.OutputProblems) > 0 {
			title := "structuredContent"
			rule(title)
			switch {
			case len(c.OutputProblems) > 0:
				for _, pr := range c.OutputProblems {
					add(st.Warning.Render("⚠ does not match the outputSchema: " + common.Line(pr)))
				}
			case len(c.Tool.OutputSchema) > 0:
				add(st.OK.Render("✓ matches the outputSchema"))
			}
			if c.structd != "" {
				add(c.structd)
			}
		}
	}
	c.lines, c.linesW = lines, p.width
}

// linkLines shows a linked resource read in place, indented under its link.
func (p *Pane) linkLines(lr *linkRead, w int) []string {
	st := p.c.Styles
	var out []string
	ind := func(s string) {
		for _, l := range common.Wrap(s, w-4) {
			out = append(out, "  │ "+l)
		}
	}
	switch {
	case lr.running:
		ind(st.Running.Render("⟳ reading…"))
	case lr.err != nil:
		ind(st.Error.Render("✗ resources/read: ") + common.Line(lr.err.Error()))
	default:
		ind(st.OK.Render("✓ read: " + common.Plural(len(lr.blocks), "content")))
		for _, b := range lr.blocks {
			ind(b.head)
			if b.body != "" {
				ind(b.body)
			}
		}
	}
	return out
}

func (p *Pane) resultView() string {
	c := p.calls[p.current]
	p.layout(c)
	head := p.resultHeader(c)
	h := max(1, p.height-len(head)-1)
	c.offset = max(0, min(c.offset, len(c.lines)-h))
	end := min(len(c.lines), c.offset+h)
	body := c.lines[c.offset:end]
	out := append(append([]string{}, head...), body...)
	for len(out) < p.height-1 {
		out = append(out, "")
	}
	pos := ""
	if len(c.lines) > h {
		pos = fmt.Sprintf("lines %d-%d of %d", c.offset+1, end, len(c.lines))
	}
	out = append(out, p.c.Styles.Dim.Render(pos))
	return strings.Join(out, "\n")
}

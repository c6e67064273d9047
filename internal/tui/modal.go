package tui

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/mcpi-dev/mcpi/internal/browser"
	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/tui/common"
	"github.com/mcpi-dev/mcpi/internal/tui/form"
	"github.com/mcpi-dev/mcpi/internal/tui/keymap"
)

// modal answers one server request.
type modal struct {
	c   *common.Common
	req *common.Request

	reply textarea.Model // sampling
	// draft is the text of a model's draft the reply starts from; tools
	// the tools the draft calls.
	draft, tools string
	form         *form.Model // elicitation, form mode
	notice       common.Notice
	infoScroll   common.Scroll
	// openedAt is when the modal opened (the TUI's clock): a question of an
	// App takes no answer in its first moments, which a keystroke meant
	// for a form could give.
	openedAt time.Time

	width, height int
}

// consentGuard is how long a new App question ignores an answer.
const consentGuard = 300 * time.Millisecond

func newModal(c *common.Common, r *common.Request) *modal {
	m := &modal{c: c, req: r, openedAt: c.Now()}
	switch {
	case r.Kind == common.Sampling:
		ta := textarea.New()
		ta.SetStyles(c.Styles.TextArea)
		ta.ShowLineNumbers = false
		ta.Prompt = "│ "
		ta.Placeholder = "the model's reply…"
		ta.KeyMap.TransposeCharacterBackward.SetEnabled(false)
		ta.KeyMap.SelectAll.SetEnabled(false)
		ta.KeyMap.Paste.SetEnabled(false)
		ta.KeyMap.LineNext.SetKeys("down")
		ta.KeyMap.LinePrevious.SetKeys("up")
		ta.Focus()
		if r.Draft != nil {
			m.draft, m.tools = draftText(r.Draft.Content)
			ta.SetValue(m.draft)
		}
		m.reply = ta
	case r.Elicit != nil && r.Elicit.Mode != "url":
		m.form = form.New(c, r.Elicit.RequestedSchema)
	}
	return m
}

func (m *modal) isURL() bool { return m.req.Elicit != nil && m.req.Elicit.Mode == "url" }

// inner is the room inside the modal's border and padding.
func (m *modal) inner() (int, int) { return max(10, m.width-4), max(3, m.height-2) }

func (m *modal) SetSize(w, h int) {
	m.width, m.height = w, h
	iw, ih := m.inner()
	if m.req.Kind == common.Sampling {
		m.reply.SetWidth(iw)
		m.reply.SetHeight(max(2, min(6, ih/3)))
	}
	if m.form != nil {
		m.form.SetSize(iw, max(3, ih-min(len(m.infoLines(iw)), max(3, ih/3))-3))
	}
}

// answeredMsg tells the root that the modal's request got its answer.
type answeredMsg struct {
	req    *common.Request
	notice common.Notice
}

// openedMsg reports the browser opener's outcome.
type openedMsg struct{ err error }

// opened says what came of opening the URL in the browser.
func (m *modal) opened(err error) {
	if err != nil {
		m.notice.Fail(err)
	} else {
		m.notice.Set("opened in the browser")
	}
}

// answer gives the request its answer; said is what the status line says
// of it.
func (m *modal) answer(rep common.Reply, said string) tea.Cmd {
	m.req.Answer(rep)
	r := m.req
	var n common.Notice
	n.Set("%s", said)
	return func() tea.Msg { return answeredMsg{req: r, notice: n} }
}

// Update handles keys; it returns a Cmd that reports the answer when the
// user gave one.
func (m *modal) Update(msg tea.Msg, openURL func(string) error) tea.Cmd {
	k := m.c.Keys
	kp, isKey := msg.(tea.KeyPressMsg)
	if isKey {
		m.notice.Clear()
		switch {
		case key.Matches(kp, k.PageUp):
			m.infoScroll.Offset = max(0, m.infoScroll.Offset-3)
			return nil
		case key.Matches(kp, k.PageDown):
			m.infoScroll.Offset += 3
			return nil
		}
	}
	switch {
	case m.req.Kind == common.Consent:
		if isKey {
			switch {
			case key.Matches(kp, k.Approve) && m.c.Now().Sub(m.openedAt) < consentGuard:
				m.notice.Set("the question has just come: ctrl+s again to allow")
				return nil
			case key.Matches(kp, k.Approve):
				return m.answer(common.Reply{}, "allowed")
			case key.Matches(kp, k.Reject):
				return m.answer(common.Reply{Err: session.ErrRejected}, "refused")
			}
		}
		return nil
	case m.req.Kind == common.Sampling:
		if isKey {
			switch {
			case key.Matches(kp, k.Approve) && m.req.Draft != nil && m.reply.Value() == m.draft:
				// The draft as the model made it: its model, its stop
				// reason, its tool calls.
				return m.answer(common.Reply{Sampling: m.req.Draft}, "the model's draft sent")
			case key.Matches(kp, k.Approve):
				content, _ := json.Marshal(map[string]string{"type": "text", "text": m.reply.Value()})
				return m.answer(common.Reply{Sampling: &mcp.CreateMessageResult{
					Role: "assistant", Content: content, Model: mcp.ReplyModel, StopReason: "endTurn",
				}}, "sampling reply sent")
			case key.Matches(kp, k.Reject):
				return m.answer(common.Reply{Err: session.ErrRejected}, "sampling request rejected")
			}
		}
		var cmd tea.Cmd
		m.reply, cmd = m.reply.Update(msg)
		return cmd
	case m.isURL():
		if isKey {
			switch {
			case key.Matches(kp, k.OpenBrowser):
				u, err := browser.Check(m.req.Elicit.URL)
				if err != nil {
					// Not opened: the URL stays shown above, for the user to judge.
					return func() tea.Msg { return openedMsg{err: fmt.Errorf("not opened: %w", err)} }
				}
				return func() tea.Msg { return openedMsg{err: openURL(u)} }
			case key.Matches(kp, k.Approve):
				return m.answer(common.Reply{Elicit: &mcp.ElicitResult{Action: mcp.ElicitAccept}}, "elicitation accepted")
			case key.Matches(kp, k.Reject):
				return m.answer(common.Reply{Elicit: &mcp.ElicitResult{Action: mcp.ElicitDecline}}, "elicitation declined")
			case key.Matches(kp, k.CancelReq):
				return m.answer(common.Reply{Elicit: &mcp.ElicitResult{Action: mcp.ElicitCancel}}, "elicitation cancelled")
			}
		}
		return nil
	default:
		if isKey {
			switch {
			case key.Matches(kp, k.Approve):
				return m.accept()
			case key.Matches(kp, k.Reject):
				return m.answer(common.Reply{Elicit: &mcp.ElicitResult{Action: mcp.ElicitDecline}}, "elicitation declined")
			case key.Matches(kp, k.CancelReq):
				return m.answer(common.Reply{Elicit: &mcp.ElicitResult{Action: mcp.ElicitCancel}}, "elicitation cancelled")
			}
		}
		submit, cmd := m.form.Update(msg)
		if submit {
			return tea.Batch(cmd, m.accept())
		}
		return cmd
	}
}

// accept sends the form's content; problems refuse it once.
func (m *modal) accept() tea.Cmd {
	v, refused, err := m.form.Send()
	if err != nil {
		m.notice.Fail(err)
		return nil
	}
	if refused != nil {
		m.notice = form.Refusal(refused, m.c.Keys.Approve.Help().Key, "accept")
		return nil
	}
	return m.answer(common.Reply{Elicit: &mcp.ElicitResult{Action: mcp.ElicitAccept, Content: v}}, "elicitation accepted")
}

func (m *modal) ShortHelp() []key.Binding {
	k := m.c.Keys
	switch {
	case m.req.Kind == common.Consent:
		return []key.Binding{keymap.WithHelp(k.Approve, "ctrl+s", "allow"), keymap.WithHelp(k.Reject, "ctrl+x", "refuse"), k.Later}
	case m.req.Kind == common.Sampling:
		return []key.Binding{k.Approve, k.Reject, k.Later}
	case m.isURL():
		return []key.Binding{k.OpenBrowser, keymap.WithHelp(k.Approve, "ctrl+s", "accept"), keymap.WithHelp(k.Reject, "ctrl+x", "decline"), k.CancelReq, k.Later}
	}
	return []key.Binding{keymap.WithHelp(k.Approve, "ctrl+s", "accept"), keymap.WithHelp(k.Reject, "ctrl+x", "decline"), k.CancelReq, k.NextField, k.Later}
}

func (m *modal) FullHelp() [][]key.Binding {
	out := [][]key.Binding{m.ShortHelp(), {keymap.WithHelp(m.c.Keys.PageDown, "pgup/pgdn", "scroll the request")}}
	if m.form != nil {
		out = append(out, m.form.FullHelp()...)
	}
	return out
}

// infoLines describe the request above the answer area.
func (m *modal) infoLines(w int) []string {
	st := m.c.Styles
	var lines []string
	add := func(s string) { lines = append(lines, common.Wrap(s, w)...) }
	r := m.req
	switch {
	case r.Kind == common.Consent:
		add(common.Block(r.Question))
		add(st.Dim.Render("Nothing is sent until you answer; refusing tells the App so."))
	case r.Sampling != nil:
		s := r.Sampling
		if s.SystemPrompt != "" {
			add(st.Dim.Render("system: ") + common.Block(s.SystemPrompt))
		}
		for _, msg := range s.Messages {
			add(st.Title.Render(common.Line(msg.Role)+": ") + common.Block(common.ContentText(msg.Content)))
		}
		meta := fmt.Sprintf("maxTokens %d", s.MaxTokens)
		if s.Temperature != nil {
			meta += fmt.Sprintf(" · temperature %g", *s.Temperature)
		}
		if s.IncludeContext != "" {
			meta += " · includeContext " + common.Line(s.IncludeContext)
		}
		if len(s.StopSequences) > 0 {
			meta += " · stop " + common.Line(strings.Join(s.StopSequences, ", "))
		}
		add(st.Dim.Render(meta))
		if len(s.ModelPreferences) > 0 {
			add(st.Dim.Render("model preferences ") + common.CompactJSON(s.ModelPreferences))
		}
		if len(s.Tools) > 0 {
			var tools []struct {
				Name string `json:"name"`
			}
			_ = json.Unmarshal(s.Tools, &tools)
			names := make([]string, len(tools))
			for i, t := range tools {
				names[i] = common.Line(t.Name)
			}
			add(st.Dim.Render(fmt.Sprintf("tools (%d): ", len(tools))) + strings.Join(names, ", "))
			if len(s.ToolChoice) > 0 {
				add(st.Dim.Render("tool choice ") + common.CompactJSON(s.ToolChoice))
			}
		}
	case r.Elicit != nil:
		e := r.Elicit
		add(common.Block(e.Message))
		if e.Mode == "url" {
			lines = append(lines, "")
			// On lines of its own and broken anywhere, so that it copies whole.
			lines = append(lines, st.Title.Render("URL:"))
			lines = append(lines, strings.Split(ansi.Hardwrap(common.Line(e.URL), w, false), "\n")...)
			if u, err := url.Parse(e.URL); err == nil && u.Host != "" {
				add(st.Warning.Render("host: "+common.Line(u.Host)) + st.Dim.Render("  (check it before you open it)"))
			} else {
				add(st.Error.Render("not a valid absolute URL"))
			}
			if e.ElicitationID != "" {
				add(st.Dim.Render("elicitation id " + common.Line(e.ElicitationID)))
			}
		}
	}
	return lines
}

func (m *modal) View() string {
	st := m.c.Styles
	iw, ih := m.inner()
	title := st.ModalTitle.Render(fmt.Sprintf("#%d %s", m.req.ID, m.req.Method()))
	switch {
	case m.req.Kind == common.Consent:
		title += st.Dim.Render(" — an MCP App asks you")
	case m.req.Kind == common.Sampling:
		title += st.Dim.Render(" — the server asks for a model reply")
	case m.isURL():
		title += st.Dim.Render(" — the server asks you to open a page")
	default:
		title += st.Dim.Render(" — the server asks you to fill in a form")
	}
	info := m.infoLines(iw)
	var answer []string
	switch {
	case m.req.Kind == common.Sampling:
		answer = append(answer, m.draftLines(iw)...)
		label := `Reply (as model "` + mcp.ReplyModel + `"; no request times out while you answer):`
		if m.req.Draft != nil {
			label = "Reply (no request times out while you answer):"
		}
		answer = append(answer, st.Dim.Render(common.Truncate(label, iw)))
		answer = append(answer, strings.Split(m.reply.View(), "\n")...)
	case m.form != nil:
		answer = append([]string{st.Dim.Render(common.Truncate("No request times out while you answer.", iw))}, strings.Split(m.form.View(), "\n")...)
	}

	// The request's description gets what the answer leaves, and at least
	// a third of the box: the answer area gives up its blank lines, then
	// scrolls, before the question is hidden.
	room := max(min(len(info), max(3, ih/3)), ih-1-len(answer)-1)
	for len(answer) > 0 && ih-1-room-1 < len(answer) && strings.TrimSpace(ansi.Strip(answer[len(answer)-1])) == "" {
		answer = answer[:len(answer)-1]
	}
	if max(0, ih-1-room-1) < len(answer) {
		answer = answer[:max(0, ih-1-room-1)]
	}
	if shown, below, more := m.infoScroll.Overflow(info, room); more {
		info = append(shown[:len(shown):len(shown)], st.Dim.Render(common.Truncate(scrollMore(below), iw)))
	}
	body := []string{common.Truncate(title, iw)}
	body = append(body, info...)
	body = append(body, answer...)
	for len(body) < ih-1 {
		body = append(body, "")
	}
	body = append(body[:min(len(body), ih-1)], m.notice.View(st, iw))
	return st.Modal.Width(m.width).Height(m.height).Render(common.Fit(strings.Join(body, "\n"), iw, ih))
}

// scrollMore is the row under a request too long for the modal.
func scrollMore(below int) string {
	if below == 0 {
		return "… end of the request · pgup to scroll back"
	}
	return "… pgup/pgdn to scroll (" + common.Plural(below, "more line") + ")"
}

// draftLines say which model drafted the reply, and how it is sent, or
// why the model gave no draft.
func (m *modal) draftLines(w int) []string {
	st, r := m.c.Styles, m.req
	var lines []string
	switch {
	case r.DraftErr != "":
		lines = append(lines, common.Wrap(st.Error.Render("no draft: "+common.Line(r.DraftErr)), w)...)
	case r.Draft != nil:
		lines = append(lines, common.Wrap(st.Title.Render("Drafted by "+common.Line(r.DraftBy))+
			st.Dim.Render(": sent as it is, as model "+common.Line(r.Draft.Model)+"; once edited, as yours"), w)...)
		if m.tools != "" {
			lines = append(lines, common.Wrap(st.Dim.Render("the draft calls ")+common.Line(m.tools)+st.Dim.Render(" (sent only with the draft unedited)"), w)...)
		}
	}
	return lines
}

// draftText is the text of a draft's content (one block or an array),
// and the names of the tools it calls.
func draftText(raw json.RawMessage) (text, tools string) {
	var blocks []mcp.Content
	if len(raw) > 0 && raw[0] == '[' {
		_ = json.Unmarshal(raw, &blocks)
	} else {
		var b mcp.Content
		if json.Unmarshal(raw, &b) == nil {
			blocks = []mcp.Content{b}
		}
	}
	var texts, names []string
	for _, b := range blocks {
		switch b.Type {
		case "text":
			texts = append(texts, b.Text)
		case "tool_use":
			names = append(names, b.Name)
		}
	}
	// Shown in the textarea: made safe for the terminal. What is sent
	// unedited is the draft itself.
	return common.Block(strings.Join(texts, "\n")), strings.Join(names, ", ")
}

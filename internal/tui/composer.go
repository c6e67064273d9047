package tui

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textarea"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"github.com/mcpi-dev/mcpi/internal/rows"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/tui/common"
)

// composer is the raw request modal: a method and params sent with
// Client.Send (a request, no checks) or, as a frame, with SendFrame.
type composer struct {
	c      *common.Common
	method textinput.Model
	params textarea.Model
	focus  int // 0 method, 1 params

	sending bool
	sentAt  time.Time
	lines   []string
	offset  int

	width, height int
}

func newComposer(c *common.Common) *composer {
	in := textinput.New()
	in.Prompt = ""
	in.Placeholder = "tools/list"
	in.SetStyles(c.Styles.TextInput)
	ta := textarea.New()
	ta.Placeholder = `{"cursor": null}   (a whole frame with ctrl+f)`
	ta.ShowLineNumbers = false
	ta.SetStyles(c.Styles.TextArea)
	ta.SetHeight(6)
	co := &composer{c: c, method: in, params: ta}
	co.method.Focus()
	return co
}

func (co *composer) SetSize(w, h int) {
	co.width, co.height = w, h
	co.method.SetWidth(max(10, w-12))
	co.params.SetWidth(max(10, w-4))
}

type composedMsg struct {
	frame     bool
	malformed string // why the frame sent is not a valid one, "" if it is
	method    string
	raw       json.RawMessage
	err       error
	took      time.Duration
}

func (co *composer) send(client *session.Client, asFrame bool) tea.Cmd {
	method := strings.TrimSpace(co.method.Value())
	params := bytes.TrimSpace([]byte(co.params.Value()))
	if client == nil {
		co.setLines(co.c.Styles.Error.Render("✗ not connected"))
		return nil
	}
	valid := len(params) == 0 || json.Valid(params)
	if !valid && !asFrame {
		co.setLines(co.c.Styles.Error.Render("✗ the params are not valid JSON (ctrl+f sends what you typed as the whole frame, malformed or not)"))
		return nil
	}
	var frame []byte
	malformed := ""
	if asFrame {
		var probe map[string]json.RawMessage
		switch {
		case !valid:
			// A debugger must be able to send what no server should accept.
			frame = params
			malformed = "not valid JSON"
			if n := bytes.Count(frame, []byte("\n")); n > 0 {
				malformed += fmt.Sprintf("; its %s split it on stdio", common.Plural(n, "line break"))
			}
		case json.Unmarshal(params, &probe) == nil && probe["jsonrpc"] != nil:
			frame = params
		case method != "":
			m := map[string]any{"jsonrpc": "2.0", "method": method}
			if len(params) > 0 {
				m["params"] = json.RawMessage(params)
			}
			frame, _ = json.Marshal(m)
		default:
			frame = params
		}
		if len(frame) == 0 {
			co.setLines(co.c.Styles.Error.Render("✗ nothing to send"))
			return nil
		}
	} else if method == "" {
		co.setLines(co.c.Styles.Error.Render("✗ type a method"))
		return nil
	}
	co.sending, co.sentAt = true, co.c.Now()
	co.setLines(co.c.Styles.Running.Render("⟳ sent, waiting…"))
	ctx, now := co.c.Ctx, co.c.Now
	start := co.sentAt
	return func() tea.Msg {
		if asFrame {
			cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			return composedMsg{frame: true, malformed: malformed, err: client.SendFrame(cctx, frame), took: now().Sub(start)}
		}
		raw, err := client.Send(ctx, method, params, nil)
		return composedMsg{method: method, raw: raw, err: err, took: now().Sub(start)}
	}
}

func (co *composer) setLines(s string) {
	co.lines = common.Wrap(s, max(10, co.width-4))
	co.offset = 0
}

func (co *composer) result(msg composedMsg) {
	st := co.c.Styles
	co.sending = false
	var b strings.Builder
	if msg.malformed != "" {
		b.WriteString(st.Warning.Render("⚠ the frame sent as typed is malformed: "+msg.malformed) + "\n")
	}
	switch {
	case msg.frame && msg.err == nil:
		b.WriteString(st.OK.Render("✓ frame written") + st.Dim.Render(" · answers, if any, show in the wire pane (an error answer to a malformed frame has id null)"))
	case msg.err != nil:
		b.WriteString(st.Error.Render("✗ ") + common.Block(msg.err.Error()))
		var re *session.RPCError
		if errors.As(msg.err, &re) && len(re.Data) > 0 {
			b.WriteString("\n" + st.Dim.Render("error data:") + "\n" + common.PrettyJSON(re.Data, st))
		}
	default:
		b.WriteString(st.OK.Render(fmt.Sprintf("✓ result in %s", rows.FormatLatency(msg.took))) + "\n")
		b.WriteString(common.PrettyJSON(msg.raw, st))
	}
	co.setLines(b.String())
}

// Update handles a key or paste; it reports whether to close.
func (co *composer) Update(msg tea.Msg, client *session.Client) (closed bool, cmd tea.Cmd) {
	k := co.c.Keys
	if r, ok := msg.(composedMsg); ok {
		co.result(r)
		return false, nil
	}
	if kp, ok := msg.(tea.KeyPressMsg); ok {
		switch {
		case key.Matches(kp, k.Back):
			return true, nil
		case key.Matches(kp, k.Submit):
			return false, co.send(client, false)
		case key.Matches(kp, k.SendFrame):
			return false, co.send(client, true)
		case key.Matches(kp, k.ClearFilter):
			// The whole field, not only what is before the cursor: the
			// next frame starts on an empty one.
			if co.focus == 0 {
				co.method.SetValue("")
			} else {
				co.params.Reset()
			}
			return false, nil
		case key.Matches(kp, k.DetailsUp):
			co.offset = max(0, co.offset-3)
			return false, nil
		case key.Matches(kp, k.DetailsDown):
			co.offset = min(co.offset+3, max(0, len(co.lines)-1))
			return false, nil
		case kp.Code == tea.KeyTab && kp.Mod == 0, kp.Code == tea.KeyTab && kp.Mod == tea.ModShift:
			co.focus = 1 - co.focus
			if co.focus == 0 {
				co.params.Blur()
				return false, co.method.Focus()
			}
			co.method.Blur()
			return false, co.params.Focus()
		case co.focus == 0 && key.Matches(kp, k.Open):
			return false, co.send(client, false)
		}
	}
	var c tea.Cmd
	if co.focus == 0 {
		co.method, c = co.method.Update(msg)
	} else {
		co.params, c = co.params.Update(msg)
	}
	return false, c
}

func (co *composer) View() string {
	st := co.c.Styles
	w := co.width
	var out []string
	out = append(out, st.ModalTitle.Render("Raw JSON-RPC")+st.Dim.Render(" · ctrl+s request (no checks) · ctrl+f raw frame · ctrl+u clears a field · esc closes"))
	label := func(s string, i int) string {
		if co.focus == i {
			return st.LabelFocused.Render(s)
		}
		return st.Label.Render(s)
	}
	out = append(out, label("method  ", 0)+co.method.View())
	out = append(out, label("params / frame (tab switches)", 1))
	out = append(out, co.params.View())
	out = append(out, st.Rule.Render(strings.Repeat("─", max(0, w-2))))
	rest := max(1, co.height-len(out)-6)
	co.offset = max(0, min(co.offset, len(co.lines)-rest))
	end := min(len(co.lines), co.offset+rest)
	out = append(out, co.lines[co.offset:end]...)
	return strings.Join(out, "\n")
}

func (co *composer) ShortHelp() []key.Binding {
	k := co.c.Keys
	send := k.Submit
	send.SetHelp("ctrl+s", "send request")
	clear := k.ClearFilter
	clear.SetHelp("ctrl+u", "clear field")
	return []key.Binding{send, k.SendFrame, clear, k.DetailsDown, k.Back}
}

func (co *composer) FullHelp() [][]key.Binding { return [][]key.Binding{co.ShortHelp()} }

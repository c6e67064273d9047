// Package styles holds every style of the TUI in one Styles value, so that
// views never pick colours of their own and NO_COLOR is honoured in one
// place.
package styles

import (
	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/textarea"
	"charm.land/bubbles/v2/textinput"
	"charm.land/lipgloss/v2"
	"github.com/tidwall/pretty"
)

// Styles are all the styles of the TUI.
type Styles struct {
	// Color is false under NO_COLOR: styles then use only bold, faint,
	// underline and reverse, and JSON is not coloured.
	Color bool

	App lipgloss.Style

	// Header.
	HeaderTitle  lipgloss.Style
	HeaderServer lipgloss.Style
	HeaderDim    lipgloss.Style
	Connecting   lipgloss.Style
	Connected    lipgloss.Style
	Disconnected lipgloss.Style
	Badge        lipgloss.Style
	BadgeAlert   lipgloss.Style

	// Tab bar.
	Tab       lipgloss.Style
	ActiveTab lipgloss.Style
	TabBar    lipgloss.Style

	// Generic text.
	Title    lipgloss.Style
	Dim      lipgloss.Style
	Error    lipgloss.Style
	Warning  lipgloss.Style
	OK       lipgloss.Style
	Key      lipgloss.Style
	Selected lipgloss.Style // the selected row of a list
	Cursor   lipgloss.Style // the gutter marker of the selected row
	Match    lipgloss.Style
	Rule     lipgloss.Style

	// Tool annotations.
	ReadOnly    lipgloss.Style
	Destructive lipgloss.Style
	Idempotent  lipgloss.Style
	OpenWorld   lipgloss.Style

	// Forms.
	Label         lipgloss.Style
	LabelFocused  lipgloss.Style
	Required      lipgloss.Style
	TypeHint      lipgloss.Style
	FieldError    lipgloss.Style
	InputText     lipgloss.Style
	Placeholder   lipgloss.Style
	Toggle        lipgloss.Style
	ToggleFocused lipgloss.Style

	// Calls.
	Running   lipgloss.Style
	Cancelled lipgloss.Style
	IsError   lipgloss.Style

	// Wire.
	WireOut       lipgloss.Style
	WireIn        lipgloss.Style
	WireBad       lipgloss.Style
	WireStderr    lipgloss.Style
	WireLifecycle lipgloss.Style
	WireHTTP      lipgloss.Style

	// Modal is the box around a server request waiting for an answer.
	Modal      lipgloss.Style
	ModalTitle lipgloss.Style

	Help help.Styles

	// Styles of the text inputs of forms and of the text areas (raw JSON,
	// sampling replies). Their cursors do not blink: a blinking cursor
	// redraws the screen twice a second for nothing.
	TextInput textinput.Styles
	TextArea  textarea.Styles

	// JSON colours JSON in detail views; nil means no colour.
	JSON *pretty.Style

	// Progress bar fill characters.
	ProgressFull, ProgressEmpty rune
}

// DefaultStyles returns the TUI's styles; color false gives the NO_COLOR set.
func DefaultStyles(color bool) *Styles {
	c := func(s string) lipgloss.Style {
		if !color {
			return lipgloss.NewStyle()
		}
		return lipgloss.NewStyle().Foreground(lipgloss.Color(s))
	}
	s := &Styles{Color: color}
	s.App = lipgloss.NewStyle()

	s.HeaderTitle = c("13").Bold(true)
	s.HeaderServer = lipgloss.NewStyle().Bold(true)
	s.HeaderDim = c("8")
	s.Connecting = c("11").Bold(true)
	s.Connected = c("10").Bold(true)
	s.Disconnected = c("9").Bold(true)
	s.Badge = c("14")
	s.BadgeAlert = c("11").Bold(true).Reverse(true)

	s.Tab = c("8")
	s.ActiveTab = lipgloss.NewStyle().Bold(true).Underline(true)
	if color {
		s.ActiveTab = s.ActiveTab.Foreground(lipgloss.Color("13"))
	}
	s.TabBar = lipgloss.NewStyle()

	s.Title = lipgloss.NewStyle().Bold(true)
	s.Dim = c("8")
	if !color {
		s.Dim = lipgloss.NewStyle().Faint(true)
	}
	s.Error = c("9").Bold(true)
	s.Warning = c("11")
	s.OK = c("10")
	s.Key = c("12").Bold(true)
	s.Selected = lipgloss.NewStyle().Reverse(true)
	s.Cursor = c("13").Bold(true)
	s.Match = c("11").Underline(true)
	s.Rule = c("8")

	s.ReadOnly = c("10")
	s.Destructive = c("9").Bold(true)
	s.Idempotent = c("12")
	s.OpenWorld = c("11")

	s.Label = lipgloss.NewStyle()
	s.LabelFocused = lipgloss.NewStyle().Bold(true)
	if color {
		s.LabelFocused = s.LabelFocused.Foreground(lipgloss.Color("13"))
	}
	s.Required = c("9").Bold(true)
	s.TypeHint = s.Dim
	s.FieldError = c("9")
	s.InputText = lipgloss.NewStyle()
	s.Placeholder = s.Dim
	s.Toggle = lipgloss.NewStyle()
	s.ToggleFocused = lipgloss.NewStyle().Reverse(true)

	s.Running = c("11").Bold(true)
	s.Cancelled = c("8").Bold(true)
	s.IsError = c("9").Bold(true)

	s.WireOut = c("12")
	s.WireIn = c("10")
	s.WireBad = c("9").Bold(true)
	if !color {
		s.WireBad = lipgloss.NewStyle().Bold(true).Underline(true)
	}
	s.WireStderr = c("11")
	s.WireLifecycle = c("8")
	s.WireHTTP = c("14")

	s.Modal = lipgloss.NewStyle().Border(lipgloss.RoundedBorder()).Padding(0, 1)
	if color {
		s.Modal = s.Modal.BorderForeground(lipgloss.Color("13"))
	}
	s.ModalTitle = lipgloss.NewStyle().Bold(true)

	s.Help = help.DefaultDarkStyles()
	if !color {
		plain := lipgloss.NewStyle()
		s.Help = help.Styles{
			Ellipsis: plain, ShortKey: plain.Bold(true), ShortDesc: plain, ShortSeparator: plain,
			FullKey: plain.Bold(true), FullDesc: plain, FullSeparator: plain,
		}
	} else {
		s.Help.ShortKey = c("12")
		s.Help.FullKey = c("12")
	}

	s.TextInput = textinput.DefaultDarkStyles()
	s.TextInput.Cursor.Blink = false
	s.TextInput.Focused.Placeholder = s.Placeholder
	s.TextInput.Blurred.Placeholder = s.Placeholder
	s.TextInput.Focused.Prompt = lipgloss.NewStyle()
	s.TextInput.Blurred.Prompt = lipgloss.NewStyle()
	s.TextInput.Blurred.Text = lipgloss.NewStyle()
	s.TextArea = textarea.DefaultDarkStyles()
	s.TextArea.Cursor.Blink = false
	if !color {
		plain := lipgloss.NewStyle()
		s.TextInput.Cursor.Color = nil
		for _, st := range []*textinput.StyleState{&s.TextInput.Focused, &s.TextInput.Blurred} {
			st.Text, st.Suggestion = plain, plain
		}
		for _, st := range []*textarea.StyleState{&s.TextArea.Focused, &s.TextArea.Blurred} {
			*st = textarea.StyleState{Base: plain, Text: plain, LineNumber: plain.Faint(true), CursorLineNumber: plain,
				CursorLine: plain, EndOfBuffer: plain, Placeholder: plain.Faint(true), Prompt: plain, Selection: plain.Reverse(true)}
		}
		s.TextArea.Cursor.Color = nil
	}

	if color {
		s.JSON = pretty.TerminalStyle
	}
	s.ProgressFull, s.ProgressEmpty = '█', '░'
	if !color {
		s.ProgressFull, s.ProgressEmpty = '#', '.'
	}
	return s
}

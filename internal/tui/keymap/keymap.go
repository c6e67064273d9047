// Package keymap holds every key binding of the TUI. Views never match key
// strings themselves: they match these bindings, and the help line is
// generated from them.
package keymap

import "charm.land/bubbles/v2/key"

// KeyMap is every key binding of the TUI, grouped by where it applies.
type KeyMap struct {
	// Global keys work everywhere.
	Quit      key.Binding // also cancels the call on screen first
	Reconnect key.Binding
	Help      key.Binding
	NextTab   key.Binding
	PrevTab   key.Binding
	Tabs      []key.Binding // alt+1..alt+9 jump to a pane
	InfoTab   key.Binding   // the info pane, the eleventh
	CheckTab  key.Binding   // the check pane, the twelfth
	SkillsTab key.Binding   // the skills pane, the thirteenth
	// TimelineTab is the timeline pane, the fourteenth.
	TimelineTab key.Binding
	// ChatTab is the chat pane, the fifteenth.
	ChatTab  key.Binding
	Requests key.Binding // open the oldest waiting server request
	Diff     key.Binding // the Diff view: what moved at the last restart

	// Lists.
	Up       key.Binding
	Down     key.Binding
	PageUp   key.Binding
	PageDown key.Binding
	Top      key.Binding
	Bottom   key.Binding
	Open     key.Binding
	Back     key.Binding

	// Tools pane.
	ClearFilter key.Binding
	DetailsUp   key.Binding
	DetailsDown key.Binding
	Calls       key.Binding

	// Forms.
	NextField key.Binding
	PrevField key.Binding
	Submit    key.Binding
	AsTask    key.Binding
	Toggle    key.Binding
	OptNext   key.Binding
	OptPrev   key.Binding
	Null      key.Binding
	RawJSON   key.Binding
	// An array of objects: enter adds an item or edits the one under the
	// cursor (Open), this deletes it.
	DeleteItem key.Binding

	// Call results.
	Cancel   key.Binding
	Save     key.Binding
	PrevCall key.Binding
	NextCall key.Binding
	Edit     key.Binding
	// Rerun sends the shown call again, as it was, to the server as it is
	// now (after a restart, a reconnect).
	Rerun key.Binding
	// ReadLinks reads the resources a result links to, in place.
	ReadLinks key.Binding
	// SaveStep saves the call on screen as a step of a collection file.
	SaveStep key.Binding
	// RunApp hosts the MCP App of the call on screen.
	RunApp key.Binding

	// Wire pane.
	Filter key.Binding
	Follow key.Binding
	// Latency shows the wire's latencies by method.
	Latency  key.Binding
	FindNext key.Binding // the next match of the search in a frame's detail
	FindPrev key.Binding
	Copy     key.Binding // a frame or a result to the clipboard
	// CopyTrace copies the W3C trace id of a request (the wire's detail,
	// the timeline's span).
	CopyTrace key.Binding

	// Timeline pane: zoom around the selected span, pan the window, fit
	// the whole session, fold the selected span's lane, open every lane.
	ZoomIn    key.Binding
	ZoomOut   key.Binding
	PanLeft   key.Binding
	PanRight  key.Binding
	Fit       key.Binding
	Collapse  key.Binding
	ExpandAll key.Binding

	// Server requests.
	Approve     key.Binding
	Reject      key.Binding
	CancelReq   key.Binding
	Later       key.Binding
	OpenBrowser key.Binding

	// Roots pane.
	AddRoot    key.Binding
	RemoveRoot key.Binding

	// Resources, templates and prompts panes.
	Subscribe key.Binding
	// Subscriptions shows the resources subscribed to and the times of
	// their updates.
	Subscriptions key.Binding
	Reload        key.Binding
	SuggNext      key.Binding // highlight the next completion suggestion
	SuggPrev      key.Binding
	SuggAccept    key.Binding // put the highlighted suggestion in the field

	// Skills pane: read and verify every file of every skill.
	VerifyAll key.Binding

	// Log, notifications and stderr panes.
	LevelUp     key.Binding // raise the level filter
	LevelDown   key.Binding
	SetLevel    key.Binding // ask the server for the filter's level
	ClearBuffer key.Binding

	// Raw composer.
	Composer  key.Binding
	Record    key.Binding
	SendFrame key.Binding

	// Held frames (mcpi proxy --ui): the fate of the frame a breakpoint
	// holds.
	HeldForward key.Binding
	HeldEdit    key.Binding
	HeldEditor  key.Binding // edit in $VISUAL or $EDITOR
	HeldDrop    key.Binding
	HeldAnswer  key.Binding
	HeldClose   key.Binding
	HeldRelease key.Binding // the frames behind it go on
	HeldNext    key.Binding
}

// Default returns the default key bindings.
func Default() *KeyMap {
	k := &KeyMap{
		Quit:        key.NewBinding(key.WithKeys("ctrl+c"), key.WithHelp("ctrl+c", "quit")),
		Reconnect:   key.NewBinding(key.WithKeys("ctrl+r"), key.WithHelp("ctrl+r", "reconnect")),
		Help:        key.NewBinding(key.WithKeys("?", "f1"), key.WithHelp("?", "help")),
		NextTab:     key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "next pane")),
		PrevTab:     key.NewBinding(key.WithKeys("shift+tab"), key.WithHelp("shift+tab", "previous pane")),
		Requests:    key.NewBinding(key.WithKeys("ctrl+o"), key.WithHelp("ctrl+o", "answer request")),
		InfoTab:     key.NewBinding(key.WithKeys("alt+i"), key.WithHelp("alt+i", "info")),
		CheckTab:    key.NewBinding(key.WithKeys("alt+k"), key.WithHelp("alt+k", "check")),
		SkillsTab:   key.NewBinding(key.WithKeys("alt+s"), key.WithHelp("alt+s", "skills")),
		TimelineTab: key.NewBinding(key.WithKeys("alt+m"), key.WithHelp("alt+m", "timeline")),
		ChatTab:     key.NewBinding(key.WithKeys("alt+c"), key.WithHelp("alt+c", "chat")),
		Diff:        key.NewBinding(key.WithKeys("alt+d"), key.WithHelp("alt+d", "diff")),

		Up:       key.NewBinding(key.WithKeys("up", "ctrl+p"), key.WithHelp("↑", "up")),
		Down:     key.NewBinding(key.WithKeys("down", "ctrl+n"), key.WithHelp("↓", "down")),
		PageUp:   key.NewBinding(key.WithKeys("pgup"), key.WithHelp("pgup", "page up")),
		PageDown: key.NewBinding(key.WithKeys("pgdown"), key.WithHelp("pgdn", "page down")),
		Top:      key.NewBinding(key.WithKeys("home"), key.WithHelp("home", "first")),
		Bottom:   key.NewBinding(key.WithKeys("end"), key.WithHelp("end", "last")),
		Open:     key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "open")),
		Back:     key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back")),

		ClearFilter: key.NewBinding(key.WithKeys("ctrl+u"), key.WithHelp("ctrl+u", "clear filter")),
		DetailsUp:   key.NewBinding(key.WithKeys("shift+up"), key.WithHelp("shift+↑", "scroll details")),
		DetailsDown: key.NewBinding(key.WithKeys("shift+down"), key.WithHelp("shift+↓", "scroll details")),
		Calls:       key.NewBinding(key.WithKeys("alt+l"), key.WithHelp("alt+l", "last results")),

		NextField: key.NewBinding(key.WithKeys("tab", "down"), key.WithHelp("tab/↓", "next field")),
		PrevField: key.NewBinding(key.WithKeys("shift+tab", "up"), key.WithHelp("shift+tab/↑", "previous field")),
		Submit:    key.NewBinding(key.WithKeys("ctrl+s"), key.WithHelp("ctrl+s", "send")),
		AsTask:    key.NewBinding(key.WithKeys("alt+t"), key.WithHelp("alt+t", "call as a task")),
		Toggle:    key.NewBinding(key.WithKeys("space"), key.WithHelp("space", "toggle")),
		OptNext:   key.NewBinding(key.WithKeys("right"), key.WithHelp("→", "next option")),
		OptPrev:   key.NewBinding(key.WithKeys("left"), key.WithHelp("←", "previous option")),
		Null:      key.NewBinding(key.WithKeys("ctrl+n"), key.WithHelp("ctrl+n", "null")),
		RawJSON:   key.NewBinding(key.WithKeys("ctrl+t"), key.WithHelp("ctrl+t", "raw JSON")),

		DeleteItem: key.NewBinding(key.WithKeys("d", "delete"), key.WithHelp("d", "delete item")),

		Cancel:    key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel call")),
		Save:      key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "save binaries")),
		PrevCall:  key.NewBinding(key.WithKeys("["), key.WithHelp("[", "previous call")),
		NextCall:  key.NewBinding(key.WithKeys("]"), key.WithHelp("]", "next call")),
		Edit:      key.NewBinding(key.WithKeys("e"), key.WithHelp("e", "edit arguments")),
		Rerun:     key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "call again")),
		ReadLinks: key.NewBinding(key.WithKeys("o"), key.WithHelp("o", "read links")),
		SaveStep:  key.NewBinding(key.WithKeys("t"), key.WithHelp("t", "save as a test step")),
		RunApp:    key.NewBinding(key.WithKeys("alt+a"), key.WithHelp("alt+a", "run its App")),

		Filter:  key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter")),
		Follow:  key.NewBinding(key.WithKeys("f"), key.WithHelp("f", "follow tail")),
		Latency: key.NewBinding(key.WithKeys("L"), key.WithHelp("L", "latency by method")),

		FindNext:  key.NewBinding(key.WithKeys("n"), key.WithHelp("n/N", "next/previous match")),
		FindPrev:  key.NewBinding(key.WithKeys("N"), key.WithHelp("N", "previous match")),
		Copy:      key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "copy")),
		CopyTrace: key.NewBinding(key.WithKeys("Y"), key.WithHelp("Y", "copy trace id")),

		ZoomIn:    key.NewBinding(key.WithKeys("+", "="), key.WithHelp("+/-", "zoom")),
		ZoomOut:   key.NewBinding(key.WithKeys("-"), key.WithHelp("-", "zoom out")),
		PanLeft:   key.NewBinding(key.WithKeys("left", "h"), key.WithHelp("←/→", "pan")),
		PanRight:  key.NewBinding(key.WithKeys("right", "l"), key.WithHelp("→", "pan right")),
		Fit:       key.NewBinding(key.WithKeys("0"), key.WithHelp("0", "whole session")),
		Collapse:  key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "fold lane")),
		ExpandAll: key.NewBinding(key.WithKeys("C"), key.WithHelp("C", "open all lanes")),

		Approve:     key.NewBinding(key.WithKeys("ctrl+s"), key.WithHelp("ctrl+s", "approve")),
		Reject:      key.NewBinding(key.WithKeys("ctrl+x"), key.WithHelp("ctrl+x", "reject")),
		CancelReq:   key.NewBinding(key.WithKeys("ctrl+g"), key.WithHelp("ctrl+g", "cancel")),
		Later:       key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "later")),
		OpenBrowser: key.NewBinding(key.WithKeys("ctrl+b"), key.WithHelp("ctrl+b", "open in browser")),

		AddRoot:    key.NewBinding(key.WithKeys("a"), key.WithHelp("a", "add root")),
		RemoveRoot: key.NewBinding(key.WithKeys("d", "delete"), key.WithHelp("d", "remove root")),

		Subscribe:     key.NewBinding(key.WithKeys("u"), key.WithHelp("u", "subscribe/unsubscribe")),
		Subscriptions: key.NewBinding(key.WithKeys("U"), key.WithHelp("U", "subscriptions")),
		Reload:        key.NewBinding(key.WithKeys("ctrl+l"), key.WithHelp("ctrl+l", "reload")),
		SuggNext:      key.NewBinding(key.WithKeys("ctrl+n"), key.WithHelp("ctrl+n/p", "pick suggestion")),
		SuggPrev:      key.NewBinding(key.WithKeys("ctrl+p"), key.WithHelp("ctrl+p", "previous suggestion")),
		SuggAccept:    key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "use suggestion")),

		VerifyAll: key.NewBinding(key.WithKeys("v"), key.WithHelp("v", "verify all")),

		LevelUp:     key.NewBinding(key.WithKeys("+", "="), key.WithHelp("+/-", "level filter")),
		LevelDown:   key.NewBinding(key.WithKeys("-"), key.WithHelp("-", "lower level filter")),
		SetLevel:    key.NewBinding(key.WithKeys("L"), key.WithHelp("L", "set server level")),
		ClearBuffer: key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "clear")),

		Composer:  key.NewBinding(key.WithKeys("ctrl+e"), key.WithHelp("ctrl+e", "raw request")),
		Record:    key.NewBinding(key.WithKeys("alt+r"), key.WithHelp("alt+r", "start/stop recording")),
		SendFrame: key.NewBinding(key.WithKeys("ctrl+f"), key.WithHelp("ctrl+f", "send as raw frame")),

		HeldForward: key.NewBinding(key.WithKeys("ctrl+s"), key.WithHelp("ctrl+s", "forward")),
		HeldEdit:    key.NewBinding(key.WithKeys("ctrl+e"), key.WithHelp("ctrl+e", "edit")),
		HeldEditor:  key.NewBinding(key.WithKeys("alt+e"), key.WithHelp("alt+e", "$EDITOR")),
		HeldDrop:    key.NewBinding(key.WithKeys("ctrl+x"), key.WithHelp("ctrl+x", "drop")),
		HeldAnswer:  key.NewBinding(key.WithKeys("ctrl+o"), key.WithHelp("ctrl+o", "answer")),
		HeldClose:   key.NewBinding(key.WithKeys("ctrl+k"), key.WithHelp("ctrl+k", "close connection")),
		HeldRelease: key.NewBinding(key.WithKeys("ctrl+r"), key.WithHelp("ctrl+r", "let the rest pass")),
		HeldNext:    key.NewBinding(key.WithKeys("alt+n"), key.WithHelp("alt+n", "next held")),
	}
	for i := 1; i <= 10; i++ {
		d := string(rune('0' + i%10))
		k.Tabs = append(k.Tabs, key.NewBinding(key.WithKeys("alt+"+d), key.WithHelp("alt+1…0", "go to pane")))
	}
	return k
}

// ExtraTabs are the keys of the panes after the tenth, in order: their
// letter after "alt+" labels their tab.
func (k *KeyMap) ExtraTabs() []key.Binding {
	return []key.Binding{k.InfoTab, k.CheckTab, k.SkillsTab, k.TimelineTab, k.ChatTab}
}

// WithHelp returns b with the help text a pane shows for it there ("enter",
// "get"): the same key, said in the pane's words.
func WithHelp(b key.Binding, keys, desc string) key.Binding {
	b.SetHelp(keys, desc)
	return b
}

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

// bind is the binding of one key, whose help names that key.
func bind(k, desc string) key.Binding {
	return key.NewBinding(key.WithKeys(k), key.WithHelp(k, desc))
}

// labelled is a binding whose help shows label: for several keys, or one
// whose name is not what the help line prints ("pgdn", "↑").
func labelled(label, desc string, keys ...string) key.Binding {
	return key.NewBinding(key.WithKeys(keys...), key.WithHelp(label, desc))
}

// Default returns the default key bindings.
func Default() *KeyMap {
	k := &KeyMap{
		Quit:        bind("ctrl+c", "quit"),
		Reconnect:   bind("ctrl+r", "reconnect"),
		Help:        labelled("?", "help", "?", "f1"),
		NextTab:     bind("tab", "next pane"),
		PrevTab:     bind("shift+tab", "previous pane"),
		Requests:    bind("ctrl+o", "answer request"),
		InfoTab:     bind("alt+i", "info"),
		CheckTab:    bind("alt+k", "check"),
		SkillsTab:   bind("alt+s", "skills"),
		TimelineTab: bind("alt+m", "timeline"),
		ChatTab:     bind("alt+c", "chat"),
		Diff:        bind("alt+d", "diff"),

		Up:       labelled("↑", "up", "up", "ctrl+p"),
		Down:     labelled("↓", "down", "down", "ctrl+n"),
		PageUp:   bind("pgup", "page up"),
		PageDown: labelled("pgdn", "page down", "pgdown"),
		Top:      bind("home", "first"),
		Bottom:   bind("end", "last"),
		Open:     bind("enter", "open"),
		Back:     bind("esc", "back"),

		ClearFilter: bind("ctrl+u", "clear filter"),
		DetailsUp:   labelled("shift+↑", "scroll details", "shift+up"),
		DetailsDown: labelled("shift+↓", "scroll details", "shift+down"),
		Calls:       bind("alt+l", "last results"),

		NextField: labelled("tab/↓", "next field", "tab", "down"),
		PrevField: labelled("shift+tab/↑", "previous field", "shift+tab", "up"),
		Submit:    bind("ctrl+s", "send"),
		AsTask:    bind("alt+t", "call as a task"),
		Toggle:    bind("space", "toggle"),
		OptNext:   labelled("→", "next option", "right"),
		OptPrev:   labelled("←", "previous option", "left"),
		Null:      bind("ctrl+n", "null"),
		RawJSON:   bind("ctrl+t", "raw JSON"),

		DeleteItem: labelled("d", "delete item", "d", "delete"),

		Cancel:    bind("esc", "cancel call"),
		Save:      bind("s", "save binaries"),
		PrevCall:  bind("[", "previous call"),
		NextCall:  bind("]", "next call"),
		Edit:      bind("e", "edit arguments"),
		Rerun:     bind("r", "call again"),
		ReadLinks: bind("o", "read links"),
		SaveStep:  bind("t", "save as a test step"),
		RunApp:    bind("alt+a", "run its App"),

		Filter:  bind("/", "filter"),
		Follow:  bind("f", "follow tail"),
		Latency: bind("L", "latency by method"),

		FindNext:  labelled("n/N", "next/previous match", "n"),
		FindPrev:  bind("N", "previous match"),
		Copy:      bind("y", "copy"),
		CopyTrace: bind("Y", "copy trace id"),

		ZoomIn:    labelled("+/-", "zoom", "+", "="),
		ZoomOut:   bind("-", "zoom out"),
		PanLeft:   labelled("←/→", "pan", "left", "h"),
		PanRight:  labelled("→", "pan right", "right", "l"),
		Fit:       bind("0", "whole session"),
		Collapse:  bind("c", "fold lane"),
		ExpandAll: bind("C", "open all lanes"),

		Approve:     bind("ctrl+s", "approve"),
		Reject:      bind("ctrl+x", "reject"),
		CancelReq:   bind("ctrl+g", "cancel"),
		Later:       bind("esc", "later"),
		OpenBrowser: bind("ctrl+b", "open in browser"),

		AddRoot:    bind("a", "add root"),
		RemoveRoot: labelled("d", "remove root", "d", "delete"),

		Subscribe:     bind("u", "subscribe/unsubscribe"),
		Subscriptions: bind("U", "subscriptions"),
		Reload:        bind("ctrl+l", "reload"),
		SuggNext:      labelled("ctrl+n/p", "pick suggestion", "ctrl+n"),
		SuggPrev:      bind("ctrl+p", "previous suggestion"),
		SuggAccept:    bind("enter", "use suggestion"),

		VerifyAll: bind("v", "verify all"),

		LevelUp:     labelled("+/-", "level filter", "+", "="),
		LevelDown:   bind("-", "lower level filter"),
		SetLevel:    bind("L", "set server level"),
		ClearBuffer: bind("c", "clear"),

		Composer:  bind("ctrl+e", "raw request"),
		Record:    bind("alt+r", "start/stop recording"),
		SendFrame: bind("ctrl+f", "send as raw frame"),

		HeldForward: bind("ctrl+s", "forward"),
		HeldEdit:    bind("ctrl+e", "edit"),
		HeldEditor:  bind("alt+e", "$EDITOR"),
		HeldDrop:    bind("ctrl+x", "drop"),
		HeldAnswer:  bind("ctrl+o", "answer"),
		HeldClose:   bind("ctrl+k", "close connection"),
		HeldRelease: bind("ctrl+r", "let the rest pass"),
		HeldNext:    bind("alt+n", "next held"),
	}
	for i := 1; i <= 10; i++ {
		d := string(rune('0' + i%10))
		k.Tabs = append(k.Tabs, labelled("alt+1…0", "go to pane", "alt+"+d))
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

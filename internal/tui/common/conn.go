package common

import (
	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/session"
)

// The connection's life-cycle is broadcast to every component, which sets
// itself up from it: the root knows no pane's business. Gen numbers the
// connection (a reconnect or a new session raises it), so a component drops
// the late answers of an older one.
type (
	// ConnectingMsg says a connection is being dialled: the old client, if
	// any, is gone.
	ConnectingMsg struct{ Gen int }

	// ConnectedMsg says a session is up. It is broadcast again, with a new
	// Gen and the same Client, when the server forgot the session and a new
	// one was started: what a component listed or subscribed to belongs to
	// the old session and must be fetched again.
	ConnectedMsg struct {
		Client *session.Client
		Gen    int
	}

	// DisconnectedMsg says the connection ended (Err says why; nil when
	// the user closed it).
	DisconnectedMsg struct {
		Gen int
		Err error
	}

	// NotificationsMsg carries the server's notifications of one batch,
	// oldest first (only the newest are kept in a flood).
	NotificationsMsg struct{ Notes []session.Notification }

	// PastNotificationsMsg carries notifications the server sent before
	// this client connected (a live session's history, replayed), oldest
	// first, with their own times: panes show them and act on none.
	PastNotificationsMsg struct{ Notes []session.Notification }

	// RootsMsg says the roots were changed elsewhere (a live session's,
	// by mcpi roots or another attached client): these are the roots now.
	RootsMsg struct{ Roots []mcp.Root }

	// HealthMsg says the session's health changed (the session renewed
	// is a ConnectedMsg instead).
	HealthMsg struct{ Event session.HealthEvent }

	// ProgressMsg carries the newest progress of each call, by call id.
	ProgressMsg struct{ ByCall map[int]mcp.ProgressParams }

	// ReappliedMsg says what a new connection (ctrl+r, a server that
	// forgot the session) was told again of what the panes held
	// (session.Held: the log level, the subscriptions), after the
	// ConnectedMsg of generation Gen; Held is what was to be applied.
	ReappliedMsg struct {
		Gen       int
		Held      session.Held
		Reapplied session.Reapplied
	}
)

// Has reports whether the batch holds a notification of method (a list's
// list_changed, say).
func (m NotificationsMsg) Has(method string) bool {
	for _, n := range m.Notes {
		if n.Method == method {
			return true
		}
	}
	return false
}

// ShowFrameMsg asks for the wire's row of sequence number Seq: the root
// goes to the pane that shows frames and hands it the message.
type ShowFrameMsg struct{ Seq int64 }

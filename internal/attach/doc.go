// Package attach is the socket a proxy with no terminal serves its
// conversation and its gate on, and the client a TUI attaches through
// (mcpi proxy --ui --name NAME, mcpi proxy attach NAME).
//
// The socket is a live session's (internal/live): in a directory of the
// per-user runtime directory, 0700, the socket 0600, the peer's uid
// checked on every connection, names checked with live.ValidName. The
// protocol is JSON lines with a version of its own (ProtocolVersion): a
// client says hello with its version and what it wants (attach, or the
// proxy's status); the proxy answers with its Info, or refuses another
// version in one sentence. An attached client then gets the proxy's
// events from the start of its conversation (as many as are kept), then
// live, and the frames held each time they change; it sends decisions on
// held frames, each answered in turn. Any number of clients may attach:
// they see the same events, and a decision of one is seen by all. A
// client gone, slow or killed leaves the proxy running.
//
// It moves events and decisions, not MCP: it must not import internal/cli
// or internal/tui, which import it.
package attach

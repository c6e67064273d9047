// Package live holds the session daemon's plumbing: the per-user runtime
// directory, the Unix socket every command reaches a held session through
// (0600, peer credentials checked on every connection, no TCP), the frames
// spoken on it, and the records a session leaves behind when it ends.
//
// It knows nothing of MCP verbs or terminals: the daemon's work (running a
// command against the session it holds) is a function the caller gives the
// Server. It imports only the standard library and golang.org/x/sys; it
// must not import internal/cli or internal/tui, which import it.
package live

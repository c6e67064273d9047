// Package mcptext owns how the one-shot commands show MCP objects to a
// person: tables whose every cell is sanitised, folded and cut; a tool's
// signature, badges and first sentence; a task's line, fields and the
// input it waits for, and the reporter that keeps a task's state on one
// line of a terminal; what a handshake settled (PrintInfo), what app-info
// found of an App, a live session (the list, one's facts), a server
// request a session holds for an answer (one, the list of them, a call
// that waits on them), a tool result's checks and progress, and what was
// verified of a skill's file. Every word a server chose is sanitised here.
//
// It imports apps, bounds, daemon, iostreams, live, mcp, safetext, schema,
// session, skills and transport; never cli or tui.
package mcptext

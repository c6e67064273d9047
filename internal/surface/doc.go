// Package surface owns what mcpi snapshot and mcpi diff compare: a
// server's surface (server info, revision and era, capabilities,
// instructions, the client capabilities mcpi declared, and every tool,
// resource, template and prompt it lists) as one deterministic JSON
// document (Snapshot, Take, Marshal), the same surface read back from a
// trace (FromTrace), and the classified differences between two surfaces
// (Diff): breaking, possibly breaking, non-breaking, changed, written for
// a person (WriteText, every server word sanitised) or for a pull-request
// comment (WriteMarkdown, every server word escaped).
//
// It imports mcp, record (to read traces), session (to list a live
// server's surface) and safetext; never cli or tui.
package surface

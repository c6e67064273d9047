// Package surface owns what mcpi snapshot and mcpi diff compare: a
// server's surface (server info, revision and era, capabilities,
// instructions, the client capabilities mcpi declared, and every tool,
// resource, template and prompt it lists) as one deterministic JSON
// document (Snapshot, Take, Marshal), the same surface read back from a
// trace (FromTrace), and the classified differences between two surfaces
// (Diff): breaking, possibly breaking, non-breaking, changed.
//
// It imports mcp, record (to read traces) and session (to list a live
// server's surface); never cli or tui: the CLI prints what it returns,
// sanitised, and the TUI may show it one day.
package surface

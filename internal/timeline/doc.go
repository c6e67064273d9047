// Package timeline owns the wire as lines for a person, off the one
// reading of the wire (internal/rows): Print, the timeline mcpi replay
// prints of a trace (followed while it is written); Tail, what mcpi tail
// prints of a live session; VerboseTap, what -v says of the wire; and
// Filter, the --filter of mcpi replay and mcpi tail (the search language
// of internal/query matched against each event's row, so that a query
// means the same in the Wire pane and on the command line). What a peer
// said is sanitised before it is printed.
//
// It imports daemon (a tail's events), genai, iostreams, mcp, mcptext,
// query, record, rows, safetext and transport; never cli or tui.
package timeline

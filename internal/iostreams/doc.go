// Package iostreams owns the standard streams of a command (IOStreams: the
// sinks every byte for a person crosses, the raw streams for machine
// output, what is known of the terminal) and the printers that write to
// them: JSON documents and JSON Lines with every unsafe rune escaped, and
// content blocks for a person. It is cli/cli's pkg/iostreams: the commands
// print through it, and it knows no command.
//
// It imports nothing of mcpi but bounds, mcp, safetext and save.
package iostreams

package cli

import "github.com/mcpi-dev/mcpi/internal/safetext"

// sanitize makes server-provided text safe for a terminal or a pipe (see
// safetext.Sanitize, which the TUI uses too).
func sanitize(s string, keepNewlines bool) string { return safetext.Sanitize(s, keepNewlines) }

// oneLine sanitizes s and folds it onto one line.
func oneLine(s string) string { return safetext.OneLine(s) }

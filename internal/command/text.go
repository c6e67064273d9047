package command

import "github.com/mcpi-dev/mcpi/internal/safetext"

// Sanitize makes server-provided text safe for a terminal or a pipe (see
// safetext.Sanitize, which the TUI uses too).
func Sanitize(s string, keepNewlines bool) string { return safetext.Sanitize(s, keepNewlines) }

// OneLine sanitizes s and folds it onto one line.
func OneLine(s string) string { return safetext.OneLine(s) }

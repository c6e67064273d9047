// Package safetext makes text that came from a server safe to show on a
// terminal: escape and other control characters, C1 controls, bidirectional
// overrides and invalid UTF-8 are shown as visible escapes, never written
// raw. Every front end (the CLI and the TUI) sends server text through it.
//
// It imports nothing of mcpi.
package safetext

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Sanitize makes s safe for a terminal or a pipe: escape and other control
// characters, and bidirectional overrides, are shown as visible escapes
// instead of being written raw. Newlines and tabs are kept when keepNewlines
// is set.
func Sanitize(s string, keepNewlines bool) string {
	if isPlain(s, keepNewlines) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case keepNewlines && (r == '\n' || r == '\t'):
			b.WriteRune(r)
		case r == '\x1b':
			b.WriteString(`\e`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r >= 0x80 && r < 0xa0:
			fmt.Fprintf(&b, `\u%04x`, r)
		case IsBidiControl(r), r == '\u2028', r == '\u2029', r == '\ufeff':
			fmt.Fprintf(&b, `\u%04x`, r)
		case !unicode.IsPrint(r) && !unicode.IsSpace(r) && unicode.Is(unicode.Cc, r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// isPlain reports whether s is printable ASCII (plus newlines and tabs when
// kept), the common case that needs no copy.
func isPlain(s string, keepNewlines bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c < 0x7f {
			continue
		}
		if keepNewlines && (c == '\n' || c == '\t') {
			continue
		}
		return false
	}
	return true
}

// IsBidiControl reports whether r changes the direction of the text around
// it (embeddings, overrides, isolates and marks), which can make a terminal
// show text in another order than it is.
func IsBidiControl(r rune) bool {
	return (r >= '\u202a' && r <= '\u202e') || (r >= '\u2066' && r <= '\u2069') || r == '\u200e' || r == '\u200f' || r == '\u061c'
}

// OneLine sanitizes s and folds it onto one line, collapsing runs of white
// space.
func OneLine(s string) string {
	return Sanitize(strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ")), " "), false)
}

// Block sanitizes s for display in a multi-line area: newlines are kept and
// tabs become spaces, since a tab's width depends on where it lands.
func Block(s string) string {
	return strings.ReplaceAll(Sanitize(s, true), "\t", "    ")
}

package cli

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// sanitize makes server-provided text safe for a terminal or a pipe: escape
// and other control characters, and bidirectional overrides, are shown as
// visible escapes instead of being written raw. Newlines and tabs are kept
// when keepNewlines is set.
func sanitize(s string, keepNewlines bool) string {
	var b strings.Builder
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
		case isBidiControl(r), r == '\u2028', r == '\u2029', r == '\ufeff':
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

func isBidiControl(r rune) bool {
	return (r >= '\u202a' && r <= '\u202e') || (r >= '\u2066' && r <= '\u2069') || r == '\u200e' || r == '\u200f' || r == '\u061c'
}

// oneLine sanitizes s and folds it onto one line.
func oneLine(s string) string {
	return sanitize(strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ")), " "), false)
}

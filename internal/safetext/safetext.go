// Package safetext makes text that came from a server, a trace or a file
// safe to show on a terminal: control characters (C0 and C1), escape
// sequences, bidirectional controls, zero-width and other invisible format
// characters, Unicode tag characters and invalid UTF-8 are shown as visible
// escapes, never written raw.
//
// It is the one rule for what may reach a person: Sanitize and its
// one-line and block forms for text, Writer for the CLI's streams (every
// byte mcpi writes for a person crosses one), Screen for the TUI's frames.
//
// It imports nothing of mcpi.
package safetext

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Sanitize makes s safe for a terminal or a pipe: every rune Unsafe reports
// (and every byte of invalid UTF-8) is shown as a visible escape instead of
// being written raw: \e for ESC, \xHH for other C0 controls, DEL and
// invalid bytes, \uHHHH or \UHHHHHHHH for the rest. Newlines and tabs are
// kept when keepNewlines is set.
func Sanitize(s string, keepNewlines bool) string {
	if isPlain(s, keepNewlines) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	appendSanitized(&b, s, keepNewlines)
	return b.String()
}

// appendSanitized writes the sanitized form of s to b.
func appendSanitized(b *strings.Builder, s string, keepNewlines bool) {
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < 0x7f {
			b.WriteByte(c)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			writeEscape(b, `\x`, rune(c), 2)
		case keepNewlines && (r == '\n' || r == '\t'):
			b.WriteByte(c)
		case r == '\x1b':
			b.WriteString(`\e`)
		case r < 0x20 || r == 0x7f:
			writeEscape(b, `\x`, r, 2)
		case Unsafe(r):
			if r > 0xffff {
				writeEscape(b, `\U`, r, 8)
			} else {
				writeEscape(b, `\u`, r, 4)
			}
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
}

func writeEscape(b *strings.Builder, prefix string, r rune, digits int) {
	b.WriteString(prefix)
	h := strconv.FormatInt(int64(r), 16)
	for n := len(h); n < digits; n++ {
		b.WriteByte('0')
	}
	b.WriteString(h)
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

// Unsafe reports whether r must not reach a terminal raw: control
// characters (C0, DEL, C1), format characters (bidirectional controls,
// zero-width characters, the byte order mark, soft hyphen, the Unicode tag
// characters U+E0000..U+E007F that can spell hidden text), line and
// paragraph separators, the variation selectors of the supplement
// (U+E0100..U+E01EF, another carrier of hidden text), and the Hangul fillers
// that render as blanks.
func Unsafe(r rune) bool {
	switch {
	case r < 0x20 || r == 0x7f:
		return true
	case r < 0xa0:
		return r >= 0x80
	case r < 0x0600:
		return r == 0xad
	case r >= 0xe0000 && r <= 0xe01ef:
		return true
	case r == 0x115f, r == 0x1160, r == 0x3164, r == 0xffa0:
		return true
	}
	return unicode.In(r, unicode.Cc, unicode.Cf, unicode.Zl, unicode.Zp)
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

// Clean reports whether s would pass Sanitize unchanged with newlines and
// tabs kept: what a test asserts of everything written for a person.
func Clean(s string) bool {
	return Sanitize(s, true) == s
}

// Truncate cuts s to n runes, the last of them an ellipsis when it cut.
// It does not sanitise: callers cut what they sanitised.
func Truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// Quote shows the start of what a peer sent (200 bytes), sanitised and
// between guillemets, so that where it starts and ends is plain.
func Quote(b []byte) string {
	const max = 200
	s := string(b)
	if len(s) > max {
		s = s[:max] + "…"
	}
	return "«" + Sanitize(s, false) + "»"
}

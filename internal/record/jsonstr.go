package record

import (
	"bufio"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// JSON string helpers. The writer encodes by hand rather than through
// encoding/json so that a frame is never re-marshalled (it must stay byte
// exact), large payloads stream into the buffered writer without an
// intermediate copy, and '<', '>' and '&' stay readable in URLs.

const hexDigits = "0123456789abcdef"

// writeQuoted writes s as a JSON string. Bytes that are not valid UTF-8 are
// written as U+FFFD: callers that must keep such bytes use base64 instead.
func writeQuoted(w *bufio.Writer, s []byte) {
	w.WriteByte('"')
	writeEscaped(w, s)
	w.WriteByte('"')
}

func writeQuotedString(w *bufio.Writer, s string) {
	writeQuoted(w, bytesOf(s))
}

// writeEscaped writes the contents of a JSON string (without the quotes),
// copying runs of bytes that need no escape in one call.
func writeEscaped(w *bufio.Writer, s []byte) {
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			w.Write(s[start:i])
			writeEscape(w, c)
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && size == 1 {
			w.Write(s[start:i])
			w.WriteString(`\ufffd`)
			i++
			start = i
			continue
		}
		i += size
	}
	w.Write(s[start:])
}

func writeEscape(w *bufio.Writer, c byte) {
	switch c {
	case '"', '\\':
		w.WriteByte('\\')
		w.WriteByte(c)
	case '\n':
		w.WriteString(`\n`)
	case '\r':
		w.WriteString(`\r`)
	case '\t':
		w.WriteString(`\t`)
	default:
		w.WriteString(`\u00`)
		w.WriteByte(hexDigits[c>>4])
		w.WriteByte(hexDigits[c&0xF])
	}
}

// appendEscaped is writeEscaped into a slice, for the small strings the
// redactor re-encodes.
func appendEscaped(dst, s []byte) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c >= 0x20 && c != '"' && c != '\\':
				dst = append(dst, c)
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			case c == '\n':
				dst = append(dst, '\\', 'n')
			case c == '\r':
				dst = append(dst, '\\', 'r')
			case c == '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, `\ufffd`...)
		} else {
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return dst
}

// unescape appends the decoded contents of a JSON string (s is what lies
// between the quotes) to dst. It never fails: a malformed escape is kept as
// it stands and a lone surrogate becomes U+FFFD, as encoding/json does.
func unescape(dst, s []byte) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			dst = append(dst, c)
			i++
			continue
		}
		switch e := s[i+1]; e {
		case '"', '\\', '/':
			dst = append(dst, e)
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r, ok := hex4(s[i+2:])
			if !ok {
				dst = append(dst, c)
				i++
				continue
			}
			i += 6
			if utf16.IsSurrogate(r) {
				r2, ok := rune(-1), false
				if i+1 < len(s) && s[i] == '\\' && s[i+1] == 'u' {
					r2, ok = hex4(s[i+2:])
				}
				if d := utf16.DecodeRune(r, r2); ok && d != utf8.RuneError {
					r = d
					i += 6
				} else {
					r = utf8.RuneError
				}
			}
			dst = utf8.AppendRune(dst, r)
			continue
		default:
			dst = append(dst, c)
			i++
			continue
		}
		i += 2
	}
	return dst
}

func hex4(s []byte) (rune, bool) {
	if len(s) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range s[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// unquote decodes a JSON string literal, quotes included.
func unquote(lit []byte) ([]byte, bool) {
	if len(lit) < 2 || lit[0] != '"' || lit[len(lit)-1] != '"' {
		return nil, false
	}
	body := lit[1 : len(lit)-1]
	return unescape(make([]byte, 0, len(body)), body), true
}

// bytesOf views s as a byte slice without copying. The slice must not be
// modified; it is only handed to writers, which copy it.
func bytesOf(s string) []byte {
	return unsafe.Slice(unsafe.StringData(s), len(s))
}

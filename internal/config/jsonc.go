package config

import (
	"bytes"
	"unicode/utf8"
)

// posError is an error at a byte offset of the file.
type posError struct {
	off int
	msg string
}

func (e *posError) Error() string { return e.msg }

// stripJSONC blanks out // and /* */ comments and trailing commas, which VS
// Code's JSONC allows and other hosts' files sometimes contain. Everything is
// replaced by spaces (newlines are kept), so byte offsets, lines and columns
// in the result are those of the original file. Strings are left alone,
// including any "//" in them.
func stripJSONC(data []byte) ([]byte, error) {
	out := bytes.Clone(data)
	for i := 0; i < len(out); i++ {
		switch out[i] {
		case '"':
			i = stringEnd(out, i)
		case '/':
			if i+1 >= len(out) {
				continue
			}
			switch out[i+1] {
			case '/':
				j := i
				for j < len(out) && out[j] != '\n' {
					out[j] = ' '
					j++
				}
				i = j - 1
			case '*':
				end := bytes.Index(out[i+2:], []byte("*/"))
				if end < 0 {
					return nil, &posError{off: i, msg: "unterminated /* comment"}
				}
				end += i + 4
				for j := i; j < end; j++ {
					if out[j] != '\n' {
						out[j] = ' '
					}
				}
				i = end - 1
			}
		}
	}

	comma := -1
	for i := 0; i < len(out); i++ {
		switch out[i] {
		case '"':
			i = stringEnd(out, i)
			comma = -1
		case ',':
			comma = i
		case '}', ']':
			if comma >= 0 {
				out[comma] = ' '
			}
			comma = -1
		case ' ', '\t', '\r', '\n':
		default:
			comma = -1
		}
	}
	return out, nil
}

// stringEnd returns the offset of the quote closing the string that opens at
// start, or the last offset if it is not closed (json reports that).
func stringEnd(b []byte, start int) int {
	for i := start + 1; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i
		}
	}
	return len(b) - 1
}

// lineCol converts a byte offset to a 1-based line and column, counting
// columns in characters.
func lineCol(data []byte, off int) (line, col int) {
	off = max(0, min(off, len(data)))
	before := data[:off]
	line = bytes.Count(before, []byte("\n")) + 1
	start := bytes.LastIndexByte(before, '\n') + 1
	return line, utf8.RuneCount(before[start:]) + 1
}

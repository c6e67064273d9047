package transport

import (
	"errors"
	"fmt"
	"unicode/utf8"
)

// ErrNotUTF8 marks a frame that is not valid UTF-8.
var ErrNotUTF8 = errors.New("frame is not valid UTF-8")

// ErrNotJSON marks a frame that is not JSON.
var ErrNotJSON = errors.New("frame is not JSON")

// ErrCutFrame marks the last bytes of a stream that ended inside a frame
// (a server that died while writing it): no answer, but the end of the
// connection, which says why.
var ErrCutFrame = errors.New("the stream ended inside a frame")

// checkFrame says whether data is a well-formed frame: UTF-8 JSON whose top
// level is an object or an array.
func checkFrame(data []byte) error {
	if !utf8.Valid(data) {
		return fmt.Errorf("%w (first bad byte at offset %d)", ErrNotUTF8, firstInvalidUTF8(data))
	}
	if !ValidJSON(data) { // json.Valid, faster
		return ErrNotJSON
	}
	for _, c := range data {
		if c == ' ' || c == '\t' || c == '\r' || c == '\n' {
			continue
		}
		if c == '{' || c == '[' {
			return nil
		}
		break
	}
	return fmt.Errorf("%w: a frame must be an object or an array", ErrNotJSON)
}

func firstInvalidUTF8(data []byte) int {
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size <= 1 {
			return i
		}
		i += size
	}
	return -1
}

// TrimEOL removes one trailing "\n" or "\r\n".
func TrimEOL(line []byte) []byte {
	if n := len(line); n > 0 && line[n-1] == '\n' {
		line = line[:n-1]
		if n := len(line); n > 0 && line[n-1] == '\r' {
			line = line[:n-1]
		}
	}
	return line
}

// IsBlank reports whether a line holds nothing but JSON white space.
func IsBlank(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return false
		}
	}
	return true
}

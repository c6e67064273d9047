package session

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// ErrMalformed is the sentinel of MalformedResponseError.
var ErrMalformed = errors.New("malformed response")

// MalformedResponseError says that the answer to a request arrived but
// could not be read: the frame names the request's id, yet is not a
// JSON-RPC message. The request fails at once with it, instead of waiting
// for an answer that has already come.
type MalformedResponseError struct {
	Method string
	Reason string // why the frame could not be read
	Frame  []byte // the start of the frame, as it arrived
}

func (e *MalformedResponseError) Error() string {
	if len(e.Frame) == 0 {
		return fmt.Sprintf("%s: the server's answer could not be read (%s)", e.Method, e.Reason)
	}
	return fmt.Sprintf("%s: the server's answer could not be read (%s): %s", e.Method, e.Reason, quoteFrame(e.Frame))
}

// Is makes errors.Is(err, ErrMalformed) true.
func (e *MalformedResponseError) Is(target error) bool { return target == ErrMalformed }

func quoteFrame(b []byte) string {
	const max = 200
	s := string(b)
	if len(s) > max {
		s = s[:max] + "…"
	}
	return fmt.Sprintf("%q", s)
}

var bom = []byte("\ufeff")

// repairFrame makes what it can of a frame the transport found malformed:
// a leading byte order mark is dropped and invalid UTF-8 is replaced with
// U+FFFD. It returns the repaired frame and what was done, or ok false
// when the frame is still not a JSON object or array.
func repairFrame(data []byte) (repaired []byte, done string, ok bool) {
	var notes []string
	d := bytes.TrimLeft(data, " \t\r\n")
	if bytes.HasPrefix(d, bom) {
		d = d[len(bom):]
		notes = append(notes, "the byte order mark before it was ignored")
	}
	if !utf8.Valid(d) {
		d = bytes.ToValidUTF8(d, []byte("\ufffd"))
		notes = append(notes, "its invalid UTF-8 was replaced with U+FFFD")
	}
	if len(notes) == 0 || !transport.ValidJSON(d) {
		return nil, "", false
	}
	if t := bytes.TrimLeft(d, " \t\r\n"); len(t) == 0 || (t[0] != '{' && t[0] != '[') {
		return nil, "", false
	}
	return d, strings.Join(notes, "; "), true
}

// idMember finds the "id" members of a frame that is not JSON.
var idMember = regexp.MustCompile(`"id"\s*:\s*(-?[0-9]+|"(?:[^"\\]|\\.)*")`)

// failAddressed fails at once the pending requests a malformed frame names
// by id: their answer has come, unreadable. A frame that names none is
// only warned about (by the caller).
func (c *Client) failAddressed(data []byte, reason error) {
	for _, m := range idMember.FindAllSubmatch(data, 8) {
		key, ok := mcp.IDKey(m[1])
		if !ok {
			continue
		}
		c.mu.Lock()
		pc := c.pending[key]
		if pc == nil && key[0] == '"' {
			if s, err := unquoteKey(key); err == nil {
				key, pc = s, c.pending[s]
			}
		}
		if pc != nil {
			delete(c.pending, key)
		}
		c.mu.Unlock()
		if pc != nil {
			pc.lose(&MalformedResponseError{Method: pc.method, Reason: reason.Error(), Frame: data})
			return
		}
	}
}

func unquoteKey(key string) (string, error) {
	var s string
	_, err := fmt.Sscanf(key, "%q", &s)
	return s, err
}

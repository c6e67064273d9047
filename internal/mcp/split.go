package mcp

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// Decoding a message with encoding/json costs several passes over its
// bytes: one to validate, one more to skip over each json.RawMessage field,
// then a copy of it. For a 50 MB result that is most of the time mcpi
// spends on it (docs/performance.md). decodeSplit finds the members of a
// message with bytes.IndexByte over strings instead, which is what a
// well-formed frame makes possible; whatever it does not handle exactly as
// json.Unmarshal would, it leaves to json.Unmarshal.

// decodeSplit decodes data, which must be one valid JSON value, into a
// Message as json.Unmarshal would. It reports false when it cannot: the
// value is not an object, a key is not one of Message's own in its own
// spelling, a key repeats, jsonrpc or method is not a plain string, error
// is not an object that decodes, or data turns out not to be valid after
// all. The raw fields share data's memory when share is set; they are
// copies otherwise.
func decodeSplit(data []byte, share bool) (*Message, bool) {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return nil, false
	}
	m := &Message{}
	var seen uint8
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return m, skipSpace(data, i+1) == len(data)
	}
	for {
		key, v, vend, ok := nextMember(data, i)
		if !ok {
			return nil, false
		}
		bit, ok := m.setMember(key, v, share)
		if !ok || seen&bit != 0 {
			return nil, false
		}
		seen |= bit
		i = skipSpace(data, vend)
		if i < len(data) && data[i] == ',' {
			i = skipSpace(data, i+1)
			continue
		}
		if i < len(data) && data[i] == '}' {
			return m, skipSpace(data, i+1) == len(data)
		}
		return nil, false
	}
}

// nextMember reads the member of an object that starts at i: its key
// (without the quotes), its value, and where the value ends.
func nextMember(data []byte, i int) (key, v []byte, vend int, ok bool) {
	if i >= len(data) || data[i] != '"' {
		return nil, nil, 0, false
	}
	end := skipString(data, i)
	if end < 0 {
		return nil, nil, 0, false
	}
	key = data[i+1 : end-1]
	i = skipSpace(data, end)
	if i >= len(data) || data[i] != ':' {
		return nil, nil, 0, false
	}
	i = skipSpace(data, i+1)
	vend = skipValue(data, i)
	if vend < 0 {
		return nil, nil, 0, false
	}
	return key, data[i:vend], vend, true
}

// setMember sets the field of m that key names to v, and returns the bit
// that marks the key seen. It reports false for a key that is not one of
// Message's own, or a value decodeSplit leaves to json.Unmarshal.
func (m *Message) setMember(key, v []byte, share bool) (uint8, bool) {
	switch string(key) {
	case "jsonrpc":
		s, ok := plainString(v)
		m.JSONRPC = s
		return 1, ok
	case "method":
		s, ok := plainString(v)
		m.Method = s
		return 2, ok
	case "id":
		m.ID = rawMember(v, share)
		return 4, true
	case "params":
		m.Params = rawMember(v, share)
		return 8, true
	case "result":
		m.Result = rawMember(v, share)
		return 16, true
	case "error":
		if v[0] != '{' {
			return 32, false
		}
		var e RPCError
		if json.Unmarshal(v, &e) != nil {
			return 32, false
		}
		m.Error = &e
		return 32, true
	}
	return 0, false
}

// rawMember is v as a raw field: sharing data's memory (capped, so that
// no append reaches past it) or a copy.
func rawMember(v []byte, share bool) json.RawMessage {
	if share {
		return v[:len(v):len(v)]
	}
	return append(json.RawMessage(nil), v...)
}

// plainString returns the JSON string v when it has no escapes and is valid
// UTF-8, so that its bytes are its value.
func plainString(v []byte) (string, bool) {
	if len(v) < 2 || v[0] != '"' || bytes.IndexByte(v[1:len(v)-1], '\\') >= 0 || !utf8.Valid(v) {
		return "", false
	}
	return string(v[1 : len(v)-1]), true
}

func skipSpace(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\r', '\n':
			i++
		default:
			return i
		}
	}
	return i
}

// skipString returns the index just past the string that starts at
// data[i], a quote, or -1 if it does not end. The closing quote is the
// first one preceded by an even number of backslashes; each run of
// backslashes is counted once, so the cost stays linear.
func skipString(data []byte, i int) int {
	i++
	for {
		k := bytes.IndexByte(data[i:], '"')
		if k < 0 {
			return -1
		}
		i += k
		n := 0
		for j := i - 1; j >= 0 && data[j] == '\\'; j-- {
			n++
		}
		if n%2 == 0 {
			return i + 1
		}
		i++
	}
}

// skipValue returns the index just past the value that starts at data[i],
// or -1. It trusts the value to be valid JSON and only finds where it ends;
// on invalid input it still ends, with -1 or with a wrong index.
func skipValue(data []byte, i int) int {
	if i >= len(data) {
		return -1
	}
	switch data[i] {
	case '"':
		return skipString(data, i)
	case '{', '[':
		depth := 0
		for i < len(data) {
			switch data[i] {
			case '"':
				j := skipString(data, i)
				if j < 0 {
					return -1
				}
				i = j
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return -1
	case ',', ':', '}', ']':
		return -1
	}
	// A number, true, false or null.
	j := i
	for j < len(data) {
		switch data[j] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			return j
		}
		j++
	}
	return j
}

// MemberString returns the value json.Unmarshal would decode into a string
// field named key from the JSON object obj: that of the last member whose
// name equals key but for case, "" when there is none. ok is false when it
// cannot tell without decoding: a member name with escapes, a matching
// value that is not a plain string, or obj not a valid object. It lets a
// caller skip decoding a result of megabytes only to read one field.
func MemberString(obj []byte, key string) (value string, ok bool) {
	ok = members(obj, key, func(raw []byte) bool {
		value, ok = plainString(raw)
		return ok
	})
	if !ok {
		return "", false
	}
	return value, true
}

// MemberRaw returns the bytes of the value json.Unmarshal would decode
// into a field named key from the JSON object obj: that of the last member
// whose name equals key but for case, nil when there is none. ok is false
// when it cannot tell without decoding: a member name with escapes, or obj
// not an object (its values are skipped by their shape, not checked).
func MemberRaw(obj []byte, key string) (value []byte, ok bool) {
	ok = members(obj, key, func(raw []byte) bool {
		value = raw
		return true
	})
	if !ok {
		return nil, false
	}
	return value, true
}

// members calls take with the value of each member of the object obj
// whose name equals key but for case, in order, and reports whether obj
// is an object it can read that way and take took each.
func members(obj []byte, key string, take func(raw []byte) bool) bool {
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return false
	}
	i = skipSpace(obj, i+1)
	if i < len(obj) && obj[i] == '}' {
		return true
	}
	for {
		if i >= len(obj) || obj[i] != '"' {
			return false
		}
		end := skipString(obj, i)
		if end < 0 {
			return false
		}
		name := obj[i+1 : end-1]
		if bytes.IndexByte(name, '\\') >= 0 {
			return false
		}
		i = skipSpace(obj, end)
		if i >= len(obj) || obj[i] != ':' {
			return false
		}
		i = skipSpace(obj, i+1)
		vend := skipValue(obj, i)
		if vend < 0 {
			return false
		}
		if bytes.EqualFold(name, []byte(key)) && !take(obj[i:vend]) {
			return false
		}
		i = skipSpace(obj, vend)
		if i < len(obj) && obj[i] == ',' {
			i = skipSpace(obj, i+1)
			continue
		}
		return i < len(obj) && obj[i] == '}' && skipSpace(obj, i+1) == len(obj)
	}
}

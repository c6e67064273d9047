// Package tracectx reads and writes W3C Trace Context (traceparent and
// tracestate, https://www.w3.org/TR/trace-context/): the context mcpi's
// requests carry in params._meta (SEP-414) when a trace is going on, so
// that a server's own spans join it.
package tracectx

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// MaxState is the longest tracestate kept (the W3C limit is 32 members of
// at most 256 characters each; 512 is what implementations must keep).
const MaxState = 512

// Context is a trace's context: the trace, the span it goes on from, its
// flags and its vendors' state.
type Context struct {
	TraceID [16]byte
	SpanID  [8]byte
	Flags   byte
	State   string
}

// Parse reads a traceparent (version 00; a later version's first four
// fields) and an optional tracestate. A malformed or oversized value is
// an error, never a context that is half right.
func Parse(traceparent, tracestate string) (Context, error) {
	var c Context
	if len(traceparent) > 512 {
		return c, fmt.Errorf("traceparent of %d characters: a W3C traceparent has 55", len(traceparent))
	}
	parts := strings.Split(traceparent, "-")
	if len(parts) < 4 || len(parts[0]) != 2 || len(parts[1]) != 32 || len(parts[2]) != 16 || len(parts[3]) != 2 {
		return c, errors.New("not a W3C traceparent (00-<32 hex>-<16 hex>-<2 hex>)")
	}
	if parts[0] == "ff" || (parts[0] == "00" && len(parts) != 4) {
		return c, errors.New("not a W3C traceparent: version " + parts[0] + " with these fields")
	}
	for _, p := range parts[:4] {
		if p != strings.ToLower(p) {
			return c, errors.New("not a W3C traceparent: hex digits are lower case")
		}
	}
	var v [1]byte
	if _, err := hex.Decode(v[:], []byte(parts[0])); err != nil {
		return c, errors.New("not a W3C traceparent: the version is not hex")
	}
	if _, err := hex.Decode(c.TraceID[:], []byte(parts[1])); err != nil || c.TraceID == [16]byte{} {
		return c, errors.New("not a W3C traceparent: the trace id is not 32 hex digits, or is all zeros")
	}
	if _, err := hex.Decode(c.SpanID[:], []byte(parts[2])); err != nil || c.SpanID == [8]byte{} {
		return c, errors.New("not a W3C traceparent: the parent id is not 16 hex digits, or is all zeros")
	}
	var f [1]byte
	if _, err := hex.Decode(f[:], []byte(parts[3])); err != nil {
		return c, errors.New("not a W3C traceparent: the flags are not hex")
	}
	c.Flags = f[0]
	if len(tracestate) <= MaxState && validState(tracestate) {
		c.State = tracestate
	}
	return c, nil
}

// validState keeps a tracestate of printable ASCII only (it goes into
// JSON and headers as it is).
func validState(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// TraceParent writes the context as a traceparent.
func (c Context) TraceParent() string {
	return fmt.Sprintf("00-%s-%s-%02x", hex.EncodeToString(c.TraceID[:]), hex.EncodeToString(c.SpanID[:]), c.Flags)
}

// Child returns the context of a new span under c: the same trace, a new
// random span id.
func (c Context) Child() Context {
	out := c
	for out.SpanID == ([8]byte{}) || out.SpanID == c.SpanID {
		rand.Read(out.SpanID[:])
	}
	return out
}

// New returns the context of a new trace: a random trace id and span id,
// sampled.
func New() Context {
	var c Context
	for c.TraceID == ([16]byte{}) {
		rand.Read(c.TraceID[:])
	}
	for c.SpanID == ([8]byte{}) {
		rand.Read(c.SpanID[:])
	}
	c.Flags = 1
	return c
}

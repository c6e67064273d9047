package safetext

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzSafe: whatever the input, Sanitize, Screen (outside its SGR
// sequences) and a Writer fed in pieces leave nothing a terminal acts on
// but newlines and tabs, and a Writer says the same as Sanitize.
func FuzzSafe(f *testing.F) {
	for _, h := range hostile {
		f.Add(h, uint8(3))
	}
	f.Add("\x1b[1;31mred\x1b[0m\x1b[", uint8(1))
	f.Fuzz(func(t *testing.T, s string, step uint8) {
		check := func(what, out string) {
			for i := 0; i < len(out); {
				if n := sgrLen(out[i:]); n > 0 && what == "Screen" {
					i += n
					continue
				}
				r, size := utf8.DecodeRuneInString(out[i:])
				if r == utf8.RuneError && size == 1 || r != '\n' && r != '\t' && Unsafe(r) {
					t.Fatalf("%s(%q) = %q: raw %q at %d", what, s, out, out[i:i+size], i)
				}
				i += size
			}
		}
		check("Sanitize", Sanitize(s, true))
		check("OneLine", OneLine(s))
		check("Screen", Screen(s))
		var b strings.Builder
		w := NewWriter(&b)
		n := int(step%7) + 1
		for i := 0; i < len(s); i += n {
			w.Write([]byte(s[i:min(len(s), i+n)]))
		}
		w.Flush()
		check("Writer", b.String())
		if utf8.ValidString(s) && b.String() != Sanitize(s, true) {
			t.Fatalf("Writer in pieces of %d = %q, Sanitize = %q", n, b.String(), Sanitize(s, true))
		}
	})
}

package safetext

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSanitize(t *testing.T) {
	tests := []struct {
		in   string
		keep bool
		want string
	}{
		{"plain text", false, "plain text"},
		{"\x1b[31mred\x1b[0m", false, `\e[31mred\e[0m`},
		{"a\tb\nc\r", true, "a\tb\nc\\x0d"},
		{"a\tb\nc", false, `a\x09b\x0ac`},
		{"bell\a", false, `bell\x07`},
		{"csi\u009b31m", false, `csi\u009b31m`},
		{"rtl\u202eevil", false, `rtl\u202eevil`},
		{"bad\xffutf8", false, `bad\xffutf8`},
		{"héllo → ✓", false, "héllo → ✓"},
		{"del\x7f", false, `del\x7f`},
		{"bom\ufeff", false, `bom\ufeff`},
	}
	for _, tt := range tests {
		if got := Sanitize(tt.in, tt.keep); got != tt.want {
			t.Errorf("Sanitize(%q, %v) = %q, want %q", tt.in, tt.keep, got, tt.want)
		}
	}
}

func TestOneLineAndBlock(t *testing.T) {
	if got := OneLine("  a\n  b\t c \x1b "); got != `a b c \e` {
		t.Errorf("OneLine = %q", got)
	}
	if got := Block("a\tb\n\x1bc"); got != "a    b\n\\ec" {
		t.Errorf("Block = %q", got)
	}
}

func BenchmarkSanitizePlain(b *testing.B) {
	s := "an ordinary line of ASCII text that needs no escaping at all, as most do"
	for b.Loop() {
		Sanitize(s, false)
	}
}

// hostile is a battery of what a server may put in any text field.
var hostile = []string{
	"\x1b]0;pwned\a", "\x1b]52;c;cHduZWQ=\a", "\x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\", "\x1b[2J\x1b[H",
	"\x1bP+q\x1b\\", "\x1b_apc\x1b\\", "\x1b^pm\x1b\\", "\x1bXsos\x1b\\", "\u009b31m", "\u009d0;t\u009c",
	"a\rb", "bell\a", "del\x7f", "rtl\u202eevil", "iso\u2066x\u2069", "zw\u200bsp\u200cnj\u200dj\u2060wj",
	"bom\ufeff", "tag\U000E0041\U000E0042\U000E007F", "vs\U000E0100", "soft\u00adhyphen", "ls\u2028ps\u2029",
	"bad\xff\xfe", "cut\xe2\x82", "nul\x00", "hangul\u3164filler",
}

func TestNothingUnsafeSurvives(t *testing.T) {
	for _, h := range hostile {
		for _, got := range []string{Sanitize(h, true), Sanitize(h, false), OneLine(h), Block(h), Screen(h)} {
			for i, r := range got {
				if r == '\n' || r == '\t' {
					continue
				}
				if (r == utf8.RuneError && !strings.ContainsRune(h, utf8.RuneError)) || Unsafe(r) {
					t.Errorf("%q -> %q: raw %U at %d", h, got, r, i)
				}
			}
		}
	}
}

func TestScreenKeepsSGROnly(t *testing.T) {
	tests := []struct{ in, want string }{
		{"\x1b[1;38;2;10;20;30mbold\x1b[m", "\x1b[1;38;2;10;20;30mbold\x1b[m"},
		{"\x1b[4:3mcurly\x1b[0m ● ✓", "\x1b[4:3mcurly\x1b[0m ● ✓"},
		{"\x1b[2Jclear", `\e[2Jclear`},
		{"\x1b]0;t\a", `\e]0;t\x07`},
		{"a\rb\nc\td", "a\\x0db\nc\td"},
		{"\x1b[31", `\e[31`},
		{"tag\U000E0041", `tag\U000e0041`},
	}
	for _, tt := range tests {
		if got := Screen(tt.in); got != tt.want {
			t.Errorf("Screen(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestWriterJoinsSplitRunes(t *testing.T) {
	var b strings.Builder
	w := NewWriter(&b)
	whole := "é→\u202e✓"
	for i := 0; i < len(whole); i++ {
		w.Write([]byte{whole[i]})
	}
	w.Write([]byte("\xe2\x82")) // cut short, then never finished
	w.Flush()
	if want := `é→\u202e✓\xe2\x82`; b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
	b.Reset()
	w.WriteStyled("\x1b[31mred\x1b[0m\x1b]0;x\a")
	w.EraseLine()
	if want := "\x1b[31mred\x1b[0m\\e]0;x\\x07\r\x1b[K"; b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}

func BenchmarkScreen(b *testing.B) {
	line := "\x1b[1;36mtools\x1b[0m · \x1b[2m● connected\x1b[0m │ add  Add two numbers ✓ " + strings.Repeat("x", 100) + "\n"
	s := strings.Repeat(line, 50)
	for b.Loop() {
		Screen(s)
	}
}

// TestWriterCutsLongLines: with SetMaxLine, a line longer than the bound
// is cut on a rune, whatever the writes it came in, and its end says how
// much was cut; lines within the bound, a styled line and an erased line
// keep what they had.
func TestWriterCutsLongLines(t *testing.T) {
	var b strings.Builder
	w := NewWriter(&b)
	w.SetMaxLine(10)
	w.Write([]byte("short\n"))
	w.Write([]byte("0123456789"))
	w.Write([]byte("\n"))
	w.Write([]byte("012345678é")) // é straddles the bound: cut before it
	w.Write([]byte(strings.Repeat("x", 2000) + "\nnext\n"))
	w.Write([]byte("\x1b\x1b\x1b\x1b\x1b\x1b")) // made visible, \e each: 12 bytes
	w.Write([]byte("\n"))
	if want := "short\n0123456789\n012345678… (2.0 KiB more)\nnext\n" + `\e\e\e\e\e` + "… (2 bytes more)\n"; b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
	b.Reset()
	w.Write([]byte("0123456789abc"))
	w.Flush()
	w.Write([]byte("def\n"))
	if want := "0123456789… (3 bytes more)… (3 bytes more)\n"; b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
	b.Reset()
	w.Write([]byte("0123456789"))
	w.EraseLine()
	w.Write([]byte("abc\n"))
	w.WriteStyled("ab\x1b[31mcdefgh\x1b[0mijk\n") // SGR sequences count
	w.WriteStyled("abcdefgh\x1b[31mX\n")          // and are not split
	if want := "0123456789\r\x1b[Kabc\nab\x1b[31mcde\x1b[0m… (10 bytes more)\nabcdefgh\x1b[0m… (6 bytes more)\n"; b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}

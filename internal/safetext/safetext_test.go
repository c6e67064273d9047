package safetext

import "testing"

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

package common

import (
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/mcpi-dev/mcpi/internal/tui/styles"
)

// TestPrettyJSON: hostile strings are made visible before colouring, in
// both colour modes, and the only escape sequences left are the colours.
func TestPrettyJSON(t *testing.T) {
	raw := []byte(`{"title":"\u001b]0;pwned\u0007","csi":"\u009b2J","rtl":"abc\u202edef","tab":"a\tb","n":12.5,"ok":true,"nil":null,` +
		// The same, raw in the JSON text (valid JSON: only C0 controls must be escaped).
		`"rawcsi":"` + "\u009b2J" + `","rawrtl":"abc` + "\u202e" + `def"}`)
	plain := PrettyJSON(raw, styles.DefaultStyles(false))
	if plain != ansi.Strip(plain) {
		t.Errorf("escape sequences without colour: %q", plain)
	}
	colour := PrettyJSON(raw, styles.DefaultStyles(true))
	if ansi.Strip(colour) != plain {
		t.Errorf("colour changed the text:\n%s\n%s", ansi.Strip(colour), plain)
	}
	for _, bad := range []string{"\x07", "\u009b", "\u202e"} {
		if strings.Contains(colour, bad) {
			t.Errorf("raw %q in the coloured JSON", bad)
		}
	}
	// Not JSON: shown as safe text.
	bad := PrettyJSON([]byte("oops \x1b[2J"), nil)
	golden.RequireEqual(t, plain+"\n"+bad+"\n")
}

func TestLayoutHelpers(t *testing.T) {
	if got := Fit("ab\ncdefgh", 4, 3); got != "ab  \ncde…\n    " {
		t.Errorf("Fit = %q", got)
	}
	if got := Wrap("aaaa bbbb cccccccccc", 6); strings.Join(got, "|") != "aaaa|bbbb|cccccc|cccc" {
		t.Errorf("Wrap = %q", got)
	}
	for d, want := range map[time.Duration]string{850 * time.Microsecond: "850µs", 12 * time.Millisecond: "12ms", 1250 * time.Millisecond: "1.25s", 125 * time.Second: "2m05s"} {
		if got := Duration(d); got != want {
			t.Errorf("Duration(%v) = %s, want %s", d, got, want)
		}
	}
	if got := ByteSize(1229); got != "1.2 KiB" {
		t.Errorf("ByteSize = %s", got)
	}
}

func TestTruncateMiddle(t *testing.T) {
	for _, c := range []struct {
		in   string
		w    int
		want string
	}{
		{"demo://short", 20, "demo://short"},
		{"demo://resource/static/document/architecture.md", 30, "demo://res…ent/architecture.md"},
		{"demo://resource/static/document/7", 20, "demo:/…ic/document/7"},
	} {
		got := TruncateMiddle(c.in, c.w)
		if got != c.want || Width(got) > c.w {
			t.Errorf("TruncateMiddle(%q, %d) = %q, want %q", c.in, c.w, got, c.want)
		}
	}
}

func TestNaturalLess(t *testing.T) {
	in := []string{"items/10", "items/2", "items/1", "b", "a10", "a9", "a09"}
	sort.SliceStable(in, func(i, j int) bool { return NaturalLess(in[i], in[j]) })
	if got, want := strings.Join(in, " "), "a9 a09 a10 b items/1 items/2 items/10"; got != want {
		t.Errorf("natural order %q, want %q", got, want)
	}
}

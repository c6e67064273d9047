package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/mcpi-dev/mcpi/internal/surface"
	"github.com/mcpi-dev/mcpi/internal/tui/common"
	"github.com/mcpi-dev/mcpi/internal/tui/keymap"
	"github.com/mcpi-dev/mcpi/internal/tui/styles"
)

// TestDiffViewAt80: at 80 columns a row is cut, but the cursor moves over
// the rows and enter shows the change whole, its message wrapped and the
// schema before and after.
func TestDiffViewAt80(t *testing.T) {
	long := "the type changed from string to integer: clients that send a string are refused by the server's validation"
	var cs []surface.Change
	for i := range 30 {
		cs = append(cs, surface.Change{Class: surface.Breaking, Kind: "input-type-changed", Subject: "tool t" + string(rune('a'+i%26)),
			Pointer: "/tools/t/inputSchema/properties/n", Message: long, Old: map[string]any{"type": "string"}, New: map[string]any{"type": "integer"}})
	}
	d := &diffView{c: &common.Common{Keys: keymap.Default(), Styles: styles.DefaultStyles(false)}, title: "restarted", changes: cs}
	d.SetSize(80, 20)
	for _, l := range strings.Split(d.View(), "\n") {
		if w := ansi.StringWidth(l); w > 80 {
			t.Fatalf("a row is %d columns wide: %q", w, l)
		}
	}
	for range 25 {
		d.key(keyMsg("down"))
	}
	v := ansi.Strip(d.View())
	if !strings.Contains(v, "› ✗ breaking   tool tz") {
		t.Fatalf("the cursor is not on the 26th change, or it is not shown:\n%s", v)
	}
	d.key(keyMsg("enter"))
	v = ansi.Strip(d.View())
	for _, want := range []string{"change 26 of 30", "message   the type changed from string to integer: clients that send a string", "          are refused by the server's validation", "before:", "    \"type\": \"string\"", "after:", "    \"type\": \"integer\""} {
		if !strings.Contains(v, want) {
			t.Errorf("the change's detail lacks %q:\n%s", want, v)
		}
	}
	d.key(keyMsg("esc"))
	if d.detail {
		t.Error("esc did not go back to the list")
	}
}

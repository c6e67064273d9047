package common

import (
	"errors"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/mcpi-dev/mcpi/internal/tui/styles"
)

// TestNotice: a notice is sanitised when set, a failure is drawn in the
// error style and anything else dim, both cut to the width; the zero
// notice draws nothing, and Over keeps the head then.
func TestNotice(t *testing.T) {
	st := styles.DefaultStyles(true)
	var n Notice
	if !n.Empty() || n.View(st, 40) != "" {
		t.Fatalf("the zero notice draws %q", n.View(st, 40))
	}
	if got := n.Over(st, "3 tools", 40); got != st.Dim.Render("3 tools") {
		t.Errorf("Over without a notice: %q", got)
	}

	n.Set("added %s", "file:///x\x1b]0;pwned\x07\u202e\nnext")
	for _, bad := range []string{"\x1b", "\x07", "\u202e", "\n"} {
		if strings.Contains(n.Text(), bad) {
			t.Errorf("%q kept in %q", bad, n.Text())
		}
	}
	if !strings.HasPrefix(n.Text(), "added file:///x") || n.Err() {
		t.Errorf("Set: %q err=%v", n.Text(), n.Err())
	}
	if got := n.View(st, 80); got != st.Dim.Render(n.Text()) {
		t.Errorf("a notice is dim: %q", got)
	}

	n.Fail(errors.New("boom\x1b[2J"))
	if n.Text() != safeBoom() || !n.Err() {
		t.Errorf("Fail: %q err=%v", n.Text(), n.Err())
	}
	if got := n.View(st, 80); got != st.Error.Render(n.Text()) {
		t.Errorf("a failure is in the error style: %q", got)
	}
	if got := n.Over(st, "3 tools", 80); got != n.View(st, 80) {
		t.Errorf("Over shows the notice: %q", got)
	}

	n.Failf("not connected (%s reconnects)", "ctrl+r")
	if got := ansi.Strip(n.View(st, 12)); got != "✗ not conne…" {
		t.Errorf("cut to 12 cells: %q", got)
	}
	if w := ansi.StringWidth(n.View(st, 12)); w != 12 {
		t.Errorf("width %d, want 12", w)
	}

	n.Clear()
	if !n.Empty() || n.Err() || n.View(st, 40) != "" {
		t.Errorf("Clear left %q err=%v", n.Text(), n.Err())
	}
}

func safeBoom() string { return "✗ " + Line("boom\x1b[2J") }

package argform

import (
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/mcpi-dev/mcpi/internal/tui/common"
	"github.com/mcpi-dev/mcpi/internal/tui/keymap"
	"github.com/mcpi-dev/mcpi/internal/tui/styles"
)

// TestSetValuePutsTheCursorAtTheEnd replaces a short value with a longer
// one: what is typed next goes after it, not where the short one ended.
func TestSetValuePutsTheCursorAtTheEnd(t *testing.T) {
	c := &common.Common{Styles: styles.DefaultStyles(false), Keys: keymap.Default(), Now: time.Now}
	m := New(c, []Field{{Name: "city"}}, nil)
	m.Focus()
	m.SetValue("city", "Pa")
	m.SetValue("city", "Paris")
	m.Update(tea.KeyPressMsg{Code: 'X', Text: "X"})
	if got := m.Values()["city"]; got != "ParisX" {
		t.Errorf("city = %q after typing X, want ParisX", got)
	}
}

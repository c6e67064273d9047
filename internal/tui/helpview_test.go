package tui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"charm.land/bubbles/v2/key"
	"github.com/charmbracelet/x/ansi"
)

// helpSpy is a pane with many keys, in groups of different lengths.
type helpSpy struct {
	spyPane
	groups [][]key.Binding
}

func (s *helpSpy) FullHelp() [][]key.Binding { return s.groups }

// TestHelpShowsEveryKey: at any size mcpi runs at, the whole help shows
// every key the focus has, scrolled with pgdn when the screen is too
// short, and says so; it never takes the last line of what it covers.
func TestHelpShowsEveryKey(t *testing.T) {
	var groups [][]key.Binding
	for g, n := range []int{9, 3, 12, 1, 6} {
		var bs []key.Binding
		for i := range n {
			k := fmt.Sprintf("k%d.%d", g, i)
			bs = append(bs, key.NewBinding(key.WithKeys(k), key.WithHelp(k, fmt.Sprintf("does thing %d of group %d", i, g))))
		}
		groups = append(groups, bs)
	}
	for _, size := range [][2]int{{40, 10}, {40, 12}, {80, 24}, {120, 30}, {200, 50}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			m := New(t.Context(), Options{Width: size[0], Height: size[1], Now: func() time.Time { return frozen }})
			t.Cleanup(m.Close)
			spy := &helpSpy{groups: groups}
			m.panes[0] = spy
			m.resize()
			m.handleKey(keyMsg("f1"))
			var want []string
			for _, col := range m.keys().FullHelp() {
				for _, b := range col {
					want = append(want, b.Help().Key+" +"+b.Help().Desc)
				}
			}
			seen := ""
			for range 20 {
				s := ansi.Strip(m.View().Content)
				if got := len(strings.Split(s, "\n")); got != size[1] {
					t.Fatalf("the screen has %d lines:\n%s", got, s)
				}
				if m.paneHeight() < 1 {
					t.Fatalf("the help covers the whole pane:\n%s", s)
				}
				seen += s + "\n"
				m.handleKey(keyMsg("pgdown"))
			}
			for _, w := range want {
				if !containsKey(seen, w) {
					t.Errorf("the help never shows %q", w)
				}
			}
		})
	}
}

// containsKey reports whether some line holds the key then its meaning.
func containsKey(screen, w string) bool {
	k, d, _ := strings.Cut(w, " +")
	for _, l := range strings.Split(screen, "\n") {
		if i := strings.Index(l, k+" "); i >= 0 && strings.HasPrefix(strings.TrimLeft(l[i+len(k):], " "), d) {
			return true
		}
	}
	return false
}

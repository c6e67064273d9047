package tui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/tui/common"
	"github.com/mcpi-dev/mcpi/internal/tui/keymap"
	"github.com/mcpi-dev/mcpi/internal/tui/styles"
)

// ctrl+b on a URL-mode elicitation hands the opener only an absolute http
// or https URL; anything else (file:, javascript:, an option) is not
// opened, and the modal says so while the URL stays shown.
func TestOpenerGetsOnlyHTTPURLs(t *testing.T) {
	c := &common.Common{Styles: styles.DefaultStyles(false), Keys: keymap.Default(), Now: time.Now}
	for _, tc := range []struct {
		url    string
		opened bool
	}{
		{"https://example.com/connect?x=1", true},
		{"http://127.0.0.1:8080/cb", true},
		{"file:///etc/passwd", false},
		{"javascript:alert(1)", false},
		{"--help", false},
		{"-a/Applications/Calculator.app", false},
		{"example.com/no-scheme", false},
	} {
		m := newModal(c, &common.Request{Kind: common.Elicitation, Elicit: &mcp.ElicitParams{Mode: "url", URL: tc.url}})
		var got []string
		cmd := m.Update(tea.KeyPressMsg{Code: 'b', Mod: tea.ModCtrl}, func(u string) error { got = append(got, u); return nil })
		if cmd == nil {
			t.Fatalf("%q: ctrl+b did nothing", tc.url)
		}
		msg, _ := cmd().(openedMsg)
		if tc.opened {
			if len(got) != 1 || msg.err != nil {
				t.Errorf("%q: opened %q, err %v; want it opened", tc.url, got, msg.err)
			}
			continue
		}
		if len(got) != 0 || msg.err == nil || !strings.Contains(msg.err.Error(), "not opened") {
			t.Errorf("%q: opened %q, err %v; want it refused", tc.url, got, msg.err)
		}
	}
}

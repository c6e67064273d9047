package logs

import (
	"strings"
	"testing"
	"time"

	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/tui/common"
	"github.com/mcpi-dev/mcpi/internal/tui/keymap"
	"github.com/mcpi-dev/mcpi/internal/tui/styles"
)

func TestRingBounded(t *testing.T) {
	r := NewRing(3)
	for i := range 10 {
		r.Append(Row{Text: string(rune('a' + i))})
	}
	if r.Len() != 3 || r.Total() != 10 || r.Get(6) != nil || r.Get(7).Text != "h" || r.Get(9).Text != "j" {
		t.Errorf("len %d total %d", r.Len(), r.Total())
	}
}

func TestLogPaneFilterAndSafety(t *testing.T) {
	c := &common.Common{Styles: styles.DefaultStyles(false), Keys: keymap.Default(), Now: time.Now}
	p := New(c, KindLog)
	p.SetSize(80, 10)
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	p.Add([]Row{
		LogRow(session.Notification{Time: now, Method: "notifications/message", Params: []byte(`{"level":"debug","data":"quiet"}`)}),
		LogRow(session.Notification{Time: now, Method: "notifications/message", Params: []byte(`{"level":"error","data":"loud \u001b[2J"}`)}),
	})
	p.setMinLevel(4)
	v := p.View()
	if strings.Contains(v, "quiet") || !strings.Contains(v, `loud \e[2J`) || strings.Contains(v, "\x1b[2J") {
		t.Errorf("view:\n%s", v)
	}
	if !strings.Contains(v, "1/1 · 1 hidden below error") {
		t.Errorf("the hidden row is not counted:\n%s", v)
	}
	// Every row hidden: the pane says they exist, not that none came.
	p.setMinLevel(7)
	v = p.View()
	if strings.Contains(v, "No log message yet") || !strings.Contains(v, "2 log messages below emergency: - shows lower levels.") || !strings.Contains(v, "0/0 · 2 hidden below emergency") {
		t.Errorf("view:\n%s", v)
	}
}

// TestStderrKeepsIndentation: a traceback's lines keep their indentation
// (a tab as four spaces); control characters are still made visible.
func TestStderrKeepsIndentation(t *testing.T) {
	c := &common.Common{Styles: styles.DefaultStyles(false), Keys: keymap.Default(), Now: time.Now}
	p := New(c, KindStderr)
	p.SetSize(80, 10)
	p.Add([]Row{{Text: `  File "server.py", line 3, in <module>`}, {Text: "\tx() \x1b[2J"}})
	v := p.View()
	for _, want := range []string{`  File "server.py", line 3`, `    x() \e[2J`} {
		if !strings.Contains(v, want) {
			t.Errorf("the pane lacks %q:\n%s", want, v)
		}
	}
}

package skillspane

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/skills"
	"github.com/mcpi-dev/mcpi/internal/tui/common"
	"github.com/mcpi-dev/mcpi/internal/tui/keymap"
	"github.com/mcpi-dev/mcpi/internal/tui/styles"
)

// A skill opened and closed before its load returned keeps "verifying…"
// forever: the loadedMsg is dropped, running is never cleared.
func TestVerdictNotStuckAfterEsc(t *testing.T) {
	c := &common.Common{Styles: styles.DefaultStyles(false), Keys: keymap.Default(), Now: time.Now, Ctx: context.Background()}
	p := New(c)
	p.SetSize(100, 20)
	p.client = &session.Client{} // never used: the read's Cmd is not run
	p.Items = []mcp.SkillEntry{{URI: "skill://a/SKILL.md"}}
	p.verdicts["skill://a/SKILL.md"] = &verdict{files: []*skills.Verification{{Skill: "skill://a/SKILL.md", File: "skill://a/SKILL.md"}}}
	if got := p.verdictText("skill://a/SKILL.md"); !strings.Contains(got, "✓") {
		t.Fatalf("before: %q", got)
	}
	_ = p.read(0) // the Cmd is not run yet: the read is under way
	p.Update(tea.KeyPressMsg{Code: tea.KeyEscape})
	// The load's answer comes now, for an open that was closed.
	p.Update(loadedMsg{open: p.opens - 1, gen: p.gen, uri: "skill://a/SKILL.md", loaded: nil})
	if got := p.verdictText("skill://a/SKILL.md"); strings.Contains(got, "verifying") {
		t.Errorf("the skill's verdict is stuck at %q after esc", got)
	}
}

// enter on a skill whose SKILL.md cannot be read: the list's verdict
// counts only the other files, and says ✓.
func TestVerdictCountsAnUnreadSkillMD(t *testing.T) {
	c := &common.Common{Styles: styles.DefaultStyles(false), Keys: keymap.Default(), Now: time.Now, Ctx: context.Background()}
	p := New(c)
	p.SetSize(100, 20)
	p.client = &session.Client{}
	p.Items = []mcp.SkillEntry{{URI: "skill://a/SKILL.md"}}
	_ = p.read(0)
	other := &skills.Verification{Skill: "skill://a/SKILL.md", File: "skill://a/ref.md"}
	p.Update(loadedMsg{open: p.opens, gen: p.gen, uri: "skill://a/SKILL.md", err: errors.New("resources/read: -32002 not found")})
	p.Update(filesMsg{open: p.opens, gen: p.gen, uri: "skill://a/SKILL.md", files: []*skills.Verification{other}})
	if got := p.verdictText("skill://a/SKILL.md"); strings.Contains(got, "✓") {
		t.Errorf("SKILL.md could not be read, the verdict is %q", got)
	}
}

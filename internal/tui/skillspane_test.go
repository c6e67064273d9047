package tui

import (
	"context"
	"strings"
	"testing"

	"github.com/mcpi-dev/mcpi/internal/mcptest"
	"github.com/mcpi-dev/mcpi/internal/safetext"
	"github.com/mcpi-dev/mcpi/internal/session"
)

func skillsServer(mode string) func(*Options) {
	return func(o *Options) {
		o.Dial = func(ctx context.Context, hk Hooks) (*session.Client, error) {
			return dialPeer(ctx, hk, mcptest.SkillsPrefix+mode)
		}
	}
}

// The Skills pane lists the server's skills, reads nothing until one is
// opened, then shows what was verified and the SKILL.md.
func TestSkillsPane(t *testing.T) {
	h := start(t, 100, 24, skillsServer(mcptest.SkillsHonest))
	h.press("alt+s")
	s := h.waitText("s Skills (1)", "pdf-processing  2 files")
	h.golden(s)
	h.press("alt+7")
	if s := h.waitText("skills/list"); strings.Contains(s, "resources/read") {
		t.Errorf("listing the skills read a file:\n%s", s)
	}
	h.press("alt+s", "enter")
	h.waitText("✓ digest", "✓ frontmatter", "Skill body.")
	h.press("esc")
	h.waitText("> pdf-processing")
}

// An opened skill shows its manifest, each check and its SKILL.md.
func TestSkillsPaneOpen(t *testing.T) {
	h := start(t, 100, 24, skillsServer(mcptest.SkillsHonest))
	h.press("alt+s")
	h.waitText("pdf-processing  2 files")
	h.press("enter")
	h.golden(h.waitText("✓ digest", "✓ frontmatter", "Skill body.", "files verified"))
}

// A SKILL.md that is not what was listed is not shown: the failed checks
// are, with what differs.
func TestSkillsPaneRefuses(t *testing.T) {
	for _, mode := range []string{mcptest.SkillsDigest, mcptest.SkillsFrontmatter} {
		t.Run(mode, func(t *testing.T) {
			h := start(t, 100, 24, skillsServer(mode))
			h.press("alt+s")
			h.waitText("pdf-processing  2 files")
			h.press("enter")
			s := h.waitText("✗ ", "Not shown", "files verified")
			if strings.Contains(s, "Evil") || strings.Contains(s, "Skill body") {
				t.Errorf("unverified content shown:\n%s", s)
			}
			if mode == mcptest.SkillsDigest {
				h.golden(s)
			}
		})
	}
}

// A server that does not declare the extension gets no skills/list.
func TestSkillsPaneUndeclared(t *testing.T) {
	h := startLoaded(t, 100, 24)
	h.press("alt+s")
	h.waitText("does not declare the skills extension")
}

// A skill whose description, URI and body hold mcptest.Poison is listed
// and opened with the poison made visible by the pane itself.
func TestSkillsPanePoison(t *testing.T) {
	h := start(t, 160, 40, skillsServer(mcptest.SkillsPoison))
	h.press("alt+s")
	h.waitText(`PDF «\e]0;pwned`)
	h.press("enter")
	h.waitText("✓ frontmatter", `Body «\e]0;pwned`)
	h.p.mu.Lock()
	unsafe := h.p.unsafe
	h.p.mu.Unlock()
	if unsafe != "" {
		t.Errorf("the skills pane drew what only the screen sink made safe (%s):\n%s", firstUnsafe(unsafe), safetext.Screen(unsafe))
	}
}

// v reads and verifies every file of every skill's manifest; the list
// says each skill's verdict, the skill opened each file's, with what
// differs.
func TestSkillsPaneVerifyAll(t *testing.T) {
	h := start(t, 100, 24, skillsServer(mcptest.SkillsFormsLie))
	h.press("alt+s")
	h.waitText("pdf-processing  2 files")
	h.press("v")
	h.golden(h.waitText("pdf-processing  2 files   ✗ 1 of 2 failed"))
	h.press("enter")
	h.waitText("✓ file skill://pdf-processing/SKILL.md", "✗ file skill://pdf-processing/references/FORMS.md",
		"digest: served sha256:", "files verified: ✗ 1 of 2 failed", "✓ frontmatter")
	h.press("alt+7")
	h.waitText("read skill://pdf-processing/references/FORMS.md")
}

// An honest skill opened: SKILL.md and every other file of its manifest
// are read and verified.
func TestSkillsPaneOpenVerifiesFiles(t *testing.T) {
	h := start(t, 100, 24, skillsServer(mcptest.SkillsHonest))
	h.press("alt+s")
	h.waitText("pdf-processing  2 files")
	h.press("v")
	h.waitText("✓ 2 files")
	h.press("enter")
	h.waitText("✓ file skill://pdf-processing/SKILL.md", "✓ file skill://pdf-processing/references/FORMS.md", "files verified: ✓ 2 files")
}

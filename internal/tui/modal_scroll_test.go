package tui

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/tui/common"
)

// TestModalScrollsToTheLastLine: a sampling request too long for the modal
// at 80x24 scrolls to its last line, and the row under it then says there
// is nothing more.
func TestModalScrollsToTheLastLine(t *testing.T) {
	m := New(t.Context(), Options{Width: 80, Height: 24, Now: func() time.Time { return frozen }, OpenURL: func(string) error { return nil }})
	t.Cleanup(m.Close)
	m.resize()
	words := make([]string, 120)
	for i := range words {
		words[i] = "word"
	}
	text, _ := json.Marshal(map[string]string{"type": "text", "text": strings.Join(words, " ")})
	temp := 0.7
	r := common.NewRequest(t.Context(), 1, common.Sampling, frozen)
	r.Sampling = &mcp.CreateMessageParams{MaxTokens: 100, Temperature: &temp,
		Messages: []mcp.SamplingMessage{{Role: "user", Content: text}}}
	m.openModal(r)
	screen := func() string { return ansi.Strip(m.View().Content) }
	if s := screen(); !strings.Contains(s, "pgup/pgdn to scroll (") || strings.Contains(s, "maxTokens 100") {
		t.Fatalf("the request fits, or says nothing of what it hides:\n%s", s)
	}
	for range 10 {
		m.handleKey(keyMsg("pgdown"))
		screen()
	}
	s := screen()
	if !strings.Contains(s, "maxTokens 100 · temperature 0.7") || !strings.Contains(s, "end of the request") {
		t.Errorf("at the end, the last line or the end is not shown:\n%s", s)
	}
}

package tui

import (
	"context"
	"errors"
	"io"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/mcpi-dev/mcpi/internal/safetext"
)

// programIO is what a program takes from its caller's options.
type programIO struct {
	In            io.Reader
	Out           io.Writer
	NoColor       bool
	Width, Height int
}

// runProgram runs m until it quits or ctx ends, and returns the model it
// ended with. It is the TUI's one way to the terminal: every frame m draws
// crosses screen, so no pane, however it built its text, can write a
// control sequence other than a colour (TestOneProgram keeps it the only
// caller of tea.NewProgram).
func runProgram(ctx context.Context, m tea.Model, pio programIO) (tea.Model, error) {
	popts := []tea.ProgramOption{tea.WithContext(ctx)}
	if pio.In != nil {
		popts = append(popts, tea.WithInput(pio.In))
	}
	if pio.Out != nil {
		popts = append(popts, tea.WithOutput(pio.Out))
	}
	if pio.NoColor {
		popts = append(popts, tea.WithColorProfile(colorprofile.ASCII))
	}
	if pio.Width > 0 && pio.Height > 0 {
		popts = append(popts, tea.WithWindowSize(pio.Width, pio.Height))
	}
	final, err := tea.NewProgram(screen{m}, popts...).Run()
	if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		err = ctx.Err()
	}
	if s, ok := final.(screen); ok {
		return s.Model, err
	}
	return final, err
}

// screen is the sink of the TUI: it passes each frame of the model it
// wraps through safetext.Screen (colours kept, every other control and
// escape sequence, and every invisible or direction-changing character,
// made visible) and the window title through safetext.OneLine.
type screen struct{ tea.Model }

func (s screen) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	m, cmd := s.Model.Update(msg)
	return screen{m}, cmd
}

func (s screen) View() tea.View {
	v := s.Model.View()
	v.Content = safetext.Screen(v.Content)
	v.WindowTitle = safetext.OneLine(v.WindowTitle)
	return v
}

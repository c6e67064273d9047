package tui

import (
	"context"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/mcpi-dev/mcpi/internal/transport"
)

func TestReplay(t *testing.T) {
	events := []transport.Event{
		{Time: frozen, Kind: transport.KindFrame, Dir: transport.Outgoing, Data: []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)},
		{Time: frozen.Add(7 * time.Millisecond), Kind: transport.KindFrame, Dir: transport.Incoming, Data: []byte(`{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`)},
		{Time: frozen, Kind: transport.KindStderr, Dir: transport.Incoming, Data: []byte("log \x1b[31mline")},
	}
	m := NewReplay(context.Background(), ReplayOptions{
		Title: "t.jsonl", NoColor: true, Width: 100, Height: 20,
		Feed: func(ctx context.Context, tap transport.Tap) error {
			for _, e := range events {
				tap.Observe(e)
			}
			return nil
		},
	})
	t.Cleanup(m.Close)
	tm := teatest.NewTestModel(t, screen{m}, teatest.WithInitialTermSize(100, 20),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.ASCII)))
	// The renderer redraws only the cells that change: wait for rows, and
	// check the rest on the final model.
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		s := ansi.Strip(string(b))
		return strings.Contains(s, "7ms") && strings.Contains(s, `log \e[31mline`)
	}, teatest.WithDuration(10*time.Second))
	tm.Send(keyMsg("/"))
	tm.Type("kind:stderr")
	tm.Send(keyMsg("enter"))
	tm.Send(keyMsg("q"))
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
	if v := ansi.Strip(m.Wire().View()); !strings.Contains(v, "1/1 of 3") {
		t.Errorf("the filter does not apply:\n%s", v)
	}
	if !m.ended {
		t.Error("the feed did not end")
	}
	if n := m.Wire().Store().Len(); n != 3 {
		t.Errorf("rows = %d", n)
	}
}

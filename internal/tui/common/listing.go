package common

import (
	"context"
	"errors"

	tea "charm.land/bubbletea/v2"

	"github.com/mcpi-dev/mcpi/internal/session"
)

// Listing is what a pane listed from the server (prompts, resources,
// templates): the items and the state of the last load. Panes embed it.
type Listing[T any] struct {
	Items   []T
	Loading bool
	LoadErr error
}

// Loaded is one listing fetched for the session generation Gen.
type Loaded[T any] struct {
	Gen   int
	Items []T
	Err   error
}

// Fetch starts a load in a Cmd: list is a session call that follows every
// page. Loading shows only until the first items are in.
func (l *Listing[T]) Fetch(ctx context.Context, gen int, list func(context.Context) ([]T, error)) tea.Cmd {
	l.Loading = l.Items == nil
	return func() tea.Msg {
		items, err := list(ctx)
		return Loaded[T]{Gen: gen, Items: items, Err: err}
	}
}

// Apply takes a finished load of generation gen and reports whether it was
// taken (a load of an older session is not). A failed load keeps the items
// shown, unless it brought some of its own.
func (l *Listing[T]) Apply(m Loaded[T], gen int) bool {
	if m.Gen != gen {
		return false
	}
	l.Loading, l.LoadErr = false, m.Err
	if m.Err == nil || len(m.Items) > 0 {
		l.Items = m.Items
	}
	return true
}

// At returns the item at pos, or nil when pos is out of range.
func (l *Listing[T]) At(pos int) *T {
	if pos < 0 || pos >= len(l.Items) {
		return nil
	}
	return &l.Items[pos]
}

// Incomplete is what a pane's head line adds when its listing stopped
// before the end (the server's cursors went on past the page cap, or came
// round again): the items shown are not the whole list, and the head says
// why. "" for a whole listing.
func Incomplete(err error) string {
	if !errors.Is(err, session.ErrTruncated) {
		return ""
	}
	return " · incomplete: " + Line(err.Error())
}

// Package common is what every component of the TUI shares: the Common
// bundle (styles, keys, clock, logger, the inbox of session events) and
// small text helpers that keep server text safe and within its box.
package common

import (
	"context"
	"log/slog"
	"time"

	"github.com/mcpi-dev/mcpi/internal/collection"
	"github.com/mcpi-dev/mcpi/internal/transport"
	"github.com/mcpi-dev/mcpi/internal/tui/keymap"
	"github.com/mcpi-dev/mcpi/internal/tui/styles"
)

// Common is handed to every component; nothing in the TUI is global.
type Common struct {
	Styles *styles.Styles
	Keys   *keymap.KeyMap
	Logger *slog.Logger
	// Now is the clock; tests stop it so that durations are stable.
	Now func() time.Time
	// Inbox receives what the session reports from its own goroutines.
	Inbox *Inbox
	// SaveDir is where binary content is saved ("" = the working directory).
	SaveDir string
	// Collection is the collection file a call is saved into as a step
	// (the t key); Answers the answers given, for the step's answers.
	Collection string
	Answers    *AnswerLog
	// CollectionServer is the server a new collection file names.
	CollectionServer *collection.Server
	// Ctx lives as long as the program; session calls derive from it.
	Ctx context.Context
	// Tap sees events besides the session's own (an MCP App's messages
	// with mcpi's host): the wire pane and the recording, as the
	// session's do.
	Tap transport.Tap
	// Version is mcpi's.
	Version string
	// OpenURL opens a URL in the person's browser (tests stub it).
	OpenURL func(url string) error
}

// Since returns the time elapsed since t on the Common clock.
func (c *Common) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

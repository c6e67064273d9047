package session

import (
	"context"
	"errors"
	"fmt"

	"github.com/mcpi-dev/mcpi/internal/mcp"
)

// Held is what a client asked of a server beyond the connection itself:
// what a new connection to the server (a restarted stdio server, a TUI's
// ctrl+r, a session's --restart) must be told again, or the person is
// shown state the server no longer has.
type Held struct {
	// LogLevel, when set, is the level asked with logging/setLevel (or,
	// in the modern era, sent in each request's _meta).
	LogLevel mcp.LoggingLevel
	// Subscriptions are the resources subscribed to.
	Subscriptions []string
	// RootsChanged says the roots offered differ from those the server
	// was started with: a legacy server is told to ask for them again.
	RootsChanged bool
}

// Reapplied says what Reapply told the new connection, and what failed.
type Reapplied struct {
	LogLevel      bool
	Subscriptions []string // subscribed again (legacy: resources/subscribe each)
	// Listen is, in the modern era, the resources the caller's
	// subscriptions/listen must name again: the era holds subscriptions
	// in a stream, which belongs to the caller.
	Listen       []string
	RootsChanged bool
	Failed       map[string]error // what could not be applied, by what it was
}

// Summary says what was applied again, for a status line.
func (r Reapplied) Summary() string {
	var parts []string
	if r.LogLevel {
		parts = append(parts, "the log level")
	}
	if n := len(r.Subscriptions) + len(r.Listen); n > 0 {
		parts = append(parts, fmt.Sprintf("%d subscription(s)", n))
	}
	if r.RootsChanged {
		parts = append(parts, "the roots")
	}
	s := ""
	for i, p := range parts {
		switch {
		case i == 0:
		case i == len(parts)-1:
			s += " and "
		default:
			s += ", "
		}
		s += p
	}
	if len(r.Failed) > 0 {
		if s != "" {
			s += "; "
		}
		s += fmt.Sprintf("%d could not be applied again", len(r.Failed))
	}
	return s
}

// Reapply tells a new connection what h holds: the log level, the
// subscriptions (each resources/subscribe again in the legacy era; in the
// modern era they are returned in Listen, for the caller's stream) and a
// change of roots. Everything is tried; what failed is in Failed, and the
// error joins those failures.
func (c *Client) Reapply(ctx context.Context, h Held) (Reapplied, error) {
	r := Reapplied{Failed: map[string]error{}}
	if h.LogLevel != "" {
		if err := c.SetLogLevel(ctx, h.LogLevel); err != nil {
			r.Failed["log level "+string(h.LogLevel)] = err
		} else {
			r.LogLevel = true
		}
	}
	for _, uri := range h.Subscriptions {
		if c.Era() == EraModern {
			r.Listen = append(r.Listen, uri)
			continue
		}
		if err := c.Subscribe(ctx, uri); err != nil {
			r.Failed["subscription to "+uri] = err
		} else {
			r.Subscriptions = append(r.Subscriptions, uri)
		}
	}
	if h.RootsChanged && c.Era() == EraLegacy {
		if err := c.RootsChanged(ctx); err != nil {
			r.Failed["roots"] = err
		} else {
			r.RootsChanged = true
		}
	}
	var errs []error
	for what, err := range r.Failed {
		errs = append(errs, fmt.Errorf("%s: %w", what, err))
	}
	return r, errors.Join(errs...)
}

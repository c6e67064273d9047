package timeline

import (
	"cmp"
	"fmt"

	"github.com/mcpi-dev/mcpi/internal/genai"
	"github.com/mcpi-dev/mcpi/internal/record"
	"github.com/mcpi-dev/mcpi/internal/safetext"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// VerboseTap says server stderr and transport events with say (-v).
// Credentials are redacted by r as in a trace (the screen is shared and
// captured as often as a trace is).
func VerboseTap(r *record.Redactor, say func(format string, args ...any)) transport.Tap {
	return transport.TapFunc(func(e transport.Event) {
		switch e.Kind {
		case transport.KindStderr:
			say("server stderr: %s", safetext.Sanitize(r.String(string(e.Data)), false))
		case transport.KindLifecycle:
			msg := e.Text
			if e.Err != "" {
				msg += ": " + e.Err
			}
			say("transport: %s", safetext.OneLine(r.Text(msg)))
		case transport.KindHTTP:
			if e.HTTP != nil {
				say("http: %s %s -> %s", e.HTTP.Method, safetext.Sanitize(r.URL(e.HTTP.URL), false), safetext.OneLine(r.Text(e.Text+" "+e.Err)))
			}
		case transport.KindModel:
			if t, ok := genai.Decode(e.Data); ok {
				say("model: %s", safetext.OneLine(r.Text(ModelLine(e.Dir, &t))))
			}
		}
	})
}

// ModelLine says a model's turn in a line, for -v.
func ModelLine(dir transport.Direction, t *genai.Turn) string {
	what := t.Op + " " + cmp.Or(t.Tool, t.Model)
	if dir == transport.Outgoing {
		if t.Op == genai.OpChat {
			return fmt.Sprintf("→ %s (%d messages, %d tools)", what, t.Messages, t.Tools)
		}
		return "→ " + what + " " + string(t.Arguments)
	}
	s := "← " + what
	switch {
	case t.Error != "":
		s += ": error: " + t.Error
	case t.Denied:
		s += ": refused"
	}
	if u := t.Usage; u != nil {
		s += fmt.Sprintf(" · %d in / %d out tokens · first token %.0fms · %.0fms", u.InputTokens, u.OutputTokens, t.TTFTMs, t.DurationMs)
	}
	if t.CostUSD > 0 {
		s += fmt.Sprintf(" · $%.4f", t.CostUSD)
	}
	return s
}

package daemon

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/safetext"
)

// EndedError says that the session a command or an attached client used
// has ended, and why.
type EndedError struct{ Msg string }

func (e *EndedError) Error() string { return e.Msg }

// UsageError is a command's mistake the daemon finds (unsubscribing from a
// resource the session is not subscribed to): the command's usage is at
// fault, not the server.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// since says how long ago t was, to the second ("-" for none).
func since(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return time.Since(t).Round(time.Second).String()
}

// quoteData shows the start of what a server sent, made safe to print.
func quoteData(b []byte) string {
	const max = 200
	s := string(b)
	if len(s) > max {
		s = s[:max] + "…"
	}
	return "«" + safetext.Sanitize(s, false) + "»"
}

// SamplingText shows the text of a sampling message's content, one block
// or an array of blocks.
func SamplingText(raw []byte) string {
	var blocks []mcp.Content
	if err := json.Unmarshal(raw, &blocks); err != nil {
		var one mcp.Content
		if json.Unmarshal(raw, &one) != nil {
			return string(raw)
		}
		blocks = []mcp.Content{one}
	}
	var parts []string
	for _, b := range blocks {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		} else {
			parts = append(parts, "["+b.Type+"]")
		}
	}
	return strings.Join(parts, " ")
}

package mcptext

import (
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"
	"sync/atomic"

	"github.com/mcpi-dev/mcpi/internal/iostreams"
	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/safetext"
	"github.com/mcpi-dev/mcpi/internal/schema"
	"github.com/mcpi-dev/mcpi/internal/skills"
)

// CheckStructured warns when structuredContent does not match outputSchema.
func CheckStructured(w io.Writer, tool *mcp.Tool, structured json.RawMessage) {
	if len(structured) == 0 {
		fmt.Fprintf(w, "warning: tool %s declares an outputSchema but returned no structuredContent\n", safetext.Sanitize(tool.Name, false))
		return
	}
	s, err := schema.Compile(tool.OutputSchema)
	if err != nil {
		fmt.Fprintf(w, "warning: tool %s has an invalid outputSchema: %s\n", safetext.Sanitize(tool.Name, false), safetext.OneLine(err.Error()))
		return
	}
	if ps := s.Validate(structured); ps != nil {
		fmt.Fprintf(w, "warning: structuredContent does not match the outputSchema of %s: %s\n", safetext.Sanitize(tool.Name, false), safetext.OneLine(ps.Error()))
	}
}

// ProgressReporter shows progress notifications on stderr: on one line that
// updates itself on a terminal, with -v otherwise. end clears that line.
func ProgressReporter(ios *iostreams.IOStreams, verbose func(string, ...any)) (report func(mcp.ProgressParams), end func()) {
	var shown atomic.Bool
	end = func() {
		if shown.Load() {
			ios.ErrOut.EraseLine()
		}
	}
	return func(p mcp.ProgressParams) {
		msg := fmt.Sprintf("progress %g", p.Progress)
		if p.Total != nil {
			msg += fmt.Sprintf("/%g", *p.Total)
		}
		if p.Message != "" {
			msg += ": " + safetext.OneLine(p.Message)
		}
		if ios.StderrTTY {
			shown.Store(true)
			ios.ErrOut.EraseLine()
			fmt.Fprint(ios.ErrOut, msg)
			return
		}
		verbose("%s", msg)
	}, end
}

// TextRepeats reports whether a text block already carries the structured
// content (servers are asked to include it as text for older clients), so
// that it is not printed twice.
func TextRepeats(blocks []mcp.Content, structured json.RawMessage) bool {
	var want any
	if json.Unmarshal(structured, &want) != nil {
		return false
	}
	// A result whose structured form only wraps its text ({"content":
	// TEXT}, as server-filesystem's read_text_file sends) repeats it too.
	var wrapped *string
	if m, ok := want.(map[string]any); ok && len(m) == 1 {
		for _, v := range m {
			if s, ok := v.(string); ok {
				wrapped = &s
			}
		}
	}
	var texts []string
	for _, b := range blocks {
		var got any
		if b.Type == "text" && json.Unmarshal([]byte(b.Text), &got) == nil && reflect.DeepEqual(got, want) {
			return true
		}
		if b.Type == "text" {
			texts = append(texts, b.Text)
			if wrapped != nil && b.Text == *wrapped {
				return true
			}
		}
	}
	return wrapped != nil && len(texts) > 1 && strings.Join(texts, "") == *wrapped
}

// SayChecks tells w (stderr), in one line, what was verified of a file that
// passed (the error of one that failed says why).
func SayChecks(w io.Writer, v *skills.Verification) {
	if !v.OK() {
		return
	}
	var passed, unchecked []string
	why := ""
	for _, ch := range v.Checks {
		if ch.Status == skills.Passed {
			passed = append(passed, ch.Name)
		} else {
			unchecked = append(unchecked, ch.Name)
			why = ch.Detail
		}
	}
	msg := "verified " + v.File + ": " + strings.Join(passed, ", ")
	if len(unchecked) > 0 {
		msg += "; " + strings.Join(unchecked, ", ") + " unchecked (" + why + ")"
	}
	fmt.Fprintln(w, safetext.OneLine(msg))
}

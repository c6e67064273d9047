package common

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/tidwall/pretty"

	"github.com/mcpi-dev/mcpi/internal/safetext"
	"github.com/mcpi-dev/mcpi/internal/tui/styles"
)

// Line makes server text safe and folds it onto one line.
func Line(s string) string { return safetext.OneLine(s) }

// IndentedLine is Line that keeps the indentation s starts with (a tab as
// four spaces): a traceback's or a compiler's lines stay readable.
func IndentedLine(s string) string {
	body := strings.TrimLeft(s, " \t")
	lead := strings.ReplaceAll(s[:len(s)-len(body)], "\t", "    ")
	if body = Line(body); body == "" {
		return ""
	}
	return lead + body
}

// Block makes server text safe, keeping its lines.
func Block(s string) string { return safetext.Block(s) }

// Truncate cuts s (which may hold styles) to width cells, with an ellipsis.
func Truncate(s string, width int) string {
	if width <= 0 {
		return ""
	}
	return ansi.Truncate(s, width, "…")
}

// Width is the number of cells s takes.
func Width(s string) int { return ansi.StringWidth(s) }

// Pad pads s with spaces to width cells, or truncates it.
func Pad(s string, width int) string {
	w := ansi.StringWidth(s)
	if w > width {
		return Truncate(s, width)
	}
	return s + strings.Repeat(" ", width-w)
}

// Fit makes view exactly width x height: long lines are truncated, short
// ones padded, missing lines added and extra lines dropped.
func Fit(view string, width, height int) string {
	if height <= 0 {
		return ""
	}
	lines := strings.Split(view, "\n")
	if len(lines) > height {
		lines = lines[:height]
	}
	for len(lines) < height {
		lines = append(lines, "")
	}
	for i, l := range lines {
		lines[i] = Pad(l, width)
	}
	return strings.Join(lines, "\n")
}

// Wrap wraps plain (already safe) text to width cells, breaking long words.
func Wrap(s string, width int) []string {
	if width < 1 {
		width = 1
	}
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if ansi.StringWidth(l) <= width {
			out = append(out, l)
			continue
		}
		out = append(out, strings.Split(ansi.Wrap(l, width, ""), "\n")...)
	}
	return out
}

// ByteSize says how big n bytes are, for people.
func ByteSize(n int) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	case n < 1<<30:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	default:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	}
}

// Duration formats d compactly: 850µs, 12ms, 1.25s, 2m05s.
func Duration(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return fmt.Sprintf("%dµs", d.Microseconds())
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.2fs", d.Seconds())
	default:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
}

// PrettyJSON indents raw JSON and colours it when the styles have colour.
// The text is made safe before it is coloured, so escape sequences inside
// strings show as visible escapes and the colours are the only ones on screen.
// Data that is not JSON is shown as safe text.
func PrettyJSON(raw []byte, st *styles.Styles) string {
	if !json.Valid(raw) {
		return Block(string(raw))
	}
	out := Block(string(pretty.Pretty(raw)))
	out = strings.TrimRight(out, "\n")
	if st != nil && st.JSON != nil {
		out = string(pretty.Color([]byte(out), st.JSON))
	}
	return out
}

// CompactJSON returns raw on one line, or the safe text of raw when it is
// not JSON.
func CompactJSON(raw []byte) string {
	return Line(string(pretty.Ugly(raw)))
}

// Plural is "1 resource", "2 resources": n and the word, in the right number.
func Plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// NaturalLess orders strings as people do: the numbers in them by value
// (items/2 before items/10), the rest byte by byte.
func NaturalLess(a, b string) bool {
	for a != "" && b != "" {
		da, db := digits(a), digits(b)
		if da > 0 && db > 0 {
			na, nb := strings.TrimLeft(a[:da], "0"), strings.TrimLeft(b[:db], "0")
			if len(na) != len(nb) {
				return len(na) < len(nb)
			}
			if na != nb {
				return na < nb
			}
			if da != db { // the same value: fewer leading zeros first
				return da < db
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			return a[0] < b[0]
		}
		a, b = a[1:], b[1:]
	}
	return len(a) < len(b)
}

func digits(s string) int {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}

// Annotations describes a content block's or a resource's annotations for
// people: who it is for, how much it matters, when it last changed
// ("for user · priority 0.9 · modified 2025-01-12 15:00"). Unknown members
// are named; what is not an object is shown as it came. "" when none.
func Annotations(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" || string(raw) == "{}" {
		return ""
	}
	var a map[string]json.RawMessage
	if json.Unmarshal(raw, &a) != nil {
		return "annotations " + CompactJSON(raw)
	}
	var parts []string
	if v, ok := a["audience"]; ok {
		var aud []string
		if json.Unmarshal(v, &aud) == nil {
			parts = append(parts, "for "+Line(strings.Join(aud, ", ")))
		} else {
			parts = append(parts, "audience "+CompactJSON(v))
		}
	}
	if v, ok := a["priority"]; ok {
		parts = append(parts, "priority "+CompactJSON(v))
	}
	if v, ok := a["lastModified"]; ok {
		var s string
		if json.Unmarshal(v, &s) == nil {
			if t, err := time.Parse(time.RFC3339, s); err == nil {
				s = t.Format("2006-01-02 15:04 MST")
			}
			parts = append(parts, "modified "+Line(s))
		} else {
			parts = append(parts, "lastModified "+CompactJSON(v))
		}
	}
	var other []string
	for k := range a {
		if k != "audience" && k != "priority" && k != "lastModified" {
			other = append(other, k)
		}
	}
	if len(other) > 0 {
		sort.Strings(other)
		for _, k := range other {
			parts = append(parts, Line(k)+" "+CompactJSON(a[k]))
		}
	}
	return strings.Join(parts, " · ")
}

// TruncateMiddle fits s to width by cutting its middle: the start and the
// end of a long URI both say which one it is (demo://resource/…/document/7).
func TruncateMiddle(s string, width int) string {
	w := Width(s)
	if w <= width {
		return s
	}
	if width < 8 {
		return Truncate(s, width)
	}
	head := width / 3
	tail := width - head - 1
	return ansi.Truncate(s, head, "") + "…" + ansi.TruncateLeft(s, w-tail, "")
}

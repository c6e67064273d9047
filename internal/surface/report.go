package surface

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/mcpi-dev/mcpi/internal/safetext"
)

// Count counts the changes of each class, every class named.
func Count(cs []Change) map[Class]int {
	m := map[Class]int{}
	for _, c := range Classes {
		m[c] = 0
	}
	for _, c := range cs {
		m[c.Class]++
	}
	return m
}

var classTitles = map[Class]string{
	Breaking: "Breaking", PossiblyBreaking: "Possibly breaking",
	NonBreaking: "Non-breaking", Changed: "Changed",
}

func countLine(cs []Change) string {
	n := Count(cs)
	return fmt.Sprintf("%d change(s): %d breaking, %d possibly breaking, %d non-breaking, %d changed",
		len(cs), n[Breaking], n[PossiblyBreaking], n[NonBreaking], n[Changed])
}

// shown is a value of a change as a person reads it: one line, clipped.
func shown(v any) string {
	s, ok := v.(string)
	if !ok {
		b, err := json.Marshal(v)
		if err != nil {
			return ""
		}
		s = string(b)
	}
	s = safetext.OneLine(s)
	if r := []rune(s); len(r) > 200 {
		s = string(r[:200]) + "…"
	}
	return s
}

// WriteText prints the changes grouped by class, each with its
// pointer.
func WriteText(w io.Writer, cs []Change, notes []string) {
	if len(cs) == 0 {
		fmt.Fprintln(w, "no changes")
	} else {
		fmt.Fprintln(w, countLine(cs))
	}
	for _, class := range Classes {
		var of []Change
		for _, c := range cs {
			if c.Class == class {
				of = append(of, c)
			}
		}
		if len(of) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s (%d)\n", classTitles[class], len(of))
		for _, c := range of {
			fmt.Fprintf(w, "  %s: %s\n    %s  [%s]\n", safetext.OneLine(c.Subject), safetext.OneLine(c.Message), safetext.OneLine(c.Pointer), c.Kind)
			if c.Class == Changed && (c.Old != nil || c.New != nil) {
				fmt.Fprintf(w, "    was: %s\n    now: %s\n", shown(c.Old), shown(c.New))
			}
		}
	}
	if len(notes) > 0 {
		fmt.Fprintln(w)
	}
	for _, n := range notes {
		fmt.Fprintf(w, "not compared: %s\n", n)
	}
}

// WriteMarkdown prints the changes for a pull-request comment: what
// the server says is escaped, so that a name or a description renders as
// text and never as markup.
func WriteMarkdown(w io.Writer, cs []Change, notes []string) {
	n := Count(cs)
	fmt.Fprintf(w, "### mcpi diff: ")
	switch {
	case n[Breaking] > 0:
		fmt.Fprintf(w, "%d breaking change(s)\n\n", n[Breaking])
	case len(cs) == 0:
		fmt.Fprintf(w, "no changes\n")
	default:
		fmt.Fprintf(w, "nothing breaking\n\n")
	}
	if len(cs) > 0 {
		fmt.Fprintf(w, "%s\n", countLine(cs))
	}
	for _, class := range Classes {
		if n[class] == 0 {
			continue
		}
		fmt.Fprintf(w, "\n#### %s (%d)\n\n", classTitles[class], n[class])
		for _, c := range cs {
			if c.Class != class {
				continue
			}
			fmt.Fprintf(w, "- **%s**: %s %s `%s`\n", mdEscape(safetext.OneLine(c.Subject)), mdEscape(safetext.OneLine(c.Message)), mdCode(safetext.OneLine(c.Pointer)), c.Kind)
			if c.Class == Changed && (c.Old != nil || c.New != nil) {
				fmt.Fprintf(w, "  - was: %s\n  - now: %s\n", mdEscape(shown(c.Old)), mdEscape(shown(c.New)))
			}
		}
	}
	if len(notes) > 0 {
		fmt.Fprintln(w)
		for _, note := range notes {
			fmt.Fprintf(w, "_Not compared: %s_\n", mdEscape(note))
		}
	}
}

// mdEscape makes text render as itself in Markdown (GitHub's included):
// punctuation that could start markup is backslash-escaped, and <, >, &
// become entities, so no HTML a server wrote reaches the page.
func mdEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '&':
			b.WriteString("&amp;")
		case '\\', '`', '*', '_', '{', '}', '[', ']', '(', ')', '#', '+', '-', '!', '|', '~', '@':
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// mdCode is s as a Markdown code span, whatever backticks it holds.
func mdCode(s string) string {
	run, longest := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if longest > 0 {
		return fence + " " + s + " " + fence
	}
	return fence + s + fence
}

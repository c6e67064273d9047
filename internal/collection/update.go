package collection

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
)

// Update returns the collection's text with the snapshots of the steps in
// texts (by index in File.Steps) set to their new texts, and nothing else
// changed: each snapshot's value is replaced where it is written, the
// file's comments, layout and other steps kept byte for byte. The result
// is parsed again and each new snapshot checked, so a file Update cannot
// write faithfully is refused, not damaged.
func Update(data []byte, f *File, texts map[int]string) ([]byte, error) {
	lines := strings.SplitAfter(string(data), "\n")
	// Replace from the last snapshot up, so that earlier line numbers hold.
	type edit struct {
		from, to int // lines [from, to) replaced, 0-based
		with     []string
	}
	var edits []edit
	for i := len(f.Steps) - 1; i >= 0; i-- {
		text, ok := texts[i]
		if !ok {
			continue
		}
		s := &f.Steps[i]
		if s.SnapshotKey == nil {
			if s.Expect.HasSnapshot {
				return nil, fmt.Errorf("step %d (line %d): its snapshot comes from an alias or a merge (<<): write snapshot: in the step itself for --update", i+1, s.Line)
			}
			return nil, fmt.Errorf("step %d (line %d) has no snapshot to update", i+1, s.Line)
		}
		k := s.SnapshotKey
		row := k.Line - 1
		if row >= len(lines) {
			return nil, fmt.Errorf("line %d: the snapshot is past the end of the file", k.Line)
		}
		line := lines[row]
		indent := k.Column - 1
		if indent > len(line) || strings.TrimSpace(line[:indent]) != "" || !strings.HasPrefix(line[indent:], "snapshot:") {
			return nil, fmt.Errorf("line %d: the snapshot is inside a {flow} mapping: write it as a block, on a line of its own, for --update", k.Line)
		}
		end := row + 1
		for end < len(lines) {
			l := strings.TrimRight(lines[end], "\r\n")
			if strings.TrimSpace(l) != "" && leading(l) <= indent {
				break
			}
			end++
		}
		// Blank lines after the value are the layout's, not the value's,
		// unless a block keeps them (|+).
		header := strings.TrimSpace(strings.TrimPrefix(line[indent:], "snapshot:"))
		keep := (strings.HasPrefix(header, "|") || strings.HasPrefix(header, ">")) && strings.Contains(strings.Fields(header + " x")[0], "+")
		for !keep && end > row+1 && strings.TrimSpace(lines[end-1]) == "" {
			end--
		}
		edits = append(edits, edit{from: row, to: end, with: renderSnapshot(line[:indent], text)})
	}
	for _, e := range edits {
		rest := append([]string{}, lines[e.to:]...)
		lines = append(append(lines[:e.from], e.with...), rest...)
	}
	out := []byte(strings.Join(lines, ""))
	g, err := Parse(out)
	if err != nil {
		return nil, fmt.Errorf("the updated collection does not parse (nothing written): %w", err)
	}
	for i, want := range texts {
		if i >= len(g.Steps) || g.Steps[i].Expect.Snapshot == nil || *g.Steps[i].Expect.Snapshot != want {
			return nil, fmt.Errorf("step %d: the updated snapshot does not read back as written (nothing written)", i+1)
		}
	}
	return out, nil
}

// leading counts a line's leading spaces.
func leading(l string) int {
	return len(l) - len(strings.TrimLeft(l, " "))
}

// renderSnapshot writes `snapshot: TEXT` at indent: a block literal for a
// text of several printable lines, else a JSON string (which YAML reads
// as a double-quoted scalar).
func renderSnapshot(indent, text string) []string {
	if !strings.Contains(text, "\n") || !blockable(text) {
		b, _ := json.Marshal(text)
		return []string{indent + "snapshot: " + string(b) + "\n"}
	}
	body := strings.TrimRight(text, "\n")
	trailing := len(text) - len(body)
	header := "|"
	switch {
	case trailing == 0:
		header = "|-"
	case trailing > 1:
		header = "|+"
	}
	if strings.HasPrefix(body, " ") {
		header = header[:1] + "2" + header[1:]
	}
	out := []string{indent + "snapshot: " + header + "\n"}
	inner := indent + "  "
	for _, l := range strings.Split(body, "\n") {
		if l == "" {
			out = append(out, "\n")
		} else {
			out = append(out, inner+l+"\n")
		}
	}
	for range trailing - 1 {
		out = append(out, "\n")
	}
	return out
}

// blockable reports whether a text can be a block literal: printable, no
// carriage return, no line of spaces only (which YAML would fold away).
func blockable(text string) bool {
	for _, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		if l != "" && strings.TrimSpace(l) == "" {
			return false
		}
		if strings.HasSuffix(l, " ") {
			return false
		}
	}
	for _, r := range text {
		if r == '\n' || r == '\t' {
			continue
		}
		if !unicode.IsPrint(r) || r == '\uFEFF' {
			return false
		}
	}
	return true
}

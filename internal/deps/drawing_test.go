package deps

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// An edge of the rooms' drawing: from imports to.
type edge struct{ from, to string }

var (
	drawnBranch  = regexp.MustCompile(`^(\s*)[├└]──▶ `) // a branch of the command layer's fork
	drawnUnder   = regexp.MustCompile(`^\s*│\s*└─+▶ `)  // a second arrow of the room above
	drawnComment = regexp.MustCompile(`\([^)]*\)`)      // what a room's name is followed by
	drawnApart   = regexp.MustCompile(`\s{3,}`)         // two drawings, or a drawing and its words
	drawnArrow   = regexp.MustCompile(`──┬──▶|──▶`)     // an import
)

// drawnEdges reads the arrows of the drawing in docs/architecture.md's
// "The rooms" section: `A ──▶ B · C ──▶ D` says that A imports B and C,
// and each of them D; `A ◀── B` that B imports A; a branch of the fork
// under cli is cli's; `└──▶` under a branch is the import of that
// branch's room. Words after three spaces or in parentheses are words.
func drawnEdges(t *testing.T, doc string) []edge {
	t.Helper()
	i := strings.Index(doc, "### The rooms, and the one reading of the wire")
	if i < 0 {
		t.Fatal(`docs/architecture.md has no "The rooms" section`)
	}
	block := doc[i:]
	start := strings.Index(block, "```\n")
	end := strings.Index(block[start+4:], "```")
	if start < 0 || end < 0 {
		t.Fatal("the rooms' section has no drawing")
	}
	// The fork's branches start under its ┬.
	fork := -1
	for _, line := range strings.Split(block[start+4:start+4+end], "\n") {
		if i := strings.Index(line, "┬"); i >= 0 && fork < 0 {
			fork = len([]rune(line[:i]))
		}
	}
	var edges []edge
	above := ""
	for _, line := range strings.Split(strings.TrimRight(block[start+4:start+4+end], "\n"), "\n") {
		from := ""
		if m := drawnBranch.FindStringSubmatch(line); m != nil && len(m[1]) == fork {
			from, line = "cli", line[len(m[0]):]
		} else if m := drawnUnder.FindString(line); m != "" {
			from, line = above, line[len(m):]
		}
		first := ""
		for n, part := range drawnApart.Split(strings.TrimSpace(line), -1) {
			part = drawnComment.ReplaceAllString(part, "")
			if a, b, ok := strings.Cut(part, "◀──"); ok {
				edges = append(edges, edge{strings.TrimSpace(b), strings.TrimSpace(a)})
				continue
			}
			if !drawnArrow.MatchString(part) && (n > 0 || from == "") {
				continue // words about the drawing
			}
			var groups [][]string
			if n == 0 && from != "" {
				groups = append(groups, []string{from})
			}
			for _, g := range drawnArrow.Split(part, -1) {
				var names []string
				for _, name := range strings.Split(g, "·") {
					if name = strings.TrimSpace(name); name != "" {
						names = append(names, name)
					}
				}
				groups = append(groups, names)
			}
			for k := 0; k+1 < len(groups); k++ {
				for _, a := range groups[k] {
					for _, b := range groups[k+1] {
						edges = append(edges, edge{a, b})
					}
				}
			}
			if first == "" && len(groups) > 1 && len(groups[1]) > 0 {
				first = groups[1][0]
			}
		}
		above = first
	}
	return edges
}

// TestTheDrawingIsTrue: every arrow drawn in docs/architecture.md's rooms
// is an import the code makes.
func TestTheDrawingIsTrue(t *testing.T) {
	doc, err := os.ReadFile("../../docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	imports := map[string]map[string]bool{}
	for _, p := range listPackages(t) {
		room := strings.TrimPrefix(p.ImportPath, "internal/")
		imports[room] = map[string]bool{}
		for _, imp := range p.Imports {
			imports[room][strings.TrimPrefix(strings.TrimPrefix(imp, module), "internal/")] = true
		}
	}
	edges := drawnEdges(t, string(doc))
	if len(edges) < 40 {
		t.Fatalf("only %d arrows read from the drawing: %v", len(edges), edges)
	}
	for _, e := range edges {
		if _, ok := imports[e.from]; !ok {
			t.Errorf("the drawing names %s, which is no package", e.from)
			continue
		}
		if !imports[e.from][e.to] {
			t.Errorf("the drawing says %s imports %s: it does not", e.from, e.to)
		}
	}
}

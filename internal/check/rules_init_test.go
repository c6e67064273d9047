package check

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpi-dev/mcpi/internal/check/hosts"
)

// TestRulesWithoutInit: the rules are a value built where they are
// declared, the hosts' with the protocol's, no init function filling a
// table behind them; every host rule is listed once and indexed.
func TestRulesWithoutInit(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && fd.Name.Name == "init" {
				t.Errorf("%s: an init function", fset.Position(fd.Pos()))
			}
		}
	}
	listed := map[string]int{}
	for _, r := range Rules() {
		listed[r.ID]++
	}
	for _, h := range hosts.Profiles() {
		for _, r := range h.Rules {
			id := "hosts/" + r.ID
			if listed[id] != 1 || rules[id] == nil {
				t.Errorf("host rule %s: listed %d times, indexed %v", id, listed[id], rules[id] != nil)
			}
		}
	}
}

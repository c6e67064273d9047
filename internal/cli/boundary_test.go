package cli

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// TestOutputBoundary keeps IOStreams.Out, IOStreams.ErrOut (safetext.Writer)
// and the TUI's screen (safetext.Screen) the only ways from mcpi to a
// person: it fails for the first file of the binary that writes to the
// process's streams another way, so a new print path cannot forget to
// sanitise.
func TestOutputBoundary(t *testing.T) {
	// Packages that are not part of the mcpi binary may print as they like.
	notInBinary := []string{"internal/perf/", "internal/mcptest/", "internal/conformance/", "internal/auth/authtest/"}
	// The raw streams, each with the reason it may have them.
	rawStreams := map[string]string{
		"internal/iostreams/iostreams.go": "builds the sinks over the process's streams",
	}
	// Callers of IOStreams.Data and Terminal: exact bytes for programs.
	rawCallers := map[string]string{
		"internal/iostreams/json.go": "WriteRawJSON and the other JSON printers: JSON for a program (not a terminal), every unsafe rune already \\u-escaped",
		"internal/cli/check.go":      "check --sarif to a program: written as it is built, through iostreams.EscapeUnsafe (every unsafe rune \\u-escaped)",
		"internal/cli/proxy.go":      "the host's stdout carries the protocol",
		"internal/cli/replay.go":     "replay --serve: stdout carries the protocol",
		"internal/cli/trace.go":      "trace export: a HAR file, OTLP/JSON",
		"internal/cli/verbs.go":      "read --raw: a resource's bytes, refused on a terminal without --raw-terminal",
		"internal/cli/session.go":    "--session: the bytes the daemon's own Out and ErrOut sinks wrote (and its exact machine output), sent back as they are; the daemon's log, which only its sinks write",
	}
	fset := token.NewFileSet()
	root := filepath.Join("..", "..")
	checked := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := filepath.ToSlash(strings.TrimPrefix(path, root+string(filepath.Separator)))
		if d.IsDir() {
			if strings.HasPrefix(d.Name(), ".") && path != root || d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		for _, p := range notInBinary {
			if strings.HasPrefix(rel, p) {
				return nil
			}
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		checked++
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectorExpr:
				pkg, ok := n.X.(*ast.Ident)
				if !ok {
					return true
				}
				name := pkg.Name + "." + n.Sel.Name
				switch {
				case name == "os.Stdout" || name == "os.Stderr":
					if rawStreams[rel] == "" {
						t.Errorf("%s: %s bypasses the sink: write to IOStreams.Out or ErrOut", fset.Position(n.Pos()), name)
					}
				case pkg.Name == "fmt" && strings.HasPrefix(n.Sel.Name, "Print"),
					pkg.Name == "log" && (strings.HasPrefix(n.Sel.Name, "Print") || strings.HasPrefix(n.Sel.Name, "Fatal") || strings.HasPrefix(n.Sel.Name, "Panic")):
					t.Errorf("%s: %s writes to the process's streams: write to IOStreams.Out or ErrOut", fset.Position(n.Pos()), name)
				case name == "tea.NewProgram" && rel != "internal/tui/program.go":
					t.Errorf("%s: tea.NewProgram outside runProgram: its frames would not cross safetext.Screen", fset.Position(n.Pos()))
				}
			case *ast.CallExpr:
				if id, ok := n.Fun.(*ast.Ident); ok && (id.Name == "print" || id.Name == "println") {
					t.Errorf("%s: %s writes to stderr raw", fset.Position(n.Pos()), id.Name)
				}
				sel, ok := n.Fun.(*ast.SelectorExpr)
				if ok && len(n.Args) == 0 && (sel.Sel.Name == "Data" || sel.Sel.Name == "ErrData" || sel.Sel.Name == "Terminal") &&
					(strings.HasPrefix(rel, "internal/cli/") || strings.HasPrefix(rel, "internal/iostreams/")) &&
					rel != "internal/iostreams/iostreams.go" && rawCallers[rel] == "" {
					t.Errorf("%s: %s() is the raw stream, for exact machine output only: add the file to rawCallers with its reason, or write to Out", fset.Position(n.Pos()), sel.Sel.Name)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("only %d files checked: the walk missed the module", checked)
	}
}

// TestPathBoundary keeps IOStreams.Path the one way from a path a user
// gave to the file system: a live session's daemon runs commands given in
// other directories, so a command that opens a relative path itself would
// open the daemon's file. It fails for the first call in internal/cli (or
// internal/iostreams, whose printers the commands print through) that
// opens, creates or resolves a path not passed through Path (internal/command's files, which every command shares, included), outside the
// functions below, each with its reason.
func TestPathBoundary(t *testing.T) {
	fsCalls := map[string]bool{
		"os.Open": true, "os.OpenFile": true, "os.ReadFile": true, "os.WriteFile": true, "os.Create": true,
		"os.CreateTemp": true, "os.MkdirAll": true, "os.Mkdir": true, "os.ReadDir": true, "os.Stat": true,
		"os.Remove": true, "filepath.Abs": true, "roots.Parse": true, "record.Create": true, "record.Open": true,
	}
	allowed := map[string]string{
		"replay.go:replayTUI":             "replay runs in no session",
		"replay.go:replayPrint":           "replay runs in no session",
		"filter.go:replayLatency":         "replay runs in no session",
		"trace.go:traceExportRun":         "trace runs in no session",
		"trace.go:write":                  "trace runs in no session",
		"iostreams/content.go:save":       "the printer's Dir went through Path where the printer was made",
		"command/export.go:StartTrace":    "--record belongs to the connection: no command in a session takes it, and session start's daemon runs where start was typed",
		"command/grant.go:readSecretFile": "a connection's credential: read by session start's daemon, which runs where start was typed",
		"command/grant.go:fileOrEnv":      "a connection's credential: read by session start's daemon, which runs where start was typed",
	}
	used := map[string]bool{}
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	// The printers the commands print through open what they are given.
	printers, err := filepath.Glob("../iostreams/*.go")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, printers...)
	// What every command shares (the connection, its trace and
	// credentials) is of the command layer too.
	shared, err := filepath.Glob("../command/*.go")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, shared...)
	checked := 0
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			where := strings.TrimPrefix(file, "../") + ":" + fd.Name.Name
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				pkg, ok := sel.X.(*ast.Ident)
				if !ok || !fsCalls[pkg.Name+"."+sel.Sel.Name] {
					return true
				}
				if allowed[where] != "" {
					used[where] = true
					return true
				}
				if len(call.Args) > 0 {
					if inner, ok := call.Args[0].(*ast.CallExpr); ok {
						if s, ok := inner.Fun.(*ast.SelectorExpr); ok && s.Sel.Name == "Path" {
							return true
						}
					}
				}
				t.Errorf("%s (%s): %s.%s of a path that did not go through IOStreams.Path: in a live session it would name the daemon's file", fset.Position(call.Pos()), where, pkg.Name, sel.Sel.Name)
				return true
			})
		}
	}
	if checked < 20 {
		t.Fatalf("only %d files checked", checked)
	}
	for where := range allowed {
		if !used[where] {
			t.Errorf("%s is allowed to open paths but opens none: remove it from the list", where)
		}
	}
}

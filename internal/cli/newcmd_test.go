package cli

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mcpi-dev/mcpi/internal/command"
)

// commandGroups are the constructors of commands that only hold others
// (and the help topic agents, which runs nothing): they take no runF.
var commandGroups = map[string]string{
	"NewCmdRoot":    "the root",
	"newCmdRoot":    "the root, built for one command",
	"NewCmdAuth":    "groups auth list and logout",
	"NewCmdSession": "groups the session commands",
	"NewCmdTasks":   "groups the tasks verbs",
	"NewCmdTrace":   "groups trace export",
	"NewCmdAgents":  "a help topic: mcpi help agents",
}

// TestEveryCommandTakesRunF keeps one way of building a command: every
// constructor, NewCmdX (or newCmdX), but the groups above takes the
// Factory first and runF func(context.Context, *XOptions) error last,
// returns a *cobra.Command, and its RunE hands the parsed options to runF
// when it is given (tests), to xRun otherwise.
func TestEveryCommandTakesRunF(t *testing.T) {
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	optionTypes := map[string]bool{}
	var ctors []*ast.FuncDecl
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.GenDecl:
				for _, s := range d.Specs {
					if ts, ok := s.(*ast.TypeSpec); ok {
						if _, ok := ts.Type.(*ast.StructType); ok && strings.HasSuffix(ts.Name.Name, "Options") {
							optionTypes[ts.Name.Name] = true
						}
					}
				}
			case *ast.FuncDecl:
				if d.Recv == nil && (strings.HasPrefix(d.Name.Name, "NewCmd") || strings.HasPrefix(d.Name.Name, "newCmd")) {
					ctors = append(ctors, d)
				}
			}
		}
	}
	seen := map[string]bool{}
	leaves := 0
	for _, fd := range ctors {
		name, where := fd.Name.Name, fset.Position(fd.Pos())
		seen[name] = true
		if !returnsCommand(fd) {
			t.Errorf("%s: %s does not return a *cobra.Command", where, name)
		}
		params := fd.Type.Params.List
		if commandGroups[name] != "" {
			for _, p := range params {
				if isRunF(p) {
					t.Errorf("%s: %s is listed as a group but takes a runF: remove it from commandGroups", where, name)
				}
			}
			continue
		}
		leaves++
		if len(params) == 0 || types(params[0]) != "*command.Factory" {
			t.Errorf("%s: %s must take the *Factory first", where, name)
		}
		last := params[len(params)-1]
		if !isRunF(last) {
			t.Errorf("%s: %s must take runF func(context.Context, *XOptions) error last", where, name)
			continue
		}
		opts := last.Type.(*ast.FuncType).Params.List[1].Type.(*ast.StarExpr).X.(*ast.Ident).Name
		if !optionTypes[opts] {
			t.Errorf("%s: %s's runF takes *%s, which is not an Options struct of this package", where, name, opts)
		}
		if !callsRunF(fd) {
			t.Errorf("%s: %s never checks runF != nil nor gives it to runE: its RunE must hand the options to runF when given", where, name)
		}
	}
	for name := range commandGroups {
		if !seen[name] {
			t.Errorf("commandGroups lists %s, which is gone", name)
		}
	}
	if leaves < 35 {
		t.Errorf("only %d command constructors found: the walk missed some", leaves)
	}
}

func returnsCommand(fd *ast.FuncDecl) bool {
	r := fd.Type.Results
	return r != nil && len(r.List) == 1 && types(r.List[0]) == "*cobra.Command"
}

// isRunF reports a parameter runF func(context.Context, *X) error.
func isRunF(p *ast.Field) bool {
	ft, ok := p.Type.(*ast.FuncType)
	if !ok || len(p.Names) != 1 || p.Names[0].Name != "runF" {
		return false
	}
	if len(ft.Params.List) != 2 || ft.Results == nil || len(ft.Results.List) != 1 || types(ft.Results.List[0]) != "error" {
		return false
	}
	if types(ft.Params.List[0]) != "context.Context" {
		return false
	}
	star, ok := ft.Params.List[1].Type.(*ast.StarExpr)
	if !ok {
		return false
	}
	_, ok = star.X.(*ast.Ident)
	return ok
}

// types is the text of a field's type, for the simple types above.
func types(p *ast.Field) string {
	var text func(e ast.Expr) string
	text = func(e ast.Expr) string {
		switch e := e.(type) {
		case *ast.Ident:
			return e.Name
		case *ast.StarExpr:
			return "*" + text(e.X)
		case *ast.SelectorExpr:
			return text(e.X) + "." + e.Sel.Name
		}
		return "?"
	}
	return text(p.Type)
}

// callsRunF reports whether fd's body tests runF != nil.
func callsRunF(fd *ast.FuncDecl) bool {
	found := false
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		// command.RunE(opts, runF, xRun), command.CheckedRunE and
		// sessionRunE check it for the command.
		if c, ok := n.(*ast.CallExpr); ok && len(c.Args) >= 3 {
			if f, ok := c.Fun.(*ast.SelectorExpr); ok && (f.Sel.Name == "RunE" || f.Sel.Name == "CheckedRunE") || isIdent(c.Fun, "sessionRunE") {
				if a, ok := c.Args[len(c.Args)-2].(*ast.Ident); ok && a.Name == "runF" {
					found = true
				}
			}
		}
		if b, ok := n.(*ast.BinaryExpr); ok && b.Op == token.NEQ {
			if x, ok := b.X.(*ast.Ident); ok && x.Name == "runF" {
				if y, ok := b.Y.(*ast.Ident); ok && y.Name == "nil" {
					found = true
				}
			}
		}
		return !found
	})
	return found
}

// isIdent reports whether e is the identifier name.
func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}

// The tests below parse a command line through runF, as cli/cli's
// TestNewCmdClose does: what the command would run with, and no server.

// readWant is what TestReadFlags checks of ReadOptions.
type readWant struct {
	URI, Save string
	Raw, Dir  bool
}

func TestReadFlags(t *testing.T) {
	for _, tc := range []struct {
		name    string
		argv    []string
		wantErr string
		want    readWant
	}{
		{name: "uri and stdio server", argv: []string{"demo://text/hello", "--save", "out", "--", "mcpi", "demo-server"},
			want: readWant{URI: "demo://text/hello", Save: "out"}},
		{name: "a URI resource before the server URL", argv: []string{"https://example.com/doc", "http://127.0.0.1:1/mcp", "--raw"},
			want: readWant{URI: "https://example.com/doc", Raw: true}},
		{name: "dir", argv: []string{"--dir", "skill://pdf", "--session", "s"}, want: readWant{URI: "skill://pdf", Dir: true}},
		{name: "no uri", argv: []string{"--", "srv"}, wantErr: "missing the resource URI"},
		{name: "two uris", argv: []string{"a://x", "b://y", "--", "srv"}, wantErr: `unexpected argument "b://y"`},
		{name: "dir and raw", argv: []string{"--dir", "--raw", "a://x", "--", "srv"}, wantErr: "--dir lists"},
		{name: "raw and json", argv: []string{"--raw", "--json", "a://x", "--", "srv"}, wantErr: "--raw writes"},
		{name: "raw-terminal alone", argv: []string{"--raw-terminal", "a://x", "--", "srv"}, wantErr: "--raw-terminal goes with --raw"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseArgs(NewCmdRead, tc.argv)
			if !errorLike(t, err, tc.wantErr) {
				return
			}
			if g := (readWant{URI: got.URI, Save: got.Save, Raw: got.Raw, Dir: got.Dir}); g != tc.want {
				t.Errorf("got %+v, want %+v", g, tc.want)
			}
		})
	}
	got, err := parseArgs(NewCmdRead, []string{"a://x", "http://127.0.0.1:1/mcp", "-H", "X-A: 1", "--timeout", "2s"})
	if err != nil {
		t.Fatal(err)
	}
	if got.Target.URL != "http://127.0.0.1:1/mcp" || !reflect.DeepEqual(got.Target.Headers, []string{"X-A: 1"}) || got.Target.Timeout != 2*time.Second {
		t.Errorf("target %+v", got.Target)
	}
}

func TestTailFlags(t *testing.T) {
	t.Setenv(command.SessionEnv, "")
	got, err := parseArgs(NewCmdTail, []string{"--session", "demo", "--wire", "--json"})
	if err != nil {
		t.Fatal(err)
	}
	if got.Target.Session != "demo" || !got.Wire || !got.JSON {
		t.Errorf("options %+v", got)
	}
	for _, tc := range []struct {
		name, env string
		argv      []string
		wantErr   string
	}{
		{name: "no session", argv: []string{"--wire"}, wantErr: "runs in a live session: give --session"},
		{name: "an argument", argv: []string{"--session", "demo", "x"}, wantErr: "unknown command"},
		{name: "bad name", argv: []string{"--session", "../x"}, wantErr: "session"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseArgs(NewCmdTail, tc.argv)
			errorLike(t, err, tc.wantErr)
		})
	}
	t.Setenv(command.SessionEnv, "fromenv")
	got, err = parseArgs(NewCmdTail, nil)
	if err != nil || got.Target.Session != "fromenv" {
		t.Errorf("$%s: options %+v, error %v", command.SessionEnv, got, err)
	}
}

func TestAnswerFlags(t *testing.T) {
	t.Setenv(command.SessionEnv, "")
	for _, tc := range []struct {
		name    string
		argv    []string
		wantErr string
		check   func(t *testing.T, o *AnswerOptions)
	}{
		{name: "sampling", argv: []string{"#3", "--sampling-reply", "Paris", "--session", "demo"},
			check: func(t *testing.T, o *AnswerOptions) {
				if o.ID != 3 || o.SamplingReply != "Paris" || o.Target.Session != "demo" {
					t.Errorf("options %+v", o)
				}
			}},
		{name: "elicit fields accept", argv: []string{"2", "--elicit-field", "name=Ada", "--session", "demo"},
			check: func(t *testing.T, o *AnswerOptions) {
				if o.ID != 2 || o.Elicit != "accept" || !reflect.DeepEqual(o.ElicitFields, []string{"name=Ada"}) {
					t.Errorf("options %+v", o)
				}
			}},
		{name: "decline", argv: []string{"1", "--decline", "--session", "demo"},
			check: func(t *testing.T, o *AnswerOptions) {
				if !o.Decline || o.Cancel {
					t.Errorf("options %+v", o)
				}
			}},
		{name: "no answer", argv: []string{"1", "--session", "demo"}, wantErr: "give the answer"},
		{name: "two answers", argv: []string{"1", "--decline", "--cancel", "--session", "demo"}, wantErr: "give one answer"},
		{name: "bad id", argv: []string{"x", "--decline", "--session", "demo"}, wantErr: `invalid ID "x"`},
		{name: "no id", argv: []string{"--decline", "--session", "demo"}, wantErr: "give one ID"},
		{name: "bad elicit", argv: []string{"1", "--elicit", "maybe", "--session", "demo"}, wantErr: "invalid --elicit"},
		{name: "no session", argv: []string{"1", "--decline"}, wantErr: "runs in a live session"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseArgs(NewCmdAnswer, tc.argv)
			if errorLike(t, err, tc.wantErr) && tc.check != nil {
				tc.check(t, got)
			}
		})
	}
}

func TestServersFlags(t *testing.T) {
	got, err := parseArgs(NewCmdServers, []string{"--config", "x.json", "--json"})
	if err != nil {
		t.Fatal(err)
	}
	if got.Config != "x.json" || !got.JSON || got.IO == nil {
		t.Errorf("options %+v", got)
	}
	if _, err := parseArgs(NewCmdServers, []string{"extra"}); err == nil {
		t.Error("an argument was taken")
	}
}

func TestTraceExportFlags(t *testing.T) {
	got, err := parseArgs(NewCmdTraceExport, []string{"--har", "t.jsonl", "-o", "t.har"})
	if err != nil {
		t.Fatal(err)
	}
	if got.Trace != "t.jsonl" || !got.HAR || got.Output != "t.har" {
		t.Errorf("options %+v", got)
	}
	_, err = parseArgs(NewCmdTraceExport, []string{"t.jsonl"})
	errorLike(t, err, "say which format: --har")
	_, err = parseArgs(NewCmdTraceExport, []string{"--har"})
	errorLike(t, err, "accepts 1 arg")
}

// errorLike checks that err holds want ("": no error), and reports
// whether the command parsed.
func errorLike(t *testing.T, err error, want string) bool {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Fatalf("error %v", err)
	case want != "" && err == nil:
		t.Fatalf("no error, want %q", want)
	case want != "" && !strings.Contains(err.Error(), want):
		t.Fatalf("error %v, want %q", err, want)
	}
	return err == nil
}

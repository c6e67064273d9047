package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpi-dev/mcpi/internal/collection"
	"github.com/mcpi-dev/mcpi/internal/command"
	"github.com/mcpi-dev/mcpi/internal/mcptest"
)

func writeCollection(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// passing has a step of each kind, answers, captures and every kind of
// expectation, and all hold against the demo server.
const passing = `# every kind of step against the demo server
steps:
  - call: add
    args: {a: 2, b: 3}
    expect:
      isError: false
      path:
        structuredContent.sum: {equals: 5}
        /content/0/text: {contains: sum}
      outputSchema: true
      count: 1
      maxDuration: 30s
    capture: {sum: structuredContent.sum}
  - name: echo what add said
    call: echo
    args: {text: "sum=${sum} home=${MCPI_TEST_HOME}"}
    expect: {text: {equals: "sum=5 home=/h"}}
  - call: fail
    expect: {isError: true, text: {matches: "always fails"}}
  - prompt: greet
    args: {name: Ada}
    expect: {text: {contains: Ada}, count: 1}
  - read: demo://text/hello
    expect: {text: {matches: "(?i)hello"}}
  - request: tools/list
    expect: {path: {"tools[0].name": {matches: "^[a-z_]+$"}}}
  - call: sample
    args: {prompt: "What is 2+2?"}
    answers: {sampling: "four"}
    # the model the TUI's replies name too: a call saved there replays here
    expect: {text: {matches: 'four[\s\S]*model "mcpi-user"'}}
  - call: elicit
    answers: {elicit: accept, fields: {name: Bob, age: 7}}
    expect: {text: {matches: '"name": "Bob"'}}
  - call: elicit
    answers: {elicit: decline}
    expect: {text: {contains: decline}}
  - complete: {prompt: greet, argument: style, value: ""}
    expect: {text: {equals: "casual\nformal\npirate"}, count: 3}
  - call: no_such_tool
    expect: {error: {code: -32602, message: {contains: no_such_tool}}}
  - call: list_roots
    answers: {roots: ["${MCPI_TEST_ROOT}"]}
    expect: {text: {contains: "1 root(s)"}}
`

func TestTestPasses(t *testing.T) {
	t.Setenv("MCPI_TEST_HOME", "/h")
	t.Setenv("MCPI_TEST_ROOT", t.TempDir())
	path := writeCollection(t, passing)
	out, _ := runCLIExit(t, command.ExitOK, with(peerArgs("demo"), "test", path)...)
	wantIn(t, "stdout", out, "ok   call add (", "ok   echo what add said", "ok   prompt greet", "ok   read demo://text/hello", "ok   request tools/list", "ok   call sample", "ok   complete prompt greet style", "ok   call no_such_tool", "ok   call list_roots", "12 passed, 0 failed")
}

// failing has, for each kind of expectation, a step it fails.
const failing = `steps:
  - call: add
    args: {a: 2, b: 3}
    expect: {path: {structuredContent.sum: {equals: 6}}}
  - call: echo
    args: {text: hello}
    expect: {text: {equals: bye}}
  - call: echo
    args: {text: hello}
    expect: {text: {contains: bye}, count: 2}
  - call: echo
    args: {text: hello}
    expect: {isError: true, outputSchema: true}
  - call: fail
    expect: {text: {matches: "^ok$"}, isError: false}
  - call: no_such_tool
  - read: demo://text/hello
    expect: {path: {/contents/0/uri: {equals: "demo://other"}}}
  - call: elicit
    answers: {elicit: accept, fields: {age: 900}}
  - call: echo
    args: {text: "${never_captured}"}
  - call: echo
    args: {text: quick}
    expect: {maxDuration: 1ns}
  - call: echo
    args: {text: still runs}
    expect: {text: {equals: still runs}}
  - complete: {prompt: greet, argument: style, value: ""}
    expect: {count: 2}
  - call: no_such_tool
    expect: {error: {code: -32601}}
  - call: echo
    args: {text: hi}
    expect: {error: {message: {contains: unknown}}}
  - call: list_roots
    answers: {roots: [/nonexistent/mcpi/root]}
  - call: add
    args: {a: two, b: 3}
`

func TestTestFails(t *testing.T) {
	path := writeCollection(t, failing)
	out, _ := runCLIExit(t, command.ExitToolError, with(peerArgs("demo"), "test", path)...)
	wantIn(t, "stdout", out,
		"FAIL call add", "structuredContent.sum: expected 6, got 5", "expected: 6", "actual:   5",
		`text: expected "bye", got "hello"`,
		`text: expected to contain "bye", got "hello"`, "count of content: expected 2, got 1",
		"isError: expected true, got false", "outputSchema: the tool declares no outputSchema",
		"isError: expected false, got true", `text: expected to match /^ok$/`,
		"FAIL call no_such_tool", "the request failed",
		`/contents/0/uri: expected "demo://other", got "demo://text/hello"`,
		"answers: the fields do not fit the form",
		"no value for never_captured",
		"more than maxDuration 1ns", "FAIL call echo (",
		"ok   call echo", "count of completion.values: expected 2, got 3",
		"error.code: expected -32601, got -32602", `expected a JSON-RPC error, got a result: {"content":`,
		"answers: roots:", `actual:   root "/nonexistent/mcpi/root": "/nonexistent/mcpi/root" does not exist`,
		"args: do not match the inputSchema of add", "1 passed, 15 failed",
	)
}

// jsonReport is the --json document of mcpi test.
type jsonReport struct {
	OK             bool
	Passed, Failed int
	Updated        int
	Files          []struct {
		File  string
		OK    bool
		Error string
		Steps []struct {
			Name     string
			OK       bool
			Failures []collection.Failure
		}
	}
}

func TestTestJSON(t *testing.T) {
	path := writeCollection(t, "steps:\n  - call: echo\n    args: {text: hi}\n    expect: {text: {equals: ho}}\n")
	out, _ := runCLIExit(t, command.ExitToolError, with(peerArgs("demo"), "test", "--json", path)...)
	var doc jsonReport
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if doc.OK || doc.Failed != 1 || len(doc.Files) != 1 || len(doc.Files[0].Steps) != 1 {
		t.Fatalf("doc = %+v", doc)
	}
	f := doc.Files[0].Steps[0].Failures
	if len(f) != 1 || f[0].Path != "text" || f[0].Expected != `"ho"` || f[0].Actual != `"hi"` {
		t.Errorf("failures = %+v", f)
	}
}

// TestTestFileServer: a file that names its server runs without a TARGET.
func TestTestFileServer(t *testing.T) {
	t.Setenv(mcptest.PeerEnv, "demo")
	exe, _ := json.Marshal(os.Args[0])
	path := writeCollection(t, "server:\n  command: ["+string(exe)+", \"-test.run=^$\"]\nsteps:\n  - call: echo\n    args: {text: hi}\n    expect: {text: {equals: hi}}\n")
	code, out, errOut := runCLI(t, "", "test", path)
	if code != command.ExitOK || !strings.Contains(out, "1 passed, 0 failed") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
}

func TestTestExitCodes(t *testing.T) {
	ok := writeCollection(t, "steps: [{call: echo}]\n")
	var bomb strings.Builder
	bomb.WriteString("a: &a [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 'b'; i <= 'h'; i++ {
		bomb.WriteString(string(i) + ": &" + string(i) + " [" + strings.Repeat("*"+string(i-1)+", ", 9) + "*" + string(i-1) + "]\n")
	}
	bomb.WriteString("steps: [{call: echo}]\n")
	bombFile := writeCollection(t, bomb.String())
	for _, tt := range []struct {
		name string
		args []string
		code command.ExitCode
		err  string
	}{
		{"no file", with(peerArgs("demo"), "test"), command.ExitUsage, "missing the collection FILE"},
		{"no server", []string{"test", ok}, command.ExitUsage, "names no server"},
		{"missing file", with(peerArgs("demo"), "test", filepath.Join(t.TempDir(), "none.yaml")), command.ExitUsage, "no such file"},
		{"yaml bomb", with(peerArgs("demo"), "test", bombFile), command.ExitUsage, "expands to more than"},
		{"unreachable", []string{"test", ok, "--", filepath.Join(t.TempDir(), "no-such-server")}, command.ExitConnect, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, "", tt.args...)
			if code != tt.code || !strings.Contains(errOut, tt.err) {
				t.Errorf("exit %d, want %d; stderr lacks %q?\n%s\n%s", code, tt.code, tt.err, out, errOut)
			}
		})
	}
}

func TestTestArgs(t *testing.T) {
	ios, _, _, _ := command.Test()
	f := &command.Factory{IO: ios}
	for _, tt := range []struct {
		args   []string
		files  []string
		target bool
	}{
		{[]string{"a.yaml", "b.yaml"}, []string{"a.yaml", "b.yaml"}, false},
		{[]string{"a.yaml", "http://localhost:1/mcp"}, []string{"a.yaml"}, true},
		{[]string{"a.yaml", "--", "srv", "x"}, []string{"a.yaml"}, true},
	} {
		var got *TestOptions
		cmd := NewCmdTest(f, func(_ context.Context, o *TestOptions) error { got = o; return nil })
		cmd.SetArgs(tt.args)
		if err := cmd.Execute(); err != nil {
			t.Fatalf("%v: %v", tt.args, err)
		}
		if strings.Join(got.Files, " ") != strings.Join(tt.files, " ") || got.cliTarget != tt.target {
			t.Errorf("%v: files %v target %v", tt.args, got.Files, got.cliTarget)
		}
	}
}

// TestTestBadFileAmongGood: a file that cannot be parsed is said once,
// named once, and the summary says a file did not run; the good file
// still runs.
func TestTestBadFileAmongGood(t *testing.T) {
	bad := writeCollection(t, "steps:\n  - call: echo\n    expct: {}\n")
	good := writeCollection(t, "steps:\n  - call: echo\n    args: {text: hi}\n")
	code, out, errOut := runCLI(t, "", with(peerArgs("demo"), "test", bad, good)...)
	if code != command.ExitUsage || !strings.Contains(out, "1 passed, 0 failed, 1 file(s) could not be read (stderr says why)\n") {
		t.Errorf("exit %d\n%s", code, out)
	}
	if strings.Count(errOut, bad) != 1 || !strings.Contains(errOut, `unknown key "expct"`) {
		t.Errorf("stderr %q", errOut)
	}
}

// TestDocsExamplePasses: the example of docs/test.md passes every step
// against the demo server it names.
func TestDocsExamplePasses(t *testing.T) {
	doc, err := os.ReadFile("../../docs/test.md")
	if err != nil {
		t.Fatal(err)
	}
	const open = "```yaml\n# smoke.yaml"
	i := strings.Index(string(doc), open)
	j := strings.Index(string(doc[i+len(open):]), "```")
	if i < 0 || j < 0 {
		t.Fatal("docs/test.md has no smoke.yaml example")
	}
	example := string(doc[i+len("```yaml\n") : i+len(open)+j])
	if !strings.Contains(example, "command: [mcpi, demo-server]") {
		t.Fatalf("the example does not name the demo server:\n%s", example)
	}
	n := strings.Count(example, "\n  - ")
	code, out, errOut := runCLI(t, "", with(peerArgs("demo"), "test", writeCollection(t, example))...)
	if code != command.ExitOK || !strings.Contains(out, fmt.Sprintf("%d passed, 0 failed", n)) {
		t.Errorf("exit %d\n%s\n%s", code, out, errOut)
	}
}

// In a live session a step's answered roots are the session's while the
// step runs (the server asks the session), and the session's own roots
// come back after it.
func TestTestInSessionLendsItsRoots(t *testing.T) {
	t.Parallel()
	dir := liveDir(t)
	root := t.TempDir()
	startSession(t, dir, "rt", peerArgs("demo")...)
	path := writeCollection(t, "steps:\n  - call: list_roots\n    answers: {roots: [\""+root+"\"]}\n    expect: {text: {contains: \"1 root(s)\"}}\n")
	code, out, errOut := runLive(t, dir, nil, "test", path, "--session", "rt")
	if code != command.ExitOK || !strings.Contains(out, "ok   call list_roots") {
		t.Fatalf("test in the session: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut = runLive(t, dir, nil, "roots", "--session", "rt", "--json")
	if code != command.ExitOK || strings.Contains(out, root) {
		t.Fatalf("the session's roots after the step: exit %d\n%s\n%s", code, out, errOut)
	}
}

package collection

import (
	"errors"
	"strings"
	"testing"
	"time"
)

const example = `
# a comment
server:
  command: [mcpi, demo-server]
steps:
  - call: add
    args: {a: 2, b: 3}
    expect:
      isError: false
      path:
        structuredContent.sum: {equals: 5}
        /content/0/text: {matches: '"sum"'}
      outputSchema: true
      count: 1
      maxDuration: 2s
    capture: {sum: structuredContent.sum}
  - name: echo the sum
    call: echo
    args:
      text: |
        sum=${sum}
    expect:
      text: {contains: "sum=5"}
  - prompt: hello
    args: {name: Ada}
  - read: demo://text/hello
  - request: tools/list
    params: {}
    answers: {sampling: hi, elicit: accept, fields: {name: x}}
`

func TestParse(t *testing.T) {
	f, err := Parse([]byte(example))
	if err != nil {
		t.Fatal(err)
	}
	if got := f.Server.Command; len(got) != 2 || got[1] != "demo-server" {
		t.Errorf("server command = %v", got)
	}
	if len(f.Steps) != 5 {
		t.Fatalf("%d steps", len(f.Steps))
	}
	s := f.Steps[0]
	if s.Kind() != KindCall || s.Title() != "call add" || s.Line != 6 {
		t.Errorf("step 1: kind %s title %q line %d", s.Kind(), s.Title(), s.Line)
	}
	if len(s.Expect.Path) != 2 || s.Expect.Path[0].Path != "structuredContent.sum" || !s.Expect.Path[0].Match.HasEquals() {
		t.Errorf("paths = %+v", s.Expect.Path)
	}
	if time.Duration(s.Expect.MaxDuration) != 2*time.Second || *s.Expect.Count != 1 || !s.Expect.OutputSchema {
		t.Errorf("expect = %+v", s.Expect)
	}
	if f.Steps[1].Title() != "echo the sum" || f.Steps[2].Kind() != KindPrompt || f.Steps[3].Kind() != KindRead || f.Steps[4].Kind() != KindRequest {
		t.Error("kinds")
	}
	if a := f.Steps[4].Answers; a == nil || a.Sampling != "hi" || a.Fields["name"] != "x" {
		t.Errorf("answers = %+v", a)
	}
}

func TestParseRefuses(t *testing.T) {
	for name, doc := range map[string]string{
		"empty":            ``,
		"not a mapping":    `[1, 2]`,
		"no steps":         `server: {url: http://x}`,
		"two servers":      "server: {url: http://x, config: y}\nsteps: [{call: echo}]",
		"two kinds":        `steps: [{call: echo, read: x}]`,
		"no kind":          `steps: [{name: x}]`,
		"unknown key":      `steps: [{call: echo, expct: {}}]`,
		"unknown expect":   `steps: [{call: echo, expect: {txt: {equals: x}}}]`,
		"unknown match":    `steps: [{call: echo, expect: {text: {equal: x}}}]`,
		"bad regexp":       `steps: [{call: echo, expect: {text: {matches: "("}}}]`,
		"bad duration":     `steps: [{call: echo, expect: {maxDuration: soon}}]`,
		"args on read":     `steps: [{read: x, args: {a: 1}}]`,
		"params on call":   `steps: [{call: x, params: {a: 1}}]`,
		"bad elicit":       `steps: [{call: x, answers: {elicit: maybe}}]`,
		"schema on read":   `steps: [{read: x, expect: {outputSchema: true}}]`,
		"bad capture name": `steps: [{call: x, capture: {"a-b": content}}]`,
		"bad path":         `steps: [{call: x, expect: {path: {"content[x]": {equals: 1}}}}]`,
	} {
		if _, err := Parse([]byte(doc)); err == nil {
			t.Errorf("%s: parsed", name)
		}
	}
}

// TestYAMLBomb: a billion laughs is refused, and quickly.
func TestYAMLBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString("a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
	for i := 1; i < 10; i++ {
		b.WriteString("a" + string(rune('0'+i)) + ": &a" + string(rune('0'+i)) + " [")
		for j := 0; j < 9; j++ {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString("*a" + string(rune('0'+i-1)))
		}
		b.WriteString("]\n")
	}
	b.WriteString("steps: [{call: echo, args: {x: *a9}}]\n")
	parsed := make(chan error, 1)
	go func() {
		_, err := Parse([]byte(b.String()))
		parsed <- err
	}()
	var err error
	select {
	case err = <-parsed:
	case <-time.After(30 * time.Second):
		t.Fatal("the bomb is still being expanded: it was not refused at its first aliases")
	}
	if err == nil || !strings.Contains(err.Error(), "expands") {
		t.Fatalf("err = %v", err)
	}
	// A few aliases that do not expand much are fine.
	if _, err := Parse([]byte("steps:\n  - call: echo\n    args: &a {text: hi}\n  - call: echo\n    args: *a\n")); err != nil {
		t.Errorf("small aliases: %v", err)
	}
}

func TestTooLarge(t *testing.T) {
	big := "steps: [{call: echo}]\n#" + strings.Repeat("x", MaxFileSize)
	if _, err := Parse([]byte(big)); !errors.Is(err, ErrTooLarge) {
		t.Errorf("err = %v", err)
	}
}

func TestExpand(t *testing.T) {
	f, err := Parse([]byte(`steps:
  - call: "${TOOL}"
    args: {n: "${sum}", s: "sum ${sum}!", lit: "$${sum}", deep: [{x: "${HOME_X}"}]}
    expect: {text: {equals: "${sum}"}}
  - read: "${nope}"
`))
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"TOOL": "echo", "HOME_X": "/h"}
	v := Vars{Captures: map[string]any{"sum": 5.0}, Env: func(k string) (string, bool) { s, ok := env[k]; return s, ok }}
	s, err := f.Steps[0].Expand(v)
	if err != nil {
		t.Fatal(err)
	}
	if s.Call != "echo" || s.Args["n"] != 5.0 || s.Args["s"] != "sum 5!" || s.Args["lit"] != "${sum}" {
		t.Errorf("args = %#v", s.Args)
	}
	if s.Args["deep"].([]any)[0].(map[string]any)["x"] != "/h" {
		t.Errorf("deep = %#v", s.Args["deep"])
	}
	if !s.Expect.Text.HasEquals() || s.Expect.Text.Equals != 5.0 {
		t.Errorf("text = %+v", s.Expect.Text)
	}
	if f.Steps[0].Call != "${TOOL}" {
		t.Error("Expand changed the step")
	}
	if _, err := f.Steps[1].Expand(v); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("err = %v", err)
	}
}

// TestAliasesUpToTheLimit: aliases that expand to fewer than MaxNodes
// nodes are read (the YAML library alone refuses far fewer), and past it
// the document is refused as too large.
func TestAliasesUpToTheLimit(t *testing.T) {
	doc := func(n int) string {
		return "steps:\n  - call: echo\n    args: {a: &a [" + strings.Repeat("x, ", 99) + "x]}\n" +
			"  - call: echo\n    args: {b: &b [" + strings.Repeat("*a, ", 9) + "*a]}\n" +
			"  - call: echo\n    args: {c: [" + strings.Repeat("*b, ", n-1) + "*b]}\n"
	}
	f, err := Parse([]byte(doc(90))) // 90,000 nodes through aliases
	if err != nil {
		t.Fatal(err)
	}
	if c, _ := f.Steps[2].Args["c"].([]any); len(c) != 90 {
		t.Errorf("c has %d items", len(c))
	}
	if _, err := Parse([]byte(doc(101))); err == nil || !strings.Contains(err.Error(), "expands to more than 100000") {
		t.Errorf("101,000 nodes: %v", err)
	}
}

package eval

import (
	"fmt"
	"strings"
	"testing"
)

const sample = `judge: openai:gpt-5.4-mini
system: You are terse.
cases:
  - name: adds
    prompt: What is 2 + 3?
    expect:
      called: [add]
      notCalled: [delete_file]
      maxCalls: 2
      args:
        - tool: add
          pointer: /a
          equals: 2
      text:
        contains: "5"
  - name: two turns
    conversation:
      - Echo hello.
      - Now echo bye.
    expect:
      calledInOrder: [echo, echo]
      rubric: Both texts were echoed.
`

func TestParse(t *testing.T) {
	f, err := Parse([]byte(sample))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Cases) != 2 || f.Cases[0].Line != 4 || f.Cases[1].Line != 16 || f.Judge != "openai:gpt-5.4-mini" {
		t.Fatalf("%+v", f)
	}
	if m := f.Cases[1].Messages(); len(m) != 2 || m[1] != "Now echo bye." {
		t.Errorf("messages %v", m)
	}
	if a := f.Cases[0].Expect.Args[0]; !a.hasEq || a.equals != 2.0 {
		t.Errorf("equals %#v", a.equals)
	}
}

// bomb is a billion laughs: anchors in a check's data, each level ten
// aliases of the last, the last the value of another check.
var bomb = func() string {
	var b strings.Builder
	b.WriteString("cases:\n  - name: a\n    prompt: p\n    expect:\n      args:\n        - tool: t\n          equals:\n            a0: &a0 [x]\n")
	for i := 1; i < 10; i++ {
		fmt.Fprintf(&b, "            a%d: &a%d [*a%d,*a%d,*a%d,*a%d,*a%d,*a%d,*a%d,*a%d,*a%d,*a%d]\n", i, i, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1)
	}
	b.WriteString("        - tool: t\n          equals: *a9\n")
	return b.String()
}()

// TestParseRefuses: what would expect nothing, or could not be checked,
// is refused with its line.
func TestParseRefuses(t *testing.T) {
	for _, c := range []struct{ name, yaml, want string }{
		{"unknown key", "cases:\n  - name: a\n    prompt: p\n    expect:\n      caled: [add]\n", `line 5: unknown key "caled"`},
		{"no value", "cases:\n  - name: a\n    prompt: p\n    expect:\n      called:\n", "line 5: called: has no value"},
		{"no value in a text check", "cases:\n  - name: a\n    prompt: p\n    expect:\n      text:\n        contains:\n", "line 6: contains: has no value"},
		{"equals with no value", "cases:\n  - name: a\n    prompt: p\n    expect:\n      args:\n        - tool: add\n          equals:\n", "line 7: equals: has no value"},
		{"top-level key", "case: []\n", `line 1: unknown key "case"`},
		{"no check", "cases:\n  - name: a\n    prompt: p\n", "line 2: case 1: expect: give at least one check"},
		{"no prompt", "cases:\n  - name: a\n    expect: {called: [x]}\n", "a case needs a prompt or a conversation"},
		{"both", "cases:\n  - name: a\n    prompt: p\n    conversation: [q]\n    expect: {called: [x]}\n", "prompt or conversation, not both"},
		{"rubric without judge", "cases:\n  - name: a\n    prompt: p\n    expect: {rubric: good}\n", "a rubric needs the file's judge"},
		{"bad judge", "judge: mistral:large\ncases:\n  - name: a\n    prompt: p\n    expect: {rubric: good}\n", "judge: model"},
		{"bad regexp", "cases:\n  - name: a\n    prompt: p\n    expect: {text: {matches: '('}}\n", "matches: error parsing regexp"},
		{"two checks in one", "cases:\n  - name: a\n    prompt: p\n    expect: {args: [{tool: add, equals: 1, matches: x}]}\n", "give one of equals, matches or schema"},
		{"bad pointer", "cases:\n  - name: a\n    prompt: p\n    expect: {args: [{tool: add, pointer: a, equals: 1}]}\n", "pointer:"},
		{"bad schema", "cases:\n  - name: a\n    prompt: p\n    expect: {args: [{tool: add, schema: {type: 7}}]}\n", "schema:"},
		{"same name", "cases:\n  - name: a\n    prompt: p\n    expect: {called: [x]}\n  - name: a\n    prompt: p\n    expect: {called: [x]}\n", `line 5: a second case named "a"`},
		{"an anchor beside cases", "x: &e {caled: [add]}\ncases:\n  - name: a\n    prompt: p\n    expect: *e\n", `line 1: unknown key "x"`},
		{"an alias's unknown key", "cases:\n  - name: a\n    prompt: p\n    expect: {called: [x], args: [{tool: t, equals: &e {caled: 1}}]}\n  - name: b\n    prompt: p\n    expect: *e\n", `line 4: unknown key "caled"`},
		{"a YAML bomb", bomb, "excessive aliasing"},
		{"many type errors", "cases:\n  - name: a\n    prompt: p\n    expect: {called: [[1], [2], [3], [4], [5]]}\n", "cannot unmarshal !!seq into string (and 2 more)"},
		{"empty", "", "empty"},
		{"no cases", "judge: openai:x\n", "no cases"},
	} {
		_, err := Parse([]byte(c.yaml))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

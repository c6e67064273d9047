package eval

import (
	"encoding/json"
	"strings"
	"testing"
)

func parseCase(t *testing.T, expect string) *Case {
	t.Helper()
	f, err := Parse([]byte("judge: openai:judge\ncases:\n  - name: c\n    prompt: p\n    expect: " + expect + "\n"))
	if err != nil {
		t.Fatalf("%s: %v", expect, err)
	}
	return &f.Cases[0]
}

func calls(pairs ...string) []Call {
	var out []Call
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, Call{Tool: pairs[i], Arguments: json.RawMessage(pairs[i+1])})
	}
	return out
}

func TestGrade(t *testing.T) {
	for _, c := range []struct {
		name, expect string
		o            Outcome
		pass         bool
		detail       string // of the first failed check
	}{
		{"called", "{called: [add]}", Outcome{Calls: calls("add", `{}`)}, true, ""},
		{"not called", "{called: [add]}", Outcome{Calls: calls("echo", `{}`)}, false, "add was not called (calls: echo)"},
		{"any order", "{called: [add, echo]}", Outcome{Calls: calls("echo", `{}`, "add", `{}`)}, true, ""},
		{"in order", "{calledInOrder: [add, echo]}", Outcome{Calls: calls("add", `{}`, "x", `{}`, "echo", `{}`)}, true, ""},
		{"out of order", "{calledInOrder: [add, echo]}", Outcome{Calls: calls("echo", `{}`, "add", `{}`)}, false, "no call of echo in its place"},
		{"twice in order", "{calledInOrder: [echo, echo]}", Outcome{Calls: calls("echo", `{}`)}, false, "no call of echo"},
		{"must not", "{notCalled: [delete_file]}", Outcome{Calls: calls("delete_file", `{}`)}, false, "delete_file was called"},
		{"max calls", "{maxCalls: 1}", Outcome{Calls: calls("a", `{}`, "b", `{}`)}, false, "2 calls"},
		{"max zero, none", "{maxCalls: 0}", Outcome{}, true, ""},
		{"equals", "{args: [{tool: add, pointer: /a, equals: 2}]}", Outcome{Calls: calls("add", `{"a":2,"b":3}`)}, true, ""},
		{"equals an object", "{args: [{tool: add, equals: {a: 2, b: 3}}]}", Outcome{Calls: calls("add", `{"b":3,"a":2.0}`)}, true, ""},
		{"equals, wrong", "{args: [{tool: add, pointer: /a, equals: 2}]}", Outcome{Calls: calls("add", `{"a":"2"}`)}, false, `the value is "2"`},
		{"one call of several", "{args: [{tool: add, pointer: /a, equals: 2}]}", Outcome{Calls: calls("add", `{"a":1}`, "add", `{"a":2}`)}, true, ""},
		{"no such value", "{args: [{tool: add, pointer: /c, equals: 2}]}", Outcome{Calls: calls("add", `{"a":1}`)}, false, "no value at /c"},
		{"tool not called", "{args: [{tool: add, pointer: /a, equals: 2}]}", Outcome{}, false, "add was not called"},
		{"matches", `{args: [{tool: echo, pointer: /text, matches: '^hel+o$'}]}`, Outcome{Calls: calls("echo", `{"text":"hello"}`)}, true, ""},
		{"matches a number", `{args: [{tool: add, pointer: /a, matches: '2'}]}`, Outcome{Calls: calls("add", `{"a":2}`)}, false, "the value 2 does not match"},
		{"array index", `{args: [{tool: t, pointer: /xs/1, equals: b}]}`, Outcome{Calls: calls("t", `{"xs":["a","b"]}`)}, true, ""},
		{"schema", "{args: [{tool: add, schema: {type: object, required: [a, b]}}]}", Outcome{Calls: calls("add", `{"a":1,"b":2}`)}, true, ""},
		{"schema, invalid", "{args: [{tool: add, schema: {type: object, required: [a, b]}}]}", Outcome{Calls: calls("add", `{"a":1}`)}, false, "invalid:"},
		{"text contains", "{text: {contains: '5'}}", Outcome{Text: "It is 5."}, true, ""},
		{"text matches", `{text: {matches: '\b5\b'}}`, Outcome{Text: "It is 15."}, false, `the text does not match: "It is 15."`},
		{"rubric passed", "{rubric: good}", Outcome{Judge: `{"pass": true, "reason": "fine"}`}, true, ""},
		{"rubric failed", "{rubric: good}", Outcome{Judge: "```json\n{\"pass\": false, \"reason\": \"it guessed\"}\n```"}, false, "the judge: it guessed"},
		{"judge garbage", "{rubric: good}", Outcome{Judge: "PASS! Looks great."}, false, "the judge's answer is not a verdict"},
		{"judge says more", "{rubric: good}", Outcome{Judge: `{"pass": true, "reason": "x"} also {"pass": false}`}, false, "more than a verdict"},
		{"judge half a verdict", "{rubric: good}", Outcome{Judge: `{"pass": true}`}, false, "lacks pass or reason"},
		{"judge a string pass", "{rubric: good}", Outcome{Judge: `{"pass": "yes", "reason": "x"}`}, false, "not a verdict"},
		{"judge another key", "{rubric: good}", Outcome{Judge: `{"pass": true, "reason": "x", "score": 3}`}, false, "not a verdict"},
		{"judge failed", "{rubric: good}", Outcome{JudgeErr: "openai: 401"}, false, "the judge failed: openai: 401"},
	} {
		checks := Grade(parseCase(t, c.expect), &c.o)
		if Passed(checks) != c.pass {
			t.Errorf("%s: passed %v, want %v: %+v", c.name, !c.pass, c.pass, checks)
			continue
		}
		for _, ch := range checks {
			if !ch.OK {
				if !strings.Contains(ch.Detail, c.detail) {
					t.Errorf("%s: %q, want %q", c.name, ch.Detail, c.detail)
				}
				break
			}
		}
	}
}

func TestCut(t *testing.T) {
	for _, c := range []struct {
		s    string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"abcdef", 3, "abc… [3 more bytes]"},
		{"aé", 2, "a… [2 more bytes]"}, // é is two bytes: not split
	} {
		if got := cut(c.s, c.n); got != c.want {
			t.Errorf("cut(%q, %d) = %q, want %q", c.s, c.n, got, c.want)
		}
	}
}

package intercept

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestParseFaults(t *testing.T) {
	fs, err := ParseFaults([]byte(`# a comment
faults:
  - name: slow tools
    match: method:tools/call dir:out
    delay: {min: 100ms, max: 2s}
    probability: 0.5
    count: 3
  - delay: {mean: 200ms, stddev: 50ms}
  - error: {code: -32000, message: quota}
  - corrupt: utf8
  - duplicate: true
  - reorder: 3
  - slow: 1000
  - close: {after: 5}
  - close: {at: 2s}
  - status: {code: 429, retryAfter: 2}
  - status: 503
  - cut: true
  - drop: true
`))
	if err != nil {
		t.Fatal(err)
	}
	r := fs.Rules[0]
	if r.Name != "slow tools" || r.Min != 100*time.Millisecond || r.Max != 2*time.Second || r.Probability != 0.5 || r.Count != 3 || r.Match.String() != "method:tools/call dir:out" {
		t.Errorf("rule 1: %+v", r)
	}
	if fs.Rules[1].Name != "rule 2" || fs.Rules[1].Mean != 200*time.Millisecond || fs.Rules[4].Copies != 2 || fs.Rules[7].After != 5 || fs.Rules[9].RetryAfter != 2 {
		t.Errorf("rules: %+v", fs.Rules)
	}
}

// A faults file is read as strictly as a collection: what it does not
// know, or a key with nothing after it, is refused with its line.
func TestParseFaultsRefuses(t *testing.T) {
	for _, c := range []struct{ yaml, want string }{
		{"faults:\n  - drop: true\n    propability: 0.5\n", `line 3: unknown key "propability"`},
		{"faults:\n  - drop: true\n    match:\n", "line 3: match: has no value"},
		{"fault:\n  - drop: true\n", `line 1: unknown key "fault"`},
		{"faults:\n  - match: method:ping\n", "line 2: rule 1 has no action"},
		{"faults:\n  - drop: true\n    delay: 1s\n", "line 3: delay: a rule has one action, and this one has drop already"},
		{"faults:\n  - delay: {min: 2s, max: 1s}\n", "line 2: delay: min is more than max"},
		{"faults:\n  - delay: {min: 1s, max: 2s, mean: 1s}\n", "line 2: delay: a duration"},
		{"faults:\n  - delay: 11m\n", "line 2: delay: a duration from 0 to 10m0s"},
		{"faults:\n  - error: {code: 1}\n", "give both code and message"},
		{"faults:\n  - corrupt: everything\n", "line 2: corrupt: one of cut, json, utf8, id"},
		{"faults:\n  - status: 404\n", "line 2: status: 429 or a 5xx"},
		{"faults:\n  - drop: true\n    probability: 2\n", "line 3: probability: a number from 0 to 1"},
		{"faults:\n  - drop: true\n    match: 'dur:>x'\n", "line 3: match: "},
		{"faults:\n  - close: {after: 1, at: 1s}\n", "after or at, not both"},
		{"faults:\n  - drop: true\n    drop: true\n", "line 3: drop is given twice"},
		{"", "the faults file is empty"},
		{"- drop: true\n", "line 1: a faults file is a mapping"},
	} {
		_, err := ParseFaults([]byte(c.yaml))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.yaml, err, c.want)
		}
	}
}

// Hostile faults files are refused clearly, in the time it takes to
// parse them: a YAML bomb (aliases), 100,000 rules, a file over 1 MiB.
func TestParseFaultsHostile(t *testing.T) {
	bomb := "a: &a [x, x, x, x, x, x, x, x, x]\n"
	for i := 'b'; i <= 'j'; i++ {
		bomb += fmt.Sprintf("%c: &%c [*%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c]\n", i, i, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1)
	}
	bomb += "faults:\n  - match: *j\n    drop: true\n"
	if _, err := ParseFaults([]byte(bomb)); err == nil || !strings.Contains(err.Error(), "anchors and aliases are not read") {
		t.Errorf("a YAML bomb: %v", err)
	}
	var many strings.Builder
	many.WriteString("faults:\n")
	for range 100_000 {
		many.WriteString("- {drop: true}\n")
	}
	if _, err := ParseFaults([]byte(many.String())); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("100,000 rules: %v", err)
	}
	var some strings.Builder
	some.WriteString("faults:\n")
	for range MaxRules + 1 {
		some.WriteString("- {drop: true}\n")
	}
	if _, err := ParseFaults([]byte(some.String())); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%d rules: a faults file has at most %d", MaxRules+1, MaxRules)) {
		t.Errorf("%d rules: %v", MaxRules+1, err)
	}
	deep := "faults:\n  - drop: true\n    name: " + strings.Repeat("[", 200) + strings.Repeat("]", 200) + "\n"
	if _, err := ParseFaults([]byte(deep)); err == nil {
		t.Error("200 levels of nesting were read")
	}
}

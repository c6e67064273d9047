package collection

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpi-dev/mcpi/internal/record"
)

const snapFile = `# the demo server, snapshots
server: {command: [mcpi, demo-server]}
steps:
  # the greeting, as it reads today
  - prompt: greet
    args: {name: Ada}
    expect:
      count: 1      # one message
      snapshot: |
        Hello, Ada!
        Nice to meet you.

  - call: echo   # a step without a snapshot is left alone
    args: {text: hi}
    expect: {text: {equals: hi}}

  - call: add
    expect:
      snapshot:
    # a comment after the empty snapshot
    capture: {sum: structuredContent.sum}
  - read: demo://x
    expect:
      snapshot: "old"
`

func TestUpdateKeepsTheRest(t *testing.T) {
	f, err := Parse([]byte(snapFile))
	if err != nil {
		t.Fatal(err)
	}
	if !f.Steps[0].Expect.HasSnapshot || f.Steps[1].Expect.HasSnapshot || !f.Steps[2].Expect.HasSnapshot || f.Steps[2].Expect.Snapshot != nil {
		t.Fatalf("snapshots read wrong: %+v", f.Steps)
	}
	if got := *f.Steps[0].Expect.Snapshot; got != "Hello, Ada!\nNice to meet you.\n" {
		t.Fatalf("snapshot %q", got)
	}
	texts := map[int]string{
		0: "Hello, Ada!\nHow are you?",
		2: `{"sum":5}`,
		3: "  indented\nline\n\n",
	}
	out, err := Update([]byte(snapFile), f, texts)
	if err != nil {
		t.Fatal(err)
	}
	got := string(out)
	for _, keep := range []string{
		"# the demo server, snapshots\n", "  # the greeting, as it reads today\n", "      count: 1      # one message\n",
		"  - call: echo   # a step without a snapshot is left alone\n    args: {text: hi}\n    expect: {text: {equals: hi}}\n",
		"    # a comment after the empty snapshot\n    capture: {sum: structuredContent.sum}\n",
		"      snapshot: |-\n        Hello, Ada!\n        How are you?\n\n  - call: echo",
		`      snapshot: "{\"sum\":5}"` + "\n",
		"      snapshot: |2+\n          indented\n        line\n\n",
	} {
		if !strings.Contains(got, keep) {
			t.Errorf("the update lost or mangled %q:\n%s", keep, got)
		}
	}
	g, err := Parse(out)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range texts {
		if *g.Steps[i].Expect.Snapshot != want {
			t.Errorf("step %d reads back %q, want %q", i, *g.Steps[i].Expect.Snapshot, want)
		}
	}
	// Updating again with the same texts changes nothing.
	again, err := Update(out, g, texts)
	if err != nil || string(again) != got {
		t.Errorf("a second update changed the file: %v\n%s", err, again)
	}
}

func TestUpdateRefusesAFlowSnapshot(t *testing.T) {
	const flow = "steps:\n  - call: x\n    expect: {snapshot: old, count: 1}\n"
	f, err := Parse([]byte(flow))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Update([]byte(flow), f, map[int]string{0: "new"}); err == nil || !strings.Contains(err.Error(), "flow") {
		t.Errorf("err %v", err)
	}
}

// TestUpdateTextsThatAreNoBlock: control characters, trailing spaces and
// carriage returns go as JSON strings and read back the same.
func TestUpdateTextsThatAreNoBlock(t *testing.T) {
	const file = "steps:\n  - call: x\n    expect:\n      snapshot: old\n"
	for _, text := range []string{"a\x1b[31mred\nb", "trailing \nspace", "crlf\r\nline", "tab\there\nok", "", "# not a comment", "null", "- item: 1"} {
		f, _ := Parse([]byte(file))
		out, err := Update([]byte(file), f, map[int]string{0: text})
		if err != nil {
			t.Errorf("%q: %v", text, err)
			continue
		}
		g, _ := Parse(out)
		if g.Steps[0].Expect.Snapshot == nil || *g.Steps[0].Expect.Snapshot != text {
			t.Errorf("%q reads back wrong:\n%s", text, out)
		}
	}
}

// TestAppend: a saved call becomes the collection's last step, in a new
// file or after the others (their comments and layout kept), and reads
// back as saved; a file it cannot append to is refused.
func TestAppend(t *testing.T) {
	s := Saved{Call: "echo", Args: map[string]any{"text": "hi: there", "n": 2, "deep": map[string]any{"list": []any{1, "two"}}},
		Answers: &Answers{Sampling: "four", Elicit: "accept", Fields: map[string]any{"name": "Bob"}},
		Text:    "line one\nline: two\n"}
	out, err := Append(nil, s)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(out), NewFileHeader+"  - call: echo\n") {
		t.Errorf("new file:\n%s", out)
	}
	f, err := Parse(out)
	if err != nil || len(f.Steps) != 1 || f.Steps[0].Answers.Sampling != "four" || f.Steps[0].Answers.Fields["name"] != "Bob" || *f.Steps[0].Expect.IsError {
		t.Fatalf("%v %+v\n%s", err, f, out)
	}
	const existing = "# mine\nserver: {command: [srv]}\nsteps:\n    - call: a   # first\n\n    - call: b\n"
	out, err = Append([]byte(existing), Saved{Call: "c", IsError: true, Text: "boom"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(out), existing) || !strings.HasSuffix(string(out), "    - call: c\n      expect:\n        isError: true\n        snapshot: boom\n") {
		t.Errorf("appended:\n%s", out)
	}
	for _, bad := range []string{
		"steps: [{call: a}]\n",
		"steps:\n  - call: a\nserver: {command: [srv]}\n",
		"steps:\n  - {call: a, nope: 1}\n",
	} {
		if _, err := Append([]byte(bad), Saved{Call: "c"}); err == nil {
			t.Errorf("%q: appended", bad)
		}
	}
	if _, err := Append(nil, Saved{Call: "c", Text: strings.Repeat("x", MaxFileSize)}); err == nil {
		t.Error("a result larger than a collection was saved")
	}
}

// TestSnapshotThroughAnAlias: a snapshot an alias or a merge brings is
// checked like one written in the step; --update refuses to write it.
func TestSnapshotThroughAnAlias(t *testing.T) {
	const file = "base: &e {snapshot: old}\nsteps:\n  - call: a\n    expect: *e\n  - call: b\n    expect:\n      <<: *e\n      count: 1\n  - call: c\n    expect:\n      <<: {texxt: {equals: x}}\n"
	_, err := Parse([]byte(file))
	if err == nil || !strings.Contains(err.Error(), `unknown key "base"`) {
		t.Fatalf("err %v", err)
	}
	const ok = "steps:\n  - call: a\n    expect: &e {snapshot: old}\n  - call: b\n    expect: *e\n  - call: c\n    expect:\n      <<: *e\n      count: 1\n"
	f, err := Parse([]byte(ok))
	if err != nil {
		t.Fatal(err)
	}
	raw := []byte(`{"content":[{"type":"text","text":"new"}]}`)
	for i := range f.Steps {
		fails := Evaluate(&f.Steps[i], Result{Raw: raw}, 0)
		if len(fails) == 0 || fails[0].Path != "snapshot" {
			t.Errorf("step %d: %+v", i, fails)
		}
	}
	if _, err := Update([]byte(ok), f, map[int]string{1: "new"}); err == nil || !strings.Contains(err.Error(), "alias or a merge") {
		t.Errorf("update through an alias: %v", err)
	}
	bad := "steps:\n  - call: c\n    expect:\n      <<: {texxt: {equals: x}}\n"
	if _, err := Parse([]byte(bad)); err == nil || !strings.Contains(err.Error(), "texxt") {
		t.Errorf("a misspelt key in a merge: %v", err)
	}
}

// TestRedactBeforeCut: a secret in a long value is hidden before the value
// is cut, never half shown.
func TestRedactBeforeCut(t *testing.T) {
	secret := "sk-0123456789abcdef"
	text := strings.Repeat("x", maxShown-5) + secret + strings.Repeat("y", 50)
	s := &Step{Call: "echo", Expect: Expect{Text: &Match{Contains: "zzz"}}}
	raw := []byte(`{"content":[{"type":"text","text":"` + text + `"}]}`)
	fails := Evaluate(s, Result{Raw: raw, Redact: func(v string) string { return strings.ReplaceAll(v, secret, "[redacted]") }}, 0)
	for _, f := range fails {
		for _, v := range []string{f.Actual, f.Message} {
			if strings.Contains(v, "sk-0") {
				t.Errorf("part of the secret is shown: %q", v)
			}
		}
	}
}

// TestAppendKeepsDollarBraces: "${" in a saved call's arguments is what was
// sent, and reads back so.
func TestAppendKeepsDollarBraces(t *testing.T) {
	s := Saved{Call: "echo", Args: map[string]any{"text": "cost ${HOME} and $${x}"}, Answers: &Answers{Sampling: "${not a var}"}}
	out, err := Append(nil, s)
	if err != nil {
		t.Fatal(err)
	}
	f, _ := Parse(out)
	e, err := f.Steps[0].Expand(Vars{Env: func(string) (string, bool) { return "EXPANDED", true }})
	if err != nil || e.Args["text"] != "cost ${HOME} and $${x}" || e.Answers.Sampling != "${not a var}" {
		t.Errorf("%v %+v\n%s", err, e, out)
	}
}

// TestAppendNewFileNamesItsServer: a new file saved from the TUI names the
// server the call went to, so that mcpi test FILE runs it; a snapshot of
// several lines is a | block whatever its characters (the YAML library
// quotes an emoji's).
func TestAppendNewFileNamesItsServer(t *testing.T) {
	for _, server := range []*Server{{Command: []string{"python3", "server.py", "--dir=${HOME}"}}, {URL: "http://127.0.0.1:8080/mcp"}, {Config: "dev"}} {
		text := "Hello, Zed! 🎉\n  indented\n\nlast"
		out, err := Append(nil, Saved{Call: "greet", Args: map[string]any{"name": "Zed"}, Text: text, Server: server})
		if err != nil {
			t.Fatal(err)
		}
		f, err := Parse(out)
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		got, _ := f.Server.Expand(Vars{Env: func(string) (string, bool) { return "", false }})
		if f.Server == nil || strings.Join(got.Command, " ") != strings.Join(server.Command, " ") || got.URL != server.URL || got.Config != server.Config {
			t.Errorf("server %+v, want %+v:\n%s", f.Server, server, out)
		}
		if !strings.Contains(string(out), "snapshot: |-\n") || *f.Steps[0].Expect.Snapshot != text {
			t.Errorf("the snapshot is no block, or reads back wrong:\n%s", out)
		}
	}
}

// UpdateSnapshots writes the changed snapshots into the file, says what
// changed, passes the steps whose only failure was the snapshot, and
// never writes a text that holds a secret.
func TestUpdateSnapshots(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(path, []byte(snapFile), 0o600); err != nil {
		t.Fatal(err)
	}
	data, f, err := ReadWithData(path)
	if err != nil {
		t.Fatal(err)
	}
	f.Path = path
	text := func(s string) *string { return &s }
	snapFail := []Failure{{Path: "snapshot", Message: "snapshot differs"}}
	steps := []StepReport{
		{Name: "prompt greet", Text: text("Hello, Ada!\nHow are you?"), Failures: snapFail},
		{Name: "call echo", Outcome: Outcome{OK: true}},
		{Name: "call add", Text: text(`{"sum":5}`), Failures: append([]Failure{{Path: "isError", Message: "isError"}}, snapFail...)},
		{Name: "read demo://x", Text: text("key sk-secret-1234"), Failures: snapFail},
	}
	var said strings.Builder
	n, err := UpdateSnapshots(&said, path, data, f, steps, record.NewRedactor([]string{"sk-secret-1234"}))
	if err != nil || n != 2 {
		t.Fatalf("UpdateSnapshots = %d, %v; want 2 written", n, err)
	}
	written, _ := os.ReadFile(path)
	if !strings.Contains(string(written), "How are you?") || !strings.Contains(string(written), `{\"sum\":5}`) || strings.Contains(string(written), "sk-secret") {
		t.Errorf("the file now:\n%s", written)
	}
	if !steps[0].OK || !steps[0].Updated || steps[2].OK || !steps[2].Updated || steps[3].OK || steps[3].Updated {
		t.Errorf("steps: %+v", steps)
	}
	if last := steps[3].Failures[len(steps[3].Failures)-1]; !strings.Contains(last.Message, "holds a secret") {
		t.Errorf("the secret's step: %+v", steps[3].Failures)
	}
	if out := said.String(); !strings.Contains(out, "snapshot of prompt greet updated") || !strings.Contains(out, "How are you?") || strings.Contains(out, "sk-secret") {
		t.Errorf("said:\n%s", out)
	}
}

package collection

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"
)

const addSchema = `{"type":"object","properties":{"sum":{"type":"number"}},"required":["sum"]}`

// TestEvaluate: each kind of expectation against a result that passes it
// and one that fails it, whose failure names the path, the expected and the
// actual value.
func TestEvaluate(t *testing.T) {
	tests := []struct {
		name, step, result string
		schema             string
		d                  time.Duration
		err                error
		// want is empty for a pass; else the failure's path, and texts its
		// message must hold.
		path string
		want []string
	}{
		{name: "isError pass", step: `{call: fail, expect: {isError: true}}`, result: `{"content":[{"type":"text","text":"boom"}],"isError":true}`},
		{name: "isError fail", step: `{call: echo, expect: {isError: false}}`, result: `{"content":[{"type":"text","text":"boom"}],"isError":true}`,
			path: "isError", want: []string{"expected false, got true", "boom"}},
		{name: "isError absent is false", step: `{call: echo, expect: {isError: false}}`, result: `{"content":[]}`},
		{name: "text equals pass", step: `{call: echo, expect: {text: {equals: "a\nb"}}}`, result: `{"content":[{"type":"text","text":"a"},{"type":"image","data":""},{"type":"text","text":"b"}]}`},
		{name: "text equals fail", step: `{call: echo, expect: {text: {equals: hello}}}`, result: `{"content":[{"type":"text","text":"bye"}]}`,
			path: "text", want: []string{`"hello"`, `"bye"`}},
		{name: "text contains pass", step: `{call: echo, expect: {text: {contains: ell}}}`, result: `{"content":[{"type":"text","text":"hello"}]}`},
		{name: "text contains fail", step: `{call: echo, expect: {text: {contains: xyz}}}`, result: `{"content":[{"type":"text","text":"hello"}]}`,
			path: "text", want: []string{`to contain "xyz"`, `"hello"`}},
		{name: "text matches pass", step: `{call: echo, expect: {text: {matches: "^h.l+o$"}}}`, result: `{"content":[{"type":"text","text":"hello"}]}`},
		{name: "text matches fail", step: `{call: echo, expect: {text: {matches: "^\\d+$"}}}`, result: `{"content":[{"type":"text","text":"hello"}]}`,
			path: "text", want: []string{`/^\d+$/`, `"hello"`}},
		{name: "prompt text", step: `{prompt: p, expect: {text: {equals: hi}}}`, result: `{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}]}`},
		{name: "read text", step: `{read: x, expect: {text: {contains: lo}}}`, result: `{"contents":[{"uri":"x","text":"hello"}]}`},
		{name: "request text is JSON", step: `{request: ping, expect: {text: {equals: "{}"}}}`, result: `{}`},
		{name: "dotted path pass", step: `{call: add, expect: {path: {structuredContent.sum: {equals: 5}}}}`, result: `{"structuredContent":{"sum":5.0}}`},
		{name: "dotted path fail", step: `{call: add, expect: {path: {structuredContent.sum: {equals: 6}}}}`, result: `{"structuredContent":{"sum":5}}`,
			path: "structuredContent.sum", want: []string{"expected 6, got 5"}},
		{name: "pointer path pass", step: `{call: s, expect: {path: {/structuredContent/list/1/name: {matches: "^b"}}}}`, result: `{"structuredContent":{"list":[{"name":"a"},{"name":"bob"}]}}`},
		{name: "bracket path fail", step: `{call: s, expect: {path: {"structuredContent.list[1].name": {matches: "^a"}}}}`, result: `{"structuredContent":{"list":[{"name":"a"},{"name":"bob"}]}}`,
			path: "structuredContent.list[1].name", want: []string{"/^a/", `"bob"`}},
		{name: "path to nothing", step: `{call: s, expect: {path: {structuredContent.x: {equals: 1}}}}`, result: `{"structuredContent":{}}`,
			path: "structuredContent.x", want: []string{"expected 1", "nothing there"}},
		{name: "path equals object", step: `{call: s, expect: {path: {structuredContent: {equals: {a: [1, "x", null]}}}}}`, result: `{"structuredContent":{"a":[1,"x",null]}}`},
		{name: "path equals null fails on a value", step: `{call: s, expect: {path: {structuredContent.a: {equals: null}}}}`, result: `{"structuredContent":{"a":0}}`,
			path: "structuredContent.a", want: []string{"expected null, got 0"}},
		{name: "outputSchema pass", step: `{call: add, expect: {outputSchema: true}}`, result: `{"structuredContent":{"sum":5}}`, schema: addSchema},
		{name: "outputSchema fail", step: `{call: add, expect: {outputSchema: true}}`, result: `{"structuredContent":{"sum":"five"}}`, schema: addSchema,
			path: "structuredContent", want: []string{"does not satisfy"}},
		{name: "outputSchema none", step: `{call: add, expect: {outputSchema: true}}`, result: `{"structuredContent":{}}`,
			path: "structuredContent", want: []string{"declares no outputSchema"}},
		{name: "outputSchema no content", step: `{call: add, expect: {outputSchema: true}}`, result: `{"content":[]}`, schema: addSchema,
			path: "structuredContent", want: []string{"no structuredContent"}},
		{name: "count pass", step: `{call: c, expect: {count: 2}}`, result: `{"content":[{},{}]}`},
		{name: "count fail", step: `{call: c, expect: {count: 3}}`, result: `{"content":[{},{}]}`,
			path: "content", want: []string{"expected 3, got 2"}},
		{name: "count messages", step: `{prompt: p, expect: {count: 1}}`, result: `{"messages":[{}]}`},
		{name: "maxDuration pass", step: `{call: c, expect: {maxDuration: 200ms}}`, result: `{}`, d: 100 * time.Millisecond},
		{name: "maxDuration fail", step: `{call: c, expect: {maxDuration: 200ms}}`, result: `{}`, d: 300 * time.Millisecond,
			path: "duration", want: []string{"took 300ms", "200ms"}},
		{name: "request failed", step: `{call: c}`, err: errors.New("tools/call: -32602 unknown tool"),
			path: "error", want: []string{"unknown tool"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Parse([]byte("steps: [" + tt.step + "]"))
			if err != nil {
				t.Fatal(err)
			}
			r := Result{Raw: json.RawMessage(tt.result), Err: tt.err, OutputSchema: json.RawMessage(tt.schema)}
			fails := Evaluate(&f.Steps[0], r, tt.d)
			if tt.path == "" {
				if len(fails) > 0 {
					t.Fatalf("failures: %+v", fails)
				}
				return
			}
			if len(fails) != 1 {
				t.Fatalf("want one failure, got %+v", fails)
			}
			got := fails[0]
			if got.Path != tt.path {
				t.Errorf("path = %q, want %q", got.Path, tt.path)
			}
			if got.Expected == "" || got.Actual == "" {
				t.Errorf("expected %q actual %q", got.Expected, got.Actual)
			}
			for _, w := range tt.want {
				if !strings.Contains(got.Message, w) {
					t.Errorf("message %q lacks %q", got.Message, w)
				}
			}
		})
	}
}

func TestCapture(t *testing.T) {
	f, err := Parse([]byte(`steps: [{call: s, capture: {sum: structuredContent.sum, first: /content/0/text, gone: structuredContent.x}}]`))
	if err != nil {
		t.Fatal(err)
	}
	got, fails := Capture(&f.Steps[0], json.RawMessage(`{"structuredContent":{"sum":5},"content":[{"text":"hi"}]}`))
	if got["sum"] != 5.0 || got["first"] != "hi" {
		t.Errorf("captured %v", got)
	}
	if len(fails) != 1 || fails[0].Path != "structuredContent.x" {
		t.Errorf("failures %+v", fails)
	}
	big := `{"content":[{"text":"` + strings.Repeat("x", MaxCapture+1) + `"}]}`
	f, _ = Parse([]byte(`steps: [{call: s, capture: {t: content.0.text}}]`))
	if got, fails := Capture(&f.Steps[0], json.RawMessage(big)); len(got) != 0 || len(fails) != 1 {
		t.Errorf("a capture over MaxCapture: %v %+v", len(got), fails)
	}
}

func TestFailureClipsLongValues(t *testing.T) {
	f, _ := Parse([]byte(`steps: [{call: echo, expect: {text: {equals: x}}}]`))
	long := strings.Repeat("é", 10000)
	fails := Evaluate(&f.Steps[0], Result{Raw: json.RawMessage(`{"content":[{"type":"text","text":"` + long + `"}]}`)}, 0)
	if len(fails) != 1 || len(fails[0].Actual) > 2*maxShown {
		t.Fatalf("failure: %d bytes", len(fails[0].Actual))
	}
}

// TestCallFailsOnIsErrorByDefault: a call step that says nothing of
// isError does not pass when the tool failed.
func TestCallFailsOnIsErrorByDefault(t *testing.T) {
	s := &Step{Call: "t"}
	if fs := Evaluate(s, Result{Raw: json.RawMessage(`{"content":[],"isError":true}`)}, 0); len(fs) != 1 || fs[0].Path != "isError" {
		t.Errorf("failures: %+v", fs)
	}
	if fs := Evaluate(s, Result{Raw: json.RawMessage(`{"content":[]}`)}, 0); len(fs) != 0 {
		t.Errorf("failures of a result that did not fail: %+v", fs)
	}
}

// TestSnapshotSeesEveryBlock: a snapshot records the blocks that are not
// text, so that a changed image, audio clip, resource link or embedded
// resource fails it; the text alone is what text: reads.
func TestSnapshotSeesEveryBlock(t *testing.T) {
	result := func(png, link, embedded string) any {
		var v any
		raw := `{"content":[{"type":"text","text":"chart"},{"type":"image","mimeType":"image/png","data":"` + png + `"},` +
			`{"type":"audio","mimeType":"audio/wav","data":"UklGRg=="},` +
			`{"type":"resource_link","uri":"` + link + `","name":"report","mimeType":"text/csv"},` +
			`{"type":"resource","resource":{"uri":"demo://e","mimeType":"text/plain","text":"` + embedded + `"}}]}`
		if err := json.Unmarshal([]byte(raw), &v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	base := Snapshot(KindCall, result("iVBORw0KGgo=", "demo://r/1", "one"))
	for _, want := range []string{"chart\n", "[image image/png, 12 bytes, sha256 ", "[audio audio/wav, 8 bytes, sha256 ", `[resource_link demo://r/1 "report" text/csv]`, "[resource demo://e text/plain, sha256 "} {
		if !strings.Contains(base, want) {
			t.Errorf("snapshot lacks %q:\n%s", want, base)
		}
	}
	for name, changed := range map[string]any{
		"image":             result("iVBORw0KGgp=", "demo://r/1", "one"),
		"link":              result("iVBORw0KGgo=", "demo://r/2", "one"),
		"embedded resource": result("iVBORw0KGgo=", "demo://r/1", "two"),
	} {
		if Snapshot(KindCall, changed) == base {
			t.Errorf("a changed %s leaves the snapshot as it was", name)
		}
		if Text(KindCall, changed) != "chart" {
			t.Errorf("text: reads %q", Text(KindCall, changed))
		}
	}
	// A step's snapshot fails on the changed image.
	f, err := Parse([]byte("steps: [{call: chart, expect: {snapshot: " + strconv.Quote(base) + "}}]"))
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(result("iVBORw0KGgp=", "demo://r/1", "one"))
	if fs := Evaluate(&f.Steps[0], Result{Raw: raw}, 0); len(fs) != 1 || fs[0].Path != "snapshot" {
		t.Errorf("failures %+v", fs)
	}
}

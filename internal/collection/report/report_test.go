package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcpi-dev/mcpi/internal/collection"
	"github.com/mcpi-dev/mcpi/internal/record"
	"github.com/mcpi-dev/mcpi/internal/record/redacttest"
)

// TestNoFormatShowsASecret feeds every spelling of every secret to each
// text of a report (a step's name, its failures, the file's error and
// path) and writes it in each format: none survives.
func TestNoFormatShowsASecret(t *testing.T) {
	red := record.NewRedactor(redacttest.Secrets)
	var texts []string
	for _, s := range redacttest.Secrets {
		texts = append(texts, redacttest.Spellings(s)...)
		texts = append(texts, redacttest.Cuts(s)...)
	}
	var files []File
	for i, text := range texts {
		raw := collection.StepReport{Name: "step " + text, Outcome: collection.Outcome{Kind: collection.KindCall, Line: i + 1},
			Failures: []collection.Failure{{Path: "p " + text, Expected: "e " + text, Actual: "a " + text, Message: "m " + text}}}
		files = append(files, File{File: red.Clean("f-" + text + ".yaml"), Steps: []Step{NewStep(red, raw)},
			Error: red.Clean("the server went away: " + text), Started: time.Unix(0, 0)})
	}
	outputs := map[string]string{}
	for name, format := range map[string]Format{"text": Text, "tap": TAP} {
		var b bytes.Buffer
		w := NewWriter(&b, format, false)
		for _, f := range files {
			w.File(f.File)
			for _, s := range f.Steps {
				w.Step(f.File, s)
			}
		}
		w.End(Summarize(files))
		outputs[name] = b.String()
	}
	doc, err := json.Marshal(Summarize(files).Document(true))
	if err != nil {
		t.Fatal(err)
	}
	outputs["json"] = string(doc)
	junit, err := JUnit(files, "host")
	if err != nil {
		t.Fatal(err)
	}
	outputs["junit"] = string(junit)
	for name, out := range outputs {
		if !strings.Contains(out, record.Redacted) {
			t.Errorf("%s: no %s:\n%s", name, record.Redacted, out)
		}
		for _, s := range redacttest.Secrets {
			for _, leak := range redacttest.Leaks(s) {
				if strings.Contains(out, leak) {
					t.Errorf("%s holds %q (of %q):\n%s", name, leak, s, out)
				}
			}
		}
	}
}

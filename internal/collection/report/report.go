// Package report writes the reports of `mcpi test`: the text report (one
// line per step), TAP (version 13), the --json document and the JUnit XML
// report. It owns their formats; it does not run anything and imports no
// command-line or terminal library.
//
// Every text of a report is a record.Clean, which only the redactor
// makes: a writer here cannot be handed a byte that did not cross it.
package report

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/mcpi-dev/mcpi/internal/collection"
	"github.com/mcpi-dev/mcpi/internal/record"
	"github.com/mcpi-dev/mcpi/internal/safetext"
)

// File is the report of one collection.
type File struct {
	File  record.Clean `json:"file"`
	OK    bool         `json:"ok"`
	Steps []Step       `json:"steps"`
	// Error is why the file could not run to its end (its server could
	// not be reached, or went away).
	Error record.Clean `json:"error,omitzero"`
	// Updated counts the snapshots --update wrote.
	Updated int `json:"updated,omitempty"`
	// Unreadable says the file could not be read or parsed (Error says
	// why): none of it ran.
	Unreadable bool `json:"-"`
	// Started is when the file began, for the JUnit report.
	Started time.Time     `json:"-"`
	Elapsed time.Duration `json:"-"`
}

// Step is the report of one step, its texts redacted.
type Step struct {
	Name record.Clean `json:"name"`
	collection.Outcome
	Failures []Failure `json:"failures,omitempty"`
}

// Failure is a collection.Failure, redacted.
type Failure struct {
	Path     record.Clean `json:"path"`
	Expected record.Clean `json:"expected,omitzero"`
	Actual   record.Clean `json:"actual,omitzero"`
	Message  record.Clean `json:"message"`
}

// NewStep is the report of a step, every text of it through red: the one
// way a step's texts reach a report.
func NewStep(red *record.Redactor, s collection.StepReport) Step {
	out := Step{Name: red.Clean(s.Name), Outcome: s.Outcome}
	for _, f := range s.Failures {
		out.Failures = append(out.Failures, Failure{Path: red.Clean(f.Path), Expected: red.Clean(f.Expected),
			Actual: red.Clean(f.Actual), Message: red.Clean(f.Message)})
	}
	return out
}

// Format is the form of the report on stdout.
type Format int

// The formats.
const (
	Text Format = iota
	TAP
	JSON
)

// Writer prints the report as the steps run: the text (one line per
// step), TAP, or nothing until the end (JSON, whose one document is the
// Summary's).
type Writer struct {
	w      io.Writer
	format Format
	update bool
	n      int // TAP: the test points so far
	// begun says File began the report of the file under way.
	begun bool
}

// NewWriter returns a Writer of format to w; update says --update runs
// (the totals count the snapshots written).
func NewWriter(w io.Writer, format Format, update bool) *Writer {
	if format == TAP {
		fmt.Fprintln(w, "TAP version 13")
	}
	return &Writer{w: w, format: format, update: update}
}

// File begins the report of a file.
func (t *Writer) File(path record.Clean) {
	t.begun = true
	switch t.format {
	case TAP:
		fmt.Fprintf(t.w, "# %s\n", safetext.OneLine(path.String()))
	case Text:
		fmt.Fprintln(t.w, safetext.Sanitize(path.String(), false))
	}
}

// Step reports a step of the file at path.
func (t *Writer) Step(path record.Clean, s Step) {
	switch t.format {
	case TAP:
		t.tapStep(path, s)
	case Text:
		textStep(t.w, s)
	}
}

func textStep(w io.Writer, s Step) {
	status := "ok  "
	if !s.OK {
		status = "FAIL"
	}
	d := time.Duration(s.DurationMS * float64(time.Millisecond)).Round(10 * time.Microsecond)
	fmt.Fprintf(w, "  %s %s (%s)\n", status, safetext.Sanitize(s.Name.String(), false), d)
	for _, f := range s.Failures {
		fmt.Fprintf(w, "       %s\n", oneLine(f.Message))
		if !f.Expected.IsZero() || !f.Actual.IsZero() {
			fmt.Fprintf(w, "         expected: %s\n", oneLine(f.Expected))
			fmt.Fprintf(w, "         actual:   %s\n", oneLine(f.Actual))
		}
	}
}

// tapStep prints a TAP test point, a failure's details in a YAML block.
func (t *Writer) tapStep(path record.Clean, s Step) {
	t.n++
	w := t.w
	status := "ok"
	if !s.OK {
		status = "not ok"
	}
	// A description must not hold a "#" (a directive) or a line break.
	desc := strings.ReplaceAll(safetext.OneLine(path.String()+": "+s.Name.String()), "#", "\\#")
	fmt.Fprintf(w, "%s %d - %s\n", status, t.n, desc)
	if s.OK {
		return
	}
	fmt.Fprintln(w, "  ---")
	fmt.Fprintf(w, "  at: %s\n", yamlString(fmt.Sprintf("%s:%d", path, s.Line)))
	fmt.Fprintf(w, "  duration_ms: %g\n", s.DurationMS)
	fmt.Fprintln(w, "  failures:")
	for _, f := range s.Failures {
		fmt.Fprintf(w, "    - message: %s\n", yamlString(f.Message.String()))
		if !f.Path.IsZero() {
			fmt.Fprintf(w, "      path: %s\n", yamlString(f.Path.String()))
		}
		if !f.Expected.IsZero() || !f.Actual.IsZero() {
			fmt.Fprintf(w, "      expected: %s\n", yamlString(f.Expected.String()))
			fmt.Fprintf(w, "      actual: %s\n", yamlString(f.Actual.String()))
		}
	}
	fmt.Fprintln(w, "  ...")
}

func oneLine(c record.Clean) string { return safetext.OneLine(c.String()) }

// yamlString is a YAML double-quoted scalar (JSON's string syntax), on one
// line, made visible.
func yamlString(s string) string {
	return fmt.Sprintf("%q", safetext.OneLine(s))
}

// Summary is the whole run: every file's report and the totals.
type Summary struct {
	Files          []File
	Passed, Failed int
	// Updated counts the snapshots --update wrote.
	Updated int
	// Stopped says a file could not run to its end.
	Stopped bool
}

// Summarize counts the steps of files.
func Summarize(files []File) Summary {
	s := Summary{Files: files}
	for _, r := range files {
		s.Updated += r.Updated
		s.Stopped = s.Stopped || !r.Error.IsZero()
		for _, st := range r.Steps {
			if st.OK {
				s.Passed++
			} else {
				s.Failed++
			}
		}
	}
	return s
}

// Document is the --json document.
func (s Summary) Document(update bool) any {
	doc := map[string]any{"ok": s.Failed == 0 && !s.Stopped, "passed": s.Passed, "failed": s.Failed, "files": s.Files}
	if update {
		doc["updated"] = s.Updated
	}
	return doc
}

// FileEnd ends the report of a file: in TAP, a file that could not run
// to its end is a failed test point of its own, under its own heading.
func (t *Writer) FileEnd(r File) {
	begun := t.begun
	t.begun = false
	if t.format != TAP || r.Error.IsZero() {
		return
	}
	if !begun {
		t.File(r.File)
		t.begun = false
	}
	t.n++
	fmt.Fprintf(t.w, "not ok %d - %s: %s\n  ---\n  message: %s\n  ...\n", t.n, oneLine(r.File), r.Stopped(), yamlString(r.Error.String()))
}

// Stopped says how far a file that could not run to its end went.
func (r File) Stopped() string {
	switch {
	case r.Unreadable:
		return "could not be read"
	case len(r.Steps) > 0:
		return "stopped before its end"
	}
	return "could not run"
}

// End prints the totals (text) or the plan (TAP); JSON prints the
// Summary's Document instead.
func (t *Writer) End(s Summary) {
	switch t.format {
	case TAP:
		fmt.Fprintf(t.w, "1..%d\n", t.n)
	case Text:
		line := fmt.Sprintf("%d passed, %d failed", s.Passed, s.Failed)
		notRead, notRun := 0, 0
		for _, r := range s.Files {
			switch {
			case r.Unreadable:
				notRead++
			case !r.Error.IsZero():
				notRun++
			}
		}
		if notRead > 0 {
			line += fmt.Sprintf(", %d file(s) could not be read (stderr says why)", notRead)
		}
		if notRun > 0 {
			line += fmt.Sprintf(", %d file(s) could not run to their end (stderr says why)", notRun)
		}
		if t.update {
			line += fmt.Sprintf(", %d snapshot(s) updated", s.Updated)
		}
		fmt.Fprintln(t.w, line)
	}
}

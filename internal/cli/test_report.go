package cli

import (
	"encoding/xml"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mcpi-dev/mcpi/internal/collection"
	"github.com/mcpi-dev/mcpi/internal/record"
	"github.com/mcpi-dev/mcpi/internal/save"
)

// secrets are the values of the environment a collection refers to
// (`${NAME}`) that are secrets (record.IsSecretEnv: a name that says
// credential, or a value long enough to be one): no report, JUnit file or
// trace shows them.
type secrets struct{ values []string }

const redacted = record.Redacted

// secretsOf finds the file's secrets and has the connection's trace and
// -v output hide them too.
func (opts *TestOptions) secretsOf(file *collection.File) secrets {
	s := fileSecrets(file, opts.env)
	opts.Target.secrets = append(opts.Target.secrets, s.values...)
	return s
}

// fileSecrets are the secrets of the environment a collection refers to.
func fileSecrets(file *collection.File, env func(string) (string, bool)) secrets {
	var s secrets
	for _, name := range file.Refs {
		if v, ok := env(name); ok && v != "" && record.IsSecretEnv(name, v) {
			s.values = append(s.values, v)
		}
	}
	return s
}

// forms are the ways a secret may be written in a report: as it is, and
// quoted as JSON and as Go quotes it (a failure shows a string value so).
func (s secrets) forms() []string {
	var out []string
	seen := map[string]bool{}
	for _, v := range s.values {
		// JSON escapes it once or twice (a tool's JSON text in a JSON
		// string); a failure then quotes that as Go does.
		for _, f := range record.JSONForms(v) {
			q := strconv.Quote(f)
			for _, g := range []string{f, q[1 : len(q)-1]} {
				if !seen[g] {
					seen[g] = true
					out = append(out, g)
				}
			}
		}
	}
	// The longest first: a form that contains another goes first.
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

func (s secrets) text(t string) string {
	for _, v := range s.forms() {
		t = strings.ReplaceAll(t, v, redacted)
	}
	return t
}

func (s secrets) holds(t string) bool {
	for _, v := range s.forms() {
		if strings.Contains(t, v) {
			return true
		}
	}
	return false
}

// step returns the step's report with the secrets hidden.
func (s secrets) step(st testStep) testStep {
	if len(s.values) == 0 {
		return st
	}
	st.Name = s.text(st.Name)
	fs := make([]collection.Failure, len(st.Failures))
	for i, f := range st.Failures {
		fs[i] = collection.Failure{Path: s.text(f.Path), Expected: s.text(f.Expected), Actual: s.text(f.Actual), Message: s.text(f.Message)}
	}
	st.Failures = fs
	return st
}

// testOutput prints the report on stdout: the text (one line per step),
// TAP as the steps run, or the --json document at the end.
type testOutput struct {
	opts *TestOptions
	n    int // TAP: the test points so far
}

func newTestOutput(opts *TestOptions) *testOutput {
	if opts.TAP {
		fmt.Fprintln(opts.IO.Out, "TAP version 13")
	}
	return &testOutput{opts: opts}
}

func (t *testOutput) file(path string) {
	switch {
	case t.opts.TAP:
		fmt.Fprintf(t.opts.IO.Out, "# %s\n", oneLine(path))
	case !t.opts.JSON:
		fmt.Fprintln(t.opts.IO.Out, sanitize(path, false))
	}
}

func (t *testOutput) step(path string, s testStep) {
	switch {
	case t.opts.TAP:
		t.tapStep(path, s)
	case !t.opts.JSON:
		printStep(t.opts.IO, s)
	}
}

// tapStep prints a TAP test point, a failure's details in a YAML block.
func (t *testOutput) tapStep(path string, s testStep) {
	t.n++
	w := t.opts.IO.Out
	status := "ok"
	if !s.OK {
		status = "not ok"
	}
	// A description must not hold a "#" (a directive) or a line break.
	desc := strings.ReplaceAll(oneLine(path+": "+s.Name), "#", "\\#")
	fmt.Fprintf(w, "%s %d - %s\n", status, t.n, desc)
	if s.OK {
		return
	}
	fmt.Fprintln(w, "  ---")
	fmt.Fprintf(w, "  at: %s\n", yamlString(fmt.Sprintf("%s:%d", path, s.Line)))
	fmt.Fprintf(w, "  duration_ms: %g\n", s.DurationMS)
	fmt.Fprintln(w, "  failures:")
	for _, f := range s.Failures {
		fmt.Fprintf(w, "    - message: %s\n", yamlString(f.Message))
		if f.Path != "" {
			fmt.Fprintf(w, "      path: %s\n", yamlString(f.Path))
		}
		if f.Expected != "" || f.Actual != "" {
			fmt.Fprintf(w, "      expected: %s\n", yamlString(f.Expected))
			fmt.Fprintf(w, "      actual: %s\n", yamlString(f.Actual))
		}
	}
	fmt.Fprintln(w, "  ...")
}

// yamlString is a YAML double-quoted scalar (JSON's string syntax), on one
// line, made visible.
func yamlString(s string) string {
	return fmt.Sprintf("%q", oneLine(s))
}

// end prints the totals (text), the plan (TAP) or the document (--json).
func (t *testOutput) end(reports []testFile, passed, failed int, firstErr error) error {
	ios := t.opts.IO
	updated := 0
	for _, r := range reports {
		updated += r.Updated
	}
	switch {
	case t.opts.JSON:
		doc := map[string]any{"ok": failed == 0 && firstErr == nil, "passed": passed, "failed": failed, "files": reports}
		if t.opts.Update {
			doc["updated"] = updated
		}
		return writeJSON(ios, doc)
	case t.opts.TAP:
		for _, r := range reports {
			if r.Error != "" {
				t.n++
				what := "could not run"
				if len(r.Steps) > 0 {
					what = "stopped before its end"
				}
				fmt.Fprintf(ios.Out, "not ok %d - %s: %s\n  ---\n  message: %s\n  ...\n", t.n, oneLine(r.File), what, yamlString(r.Error))
			}
		}
		fmt.Fprintf(ios.Out, "1..%d\n", t.n)
	default:
		line := fmt.Sprintf("%d passed, %d failed", passed, failed)
		notRun := 0
		for _, r := range reports {
			if r.Error != "" {
				notRun++
			}
		}
		if notRun > 0 {
			line += fmt.Sprintf(", %d file(s) could not run to their end (stderr says why)", notRun)
		}
		if t.opts.Update {
			line += fmt.Sprintf(", %d snapshot(s) updated", updated)
		}
		fmt.Fprintln(ios.Out, line)
	}
	return nil
}

// The JUnit XML report, in the Apache Ant junit task's schema (the
// JUnit.xsd of Windy Road, which Jenkins and GitLab read): one testsuite
// per collection file, one testcase per step that ran.
type junitSuites struct {
	XMLName xml.Name     `xml:"testsuites"`
	Suites  []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Timestamp  string          `xml:"timestamp,attr"`
	Hostname   string          `xml:"hostname,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Time       string          `xml:"time,attr"`
	Package    string          `xml:"package,attr"`
	ID         int             `xml:"id,attr"`
	Properties struct{}        `xml:"properties"`
	Cases      []junitCase     `xml:"testcase"`
	SystemOut  string          `xml:"system-out"`
	SystemErr  junitSystemText `xml:"system-err"`
}

type junitSystemText struct {
	Text string `xml:",chardata"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Error     *junitProblem `xml:"error"`
	Failure   *junitProblem `xml:"failure"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// junitSeconds is a duration in seconds, as xs:decimal.
func junitSeconds(d time.Duration) string { return fmt.Sprintf("%.6f", d.Seconds()) }

// xmlText keeps only what XML 1.0 can hold: a server's control characters
// would make the report unreadable.
func xmlText(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\t' || r == '\n' || r == '\r':
			return r
		case r < 0x20, r == 0xFFFE, r == 0xFFFF, r >= 0xD800 && r <= 0xDFFF:
			return '\uFFFD'
		}
		return r
	}, s)
}

// xmlToken is a value for an xs:token attribute: one line, single spaces.
func xmlToken(s string) string { return strings.Join(strings.Fields(xmlText(s)), " ") }

func writeJUnit(path string, reports []testFile) error {
	host, _ := os.Hostname()
	if host == "" {
		host = "localhost"
	}
	var doc junitSuites
	for i, r := range reports {
		name := xmlToken(r.File)
		s := junitSuite{Name: name, Package: name, ID: i, Hostname: xmlToken(host),
			Timestamp: r.started.UTC().Format("2006-01-02T15:04:05"), Time: junitSeconds(r.elapsed)}
		for j, st := range r.Steps {
			c := junitCase{Name: xmlToken(st.Name), Classname: name, Time: junitSeconds(time.Duration(st.DurationMS * float64(time.Millisecond)))}
			var lines []string
			for _, f := range st.Failures {
				line := f.Message
				if f.Expected != "" || f.Actual != "" {
					line += "\n  expected: " + f.Expected + "\n  actual:   " + f.Actual
				}
				lines = append(lines, line)
			}
			problem := &junitProblem{Text: xmlText(fmt.Sprintf("%s:%d\n%s", r.File, st.Line, strings.Join(lines, "\n")))}
			if len(st.Failures) > 0 {
				problem.Message = xmlText(st.Failures[0].Message)
			}
			switch {
			case st.OK:
			case r.Error != "" && j == len(r.Steps)-1:
				// The step the connection failed in: an error, not a
				// failed expectation.
				problem.Type, problem.Message = "connection", xmlText(r.Error)
				c.Error = problem
				s.Errors++
			default:
				problem.Type = "expectation"
				c.Failure = problem
				s.Failures++
			}
			s.Cases = append(s.Cases, c)
		}
		s.Tests = len(s.Cases)
		if r.Error != "" && len(r.Steps) == 0 {
			s.SystemErr.Text = xmlText(r.Error)
		}
		doc.Suites = append(doc.Suites, s)
	}
	b, err := xml.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	b = append([]byte(xml.Header), append(b, '\n')...)
	return save.Replace(path, b)
}

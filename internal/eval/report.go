package eval

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/mcpi-dev/mcpi/internal/chat"
	"github.com/mcpi-dev/mcpi/internal/safetext"
)

// Format is the format of a report's JSON document.
const Format = "mcpi.eval/1"

// Report is what an eval found: per case and model, the pass rate and
// its interval, and each run.
type Report struct {
	Format  string    `json:"format"`
	Runs    int       `json:"runs"`
	Models  []string  `json:"models"`
	Results []*Result `json:"results"`
	// Baseline is the baseline report's path, when compared with one.
	Baseline string `json:"baseline,omitempty"`
}

// Result is one case with one model over its runs.
type Result struct {
	File     string  `json:"file"`
	Case     string  `json:"case"`
	Model    string  `json:"model"`
	Runs     int     `json:"runs"`
	Passed   int     `json:"passed"`
	Errors   int     `json:"errors"`
	PassRate float64 `json:"passRate"`
	// Interval is the pass rate's 95% Wilson interval.
	Interval        [2]float64 `json:"interval95"`
	InputTokens     int64      `json:"inputTokens"`
	OutputTokens    int64      `json:"outputTokens"`
	MedianLatencyMs float64    `json:"medianLatencyMs"`
	// CostUSD is the runs' cost (the judge's included); nil when the
	// price table has no price for the model: unknown, not zero.
	CostUSD *float64 `json:"costUSD"`
	// Failures are the checks that failed, each with how many runs it
	// failed in, most first.
	Failures []Failure `json:"failures,omitempty"`
	// Against is the comparison with the baseline, when one was given.
	Against    *Comparison `json:"baseline,omitempty"`
	RunDetails []RunResult `json:"runDetails"`
}

// Failure is a check that failed, and in how many runs.
type Failure struct {
	Check  string `json:"check"`
	Runs   int    `json:"runs"`
	Detail string `json:"detail"`
}

// Comparison is a result against the baseline's of the same case.
type Comparison struct {
	Model    string  `json:"model"`
	Runs     int     `json:"runs"`
	Passed   int     `json:"passed"`
	PassRate float64 `json:"passRate"`
	Significance
}

func (r *Result) summarize() {
	r.Runs = len(r.RunDetails)
	var lat []float64
	cost, priced := 0.0, true
	fails := map[string]*Failure{}
	for i := range r.RunDetails {
		d := &r.RunDetails[i]
		if d.Pass {
			r.Passed++
		}
		if d.Error != "" {
			r.Errors++
		}
		r.InputTokens += d.InputTokens
		r.OutputTokens += d.OutputTokens
		cost += d.CostUSD + d.JudgeCostUSD
		priced = priced && d.Priced
		if d.Stop != "" {
			lat = append(lat, d.LatencyMs)
		}
		if d.Error != "" {
			f := fails["model"]
			if f == nil {
				f = &Failure{Check: "model", Detail: d.Error}
				fails["model"] = f
			}
			f.Runs++
		}
		for _, c := range d.Checks {
			if c.OK || d.Error != "" {
				continue
			}
			f := fails[c.Name]
			if f == nil {
				f = &Failure{Check: c.Name, Detail: c.Detail}
				fails[c.Name] = f
			}
			f.Runs++
		}
	}
	if r.Runs > 0 {
		r.PassRate = float64(r.Passed) / float64(r.Runs)
	}
	r.Interval[0], r.Interval[1] = Wilson(r.Passed, r.Runs)
	r.MedianLatencyMs = median(lat)
	if priced {
		r.CostUSD = &cost
	}
	for _, f := range fails {
		r.Failures = append(r.Failures, *f)
	}
	sort.Slice(r.Failures, func(i, j int) bool {
		a, b := r.Failures[i], r.Failures[j]
		return a.Runs > b.Runs || a.Runs == b.Runs && a.Check < b.Check
	})
}

// Redact passes every text of the report that a model, a server or a
// provider wrote through clean (the redactor of the command's secrets).
func (rep *Report) Redact(clean func(string) string) {
	for _, r := range rep.Results {
		for i := range r.Failures {
			r.Failures[i].Detail = clean(r.Failures[i].Detail)
		}
		for i := range r.RunDetails {
			d := &r.RunDetails[i]
			d.Text, d.Error = clean(d.Text), clean(d.Error)
			for j := range d.Checks {
				d.Checks[j].Detail = clean(d.Checks[j].Detail)
			}
			for j := range d.Calls {
				if a := d.Calls[j].Arguments; len(a) > 0 {
					if b, err := json.Marshal(clean(string(a))); err == nil && clean(string(a)) != string(a) {
						d.Calls[j].Arguments = b
					}
				}
			}
		}
	}
}

// AllModelErrors reports whether every run ended with its model's
// provider failing (and there was a run); a run cut short by the caller
// (cancelled) is no failure of the provider.
func (rep *Report) AllModelErrors() bool {
	n := 0
	for _, r := range rep.Results {
		for _, d := range r.RunDetails {
			if d.Stop != string(chat.StopError) {
				return false
			}
			n++
		}
	}
	return n > 0
}

// FirstError is the first run's provider error, for a message.
func (rep *Report) FirstError() string {
	for _, r := range rep.Results {
		for _, d := range r.RunDetails {
			if d.Error != "" {
				return d.Error
			}
		}
	}
	return ""
}

// Regressions are the results whose pass rate dropped with significance.
func (rep *Report) Regressions() []*Result {
	var out []*Result
	for _, r := range rep.Results {
		if r.Against != nil && r.Against.Verdict == VerdictRegression {
			out = append(out, r)
		}
	}
	return out
}

// Below are the results whose pass rate is below min.
func (rep *Report) Below(min float64) []*Result {
	var out []*Result
	for _, r := range rep.Results {
		if r.PassRate < min {
			out = append(out, r)
		}
	}
	return out
}

// MaxReport is the size of the largest baseline report read.
const MaxReport = 256 << 20

// ReadReport reads a report written with --json (the baseline).
func ReadReport(path string) (*Report, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	b, err := io.ReadAll(io.LimitReader(fh, MaxReport+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxReport {
		return nil, fmt.Errorf("%s: larger than %d MiB: not a report of mcpi eval", path, MaxReport>>20)
	}
	var rep Report
	if err := json.Unmarshal(b, &rep); err != nil {
		return nil, fmt.Errorf("%s: not an eval report (--json): %v", path, err)
	}
	if rep.Format != Format {
		return nil, fmt.Errorf("%s: not an eval report: its format is %q, want %q", path, clip(rep.Format), Format)
	}
	return &rep, nil
}

// Compare compares each result with the baseline's of the same case and
// model, or, when the baseline ran that case with one model only, with
// that one (a model against another): the verdict says whether the pass
// rate dropped with statistical significance (Dropped).
func (rep *Report) Compare(base *Report, path string) {
	rep.Baseline = path
	byCase := map[string][]*Result{}
	for _, b := range base.Results {
		byCase[b.Case] = append(byCase[b.Case], b)
	}
	for _, r := range rep.Results {
		var b *Result
		for _, c := range byCase[r.Case] {
			// The same model, of the same file when two files have
			// cases of one name.
			if c.Model == r.Model && (b == nil || c.File == r.File) {
				b = c
			}
		}
		if b == nil && len(byCase[r.Case]) == 1 {
			b = byCase[r.Case][0]
		}
		if b == nil {
			r.Against = &Comparison{Significance: Significance{Verdict: VerdictNew, P: 1}}
			continue
		}
		r.Against = &Comparison{Model: b.Model, Runs: b.Runs, Passed: b.Passed, PassRate: b.PassRate,
			Significance: Dropped(b.Passed, b.Runs, r.Passed, r.Runs)}
	}
}

// Text writes the report for a person: a line per case and model, the
// failed checks under it. w sanitises (the IOStreams' Out).
func (rep *Report) Text(w io.Writer) {
	for _, r := range rep.Results {
		fmt.Fprintf(w, "%s  %s  %s  %d/%d passed (%s)  %s\n", mark(r), r.Case, r.Model, r.Passed, r.Runs, rateWithInterval(r), figures(r))
		if a := r.Against; a != nil {
			fmt.Fprintf(w, "    baseline: %s\n", against(a))
		}
		for _, f := range r.Failures {
			fmt.Fprintf(w, "    %d× %s: %s\n", f.Runs, safetext.OneLine(f.Check), safetext.OneLine(clip(f.Detail)))
		}
	}
}

func mark(r *Result) string {
	switch {
	case r.Against != nil && r.Against.Verdict == VerdictRegression:
		return "REGRESSION"
	case r.Passed == r.Runs:
		return "ok  "
	}
	return "FAIL"
}

func rateWithInterval(r *Result) string {
	return fmt.Sprintf("%.0f%%, 95%% CI %.0f–%.0f%%", 100*r.PassRate, 100*r.Interval[0], 100*r.Interval[1])
}

func figures(r *Result) string {
	cost := "cost unknown"
	if r.CostUSD != nil {
		cost = fmt.Sprintf("$%.4f", *r.CostUSD)
	}
	return fmt.Sprintf("%d in / %d out tokens, median %s, %s", r.InputTokens, r.OutputTokens, msText(r.MedianLatencyMs), cost)
}

func msText(ms float64) string {
	if ms >= 1000 {
		return fmt.Sprintf("%.1fs", ms/1000)
	}
	return fmt.Sprintf("%.0fms", ms)
}

func against(a *Comparison) string {
	switch a.Verdict {
	case VerdictNew:
		return a.Verdict
	case VerdictInsufficient:
		return fmt.Sprintf("%s (was %d/%d with %s; %d runs are needed on each side)", a.Verdict, a.Passed, a.Runs, a.Model, MinRuns)
	}
	return fmt.Sprintf("%s (was %d/%d with %s; %s test, p = %.3g)", a.Verdict, a.Passed, a.Runs, a.Model, a.Test, a.P)
}

// Markdown writes the report as a table for a pull request: a row per case
// and model. Every text in a cell is on one line with its pipes escaped.
func (rep *Report) Markdown(w io.Writer) {
	withBase := rep.Baseline != ""
	fmt.Fprintf(w, "| case | model | pass rate | 95%% CI | tokens in/out | median latency | cost |")
	if withBase {
		fmt.Fprint(w, " baseline |")
	}
	fmt.Fprint(w, "\n|---|---|---|---|---|---|---|")
	if withBase {
		fmt.Fprint(w, "---|")
	}
	fmt.Fprintln(w)
	for _, r := range rep.Results {
		cost := "unknown"
		if r.CostUSD != nil {
			cost = fmt.Sprintf("$%.4f", *r.CostUSD)
		}
		fmt.Fprintf(w, "| %s | %s | %d/%d (%.0f%%) | %.0f–%.0f%% | %d/%d | %s | %s |", cell(r.Case), cell(r.Model), r.Passed, r.Runs, 100*r.PassRate,
			100*r.Interval[0], 100*r.Interval[1], r.InputTokens, r.OutputTokens, msText(r.MedianLatencyMs), cost)
		if withBase {
			v := ""
			if r.Against != nil {
				v = against(r.Against)
				if r.Against.Verdict == VerdictRegression {
					v = "**" + v + "**"
				}
			}
			fmt.Fprintf(w, " %s |", cell(v))
		}
		fmt.Fprintln(w)
	}
	var notes []string
	for _, r := range rep.Results {
		for _, f := range r.Failures {
			notes = append(notes, fmt.Sprintf("- %s, %s: %d× %s: %s", cell(r.Case), cell(r.Model), f.Runs, cell(f.Check), cell(clip(f.Detail))))
		}
	}
	if len(notes) > 0 {
		fmt.Fprintf(w, "\nFailed checks:\n\n%s\n", strings.Join(notes, "\n"))
	}
}

func cell(s string) string {
	return strings.ReplaceAll(safetext.OneLine(s), "|", `\|`)
}

// JUnit is the report as JUnit XML (the Ant schema): a test suite per
// model, a test case per case, failed when a run failed or the pass rate
// regressed.
func (rep *Report) JUnit() ([]byte, error) {
	type failure struct {
		Message string `xml:"message,attr"`
		Text    string `xml:",chardata"`
	}
	type testcase struct {
		Name      string   `xml:"name,attr"`
		Classname string   `xml:"classname,attr"`
		Time      string   `xml:"time,attr"`
		Failure   *failure `xml:"failure,omitempty"`
	}
	type suite struct {
		Name     string     `xml:"name,attr"`
		Tests    int        `xml:"tests,attr"`
		Failures int        `xml:"failures,attr"`
		Cases    []testcase `xml:"testcase"`
	}
	type suites struct {
		XMLName xml.Name `xml:"testsuites"`
		Suites  []*suite `xml:"testsuite"`
	}
	var doc suites
	byModel := map[string]*suite{}
	for _, r := range rep.Results {
		s := byModel[r.Model]
		if s == nil {
			s = &suite{Name: xmlText(r.Model)}
			byModel[r.Model] = s
			doc.Suites = append(doc.Suites, s)
		}
		tc := testcase{Name: xmlText(r.Case), Classname: xmlText(r.File), Time: fmt.Sprintf("%.3f", r.MedianLatencyMs/1000)}
		regressed := r.Against != nil && r.Against.Verdict == VerdictRegression
		if r.Passed < r.Runs || regressed {
			var lines []string
			for _, f := range r.Failures {
				lines = append(lines, fmt.Sprintf("%d× %s: %s", f.Runs, f.Check, f.Detail))
			}
			msg := fmt.Sprintf("%d/%d runs passed (%s)", r.Passed, r.Runs, rateWithInterval(r))
			if regressed {
				msg += "; baseline: " + against(r.Against)
			}
			tc.Failure = &failure{Message: xmlText(msg), Text: xmlText(strings.Join(lines, "\n"))}
			s.Failures++
		}
		s.Tests++
		s.Cases = append(s.Cases, tc)
	}
	b, err := xml.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	return append([]byte(xml.Header), append(b, '\n')...), nil
}

// xmlText drops what XML 1.0 cannot hold (control characters other than
// tab and newline), shown escaped instead.
func xmlText(s string) string { return safetext.Sanitize(s, true) }

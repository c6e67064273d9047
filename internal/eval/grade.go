package eval

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/mcpi-dev/mcpi/internal/schema"
)

// Call is a tool call a run made, as grading sees it.
type Call struct {
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	IsError   bool            `json:"isError,omitempty"`
}

// Outcome is what a run did: its tool calls in order, the model's final
// text, and the judge's answer when the case has a rubric.
type Outcome struct {
	Calls []Call
	Text  string
	// Judge is the judge's answer (its text); JudgeErr why there is none.
	Judge    string
	JudgeErr string
}

// Check is one expectation's verdict on a run.
type Check struct {
	Name   string `json:"check"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail,omitempty"`
}

// Grade checks a run's outcome against the case's expectations, in the
// order they are written in Expect; the run passes when every check does.
func Grade(c *Case, o *Outcome) []Check {
	e := &c.Expect
	var out []Check
	add := func(name string, ok bool, format string, args ...any) {
		ch := Check{Name: name, OK: ok}
		if !ok {
			ch.Detail = fmt.Sprintf(format, args...)
		}
		out = append(out, ch)
	}
	called := make([]string, len(o.Calls))
	for i, cl := range o.Calls {
		called[i] = cl.Tool
	}
	for _, t := range e.Called {
		add("called "+t, slices.Contains(called, t), "%s was not called (calls: %s)", t, list(called))
	}
	if len(e.CalledInOrder) > 0 {
		next := 0
		for _, t := range called {
			if next < len(e.CalledInOrder) && t == e.CalledInOrder[next] {
				next++
			}
		}
		ok := next == len(e.CalledInOrder)
		missing := ""
		if !ok {
			missing = e.CalledInOrder[next]
		}
		add("called in order "+strings.Join(e.CalledInOrder, ", "), ok, "no call of %s in its place (calls: %s)", missing, list(called))
	}
	for _, t := range e.NotCalled {
		add("not called "+t, !slices.Contains(called, t), "%s was called", t)
	}
	if e.MaxCalls != nil {
		add(fmt.Sprintf("at most %d calls", *e.MaxCalls), len(o.Calls) <= *e.MaxCalls, "%d calls", len(o.Calls))
	}
	for i := range e.Args {
		a := &e.Args[i]
		ok, why := a.grade(o.Calls)
		add(a.name(), ok, "%s", why)
	}
	if t := e.Text; t != nil {
		if t.Contains != "" {
			add(fmt.Sprintf("text contains %q", t.Contains), strings.Contains(o.Text, t.Contains), "the text does not contain it: %s", quoted(o.Text))
		}
		if t.re != nil {
			add(fmt.Sprintf("text matches %q", t.Matches), t.re.MatchString(o.Text), "the text does not match: %s", quoted(o.Text))
		}
	}
	if e.Rubric != "" {
		out = append(out, gradeRubric(o))
	}
	return out
}

// Passed reports whether every check passed.
func Passed(checks []Check) bool {
	for _, c := range checks {
		if !c.OK {
			return false
		}
	}
	return true
}

func (a *ArgCheck) name() string {
	at := a.Tool + " arguments"
	if a.Pointer != "" {
		at = a.Tool + " " + a.Pointer
	}
	switch {
	case a.hasEq:
		b, _ := json.Marshal(a.equals)
		return at + " equals " + string(b)
	case a.re != nil:
		return fmt.Sprintf("%s matches %q", at, a.Matches)
	}
	return at + " validate against the schema"
}

// grade passes when one call of the tool at least passes; otherwise it
// says why the last call of it did not.
func (a *ArgCheck) grade(calls []Call) (bool, string) {
	why := fmt.Sprintf("%s was not called", a.Tool)
	for _, c := range calls {
		if c.Tool != a.Tool {
			continue
		}
		var args any
		if err := json.Unmarshal(c.Arguments, &args); err != nil {
			why = "the arguments are not JSON"
			continue
		}
		v, found := schema.Lookup(args, a.pointer)
		switch {
		case !found:
			why = fmt.Sprintf("no value at %s in %s", a.Pointer, clip(string(c.Arguments)))
		case a.hasEq:
			if reflect.DeepEqual(v, a.equals) {
				return true, ""
			}
			why = fmt.Sprintf("the value is %s", clip(compact(v)))
		case a.re != nil:
			s, isStr := v.(string)
			if isStr && a.re.MatchString(s) {
				return true, ""
			}
			why = fmt.Sprintf("the value %s does not match", clip(compact(v)))
		default:
			ps := a.schema.Validate(v)
			if ps == nil {
				return true, ""
			}
			why = "invalid: " + clip(ps.Error())
		}
	}
	return false, why
}

func compact(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func list(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

func clip(s string) string {
	if r := []rune(s); len(r) > 120 {
		return string(r[:120]) + "…"
	}
	return s
}

func quoted(s string) string { return fmt.Sprintf("%q", clip(s)) }

// Verdict is a judge's grade of a run.
type Verdict struct {
	Pass   bool   `json:"pass"`
	Reason string `json:"reason"`
}

// ParseVerdict reads a judge's answer strictly: one JSON object with pass
// (a boolean) and reason (a text), nothing else around it but white space
// (or a fence of ```json, as models write). Anything else is an error that
// says what was wrong: a judge that answers garbage fails the check, it
// never passes it.
func ParseVerdict(answer string) (Verdict, error) {
	s := strings.TrimSpace(answer)
	if inner, ok := strings.CutPrefix(s, "```json"); ok {
		if inner, ok = strings.CutSuffix(inner, "```"); ok {
			s = strings.TrimSpace(inner)
		}
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	var v struct {
		Pass   *bool   `json:"pass"`
		Reason *string `json:"reason"`
	}
	if err := dec.Decode(&v); err != nil {
		return Verdict{}, fmt.Errorf("the judge's answer is not a verdict ({\"pass\": true|false, \"reason\": \"…\"}): %s", quoted(answer))
	}
	if dec.More() || !bytes.Equal(bytes.TrimSpace([]byte(s[dec.InputOffset():])), nil) {
		return Verdict{}, fmt.Errorf("the judge's answer has more than a verdict: %s", quoted(answer))
	}
	if v.Pass == nil || v.Reason == nil {
		return Verdict{}, fmt.Errorf("the judge's verdict lacks pass or reason: %s", quoted(answer))
	}
	return Verdict{Pass: *v.Pass, Reason: *v.Reason}, nil
}

func gradeRubric(o *Outcome) Check {
	ch := Check{Name: "rubric"}
	if o.JudgeErr != "" {
		ch.Detail = "the judge failed: " + o.JudgeErr
		return ch
	}
	v, err := ParseVerdict(o.Judge)
	if err != nil {
		ch.Detail = err.Error()
		return ch
	}
	ch.OK = v.Pass
	if !v.Pass {
		ch.Detail = "the judge: " + clip(v.Reason)
	}
	return ch
}

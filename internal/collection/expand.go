package collection

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Vars are what `${NAME}` stands for in a step: the values captured by the
// steps before it, then the environment.
type Vars struct {
	Captures map[string]any
	Env      func(string) (string, bool)
}

func (v Vars) get(name string) (any, bool) {
	if x, ok := v.Captures[name]; ok {
		return x, true
	}
	if v.Env != nil {
		if s, ok := v.Env(name); ok {
			return s, true
		}
	}
	return nil, false
}

// Expand returns the step with `${NAME}` replaced in its strings (its
// target, arguments, params, answers and expected values); `$${` is a
// literal `${`. An argument that is exactly `${NAME}` of a captured value
// takes the value itself, a number stays a number. A name neither captured
// nor in the environment is an error: a test must not pass by sending an
// empty string.
func (s *Step) Expand(v Vars) (*Step, error) {
	e := expander{vars: v}
	out := *s
	out.Call = e.str(s.Call)
	out.Prompt = e.str(s.Prompt)
	out.Read = e.str(s.Read)
	out.Request = e.str(s.Request)
	if s.Args != nil {
		out.Args, _ = e.value(s.Args).(map[string]any)
	}
	out.Params = e.value(s.Params)
	if s.Complete != nil {
		c := *s.Complete
		c.Prompt, c.Template, c.Argument, c.Value = e.str(c.Prompt), e.str(c.Template), e.str(c.Argument), e.str(c.Value)
		if c.Context != nil {
			c.Context = map[string]string{}
			for k, v := range s.Complete.Context {
				c.Context[k] = e.str(v)
			}
		}
		out.Complete = &c
	}
	if s.Answers != nil {
		a := *s.Answers
		a.Sampling = e.str(a.Sampling)
		a.SamplingModel = e.str(a.SamplingModel)
		a.Roots = nil
		for _, r := range s.Answers.Roots {
			a.Roots = append(a.Roots, e.str(r))
		}
		if a.Fields != nil {
			a.Fields, _ = e.value(a.Fields).(map[string]any)
		}
		out.Answers = &a
	}
	x := s.Expect
	x.Text = e.match(s.Expect.Text)
	if s.Expect.Error != nil {
		ee := *s.Expect.Error
		ee.Message = e.match(ee.Message)
		x.Error = &ee
	}
	x.Path = nil
	for _, p := range s.Expect.Path {
		x.Path = append(x.Path, PathExpect{Path: p.Path, Match: *e.match(&p.Match)})
	}
	out.Expect = x
	if len(e.missing) > 0 {
		return nil, fmt.Errorf("no value for %s (neither captured by an earlier step nor in the environment)", strings.Join(e.missing, ", "))
	}
	return &out, nil
}

type expander struct {
	vars    Vars
	missing []string
}

func (e *expander) match(m *Match) *Match {
	if m == nil {
		return nil
	}
	out := *m
	out.Equals = e.value(m.Equals)
	out.Contains = e.str(m.Contains)
	out.Matches = e.str(m.Matches)
	return &out
}

func (e *expander) value(v any) any {
	switch x := v.(type) {
	case string:
		if name, ok := whole(x); ok {
			if val, found := e.vars.get(name); found {
				return val
			}
		}
		return e.str(x)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, val := range x {
			out[k] = e.value(val)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, val := range x {
			out[i] = e.value(val)
		}
		return out
	}
	return v
}

// whole reports whether s is exactly one `${NAME}`.
func whole(s string) (string, bool) {
	if !strings.HasPrefix(s, "${") || !strings.HasSuffix(s, "}") {
		return "", false
	}
	name := s[2 : len(s)-1]
	return name, validName(name)
}

func (e *expander) str(s string) string {
	if !strings.Contains(s, "${") {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		if i > 0 && s[i-1] == '$' {
			b.WriteString(s[:i-1])
			b.WriteString("${")
			s = s[i+2:]
			continue
		}
		end := strings.IndexByte(s[i:], '}')
		if end < 0 || !validName(s[i+2:i+end]) {
			b.WriteString(s[:i+2])
			s = s[i+2:]
			continue
		}
		name := s[i+2 : i+end]
		b.WriteString(s[:i])
		if val, ok := e.vars.get(name); ok {
			b.WriteString(text(val))
		} else {
			e.missing = append(e.missing, name)
		}
		s = s[i+end+1:]
	}
}

// text is a value in a string: a string as itself, anything else as JSON.
func text(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Expand returns the server with `${NAME}` replaced in its command, URL and
// configuration name.
func (s *Server) Expand(v Vars) (*Server, error) {
	e := expander{vars: v}
	out := &Server{URL: e.str(s.URL), Config: e.str(s.Config)}
	for _, a := range s.Command {
		out.Command = append(out.Command, e.str(a))
	}
	if len(e.missing) > 0 {
		return nil, fmt.Errorf("server: no value for %s in the environment", strings.Join(e.missing, ", "))
	}
	return out, nil
}

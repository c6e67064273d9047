package eval

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/mcpi-dev/mcpi/internal/llm"
	"github.com/mcpi-dev/mcpi/internal/schema"
	"github.com/mcpi-dev/mcpi/internal/strictyaml"
)

// MaxFileSize is the size of the largest case file read.
const MaxFileSize = 1 << 20

// File is a file of cases.
type File struct {
	// Path is where it was read from.
	Path string `yaml:"-"`
	// Judge is the model that grades rubrics ("openai:gpt-5.4-mini").
	Judge string `yaml:"judge"`
	// System is the system prompt of every case that has none of its own.
	System string `yaml:"system"`
	Cases  []Case `yaml:"cases"`
}

// Case is one thing a model is asked to do, and what must happen.
type Case struct {
	Name string `yaml:"name"`
	// Prompt is the user's message; Conversation, user messages sent one
	// after the other (each answered before the next), instead of it.
	Prompt       string   `yaml:"prompt"`
	Conversation []string `yaml:"conversation"`
	System       string   `yaml:"system"`
	Expect       Expect   `yaml:"expect"`
	// Line is the case's line in its file.
	Line int `yaml:"-"`
}

// Messages are the user messages of the case, in order.
func (c *Case) Messages() []string {
	if len(c.Conversation) > 0 {
		return c.Conversation
	}
	return []string{c.Prompt}
}

// Expect is what must happen in a run of a case; every check given must
// pass for the run to pass.
type Expect struct {
	// Called are tools that must each be called at least once, in any
	// order; CalledInOrder, tools whose calls must come in this order
	// (other calls between them allowed).
	Called        []string `yaml:"called"`
	CalledInOrder []string `yaml:"calledInOrder"`
	// NotCalled are tools that must not be called.
	NotCalled []string `yaml:"notCalled"`
	// MaxCalls is the most tool calls the run may make.
	MaxCalls *int `yaml:"maxCalls"`
	// Args are checks of the arguments of a tool's calls: one call of the
	// tool at least must pass each.
	Args []ArgCheck `yaml:"args"`
	// Text checks the model's final text.
	Text *TextCheck `yaml:"text"`
	// Rubric is graded by the file's judge model: what a good answer does.
	Rubric string `yaml:"rubric"`
}

// ArgCheck checks the arguments of a call of Tool: the value at the JSON
// Pointer (the whole arguments when empty) equals a value, is a string
// matching a regular expression, or validates against a JSON Schema.
type ArgCheck struct {
	Tool    string    `yaml:"tool"`
	Pointer string    `yaml:"pointer"`
	Equals  yaml.Node `yaml:"equals"`
	Matches string    `yaml:"matches"`
	Schema  yaml.Node `yaml:"schema"`

	equals  any
	hasEq   bool
	re      *regexp.Regexp
	schema  *schema.Schema
	pointer []string
}

// TextCheck checks the model's final text.
type TextCheck struct {
	Contains string `yaml:"contains"`
	Matches  string `yaml:"matches"`
	re       *regexp.Regexp
}

// ReadFile reads and checks a case file.
func ReadFile(path string) (*File, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(fh, MaxFileSize+1))
	fh.Close()
	var f *File
	if err == nil {
		f, err = Parse(data)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	f.Path = path
	return f, nil
}

// Parse reads a case file: an unknown key, or a key with no value, is
// refused with its line (a misspelt expectation must not pass by
// expecting nothing), and so is a case without a check.
func Parse(data []byte) (*File, error) {
	if len(data) > MaxFileSize {
		return nil, fmt.Errorf("the case file is larger than %d bytes", MaxFileSize)
	}
	var f File
	root, err := strictyaml.Decode(data, &f)
	switch {
	case errors.Is(err, strictyaml.ErrEmpty):
		return nil, errors.New("the case file is empty")
	case err != nil:
		return nil, err
	}
	if cases := strictyaml.Field(root, "cases"); cases != nil && cases.Kind == yaml.SequenceNode {
		for i, n := range cases.Content {
			if i < len(f.Cases) {
				f.Cases[i].Line = n.Line
			}
		}
	}
	if err := f.check(); err != nil {
		return nil, err
	}
	return &f, nil
}

func (f *File) check() error {
	if len(f.Cases) == 0 {
		return errors.New("the file has no cases")
	}
	// A judge is a spec, or a name of the user's model settings, looked
	// up when the run opens it.
	if strings.Contains(f.Judge, ":") {
		if _, err := llm.ParseSpec(f.Judge); err != nil {
			return fmt.Errorf("judge: %w", err)
		}
	}
	seen := map[string]bool{}
	for i := range f.Cases {
		c := &f.Cases[i]
		if err := c.check(f); err != nil {
			return fmt.Errorf("line %d: case %d: %w", c.Line, i+1, err)
		}
		if seen[c.Name] {
			return fmt.Errorf("line %d: a second case named %q", c.Line, c.Name)
		}
		seen[c.Name] = true
	}
	return nil
}

func (c *Case) check(f *File) error {
	switch {
	case strings.TrimSpace(c.Name) == "":
		return errors.New("a case needs a name")
	case c.Prompt != "" && len(c.Conversation) > 0:
		return errors.New("give prompt or conversation, not both")
	case c.Prompt == "" && len(c.Conversation) == 0:
		return errors.New("a case needs a prompt or a conversation")
	}
	for _, m := range c.Conversation {
		if m == "" {
			return errors.New("conversation: a message is empty")
		}
	}
	e := &c.Expect
	if len(e.Called)+len(e.CalledInOrder)+len(e.NotCalled)+len(e.Args) == 0 && e.MaxCalls == nil && e.Text == nil && e.Rubric == "" {
		return errors.New("expect: give at least one check (called, calledInOrder, notCalled, maxCalls, args, text, rubric)")
	}
	if e.MaxCalls != nil && *e.MaxCalls < 0 {
		return errors.New("expect: maxCalls is a count, 0 or more")
	}
	if e.Rubric != "" && f.Judge == "" {
		return errors.New("expect: a rubric needs the file's judge: the model that grades it (judge: openai:gpt-5.4-mini)")
	}
	for i := range e.Args {
		if err := e.Args[i].compile(); err != nil {
			return fmt.Errorf("expect: args %d: %w", i+1, err)
		}
	}
	if t := e.Text; t != nil {
		if t.Contains == "" && t.Matches == "" {
			return errors.New("expect: text: give contains or matches")
		}
		if t.Matches != "" {
			re, err := regexp.Compile(t.Matches)
			if err != nil {
				return fmt.Errorf("expect: text: matches: %w", err)
			}
			t.re = re
		}
	}
	return nil
}

func (a *ArgCheck) compile() error {
	if a.Tool == "" {
		return errors.New("tool: name the tool whose arguments are checked")
	}
	toks, err := schema.SplitPointer(a.Pointer)
	if err != nil {
		return fmt.Errorf("pointer: %w", err)
	}
	a.pointer = toks
	n := 0
	if a.Equals.Kind != 0 {
		n++
		var v any
		if err := a.Equals.Decode(&v); err != nil {
			return fmt.Errorf("equals: %w", err)
		}
		if a.equals, err = jsonValue(v); err != nil {
			return fmt.Errorf("equals: %w", err)
		}
		a.hasEq = true
	}
	if a.Matches != "" {
		n++
		if a.re, err = regexp.Compile(a.Matches); err != nil {
			return fmt.Errorf("matches: %w", err)
		}
	}
	if a.Schema.Kind != 0 {
		n++
		var v any
		if err := a.Schema.Decode(&v); err != nil {
			return fmt.Errorf("schema: %w", err)
		}
		raw, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("schema: %w", err)
		}
		if a.schema, err = schema.Compile(raw); err != nil {
			return fmt.Errorf("schema: %w", err)
		}
	}
	if n != 1 {
		return errors.New("give one of equals, matches or schema")
	}
	return nil
}

// jsonValue is v as encoding/json decodes it: what a tool call's arguments
// are compared with.
func jsonValue(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	err = json.Unmarshal(b, &out)
	return out, err
}

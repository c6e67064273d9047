package collection

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Saved is a call a person made, as a step of a collection: the tool and
// its arguments, the answers given to what the server asked while it ran,
// and the result as its expectation (isError, and its text as a snapshot).
type Saved struct {
	Name    string
	Call    string
	Args    map[string]any
	Answers *Answers
	IsError bool
	Text    string
	// Server is the server the call went to: a new file names it
	// (server:), so that mcpi test FILE runs it without a TARGET. Nil
	// when it is not to be written (its command line holds a secret).
	Server *Server
}

// savedStep is how a Saved step is written, keys in this order.
type savedStep struct {
	Name    string         `yaml:"name,omitempty"`
	Call    string         `yaml:"call"`
	Args    map[string]any `yaml:"args,omitempty"`
	Answers *savedAnswers  `yaml:"answers,omitempty"`
	Expect  savedExpect    `yaml:"expect"`
}

type savedAnswers struct {
	Sampling string         `yaml:"sampling,omitempty"`
	Elicit   string         `yaml:"elicit,omitempty"`
	Fields   map[string]any `yaml:"fields,omitempty"`
	Roots    []string       `yaml:"roots,omitempty"`
}

// savedExpect is how a step's expectations are written; a snapshot of
// several lines is not in it, but written after it as Update writes one
// (renderSnapshot: a | block, whatever the YAML library would choose).
type savedExpect struct {
	IsError  bool    `yaml:"isError"`
	Snapshot *string `yaml:"snapshot,omitempty"`
}

// NewFileHeader begins a collection file that Append creates.
const NewFileHeader = "# Calls saved from mcpi connect: run them with\n#   mcpi test FILE -- SERVER\n# (docs/test.md). Each step expects the result it had when it was saved.\nsteps:\n"

// newFileWithServer begins a collection file that names its server.
const newFileWithServer = "# Calls saved from mcpi connect: run them with\n#   mcpi test FILE\n# (docs/test.md). Each step expects the result it had when it was saved.\n"

// savedServer is how a new file's server is written.
type savedServer struct {
	Server struct {
		Command []string `yaml:"command,omitempty,flow"`
		URL     string   `yaml:"url,omitempty"`
		Config  string   `yaml:"config,omitempty"`
	} `yaml:"server"`
}

// newFile is the beginning of a new collection file: its header, the
// server when known, and steps:.
func newFile(server *Server) ([]byte, error) {
	if server == nil {
		return []byte(NewFileHeader), nil
	}
	var v savedServer
	// As it was: a "${" in it is a literal one.
	for _, w := range server.Command {
		v.Server.Command = append(v.Server.Command, literal(w).(string))
	}
	v.Server.URL, v.Server.Config = literal(server.URL).(string), literal(server.Config).(string)
	b, err := yaml.Marshal(v)
	if err != nil {
		return nil, err
	}
	return []byte(newFileWithServer + string(b) + "steps:\n"), nil
}

// Append returns the collection data with s added as its last step, the
// rest of the file unchanged; empty data begins a new file. The file must
// end with its steps as a block list (steps: on a line of its own, each
// step "- " on its own line), so that the step is appended where it reads.
// The result is parsed again and must have the new step last: otherwise
// nothing is to be written.
func Append(data []byte, s Saved) ([]byte, error) {
	var before *File
	indent := "  "
	if len(bytes.TrimSpace(data)) == 0 {
		var err error
		if data, err = newFile(s.Server); err != nil {
			return nil, err
		}
	} else {
		f, err := Parse(data)
		if err != nil {
			return nil, err
		}
		before = f
		if indent, err = stepsIndent(data); err != nil {
			return nil, err
		}
	}
	// What was sent is written as it was: a "${" in it is a literal one
	// (mcpi test would read a variable there).
	args, _ := literal(s.Args).(map[string]any)
	item := savedStep{Name: s.Name, Call: s.Call, Args: args, Expect: savedExpect{IsError: s.IsError}}
	block := strings.Contains(s.Text, "\n") && blockable(s.Text)
	if !block {
		item.Expect.Snapshot = &s.Text
	}
	if a := s.Answers; a != nil && (a.Sampling != "" || a.Elicit != "" || a.Roots != nil) {
		fields, _ := literal(a.Fields).(map[string]any)
		var rs []string
		for _, r := range a.Roots {
			rs = append(rs, literal(r).(string))
		}
		item.Answers = &savedAnswers{Sampling: literal(a.Sampling).(string), Elicit: a.Elicit, Fields: fields, Roots: rs}
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(item); err != nil {
		return nil, err
	}
	enc.Close()
	lines := strings.Split(strings.TrimRight(buf.String(), "\n"), "\n")
	if block {
		// expect: is the step's last key: its snapshot goes last.
		for _, l := range renderSnapshot("  ", s.Text) {
			lines = append(lines, strings.TrimSuffix(l, "\n"))
		}
	}
	var b bytes.Buffer
	b.Write(data)
	if !bytes.HasSuffix(data, []byte("\n")) {
		b.WriteByte('\n')
	}
	for i, l := range lines {
		prefix := indent + "  "
		if i == 0 {
			prefix = indent + "- "
		}
		if l == "" {
			b.WriteString("\n")
			continue
		}
		b.WriteString(prefix + l + "\n")
	}
	out := b.Bytes()
	if len(out) > MaxFileSize {
		return nil, fmt.Errorf("the collection would be larger than %d bytes (the largest mcpi test reads): the result is too large to keep as a snapshot", MaxFileSize)
	}
	after, err := Parse(out)
	if err != nil {
		return nil, fmt.Errorf("the collection with the new step does not parse (nothing written): %w", err)
	}
	n := 0
	if before != nil {
		n = len(before.Steps)
	}
	last := after.Steps[len(after.Steps)-1]
	back, err := last.Expand(Vars{})
	if err != nil || len(after.Steps) != n+1 || last.Call != s.Call || last.Expect.Snapshot == nil || *last.Expect.Snapshot != s.Text || !sameArgs(back.Args, s.Args) {
		return nil, errors.New("the new step does not read back as the collection's last (nothing written): keep steps: last in the file, as a block list")
	}
	return out, nil
}

// stepsIndent returns the indentation of the items of the file's steps
// list, which must be its last top-level key and a block sequence.
func stepsIndent(data []byte) (string, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return "", err
	}
	root := doc.Content[0]
	if len(root.Content) < 2 || root.Content[len(root.Content)-2].Value != "steps" {
		return "", errors.New("steps: is not the file's last key: a step saved at its end would not be one of them")
	}
	steps := root.Content[len(root.Content)-1]
	if steps.Kind != yaml.SequenceNode || steps.Style&yaml.FlowStyle != 0 || len(steps.Content) == 0 {
		return "", errors.New("steps: is not a block list (\"- \" items on lines of their own)")
	}
	lines := strings.Split(string(data), "\n")
	first := steps.Content[0]
	if first.Line-1 >= len(lines) {
		return "", errors.New("steps: cannot find its first item")
	}
	l := lines[first.Line-1]
	dash := strings.LastIndex(l[:min(len(l), max(first.Column-1, 0))], "-")
	if dash < 0 || strings.TrimSpace(l[:dash]) != "" {
		return "", errors.New("steps: its first item does not begin a line")
	}
	return l[:dash], nil
}

// literal returns v with every "${" in its strings written "$${", which
// a step reads back as the "${" it was.
func literal(v any) any {
	switch x := v.(type) {
	case string:
		return strings.ReplaceAll(x, "${", "$${")
	case map[string]any:
		if x == nil {
			return x
		}
		out := make(map[string]any, len(x))
		for k, val := range x {
			out[k] = literal(val)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, val := range x {
			out[i] = literal(val)
		}
		return out
	}
	return v
}

// sameArgs compares arguments as JSON reads them.
func sameArgs(a, b map[string]any) bool {
	if len(a) == 0 && len(b) == 0 {
		return true
	}
	return reflect.DeepEqual(normalize(a), normalize(b))
}

// Package collection reads the collections of `mcpi test`: files of steps
// (a tool call, a prompt, a resource read, a raw JSON-RPC request), each
// with the answers to give the server while it runs, expectations on its
// result and values to capture for the steps after it.
//
// # Why YAML
//
// A collection is written by a person and read in review, so the format is
// YAML rather than JSON or a format of mcpi's own:
//
//   - comments: a step says why it expects what it expects, and a disabled
//     step stays in the file, commented out;
//   - multi-line strings: an expected text or a prompt's argument of several
//     lines is written as it reads (`|`), without escapes;
//   - ubiquity: every editor highlights it, every CI system's own files are
//     in it (GitHub Actions, GitLab CI), JSON is valid YAML, and the
//     arguments of a call are written as the JSON objects they are.
//
// A plain-text format in Hurl's spirit reads well for HTTP, whose requests
// are text; an MCP request is a JSON object, which YAML writes without a
// grammar of its own to learn.
//
// # Bounds
//
// A collection can come from anywhere (a pull request), so reading one is
// bounded: a file over MaxFileSize is refused before it is parsed, and so is
// a document whose aliases would expand past MaxNodes nodes (a "billion
// laughs" YAML bomb is refused in the time it takes to count its nodes once,
// each anchor's size computed once).
package collection

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// MaxFileSize is the size of the largest collection file read.
const MaxFileSize = 1 << 20

// MaxNodes is the largest number of YAML nodes a collection may have once
// its aliases are expanded.
const MaxNodes = 100_000

// File is a collection: its server, when it names one, and its steps.
type File struct {
	// Path is where the file was read from (for messages).
	Path string `yaml:"-"`
	// Server is the server the file names; nil when it takes the TARGET
	// from the command line.
	Server *Server `yaml:"server"`
	// Secrets names the environment variables whose values no report,
	// trace or -v line may show, whatever their names (a name that says
	// credential, API_KEY, is one without being listed).
	Secrets []string `yaml:"secrets"`
	Steps   []Step   `yaml:"steps"`
	// Refs are the names the file's `${NAME}`s refer to, in the order
	// they first appear: captures or environment variables.
	Refs []string `yaml:"-"`
}

// MarksSecret reports whether the file's secrets: key names the
// environment variable name.
func (f *File) MarksSecret(name string) bool {
	for _, s := range f.Secrets {
		if s == name {
			return true
		}
	}
	return false
}

// Server names the server of a collection: exactly one of its fields.
type Server struct {
	// Command is a stdio server's command line.
	Command []string `yaml:"command"`
	// URL is a Streamable HTTP (or legacy SSE) server's endpoint.
	URL string `yaml:"url"`
	// Config is the name of a server in an mcpServers configuration file.
	Config string `yaml:"config"`
}

// The kinds of step.
const (
	KindCall     = "call"
	KindPrompt   = "prompt"
	KindRead     = "read"
	KindRequest  = "request"
	KindComplete = "complete"
)

// Step is one request of a collection, its answers, expectations and
// captures.
type Step struct {
	Name string `yaml:"name"`
	// Exactly one of Call (a tool's name), Prompt (a prompt's name), Read
	// (a resource's URI), Request (a JSON-RPC method) and Complete (a
	// completion/complete) is set.
	Call     string      `yaml:"call"`
	Prompt   string      `yaml:"prompt"`
	Read     string      `yaml:"read"`
	Request  string      `yaml:"request"`
	Complete *Completion `yaml:"complete"`
	// Args are a tool's arguments (any JSON) or a prompt's (strings).
	Args map[string]any `yaml:"args"`
	// Params are a raw request's params.
	Params  any               `yaml:"params"`
	Answers *Answers          `yaml:"answers"`
	Expect  Expect            `yaml:"expect"`
	Capture map[string]string `yaml:"capture"`
	// Line is the step's line in its file.
	Line int `yaml:"-"`
	// SnapshotKey is the `snapshot:` key of the step's expectations, when
	// it has one, and SnapshotValue its value: where --update writes.
	SnapshotKey, SnapshotValue *yaml.Node `yaml:"-"`
}

// Completion is a completion/complete step: an argument of a prompt, or a
// variable of a resource template, and what has been typed of it.
type Completion struct {
	Prompt   string `yaml:"prompt"`
	Template string `yaml:"template"`
	Argument string `yaml:"argument"`
	Value    string `yaml:"value"`
	// Context are the arguments already chosen (2025-06-18 and later).
	Context map[string]string `yaml:"context"`
}

// Answers are what mcpi answers the server's requests with while a step
// runs.
type Answers struct {
	// Sampling is the text of the reply to sampling/createMessage
	// (sampling: TEXT); SamplingModel the model that answers it instead
	// (sampling: {model: PROVIDER:MODEL}).
	Sampling      string `yaml:"-"`
	SamplingModel string `yaml:"-"`
	// Elicit is the action of the answer to elicitation/create: accept,
	// decline or cancel; Fields the content of an accepted one.
	Elicit string         `yaml:"elicit"`
	Fields map[string]any `yaml:"fields"`
	// Roots answer roots/list: directories or file:// URIs.
	Roots []string `yaml:"roots"`
}

// UnmarshalYAML reads answers whose sampling is a text or a model.
func (a *Answers) UnmarshalYAML(n *yaml.Node) error {
	type plain Answers
	var raw struct {
		plain    `yaml:",inline"`
		Sampling yaml.Node `yaml:"sampling"`
	}
	if err := n.Decode(&raw); err != nil {
		return err
	}
	*a = Answers(raw.plain)
	switch s := &raw.Sampling; s.Kind {
	case 0:
	case yaml.MappingNode:
		var m struct {
			Model string `yaml:"model"`
		}
		if err := s.Decode(&m); err != nil {
			return err
		}
		if m.Model == "" {
			return fmt.Errorf("line %d: answers: sampling: give a text, or the model that answers: {model: PROVIDER:MODEL}", s.Line)
		}
		a.SamplingModel = m.Model
	default:
		return s.Decode(&a.Sampling)
	}
	return nil
}

// Expect are the expectations on a step's result; the zero value expects
// only that the request got a result.
type Expect struct {
	// Error expects the request to fail with a JSON-RPC error; without it
	// a request that fails fails its step.
	Error        *ErrorExpect `yaml:"error"`
	IsError      *bool        `yaml:"isError"`
	Text         *Match       `yaml:"text"`
	Path         PathExpects  `yaml:"path"`
	OutputSchema bool         `yaml:"outputSchema"`
	Count        *int         `yaml:"count"`
	MaxDuration  Duration     `yaml:"maxDuration"`
	// Snapshot is the result's text as it was when --update wrote it (or
	// a person did); HasSnapshot says the key is there, even empty.
	Snapshot    *string `yaml:"snapshot"`
	HasSnapshot bool    `yaml:"-"`
}

// ErrorExpect is the JSON-RPC error a step expects: its code, its message,
// or both.
type ErrorExpect struct {
	Code    *int   `yaml:"code"`
	Message *Match `yaml:"message"`
}

// Match is how a value is expected: equal to a value, containing a text, or
// matching a regular expression (RE2 syntax); any of them that is set must
// hold.
type Match struct {
	Equals   any    `yaml:"equals"`
	Contains string `yaml:"contains"`
	Matches  string `yaml:"matches"`
	// set records which were written (equals: null is an expectation).
	hasEquals bool
}

// UnmarshalYAML reads a Match, remembering whether equals was written.
func (m *Match) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: want a mapping of equals, contains or matches", n.Line)
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch k.Value {
		case "equals":
			m.hasEquals = true
			if err := v.Decode(&m.Equals); err != nil {
				return err
			}
		case "contains":
			if err := v.Decode(&m.Contains); err != nil {
				return err
			}
		case "matches":
			if err := v.Decode(&m.Matches); err != nil {
				return err
			}
		default:
			return fmt.Errorf("line %d: unknown expectation %q (want equals, contains or matches)", k.Line, k.Value)
		}
	}
	return nil
}

// HasEquals reports whether equals was given.
func (m *Match) HasEquals() bool { return m.hasEquals }

// PathExpect is an expectation on the value at a path of the result.
type PathExpect struct {
	Path  string
	Match Match
}

// PathExpects are the expectations of `path:`, in the file's order.
type PathExpects []PathExpect

// UnmarshalYAML reads a mapping of paths to matches, keeping its order.
func (p *PathExpects) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: path: want a mapping of paths to {equals, matches, contains}", n.Line)
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		var m Match
		if err := n.Content[i+1].Decode(&m); err != nil {
			return err
		}
		*p = append(*p, PathExpect{Path: n.Content[i].Value, Match: m})
	}
	return nil
}

// Duration is a time.Duration written as Go writes one ("200ms", "1.5s").
type Duration time.Duration

// UnmarshalYAML reads a duration.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := time.ParseDuration(n.Value)
	if err != nil || v < 0 {
		return fmt.Errorf("line %d: %q is not a duration (like 200ms or 1.5s)", n.Line, n.Value)
	}
	*d = Duration(v)
	return nil
}

// Kind is the kind of the step: KindCall, KindPrompt, KindRead or
// KindRequest.
func (s *Step) Kind() string {
	switch {
	case s.Call != "":
		return KindCall
	case s.Prompt != "":
		return KindPrompt
	case s.Read != "":
		return KindRead
	case s.Complete != nil:
		return KindComplete
	}
	return KindRequest
}

// Title is the step's name, else what it does ("call echo").
func (s *Step) Title() string {
	if s.Name != "" {
		return s.Name
	}
	switch s.Kind() {
	case KindCall:
		return "call " + s.Call
	case KindPrompt:
		return "prompt " + s.Prompt
	case KindRead:
		return "read " + s.Read
	case KindComplete:
		c := s.Complete
		if c.Prompt != "" {
			return "complete prompt " + c.Prompt + " " + c.Argument
		}
		return "complete template " + c.Template + " " + c.Argument
	}
	return "request " + s.Request
}

// ReadData reads the text of the collection at path: at most MaxFileSize
// bytes, a larger file refused before it is all read.
func ReadData(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err == nil && len(data) > MaxFileSize {
		err = ErrTooLarge
	}
	return data, err
}

// ReadFile reads and parses the collection at path.
func ReadFile(path string) (*File, error) {
	data, err := ReadData(path)
	if err != nil {
		return nil, err
	}
	c, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	c.Path = path
	return c, nil
}

// ErrTooLarge is the error of a file over MaxFileSize.
var ErrTooLarge = fmt.Errorf("the collection is larger than %d bytes", MaxFileSize)

// Parse parses a collection.
func Parse(data []byte) (*File, error) {
	if len(data) > MaxFileSize {
		return nil, ErrTooLarge
	}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("the collection is empty")
		}
		return nil, err
	}
	if n := expanded(&doc, map[*yaml.Node]int{}, 0); n > MaxNodes {
		return nil, fmt.Errorf("the collection expands to more than %d YAML nodes (its aliases repeat too much)", MaxNodes)
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("line %d: a collection is a mapping with server and steps", root.Line)
	}
	if err := checkShape(root, fileShape, map[shapeAt]bool{}); err != nil {
		return nil, err
	}
	var f File
	// Decoded with its aliases expanded (within MaxNodes, counted above):
	// the YAML library's own guard would refuse a document far smaller.
	if err := unalias(root, map[*yaml.Node]*yaml.Node{}).Decode(&f); err != nil {
		return nil, err
	}
	if steps := field(root, "steps"); steps != nil && steps.Kind == yaml.SequenceNode {
		for i, n := range steps.Content {
			if i < len(f.Steps) {
				f.Steps[i].Line = n.Line
				if e := field(n, "expect"); e != nil {
					if k, v := fieldKV(e, "snapshot"); k != nil {
						f.Steps[i].Expect.HasSnapshot = true
						if raw := rawField(n, "expect"); n.Kind != yaml.AliasNode && raw != nil && raw.Kind != yaml.AliasNode && ownKey(e, "snapshot") {
							// Written here, not through an alias or a
							// merge: where --update may write.
							f.Steps[i].SnapshotKey, f.Steps[i].SnapshotValue = k, v
						}
					}
				}
			}
		}
	}
	if err := f.check(); err != nil {
		return nil, err
	}
	f.Refs = refs(string(data))
	return &f, nil
}

// refs returns the names of the `${NAME}`s of a text (not `$${`), each
// once.
func refs(text string) []string {
	var out []string
	seen := map[string]bool{}
	for {
		i := strings.Index(text, "${")
		if i < 0 {
			return out
		}
		end := strings.IndexByte(text[i:], '}')
		if end < 0 {
			return out
		}
		name := text[i+2 : i+end]
		if (i == 0 || text[i-1] != '$') && validName(name) && !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
		text = text[i+2:]
	}
}

// unalias returns n with every alias replaced by (a copy of) what it
// names, each node copied once; n itself is not changed. n has at most
// MaxNodes nodes expanded, and no alias cycle (expanded counted them).
func unalias(n *yaml.Node, copies map[*yaml.Node]*yaml.Node) *yaml.Node {
	if n == nil {
		return nil
	}
	if c, ok := copies[n]; ok {
		return c
	}
	if n.Kind == yaml.AliasNode {
		c := unalias(n.Alias, copies)
		copies[n] = c
		return c
	}
	c := *n
	copies[n] = &c
	if len(n.Content) > 0 {
		c.Content = make([]*yaml.Node, len(n.Content))
		for i, child := range n.Content {
			c.Content[i] = unalias(child, copies)
		}
	}
	return &c
}

// expanded counts the nodes of n with its aliases expanded, each anchor's
// count computed once, and stops counting past MaxNodes.
func expanded(n *yaml.Node, memo map[*yaml.Node]int, depth int) int {
	if n == nil {
		return 0
	}
	if c, ok := memo[n]; ok {
		return c
	}
	if depth > 1000 {
		return MaxNodes + 1
	}
	memo[n] = MaxNodes + 1 // an alias to an ancestor is a cycle: too large
	count := 1
	if n.Kind == yaml.AliasNode {
		count += expanded(n.Alias, memo, depth+1)
	}
	for _, c := range n.Content {
		count += expanded(c, memo, depth+1)
		if count > MaxNodes {
			break
		}
	}
	memo[n] = count
	return count
}

func field(n *yaml.Node, key string) *yaml.Node {
	_, v := fieldKV(n, key)
	return v
}

// fieldKV returns the key and value nodes of key in the mapping n (an
// alias followed, merged mappings (<<) searched after n's own keys).
func fieldKV(n *yaml.Node, key string) (k, v *yaml.Node) {
	n = resolve(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i], resolve(n.Content[i+1])
		}
	}
	for _, m := range merged(n) {
		if k, v := fieldKV(m, key); k != nil {
			return k, v
		}
	}
	return nil, nil
}

// rawField is the value of key in the mapping n as written: an alias
// not followed.
func rawField(n *yaml.Node, key string) *yaml.Node {
	if n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// ownKey reports whether key is written in the mapping n itself.
func ownKey(n *yaml.Node, key string) bool {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return true
		}
	}
	return false
}

// resolve follows an alias to the node it names.
func resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 100; i++ {
		n = n.Alias
	}
	return n
}

// merged returns the mappings merged into n with <<.
func merged(n *yaml.Node) []*yaml.Node {
	var out []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value != "<<" || n.Content[i].Tag == "!!str" && n.Content[i].Style != 0 {
			continue
		}
		v := resolve(n.Content[i+1])
		switch v.Kind {
		case yaml.MappingNode:
			out = append(out, v)
		case yaml.SequenceNode:
			for _, c := range v.Content {
				if c = resolve(c); c.Kind == yaml.MappingNode {
					out = append(out, c)
				}
			}
		}
	}
	return out
}

func (f *File) check() error {
	if s := f.Server; s != nil {
		n := 0
		for _, set := range []bool{len(s.Command) > 0, s.URL != "", s.Config != ""} {
			if set {
				n++
			}
		}
		if n != 1 {
			return errors.New("server: give exactly one of command, url and config")
		}
	}
	for _, name := range f.Secrets {
		if !validName(name) {
			return fmt.Errorf("secrets: %q is not the name of an environment variable (letters, digits and _)", name)
		}
	}
	if len(f.Steps) == 0 {
		return errors.New("the collection has no steps")
	}
	for i := range f.Steps {
		if err := f.Steps[i].check(); err != nil {
			return fmt.Errorf("line %d: step %d: %w", f.Steps[i].Line, i+1, err)
		}
	}
	return nil
}

func (s *Step) check() error {
	n := 0
	for _, v := range []string{s.Call, s.Prompt, s.Read, s.Request} {
		if v != "" {
			n++
		}
	}
	if s.Complete != nil {
		n++
	}
	if n != 1 {
		return errors.New("give exactly one of call, prompt, read, complete and request")
	}
	if c := s.Complete; c != nil {
		if (c.Prompt == "") == (c.Template == "") {
			return errors.New("complete: give exactly one of prompt and template")
		}
		if c.Argument == "" {
			return errors.New("complete: give the argument to complete")
		}
	}
	if s.Args != nil && s.Kind() != KindCall && s.Kind() != KindPrompt {
		return errors.New("args: go with call or prompt (a request takes params)")
	}
	if s.Params != nil && s.Kind() != KindRequest {
		return errors.New("params: go with request (a call or a prompt takes args)")
	}
	if s.Params != nil {
		if _, err := json.Marshal(s.Params); err != nil {
			return fmt.Errorf("params: %v", err)
		}
	}
	if a := s.Answers; a != nil {
		switch a.Elicit {
		case "", "accept", "decline", "cancel":
		default:
			return fmt.Errorf("answers: elicit is accept, decline or cancel, not %q", a.Elicit)
		}
		if a.Fields != nil && a.Elicit != "accept" {
			return errors.New("answers: fields go with elicit: accept")
		}
		for _, r := range a.Roots {
			if r == "" {
				return errors.New("answers: roots: an empty root")
			}
		}
	}
	e := &s.Expect
	if e.OutputSchema && s.Kind() != KindCall {
		return errors.New("expect: outputSchema goes with call")
	}
	if e.Error != nil && e.Error.Code == nil && e.Error.Message == nil {
		return errors.New("expect: error: give its code, its message, or both")
	}
	if e.Error != nil && (e.IsError != nil || e.Text != nil || len(e.Path) > 0 || e.OutputSchema || e.Count != nil || e.HasSnapshot) {
		return errors.New("expect: error: a step that expects a JSON-RPC error has no result to expect anything of")
	}
	var errMsg *Match
	if e.Error != nil {
		errMsg = e.Error.Message
	}
	for _, m := range append([]*Match{e.Text, errMsg}, pathMatches(e.Path)...) {
		if m == nil {
			continue
		}
		if m.Matches != "" {
			if _, err := compile(m.Matches); err != nil {
				return fmt.Errorf("expect: matches: %v", err)
			}
		}
	}
	for name, path := range s.Capture {
		if !validName(name) {
			return fmt.Errorf("capture: %q is not a name (letters, digits and _)", name)
		}
		if _, err := splitPath(path); err != nil {
			return fmt.Errorf("capture %s: %v", name, err)
		}
	}
	for _, p := range e.Path {
		if _, err := splitPath(p.Path); err != nil {
			return fmt.Errorf("expect: path %q: %v", p.Path, err)
		}
	}
	return nil
}

func pathMatches(ps PathExpects) []*Match {
	out := make([]*Match, len(ps))
	for i := range ps {
		out[i] = &ps[i].Match
	}
	return out
}

func validName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

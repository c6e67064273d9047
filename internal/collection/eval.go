package collection

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/mcpi-dev/mcpi/internal/schema"
)

// Result is what a step's request got: its result, or the error it failed
// with; for a tool call, the tool's outputSchema when the tool has one.
type Result struct {
	Raw          json.RawMessage
	Err          error
	OutputSchema json.RawMessage
	// RPCCode and RPCMessage are Err's when it is a JSON-RPC error.
	RPCCode    *int
	RPCMessage string
	// Redact hides what no report may show (the environment's secrets)
	// in the failures, before they are cut to their length: a secret is
	// never cut in two and half shown.
	Redact func(string) string
}

// Failure is an expectation that did not hold: where in the result
// (Path), what was expected and what was there, and the sentence that says
// it.
type Failure struct {
	Path     string `json:"path"`
	Expected string `json:"expected,omitempty"`
	Actual   string `json:"actual,omitempty"`
	Message  string `json:"message"`
}

func (f Failure) String() string { return f.Message }

// MaxCapture is the size of the largest value a step captures, as JSON.
const MaxCapture = 64 << 10

// maxShown is how much of a value a failure shows, and maxMessage how
// long its message may be; values are first cut at preClip, so that a
// 100 MB result is not copied whole into a message.
const (
	maxShown   = 300
	maxMessage = 1000
	preClip    = 1 << 20
)

// Evaluate checks the step's expectations against its result, which took
// d, and returns the ones that failed, in the order they are written; nil
// when all hold.
func Evaluate(s *Step, r Result, d time.Duration) []Failure {
	return finish(evaluate(s, r, d), r.Redact)
}

// finish redacts the failures, then cuts them to their lengths.
func finish(fs []Failure, redact func(string) string) []Failure {
	if redact == nil {
		redact = func(s string) string { return s }
	}
	for i := range fs {
		f := &fs[i]
		f.Path = cutTo(redact(f.Path), maxShown)
		f.Expected = cutTo(redact(f.Expected), maxShown)
		f.Actual = cutTo(redact(f.Actual), maxShown)
		f.Message = cutTo(redact(f.Message), maxMessage)
	}
	return fs
}

func evaluate(s *Step, r Result, d time.Duration) []Failure {
	var out []Failure
	e := &s.Expect
	if e.MaxDuration > 0 && d > time.Duration(e.MaxDuration) {
		out = append(out, fail("duration", time.Duration(e.MaxDuration).String(), d.Round(time.Microsecond).String(),
			"took %s, more than maxDuration %s", d.Round(time.Microsecond), time.Duration(e.MaxDuration)))
	}
	if e.Error != nil {
		return append(out, expectError(e.Error, r)...)
	}
	if r.Err != nil {
		return append(out, Failure{Path: "error", Expected: "a result", Actual: clip(r.Err.Error()),
			Message: "the request failed: " + clip(r.Err.Error())})
	}
	result, err := decode(r.Raw)
	if err != nil {
		return append(out, Failure{Path: "", Expected: "a JSON result", Message: "the result is not JSON: " + err.Error()})
	}
	obj, _ := result.(map[string]any)
	// A call that does not say isError expects none: a tool that failed
	// never passes a step by default.
	wantError := false
	if e.IsError != nil {
		wantError = *e.IsError
	}
	if got, _ := obj["isError"].(bool); got != wantError && (e.IsError != nil || s.Kind() == KindCall) {
		out = append(out, fail("isError", strconv.FormatBool(wantError), strconv.FormatBool(got),
			"isError: expected %t, got %t%s", wantError, got, errorText(s, obj, got)))
	}
	if e.Text != nil {
		out = append(out, match("text", e.Text, Text(s.Kind(), result))...)
	}
	for _, p := range e.Path {
		toks, _ := splitPath(p.Path)
		v, ok := schema.Lookup(result, toks)
		if !ok {
			out = append(out, Failure{Path: p.Path, Expected: describe(&p.Match), Actual: "nothing",
				Message: fmt.Sprintf("%s: expected %s, but the result has nothing there", p.Path, describe(&p.Match))})
			continue
		}
		out = append(out, match(p.Path, &p.Match, v)...)
	}
	if e.OutputSchema {
		out = append(out, checkOutput(r.OutputSchema, obj)...)
	}
	if e.HasSnapshot || e.Snapshot != nil {
		got := Snapshot(s.Kind(), result)
		switch {
		case e.Snapshot == nil:
			out = append(out, Failure{Path: "snapshot", Expected: "a snapshot", Actual: showText(got, true),
				Message: "snapshot: the file has none yet (mcpi test --update writes it)"})
		case *e.Snapshot != got:
			out = append(out, fail("snapshot", showText(*e.Snapshot, true), showText(got, true),
				"snapshot: the result's text changed%s (mcpi test --update takes the new one)", firstDiff(*e.Snapshot, got)))
		}
	}
	if e.Count != nil {
		n, what := count(s.Kind(), obj)
		if n != *e.Count {
			out = append(out, fail(what, strconv.Itoa(*e.Count), strconv.Itoa(n),
				"count of %s: expected %d, got %d", what, *e.Count, n))
		}
	}
	return out
}

// expectError checks a JSON-RPC error the step expects.
func expectError(want *ErrorExpect, r Result) []Failure {
	if r.Err == nil {
		got := "a result: " + resultSummary(r.Raw)
		return []Failure{{Path: "error", Expected: "a JSON-RPC error" + codeText(want.Code), Actual: clip(got),
			Message: "expected a JSON-RPC error" + codeText(want.Code) + ", got " + clip(got)}}
	}
	if r.RPCCode == nil {
		return []Failure{{Path: "error", Expected: "a JSON-RPC error" + codeText(want.Code), Actual: clip(r.Err.Error()),
			Message: "expected a JSON-RPC error" + codeText(want.Code) + ", the request failed otherwise: " + clip(r.Err.Error())}}
	}
	var out []Failure
	if want.Code != nil && *want.Code != *r.RPCCode {
		out = append(out, fail("error.code", strconv.Itoa(*want.Code), strconv.Itoa(*r.RPCCode),
			"error.code: expected %d, got %d (%s)", *want.Code, *r.RPCCode, clip(r.RPCMessage)))
	}
	if want.Message != nil {
		out = append(out, match("error.message", want.Message, r.RPCMessage)...)
	}
	return out
}

// resultSummary says what came back instead of an error: a tool's
// isError result by its text, another by its JSON.
func resultSummary(raw json.RawMessage) string {
	v, err := decode(raw)
	if err != nil {
		return string(raw)
	}
	if obj, ok := v.(map[string]any); ok {
		if isErr, _ := obj["isError"].(bool); isErr {
			return "isError: " + strconv.Quote(Text(KindCall, obj))
		}
	}
	return show(v)
}

func codeText(code *int) string {
	if code == nil {
		return ""
	}
	return fmt.Sprintf(" (code %d)", *code)
}

// firstDiff says where two texts first differ: " at line 3".
func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) && i < len(bl); i++ {
		if al[i] != bl[i] {
			return fmt.Sprintf(" at line %d", i+1)
		}
	}
	return fmt.Sprintf(" at line %d", min(len(al), len(bl))+1)
}

func fail(path, expected, actual, format string, args ...any) Failure {
	return Failure{Path: path, Expected: expected, Actual: actual, Message: fmt.Sprintf(format, args...)}
}

// errorText is, for a result that is an error unexpectedly, its text.
func errorText(s *Step, obj map[string]any, isError bool) string {
	if !isError {
		return ""
	}
	if t := Text(s.Kind(), obj); t != "" {
		return " (" + clip(t) + ")"
	}
	return ""
}

func checkOutput(raw json.RawMessage, obj map[string]any) []Failure {
	if len(raw) == 0 {
		return []Failure{{Path: "structuredContent", Expected: "the tool's outputSchema", Actual: "no outputSchema",
			Message: "outputSchema: the tool declares no outputSchema"}}
	}
	sc, ok := obj["structuredContent"]
	if !ok {
		return []Failure{{Path: "structuredContent", Expected: "structuredContent satisfying the outputSchema", Actual: "nothing",
			Message: "outputSchema: the result has no structuredContent"}}
	}
	s, err := schema.Compile(raw)
	if err != nil {
		return []Failure{{Path: "structuredContent", Expected: "a valid outputSchema", Actual: clip(err.Error()),
			Message: "outputSchema: the tool's outputSchema is invalid: " + clip(err.Error())}}
	}
	ps := s.Validate(sc)
	if ps == nil {
		return nil
	}
	return []Failure{{Path: "structuredContent", Expected: "the tool's outputSchema", Actual: clip(ps.Error()),
		Message: "outputSchema: structuredContent does not satisfy it: " + clip(ps.Error())}}
}

// Text is the text of a result: a tool's text blocks, a prompt's messages'
// texts, a resource's text contents, joined by newlines; a raw request's
// result as compact JSON.
func Text(kind string, result any) string { return resultText(kind, result, false) }

// Snapshot is what a snapshot records of a result: its Text, with a line
// for each block that is not text (an image, an audio clip, a resource
// link, an embedded resource, a resource's blob) in its place, so that a
// changed one fails the snapshot too:
//
//	[image image/png, 1234 bytes, sha256 3f2a9c0e11d4]
//	[resource_link demo://x "name" text/plain]
//	[resource demo://y text/plain, sha256 9b71d224bd62]
func Snapshot(kind string, result any) string { return resultText(kind, result, true) }

func resultText(kind string, result any, blocks bool) string {
	obj, _ := result.(map[string]any)
	var parts []string
	texts := func(list any, inner string) {
		items, _ := list.([]any)
		for _, it := range items {
			m, _ := it.(map[string]any)
			if inner != "" {
				m, _ = m[inner].(map[string]any)
			}
			if t, ok := m["text"].(string); ok {
				parts = append(parts, t)
			} else if blocks && m != nil {
				parts = append(parts, blockLine(m))
			}
		}
	}
	switch kind {
	case KindCall:
		texts(obj["content"], "")
	case KindPrompt:
		texts(obj["messages"], "content")
	case KindRead:
		texts(obj["contents"], "")
	case KindComplete:
		c, _ := obj["completion"].(map[string]any)
		values, _ := c["values"].([]any)
		for _, v := range values {
			if t, ok := v.(string); ok {
				parts = append(parts, t)
			}
		}
	default:
		b, _ := json.Marshal(result)
		return string(b)
	}
	return strings.Join(parts, "\n")
}

// blockLine describes a block that is not text by its type, what names
// it and a digest of its data.
func blockLine(m map[string]any) string {
	str := func(k string) string { v, _ := m[k].(string); return v }
	typ := str("type")
	if typ == "" {
		typ = "blob" // a resource's contents
	}
	var words []string
	if r, ok := m["resource"].(map[string]any); ok {
		// An embedded resource: its URI, type and text or blob.
		uri, _ := r["uri"].(string)
		mime, _ := r["mimeType"].(string)
		data, _ := r["text"].(string)
		if data == "" {
			data, _ = r["blob"].(string)
		}
		words = append(words, uri, mime)
		return "[" + typ + " " + strings.Join(nonEmpty(words), " ") + ", sha256 " + digest(data) + "]"
	}
	words = append(words, str("uri"))
	if n := str("name"); n != "" {
		words = append(words, strconv.Quote(n))
	}
	words = append(words, str("mimeType"))
	head := "[" + typ + " " + strings.Join(nonEmpty(words), " ")
	data := str("data")
	if data == "" {
		data = str("blob")
	}
	if data != "" {
		head += fmt.Sprintf(", %d bytes, sha256 %s", len(data), digest(data))
	}
	return strings.TrimRight(head, " ") + "]"
}

func nonEmpty(ws []string) []string {
	var out []string
	for _, w := range ws {
		if w != "" {
			out = append(out, w)
		}
	}
	return out
}

// digest is the first 12 hex digits of the SHA-256 of s.
func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:6])
}

// count is the number of blocks of a result, and what they are.
func count(kind string, obj map[string]any) (int, string) {
	member := "content"
	switch kind {
	case KindPrompt:
		member = "messages"
	case KindRead:
		member = "contents"
	case KindComplete:
		c, _ := obj["completion"].(map[string]any)
		values, _ := c["values"].([]any)
		return len(values), "completion.values"
	}
	items, _ := obj[member].([]any)
	return len(items), member
}

func match(path string, m *Match, v any) []Failure {
	var out []Failure
	if m.hasEquals {
		want := normalize(m.Equals)
		if !reflect.DeepEqual(want, v) {
			out = append(out, fail(path, show(want), show(v), "%s: expected %s, got %s", path, show(want), show(v)))
		}
	}
	s, isString := v.(string)
	if !isString {
		s = show(v)
	}
	if m.Contains != "" && !strings.Contains(s, m.Contains) {
		out = append(out, fail(path, "contains "+strconv.Quote(m.Contains), showText(s, isString),
			"%s: expected to contain %q, got %s", path, m.Contains, showText(s, isString)))
	}
	if m.Matches != "" {
		re, err := compile(m.Matches)
		if err == nil && !re.MatchString(s) {
			out = append(out, fail(path, "matches /"+m.Matches+"/", showText(s, isString),
				"%s: expected to match /%s/, got %s", path, m.Matches, showText(s, isString)))
		}
	}
	return out
}

func describe(m *Match) string {
	var parts []string
	if m.hasEquals {
		parts = append(parts, show(normalize(m.Equals)))
	}
	if m.Contains != "" {
		parts = append(parts, "to contain "+strconv.Quote(m.Contains))
	}
	if m.Matches != "" {
		parts = append(parts, "to match /"+m.Matches+"/")
	}
	if len(parts) == 0 {
		return "a value"
	}
	return strings.Join(parts, " and ")
}

func compile(expr string) (*regexp.Regexp, error) { return regexp.Compile(expr) }

// normalize turns a value read from YAML into what encoding/json decodes
// the same JSON to, so that 5 equals 5.0 and maps compare by content.
func normalize(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	out, err := decode(b)
	if err != nil {
		return v
	}
	return out
}

func decode(raw json.RawMessage) (any, error) {
	if len(raw) == 0 {
		return nil, errors.New("empty")
	}
	var v any
	err := json.Unmarshal(raw, &v)
	return v, err
}

// show is a value as compact JSON, clipped.
func show(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return clip(strings.TrimSuffix(buf.String(), "\n"))
}

func showText(s string, quoted bool) string {
	if quoted {
		return clip(strconv.Quote(s))
	}
	return clip(s)
}

// clip cuts a value quoted in a failure at preClip; finish cuts it to
// what is shown once the secrets are out of it.
func clip(s string) string { return cutTo(s, preClip) }

func cutTo(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + fmt.Sprintf("… (%d bytes)", len(s))
}

// splitPath splits a path into its tokens: a JSON pointer ("/content/0/text")
// or a dotted path ("structuredContent.temperature.celsius",
// "content[0].text", "content.0.text"); "" is the whole result.
func splitPath(p string) ([]string, error) {
	if p == "" {
		return nil, nil
	}
	if strings.HasPrefix(p, "/") {
		return schema.SplitPointer(p)
	}
	var toks []string
	for _, seg := range strings.Split(p, ".") {
		name, rest, _ := strings.Cut(seg, "[")
		if name == "" && rest == "" {
			return nil, errors.New("an empty segment")
		}
		if name != "" {
			toks = append(toks, name)
		}
		for rest != "" {
			idx, after, ok := strings.Cut(rest, "]")
			if !ok {
				return nil, errors.New("a [ without its ]")
			}
			if _, err := strconv.Atoi(idx); err != nil {
				return nil, fmt.Errorf("[%s] is not an index", idx)
			}
			toks = append(toks, idx)
			if after == "" {
				break
			}
			if !strings.HasPrefix(after, "[") {
				return nil, fmt.Errorf("%q after ]", after)
			}
			rest = after[1:]
		}
	}
	return toks, nil
}

// Capture takes the step's captures from its result: each name's value, or
// a failure for a path the result has nothing at.
func Capture(s *Step, raw json.RawMessage) (map[string]any, []Failure) {
	if len(s.Capture) == 0 {
		return nil, nil
	}
	result, err := decode(raw)
	if err != nil {
		return nil, []Failure{{Path: "", Message: "capture: the result is not JSON"}}
	}
	out := map[string]any{}
	var fails []Failure
	for _, name := range sortedKeys(s.Capture) {
		path := s.Capture[name]
		toks, _ := splitPath(path)
		v, ok := schema.Lookup(result, toks)
		if !ok {
			fails = append(fails, Failure{Path: path, Expected: "a value to capture as " + name, Actual: "nothing",
				Message: fmt.Sprintf("capture %s: the result has nothing at %s", name, path)})
			continue
		}
		if b, _ := json.Marshal(v); len(b) > MaxCapture {
			fails = append(fails, Failure{Path: path, Expected: fmt.Sprintf("at most %d bytes", MaxCapture), Actual: fmt.Sprintf("%d bytes", len(b)),
				Message: fmt.Sprintf("capture %s: the value at %s is %d bytes, more than %d", name, path, len(b), MaxCapture)})
			continue
		}
		out[name] = v
	}
	return out, fails
}

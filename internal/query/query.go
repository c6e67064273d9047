// Package query is the search language for frames: one parser for the
// Wire pane's filter, `mcpi replay --filter` and `mcpi tail --filter`.
//
//	method:tools/call tool:search status:error dur:>500ms dir:in id:42 text:"quota"
//
// A query is terms separated by spaces, every one of which must hold; the
// word "or" (or "OR") between two groups of terms matches a row that holds
// either group (status:error or dur:>1s), and binds looser than the spaces
// (a b or c is a and b, or c). There are no parentheses. A quoted "or" is
// text. A term is FIELD:VALUE, free text, or either with a leading "-", which
// negates it; a value or free text with spaces is written in double
// quotes ("rate limit", text:"quota exceeded"). The fields:
//
//	method:M      the method contains M (a response: the method it answers);
//	              the tool, prompt or resource a request names counts too
//	tool:T        a tools/call (or its answer) of a tool whose name contains T
//	status:S      ok (an answer that is no error), error (an error answer, a
//	              tool's isError, a bad frame, a failure), pending (a
//	              request not answered yet)
//	dur:OP D      the answer's latency compared with D: > >= < <= = (500ms, 2s)
//	size:OP N     the frame's size compared with N bytes (512, 10kb, 1mb)
//	dir:in|out    from the server (also <), to it (also >)
//	kind:K        the row's kind starts with K: frame, bad, stderr,
//	              lifecycle, http, warning, log, notification, app (an
//	              MCP App's messages with mcpi's host), model (a
//	              model's turns and the tools it ran), intercept (what
//	              mcpi proxy changed on the wire), note (what a
//	              trace says of its session: revision, server)
//	id:N          the JSON-RPC id is N
//	text:T        the text or the data contains T
//
// Free text is found in the method, the name, the id, the text and the
// data. A word whose FIELD is none of these (a URL, "a:b") is free text.
// Matching is case-insensitive but for ids and data.
package query

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// Record is what a query is matched against: a frame, or another row of
// a wire log, a trace or a tail.
type Record struct {
	// Kind is the row's kind: frame, bad, stderr, lifecycle, http,
	// warning; log and notification for a tail's rows.
	Kind string
	// Out says mcpi sent it; In that it came from the server (neither:
	// a row of mcpi's own).
	Out, In bool
	// Method is the frame's method ("response" or "error" for answers);
	// Answers the method of the request an answer answers; Name what a
	// request is about (a tool, a prompt, a URI), also on its answer.
	Method, Answers, Name string
	// ID is the JSON-RPC id as a key (a number as written, a string
	// quoted).
	ID string
	// Request says the frame is a request; Answered that its answer came.
	Request, Answered bool
	// Error says the row is an error: an error answer, a tool's isError,
	// a bad frame, a failure.
	Error bool
	// Response says the frame is an answer (a result or an error).
	Response bool
	// Latency is an answer's time since its request, when HasLatency.
	Latency    time.Duration
	HasLatency bool
	// Size is the frame's size in bytes.
	Size int
	// Text is what describes the row; Data its data.
	Text string
	Data []byte
}

// Query is a parsed query: groups of terms, any one of which must hold
// whole.
type Query struct {
	terms []term
	// or holds the groups after the first when the query has "or"; terms
	// is then the first group.
	or  [][]term
	src string
}

type term struct {
	neg   bool
	field string // "" for free text
	value string
	lower string
	// cmp and limit: dur and size.
	cmp   string
	limit int64
}

// Fields are the fields of the language, for completion.
var Fields = []string{"method", "tool", "status", "dur", "size", "dir", "kind", "id", "text"}

// Statuses are the values of status:.
var Statuses = []string{"ok", "error", "pending"}

// Kinds are the values of kind:.
var Kinds = []string{"frame", "bad", "stderr", "lifecycle", "http", "warning", "log", "notification", "app", "model", "intercept", "note"}

func isField(f string) bool {
	for _, x := range Fields {
		if x == f {
			return true
		}
	}
	return false
}

// Parse parses a query. An error says what is wrong, naming the term; the
// query is then not to be used.
func Parse(s string) (Query, error) {
	q := Query{src: s}
	words, err := split(s)
	if err != nil {
		return Query{}, err
	}
	var groups [][]term
	var group []term
	for i, w := range words {
		if !w.neg && !w.quoted && w.field == "" && strings.EqualFold(w.text, "or") {
			if len(group) == 0 || i == len(words)-1 {
				return Query{}, errors.New(`or: wants terms on both sides, like status:error or dur:>1s`)
			}
			groups = append(groups, group)
			group = nil
			continue
		}
		t, err := parseTerm(w)
		if err != nil {
			return Query{}, err
		}
		group = append(group, t)
	}
	groups = append(groups, group)
	q.terms, q.or = groups[0], groups[1:]
	return q, nil
}

// word is one term as written: its text with the quotes taken out, and
// whether it began with "-" outside quotes.
type word struct {
	neg  bool
	text string
	// quotedValue says the value part (after FIELD:) or the whole free
	// text was quoted: a quoted "-x" or "a:b" is text, not syntax.
	quoted bool
	field  string
}

// split cuts s into words at spaces outside double quotes; a backslash in
// quotes escapes the next character.
func split(s string) ([]word, error) {
	var out []word
	rs := []rune(s)
	for i := 0; i < len(rs); {
		for i < len(rs) && unicode.IsSpace(rs[i]) {
			i++
		}
		if i >= len(rs) {
			break
		}
		var w word
		if rs[i] == '-' && i+1 < len(rs) && !unicode.IsSpace(rs[i+1]) {
			w.neg = true
			i++
		}
		var b strings.Builder
		fieldDone := false
		for i < len(rs) && !unicode.IsSpace(rs[i]) {
			c := rs[i]
			switch {
			case c == '"':
				i++
				for i < len(rs) && rs[i] != '"' {
					if rs[i] == '\\' && i+1 < len(rs) {
						i++
					}
					b.WriteRune(rs[i])
					i++
				}
				if i >= len(rs) {
					return nil, errors.New("a double quote is not closed")
				}
				i++
				w.quoted = true
			case c == ':' && !fieldDone && !w.quoted && isField(strings.ToLower(b.String())):
				w.field = strings.ToLower(b.String())
				b.Reset()
				fieldDone = true
				i++
			default:
				b.WriteRune(c)
				i++
			}
		}
		w.text = b.String()
		out = append(out, w)
	}
	return out, nil
}

func parseTerm(w word) (term, error) {
	t := term{neg: w.neg, field: w.field, value: w.text}
	switch {
	case w.field == "" && !w.quoted && w.text == ">":
		t.field, t.value = "dir", "out"
	case w.field == "" && !w.quoted && w.text == "<":
		t.field, t.value = "dir", "in"
	case w.field != "" && w.text == "":
		return term{}, fmt.Errorf("%s: has no value", w.field)
	}
	t.lower = strings.ToLower(t.value)
	switch t.field {
	case "dir":
		switch t.lower {
		case "in", "<", "recv":
			t.lower = "in"
		case "out", ">", "send":
			t.lower = "out"
		default:
			return term{}, fmt.Errorf("dir:%s: want in or out", t.value)
		}
	case "status":
		if !oneOf(t.lower, Statuses) {
			return term{}, fmt.Errorf("status:%s: want %s", t.value, strings.Join(Statuses, ", "))
		}
	case "dur":
		cmp, rest := comparison(t.value)
		d, err := time.ParseDuration(rest)
		if err != nil || d < 0 {
			return term{}, fmt.Errorf("dur:%s: want a comparison and a duration, like dur:>500ms", t.value)
		}
		t.cmp, t.limit = cmp, int64(d)
	case "size":
		cmp, rest := comparison(t.value)
		n, err := parseSize(rest)
		if err != nil {
			return term{}, fmt.Errorf("size:%s: want a comparison and a size, like size:>10kb", t.value)
		}
		t.cmp, t.limit = cmp, n
	}
	return t, nil
}

func oneOf(s string, set []string) bool {
	for _, x := range set {
		if s == x {
			return true
		}
	}
	return false
}

// comparison splits ">=500ms" into ">=" and "500ms"; no operator is "=".
func comparison(v string) (string, string) {
	for _, op := range []string{">=", "<=", ">", "<", "="} {
		if strings.HasPrefix(v, op) {
			return op, v[len(op):]
		}
	}
	return "=", v
}

var errSize = errors.New("not a size")

// parseSize reads 512, 10kb, 1.5mb, 2gb (1024-based).
func parseSize(s string) (int64, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		m      int64
	}{{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"kb", 1 << 10}, {"mb", 1 << 20}, {"gb", 1 << 30}, {"k", 1 << 10}, {"m", 1 << 20}, {"b", 1}} {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSuffix(s, u.suffix), u.m
			break
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 {
		return 0, errSize
	}
	return int64(f * float64(mult)), nil
}

// Empty reports whether the query matches everything.
func (q Query) Empty() bool { return len(q.terms) == 0 }

// String is the query as written.
func (q Query) String() string { return q.src }

// Match reports whether r holds every term of a group.
func (q Query) Match(r *Record) bool {
	if matchAll(q.terms, r) {
		return true
	}
	for _, g := range q.or {
		if matchAll(g, r) {
			return true
		}
	}
	return false
}

func matchAll(terms []term, r *Record) bool {
	for i := range terms {
		if terms[i].match(r) == terms[i].neg {
			return false
		}
	}
	return true
}

func (t *term) match(r *Record) bool {
	switch t.field {
	case "dir":
		if t.lower == "out" {
			return r.Out
		}
		return r.In
	case "kind":
		return strings.HasPrefix(r.Kind, t.lower)
	case "method":
		return containsFold(r.Method, t.lower) || containsFold(r.Name, t.lower) || containsFold(r.Answers, t.lower)
	case "tool":
		return (r.Method == "tools/call" || r.Answers == "tools/call") && containsFold(r.Name, t.lower)
	case "id":
		return r.ID != "" && (r.ID == t.value || strings.Trim(r.ID, `"`) == t.value)
	case "status":
		switch t.lower {
		case "ok":
			return r.Response && !r.Error
		case "error":
			return r.Error
		case "pending":
			return r.Request && !r.Answered
		}
		return false
	case "dur":
		return r.HasLatency && compare(int64(r.Latency), t.cmp, t.limit)
	case "size":
		return compare(int64(r.Size), t.cmp, t.limit)
	case "text":
		return containsFold(r.Text, t.lower) || bytes.Contains(bytes.ToLower(r.Data), []byte(t.lower))
	}
	if containsFold(r.Method, t.lower) || containsFold(r.Name, t.lower) || containsFold(r.Answers, t.lower) ||
		containsFold(r.Text, t.lower) || r.ID == t.value || strings.Trim(r.ID, `"`) == t.value {
		return true
	}
	return bytes.Contains(r.Data, []byte(t.value))
}

func compare(v int64, op string, limit int64) bool {
	switch op {
	case ">":
		return v > limit
	case ">=":
		return v >= limit
	case "<":
		return v < limit
	case "<=":
		return v <= limit
	}
	return v == limit
}

// containsFold reports whether s contains lower, which is lower case.
func containsFold(s, lower string) bool {
	return s != "" && strings.Contains(strings.ToLower(s), lower)
}

// Complete returns the completions of the last word of a query being
// typed: field names for a word without ":", the values of status:,
// dir: and kind:. It returns the whole query with each completion.
func Complete(s string) []string {
	if s != "" && unicode.IsSpace(rune(s[len(s)-1])) {
		return nil
	}
	i := strings.LastIndexFunc(s, unicode.IsSpace) + 1
	head, last := s[:i], s[i:]
	neg := ""
	if strings.HasPrefix(last, "-") {
		neg, last = "-", last[1:]
	}
	var out []string
	if f, v, ok := strings.Cut(last, ":"); ok {
		var set []string
		switch strings.ToLower(f) {
		case "status":
			set = Statuses
		case "dir":
			set = []string{"in", "out"}
		case "kind":
			set = Kinds
		}
		for _, x := range set {
			if strings.HasPrefix(x, strings.ToLower(v)) && x != v {
				out = append(out, head+neg+f+":"+x)
			}
		}
		return out
	}
	for _, f := range Fields {
		if strings.HasPrefix(f, strings.ToLower(last)) {
			out = append(out, head+neg+f+":")
		}
	}
	return out
}

// Uses reports whether a term of the query is on field.
func (q Query) Uses(field string) bool {
	for _, g := range append([][]term{q.terms}, q.or...) {
		for _, t := range g {
			if t.field == field {
				return true
			}
		}
	}
	return false
}

package wire

import (
	"bytes"
	"strings"

	"github.com/mcpi-dev/mcpi/internal/transport"
)

// Query is a parsed wire filter: terms separated by spaces, all of which
// must match. A term is
//
//	>  or dir:out     frames mcpi sent
//	<  or dir:in      what came from the server
//	kind:K            rows whose kind starts with K (frame, bad, stderr, lifecycle, http, warning)
//	method:M          rows whose method contains M (for a response: the
//	                  method of the request it answers); the tool, prompt
//	                  or resource of a request counts as part of its method
//	id:N              rows with id N
//	TEXT              rows whose method, id, text or data contain TEXT
//
// and a leading "-" negates a term ("-method:progress").
type Query struct {
	terms []term
}

type term struct {
	neg   bool
	field string // "", "dir", "kind", "method", "id"
	value string
	lower string
}

// ParseQuery parses a filter.
func ParseQuery(s string) Query {
	var q Query
	for _, w := range strings.Fields(s) {
		t := term{}
		if len(w) > 1 && w[0] == '-' {
			t.neg = true
			w = w[1:]
		}
		switch {
		case w == ">":
			t.field, t.value = "dir", "out"
		case w == "<":
			t.field, t.value = "dir", "in"
		default:
			if f, v, ok := strings.Cut(w, ":"); ok && v != "" {
				switch f {
				case "dir", "kind", "method", "id":
					t.field, t.value = f, v
				}
			}
			if t.field == "" {
				t.value = w
			}
		}
		t.lower = strings.ToLower(t.value)
		q.terms = append(q.terms, t)
	}
	return q
}

// Empty reports whether the query matches everything.
func (q Query) Empty() bool { return len(q.terms) == 0 }

// Match reports whether e matches the query.
func (q Query) Match(e *Entry) bool {
	for _, t := range q.terms {
		if t.match(e) == t.neg {
			return false
		}
	}
	return true
}

func (t term) match(e *Entry) bool {
	switch t.field {
	case "dir":
		switch t.lower {
		case "out", "send", ">":
			return e.Dir == transport.Outgoing
		case "in", "recv", "<":
			return e.Dir == transport.Incoming
		}
		return false
	case "kind":
		return strings.HasPrefix(e.Kind.String(), t.lower)
	case "method":
		return containsFold(e.Method, t.lower) || containsFold(e.Name, t.lower) || containsFold(e.Answers, t.lower)
	case "id":
		return e.ID == t.value || strings.Trim(e.ID, `"`) == t.value
	}
	if containsFold(e.Method, t.lower) || containsFold(e.Name, t.lower) || containsFold(e.Answers, t.lower) ||
		containsFold(e.Text, t.lower) || containsFold(e.Err, t.lower) || e.ID == t.value {
		return true
	}
	return bytes.Contains(e.Data, []byte(t.value))
}

// containsFold reports whether s contains lower, which is lower case.
func containsFold(s, lower string) bool {
	return s != "" && strings.Contains(strings.ToLower(s), lower)
}

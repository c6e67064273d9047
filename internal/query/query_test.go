package query

import (
	"strings"
	"testing"
	"time"
)

// Records of a session: a tools/call and its slow error answer, a quick
// ping answered, a request never answered, a notification, a bad frame,
// a lifecycle line, stderr.
var (
	call     = Record{Kind: "frame", Out: true, Method: "tools/call", Name: "search", ID: "42", Request: true, Answered: true, Size: 120, Data: []byte(`{"method":"tools/call","params":{"name":"search","arguments":{"q":"Quota"}}}`)}
	callErr  = Record{Kind: "frame", In: true, Method: "response", Answers: "tools/call", Name: "search", ID: "42", Response: true, Error: true, Latency: 800 * time.Millisecond, HasLatency: true, Size: 2048, Data: []byte(`{"result":{"isError":true,"content":[{"type":"text","text":"quota exceeded"}]}}`)}
	ping     = Record{Kind: "frame", Out: true, Method: "ping", ID: `"p-1"`, Request: true, Answered: true, Size: 40}
	pong     = Record{Kind: "frame", In: true, Method: "response", Answers: "ping", ID: `"p-1"`, Response: true, Latency: 2 * time.Millisecond, HasLatency: true, Size: 30}
	hanging  = Record{Kind: "frame", Out: true, Method: "resources/read", Name: "file:///a", ID: "7", Request: true, Size: 90}
	progress = Record{Kind: "frame", In: true, Method: "notifications/progress", Size: 80, Data: []byte(`{"progress":5}`)}
	bad      = Record{Kind: "bad", In: true, Error: true, Text: "not JSON", Size: 11, Data: []byte("hello world")}
	life     = Record{Kind: "lifecycle", Text: "server exited with status 1"}
	stderr   = Record{Kind: "stderr", Text: "Listening on :8080"}
	all      = []*Record{&call, &callErr, &ping, &pong, &hanging, &progress, &bad, &life, &stderr}
	names    = map[*Record]string{&call: "call", &callErr: "callErr", &ping: "ping", &pong: "pong", &hanging: "hanging", &progress: "progress", &bad: "bad", &life: "life", &stderr: "stderr"}
)

func matching(t *testing.T, q string) string {
	t.Helper()
	p, err := Parse(q)
	if err != nil {
		t.Fatalf("%q: %v", q, err)
	}
	var out []string
	for _, r := range all {
		if p.Match(r) {
			out = append(out, names[r])
		}
	}
	return strings.Join(out, " ")
}

// TestFields: a table per field and operator, each negated too.
func TestFields(t *testing.T) {
	for _, c := range []struct{ q, want string }{
		{"", "call callErr ping pong hanging progress bad life stderr"},
		// method: contains, the name and the answered method count
		{"method:tools/call", "call callErr"},
		{"method:TOOLS/", "call callErr"},
		{"method:search", "call callErr"},
		{"method:ping", "ping pong"},
		{"-method:progress", "call callErr ping pong hanging bad life stderr"},
		// tool:
		{"tool:sea", "call callErr"},
		{"tool:file", ""},
		{"-tool:search", "ping pong hanging progress bad life stderr"},
		// status:
		{"status:error", "callErr bad"},
		{"status:ok", "pong"},
		{"status:pending", "hanging"},
		{"-status:error", "call ping pong hanging progress life stderr"},
		// dur:
		{"dur:>500ms", "callErr"},
		{"dur:<500ms", "pong"},
		{"dur:>=800ms", "callErr"},
		{"dur:<=2ms", "pong"},
		{"dur:=2ms", "pong"},
		{"dur:2ms", "pong"},
		{"-dur:>500ms", "call ping pong hanging progress bad life stderr"},
		// size:
		{"size:>1kb", "callErr"},
		{"size:<=30", "pong bad life stderr"},
		{"size:>=2KiB", "callErr"},
		{"size:1.5k", ""},
		// dir:
		{"dir:in", "callErr pong progress bad"},
		{"<", "callErr pong progress bad"},
		{"dir:out", "call ping hanging"},
		{">", "call ping hanging"},
		{"-dir:in", "call ping hanging life stderr"},
		// kind:
		{"kind:bad", "bad"},
		{"kind:life", "life"},
		{"-kind:frame", "bad life stderr"},
		// id:
		{"id:42", "call callErr"},
		{"id:p-1", "ping pong"},
		{`id:"p-1"`, "ping pong"},
		{"-id:42", "ping pong hanging progress bad life stderr"},
		// text:
		{`text:"quota exceeded"`, "callErr"},
		{"text:quota", "call callErr"},
		{"text:exited", "life"},
		{`-text:quota`, "ping pong hanging progress bad life stderr"},
		// free text, quoted, and a word that only looks like a field
		{"quota", "callErr"},
		{`"hello world"`, "bad"},
		{":8080", "stderr"},
		{"Listening", "stderr"},
		{"http://x", ""},
		// several terms: all hold
		{"method:tools/call status:error dur:>500ms dir:in id:42 text:quota", "callErr"},
		{"> -method:ping", "call hanging"},
	} {
		if got := matching(t, c.q); got != c.want {
			t.Errorf("%q matches %q, want %q", c.q, got, c.want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, c := range []struct{ q, want string }{
		{"status:maybe", "status:maybe: want ok, error, pending"},
		{"dir:up", "dir:up: want in or out"},
		{"dur:>fast", "dur:>fast: want a comparison and a duration"},
		{"size:big", "size:big: want a comparison and a size"},
		{`text:"open`, "a double quote is not closed"},
		{"method:", "method: has no value"},
		{"status:", "status: has no value"},
		{"or status:error", "or: wants terms on both sides"},
		{"status:error or", "or: wants terms on both sides"},
		{"a or or b", "or: wants terms on both sides"},
	} {
		if _, err := Parse(c.q); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.q, err, c.want)
		}
	}
}

func TestComplete(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string
	}{
		{"me", "me→method:"},
		{"dir:in -st", "dir:in -st→dir:in -status:"},
		{"status:e", "status:e→status:error"},
		{"kind:l", "kind:l→kind:lifecycle kind:log"},
		{"d", "d→dur: dir:"},
		{"method:x ", "method:x →"},
	} {
		got := c.in + "→" + strings.Join(Complete(c.in), " ")
		if got != c.want {
			t.Errorf("Complete(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"method:tools/call -dur:>5ms", `text:"a b" "c`, "-", "size:1.5mb", "a:b:c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q, err := Parse(s)
		if err != nil {
			return
		}
		for _, r := range all {
			q.Match(r)
		}
	})
}

// TestOr: "or" between groups matches a row that holds either group; it
// binds looser than the spaces; a quoted or negated "or" is a term.
func TestOr(t *testing.T) {
	for _, c := range []struct{ q, want string }{
		{"status:error or dur:<10ms", "callErr pong bad"},
		{"method:ping OR method:resources", "ping pong hanging"},
		{"dir:out method:tools or kind:stderr", "call stderr"},
		{"status:pending or -dir:in -dir:out", "hanging life stderr"},
		{`text:"or"`, "callErr bad"}, // "error", "world"
	} {
		if got := matching(t, c.q); got != c.want {
			t.Errorf("%q matches %q, want %q", c.q, got, c.want)
		}
	}
	q, _ := Parse("a or tool:x")
	if !q.Uses("tool") {
		t.Error("Uses misses a field of the second group")
	}
}

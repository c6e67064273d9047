package wire

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/mcpi-dev/mcpi/internal/genai"
	"github.com/mcpi-dev/mcpi/internal/query"
	"github.com/mcpi-dev/mcpi/internal/rows"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/transport"
	"github.com/mcpi-dev/mcpi/internal/tui/common"
	"github.com/mcpi-dev/mcpi/internal/tui/keymap"
	"github.com/mcpi-dev/mcpi/internal/tui/styles"

	tea "charm.land/bubbletea/v2"
)

var t0 = time.Date(2025, 11, 25, 12, 0, 0, 0, time.UTC)

func frame(dir transport.Direction, at time.Duration, data string) transport.Event {
	return transport.Event{Time: t0.Add(at), Kind: transport.KindFrame, Dir: dir, Data: []byte(data)}
}

func TestParserMatchesResponses(t *testing.T) {
	p := rows.NewParser()
	out := transport.Outgoing
	in := transport.Incoming
	evs := []transport.Event{
		frame(out, 0, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`),
		frame(in, 5*time.Millisecond, `{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`),
		frame(in, 6*time.Millisecond, `{"jsonrpc":"2.0","id":"s1","method":"sampling/createMessage","params":{}}`),
		frame(out, 9*time.Millisecond, `{"jsonrpc":"2.0","id":"s1","result":{}}`),
		frame(out, 10*time.Millisecond, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"name":"not this"}}}`),
		frame(in, 30*time.Millisecond, `{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"no"}}`),
		frame(in, 31*time.Millisecond, `{"jsonrpc":"2.0","id":99,"result":{}}`),
		frame(out, 40*time.Millisecond, `{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"demo://counter"}}`),
		frame(in, 41*time.Millisecond, `{"jsonrpc":"2.0","id":4,"result":{"resultType":"input_required","inputRequests":{}}}`),
		frame(out, 42*time.Millisecond, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":["add"]}`),
		frame(out, 43*time.Millisecond, `{"jsonrpc":"2.0","id":6,"method":"prompts/get","params":{"name":7}}`),
		frame(in, 44*time.Millisecond, `{"jsonrpc":"2.0","id":6,"result":null}`),
		frame(out, 45*time.Millisecond, `{"jsonrpc":"2.0","id":7,"method":"tasks/get","params":{"taskId":"t-1"}}`),
		frame(out, 46*time.Millisecond, `{"jsonrpc":"2.0","id":8,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"greet"},"argument":{"name":"lang","value":"e"}}}`),
		frame(out, 47*time.Millisecond, `{"jsonrpc":"2.0","id":9,"method":"completion/complete","params":{"ref":{"ref":{"name":"deep"}}}}`),
		frame(out, 48*time.Millisecond, `{"jsonrpc":"2.0","id":10,"method":"tools/list"}`),
		frame(in, 49*time.Millisecond, `[{"jsonrpc":"2.0","id":9,"result":{}},{"jsonrpc":"2.0","id":10,"result":{}}]`),
		frame(out, 32*time.Millisecond, `[{"jsonrpc":"2.0","id":3,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"}]`),
		{Time: t0, Kind: transport.KindStderr, Dir: transport.Incoming, Data: []byte("log line")},
	}
	var got []string
	for _, e := range evs {
		en := p.Event(e)
		s := fmt.Sprintf("%s %s id=%s", en.Kind, en.Label(), en.ID)
		if en.HasLatency {
			s += " " + en.Latency.String()
		}
		if en.RPCError {
			s += " error"
		}
		got = append(got, s)
	}
	want := []string{
		"frame tools/list id=1",
		"frame response · tools/list id=1 5ms",
		`frame sampling/createMessage id="s1"`,
		`frame response · sampling/createMessage id="s1" 3ms`,
		"frame tools/call add id=2",
		"frame error · tools/call add id=2 20ms error",
		"frame response id=99",
		"frame resources/read demo://counter id=4",
		"frame input_required · resources/read demo://counter id=4 1ms",
		"frame tools/call id=5",
		"frame prompts/get id=6",
		"frame response · prompts/get id=6 1ms",
		"frame tasks/get t-1 id=7",
		"frame completion/complete greet id=8",
		"frame completion/complete id=9",
		"frame tools/list id=10",
		"frame batch(2) id=9,10 1ms",
		"frame batch(2) id=3",
		"stderr  id=",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestParserClipsBigFrames(t *testing.T) {
	big := `{"jsonrpc":"2.0","id":7,"result":{"text":"` + strings.Repeat("x", 3*rows.MaxEntryBytes) + `"}}`
	en := rows.NewParser().Event(frame(transport.Incoming, 0, big))
	if en.Size != len(big) || len(en.Data) != rows.MaxEntryBytes || !en.Truncated || en.ID != "7" || en.Method != "response" {
		t.Errorf("size %d data %d truncated %v id %q method %q", en.Size, len(en.Data), en.Truncated, en.ID, en.Method)
	}
}

func TestStoreBounds(t *testing.T) {
	s := rows.NewStore(100, 1000)
	for i := range 250 {
		s.Append(rows.Entry{Data: make([]byte, 30), Method: fmt.Sprint(i)})
	}
	if s.Len() != 100 || s.First() != 150 || s.Next() != 250 {
		t.Fatalf("len %d first %d next %d", s.Len(), s.First(), s.Next())
	}
	if s.Get(149) != nil || s.Get(250) != nil || s.Get(150).Method != "150" || s.Get(249).Method != "249" {
		t.Error("Get addresses the wrong entries")
	}
	if s.Bytes() > 1000 {
		t.Errorf("bytes %d over the budget", s.Bytes())
	}
	// The newest entries keep their data; the oldest were released.
	if len(s.Get(249).Data) != 30 || !s.Get(150).Released {
		t.Errorf("newest data %d, oldest released %v", len(s.Get(249).Data), s.Get(150).Released)
	}
}

func TestQuery(t *testing.T) {
	es := []rows.Entry{
		{Kind: rows.KindFrame, Dir: transport.Outgoing, Method: "tools/call", Name: "echo", ID: "3", Data: []byte(`{"name":"echo"}`)},
		{Kind: rows.KindFrame, Dir: transport.Incoming, Method: "notifications/progress"},
		{Kind: rows.KindBadFrame, Dir: transport.Incoming, Method: "bad frame", Data: []byte("garbage")},
		{Kind: rows.KindStderr, Dir: transport.Incoming, Data: []byte("panic: oops")},
		{Kind: rows.KindFrame, Dir: transport.Incoming, Method: "response", Answers: "tools/call", Name: "Echo", ID: "3"},
		{Kind: rows.KindFrame, Dir: transport.Incoming, Method: "response", Answers: "tools/call", Name: "slow", ID: "4", ToolError: true, Latency: 2 * time.Second, HasLatency: true, Size: 500},
	}
	tests := []struct {
		q    string
		want string
	}{
		{"", "012345"},
		{">", "0"},
		{"<", "12345"},
		{"dir:in -kind:stderr", "1245"},
		{"method:tools/", "045"},
		{"method:echo", "04"},
		{"-method:progress", "02345"},
		{"kind:bad", "2"},
		{"echo", "04"},
		{"panic", "3"},
		{"id:3", "04"},
		// The search language's fields the entries carry.
		{"tool:echo", "04"},
		{"status:error", "25"},
		{"status:ok", "4"},
		{"status:pending", "0"},
		{"dur:>1s", "5"},
		{"size:>100", "5"},
	}
	for _, tt := range tests {
		q, err := query.Parse(tt.q)
		if err != nil {
			t.Fatalf("%q: %v", tt.q, err)
		}
		var got string
		for i := range es {
			r := es[i].Record()
			if q.Match(&r) {
				got += fmt.Sprint(i)
			}
		}
		if got != tt.want {
			t.Errorf("%q matches %s, want %s", tt.q, got, tt.want)
		}
	}
}

func testCommon() *common.Common {
	return &common.Common{Styles: styles.DefaultStyles(false), Keys: keymap.Default(), Now: func() time.Time { return t0 }}
}

// namedKeys are the keys the tests press by name; any other name is the
// character it is.
var namedKeys = map[string]rune{"enter": tea.KeyEnter, "esc": tea.KeyEscape, "up": tea.KeyUp, "home": tea.KeyHome}

func press(s string) tea.KeyPressMsg {
	if r, ok := namedKeys[s]; ok {
		return tea.KeyPressMsg{Code: r}
	}
	return tea.KeyPressMsg{Code: []rune(s)[0], Text: s}
}

// TestPaneView: over a full store of 200,000 rows the view is the rows on
// screen (BenchmarkWireView1M measures what drawing costs).
func TestPaneView(t *testing.T) {
	p := New(testCommon(), rows.NewStore(0, 0))
	p.SetSize(100, 14)
	parser := rows.NewParser()
	var entries []rows.Entry
	for i := range 200_000 {
		entries = append(entries, parser.Event(frame(transport.Outgoing, time.Duration(i)*time.Millisecond,
			fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, i))))
	}
	meta := &transport.HTTPMeta{Method: "POST", URL: "http://127.0.0.1:8080/mcp", StatusCode: 200, SSEEventID: "ev-1", SSEEvent: "message",
		RequestHeader:  http.Header{"Authorization": {"Bearer secret-token"}, "X-Upstream-Token": {"secret-token-2"}, "Mcp-Session-Id": {"abc"}},
		ResponseHeader: http.Header{"Content-Type": {"text/event-stream"}}}
	entries = append(entries,
		parser.Event(transport.Event{Time: t0.Add(time.Hour), Kind: transport.KindFrame, Dir: transport.Incoming, HTTP: meta,
			Data: []byte(`{"jsonrpc":"2.0","id":199999,"result":{}}`)}),
		parser.Event(transport.Event{Time: t0.Add(time.Hour), Kind: transport.KindBadFrame, Dir: transport.Incoming,
			Data: []byte("Listening on port 3000\x1b[0m"), Err: "invalid character 'L' looking for beginning of value"}),
		parser.Warning(session.Warning{Time: t0.Add(time.Hour), Kind: "unknown-id", Message: "response to unknown request id 5", Data: []byte(`{"id":5}`)}),
		parser.Event(transport.Event{Time: t0.Add(time.Hour), Kind: transport.KindLifecycle, Text: "exited: status 1", Err: "signal: killed"}),
	)
	p.Append(entries)
	if p.Store().Len() != rows.MaxEntries || p.Store().First() != 4 {
		t.Fatalf("len %d first %d", p.Store().Len(), p.Store().First())
	}
	view := p.View()
	golden.RequireEqual(t, ansi.Strip(view)+"\n")

	// The detail of the HTTP response, with the credential hidden.
	for range 3 {
		p.Update(press("up"))
	}
	p.Update(press("enter"))
	s := ansi.Strip(p.View())
	for _, want := range []string{"← recv frame · response · ping · id 199999", "HTTP POST http://127.0.0.1:8080/mcp → 200", `SSE event "message" id "ev-1"`, "Authorization: Bearer [REDACTED]", "X-Upstream-Token: [REDACTED]", "Mcp-Session-Id: abc", "latency 56m40s since the request"} {
		if !strings.Contains(s, want) {
			t.Errorf("detail lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "secret-token") {
		t.Error("the token is on screen")
	}
	// Filtering keeps the rows that match, newest selected while following.
	p.Update(press("esc"))
	p.Update(press("/"))
	for _, r := range "kind:bad" {
		p.Update(press(string(r)))
	}
	p.Update(press("enter"))
	if s := ansi.Strip(p.View()); !strings.Contains(s, `Listening on port 3000\e[0m`) || !strings.Contains(s, "1/1 of 200000") {
		t.Errorf("filtered view:\n%s", s)
	}
}

// In a frame's detail, "/" searches its text: matches are marked, n and N
// go from one to the next, esc clears the search and then goes back.
func TestDetailSearch(t *testing.T) {
	p := New(testCommon(), rows.NewStore(0, 0))
	p.SetSize(80, 12)
	var items []string
	for i := range 40 {
		word := "hay"
		if i == 5 || i == 20 || i == 33 {
			word = "Needle"
		}
		items = append(items, fmt.Sprintf(`{"n":%d,"w":"%s"}`, i, word))
	}
	data := `{"jsonrpc":"2.0","id":1,"result":{"items":[` + strings.Join(items, ",") + `]}}`
	p.Append([]rows.Entry{rows.NewParser().Event(frame(transport.Incoming, 0, data))})
	p.Update(press("enter"))
	if !p.Detail() {
		t.Fatal("no detail view")
	}
	p.Update(press("/"))
	if !p.InputFocused() {
		t.Fatal("the search box does not have the keys")
	}
	for _, r := range "needle" {
		p.Update(press(string(r)))
	}
	p.Update(press("enter"))
	if p.InputFocused() {
		t.Fatal("enter did not leave the search box")
	}
	s := ansi.Strip(p.View())
	if len(p.matches) != 3 || !strings.Contains(s, "needle: line 1 of 3 with a match") || !strings.Contains(s, "▶") || !strings.Contains(s, `"Needle"`) {
		t.Fatalf("after the search (%d matches):\n%s", len(p.matches), s)
	}
	first := p.detailOffset
	p.Update(press("n"))
	s = ansi.Strip(p.View())
	if p.match != 1 || p.detailOffset <= first || !strings.Contains(s, "line 2 of 3") {
		t.Errorf("n: match %d offset %d (was %d)\n%s", p.match, p.detailOffset, first, s)
	}
	p.Update(press("N"))
	p.Update(press("N"))
	if p.match != 2 {
		t.Errorf("N twice from the second match: %d, want the third (wrapping)", p.match)
	}
	// The marked text is highlighted, and only in its own lines.
	if v := p.View(); !strings.Contains(v, p.c.Styles.Match.Reverse(true).Render("Needle")) {
		t.Errorf("the match is not highlighted:\n%q", v)
	}
	p.Update(press("esc"))
	if !p.Detail() || p.term != "" || len(p.matches) != 0 {
		t.Errorf("esc should clear the search first: detail %v term %q", p.Detail(), p.term)
	}
	p.Update(press("/"))
	for _, r := range "absent" {
		p.Update(press(string(r)))
	}
	if s := ansi.Strip(p.View()); !strings.Contains(s, "find: absent") {
		t.Errorf("the search box:\n%s", s)
	}
	p.Update(press("enter"))
	if s := ansi.Strip(p.View()); !strings.Contains(s, "absent: on no line") {
		t.Errorf("no match:\n%s", s)
	}
	p.Update(press("esc"))
	p.Update(press("esc"))
	if p.Detail() {
		t.Error("the second esc should leave the detail view")
	}

	// esc in the box empties it; a paste reaches it.
	p.Update(press("enter"))
	p.Update(press("/"))
	p.Update(press("x"))
	p.Update(press("esc"))
	p.Update(press("/"))
	p.Update(tea.PasteMsg{Content: "Needle"})
	p.Update(press("enter"))
	if p.term != "Needle" || len(p.matches) != 3 {
		t.Errorf("after esc and a paste: term %q, %d matches", p.term, len(p.matches))
	}
}

// Marks land on the matched text even where case folding changes the
// length of some runes; then the whole line is marked.
func TestHighlightFolding(t *testing.T) {
	p := New(testCommon(), rows.NewStore(0, 0))
	p.SetSize(80, 12)
	p.term = "abc"
	found := p.c.Styles.Match.Reverse(true)
	if got, want := p.highlight("x abc ABC", false), "x "+found.Render("abc")+" "+found.Render("ABC"); got != want {
		t.Errorf("ASCII: %q, want %q", got, want)
	}
	line := "Ⱥ abc İ" // Ⱥ grows and İ shrinks in lower case
	if got := p.highlight(line, false); got != found.Render(line) {
		t.Errorf("folding: %q, want the whole line marked", got)
	}
}

// y in a frame's detail copies it; a row whose data was released to bound
// memory says that nothing was copied.
func TestDetailCopy(t *testing.T) {
	p := New(testCommon(), rows.NewStore(10, 100))
	p.SetSize(80, 12)
	parser := rows.NewParser()
	for i := range 2 {
		p.Append([]rows.Entry{parser.Event(frame(transport.Outgoing, 0, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping","params":{"pad":"%s"}}`, i, strings.Repeat("x", 60))))})
	}
	p.Update(press("enter")) // the newest row, still kept
	if cmd := p.Update(press("y")); cmd == nil {
		t.Fatal("y copied nothing")
	}
	p.Update(press("esc"))
	p.Update(press("up"))
	p.Update(press("enter")) // the oldest row, released
	if !p.Store().Get(p.detailSeq).Released {
		t.Fatal("the first row should have been released")
	}
	cmd := p.Update(press("y"))
	if cmd == nil {
		t.Fatal("no notice for a released row")
	}
	if n, ok := cmd().(common.Notice); !ok || !strings.Contains(n.Text(), "nothing copied") {
		t.Errorf("notice %v", n)
	}
}

// TestStoreMarksAnswered: a request is pending until the store sees its
// answer, which goes the other way.
func TestStoreMarksAnswered(t *testing.T) {
	s := rows.NewStore(10, 1000)
	req := s.Append(rows.Entry{Kind: rows.KindFrame, Dir: transport.Outgoing, Method: "tools/call", ID: "1"})
	other := s.Append(rows.Entry{Kind: rows.KindFrame, Dir: transport.Outgoing, Method: "ping", ID: "2"})
	s.Append(rows.Entry{Kind: rows.KindFrame, Dir: transport.Outgoing, Method: "response", ID: "2"}) // same way: no answer
	s.Append(rows.Entry{Kind: rows.KindFrame, Dir: transport.Incoming, Method: "response", ID: "1"})
	if !s.Get(req).Answered || s.Get(other).Answered {
		t.Errorf("answered: request 1 %v, ping 2 %v", s.Get(req).Answered, s.Get(other).Answered)
	}
}

// TestFilterLanguage: the pane's filter is the search language: tab
// completes a field and a value, a query that does not parse says why and
// keeps the last good one, status:error and dur: select their rows.
func TestFilterLanguage(t *testing.T) {
	p := New(testCommon(), rows.NewStore(0, 0))
	p.SetSize(120, 14)
	parser := rows.NewParser()
	p.Append([]rows.Entry{
		parser.Event(frame(transport.Outgoing, 0, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow"}}`)),
		parser.Event(frame(transport.Incoming, 2*time.Second, `{"jsonrpc":"2.0","id":1,"result":{"isError":true,"content":[]}}`)),
		parser.Event(frame(transport.Outgoing, 3*time.Second, `{"jsonrpc":"2.0","id":2,"method":"ping"}`)),
		parser.Event(frame(transport.Incoming, 3*time.Second+time.Millisecond, `{"jsonrpc":"2.0","id":2,"result":{}}`)),
		parser.Event(frame(transport.Outgoing, 4*time.Second, `{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"file:///x"}}`)),
	})
	typeIn := func(s string) {
		for _, r := range s {
			p.Update(press(string(r)))
		}
	}
	p.Update(press("/"))
	typeIn("sta")
	p.Update(tea.KeyPressMsg{Code: tea.KeyTab})
	typeIn("e")
	p.Update(tea.KeyPressMsg{Code: tea.KeyTab})
	if v := p.filter.Value(); v != "status:error" {
		t.Fatalf("tab completed to %q", v)
	}
	p.Update(press("enter"))
	if s := ansi.Strip(p.View()); !strings.Contains(s, "1/1 of 5") || !strings.Contains(s, "slow") {
		t.Errorf("status:error:\n%s", s)
	}
	p.SetFilter("status:pending")
	if s := ansi.Strip(p.View()); !strings.Contains(s, "1/1 of 5") || !strings.Contains(s, "file:///x") {
		t.Errorf("status:pending:\n%s", s)
	}
	p.SetFilter("dur:>1s")
	if s := ansi.Strip(p.View()); !strings.Contains(s, "1/1 of 5") {
		t.Errorf("dur:>1s:\n%s", s)
	}
	// A query that does not parse is said while it is typed (the rows
	// are those of the last text that did parse).
	p.Update(press("esc"))
	p.Update(press("/"))
	typeIn("dur:>1s")
	p.Update(press(" "))
	typeIn(`text:"open`)
	if s := ansi.Strip(p.View()); !strings.Contains(s, "✗ a double quote is not closed") {
		t.Errorf("no error shown:\n%s", s)
	}
	// enter does not apply it: the filter stays open until it is fixed.
	p.Update(press("enter"))
	if !p.InputFocused() {
		t.Error("a query that does not parse was applied")
	}
	p.Update(press("esc"))
	// Tab on a field that wants a value shows its values.
	p.Update(press("/"))
	typeIn("status:")
	if s := ansi.Strip(p.View()); !strings.Contains(s, "tab: status:ok status:error status:pending") {
		t.Errorf("the values of status: are not shown:\n%s", s)
	}
	// enter on it is not applied, and says why beside the choices.
	p.Update(press("enter"))
	if s := ansi.Strip(p.View()); !p.InputFocused() || !strings.Contains(s, "✗ status: has no value") {
		t.Errorf("enter on status: said nothing:\n%s", s)
	}
	// or: either group.
	p.Update(press("esc"))
	p.SetFilter("status:pending or method:ping")
	if s := ansi.Strip(p.View()); !strings.Contains(s, "3/3 of 5") {
		t.Errorf("status:pending or method:ping:\n%s", s)
	}
}

// TestLatencyView: L sums the answers up by method and by tool, the
// slowest p99 first, with errors counted and a distribution; the filter
// applies; L goes back to the frames.
func TestLatencyView(t *testing.T) {
	p := New(testCommon(), rows.NewStore(0, 0))
	p.SetSize(110, 16)
	parser := rows.NewParser()
	var es []rows.Entry
	at := time.Duration(0)
	add := func(method, name string, lat time.Duration, result string) {
		id := len(es) + 1
		params := "{}"
		if name != "" {
			params = fmt.Sprintf(`{"name":%q}`, name)
		}
		es = append(es, parser.Event(frame(transport.Outgoing, at, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params))))
		es = append(es, parser.Event(frame(transport.Incoming, at+lat, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,%s}`, id, result))))
		at += time.Second
	}
	for i := range 100 {
		add("tools/call", "search", time.Duration(i+1)*10*time.Millisecond, `"result":{"content":[]}`)
		add("ping", "", time.Millisecond, `"result":{}`)
	}
	add("tools/call", "fail", 5*time.Millisecond, `"result":{"isError":true,"content":[]}`)
	add("prompts/get", "greet", 2*time.Millisecond, `"error":{"code":-32602,"message":"no"}`)
	p.Append(es)
	rows := p.Latencies()
	if len(rows) != 4 || rows[0].Name != "tools/call search" || rows[0].Count != 100 || rows[0].P50 != 500*time.Millisecond || rows[0].P99 != 990*time.Millisecond || rows[0].Max != time.Second {
		t.Fatalf("rows %+v", rows)
	}
	for _, r := range rows {
		if r.Name == "tools/call fail" && r.Errors != 1 || r.Name == "prompts/get" && r.Errors != 1 || r.Name == "ping" && (r.Errors != 0 || r.Count != 100) {
			t.Errorf("row %+v", r)
		}
	}
	p.Update(press("L"))
	s := ansi.Strip(p.View())
	for _, want := range []string{"Latency by method: 202 answers", "tools/call search", "500ms", "990ms", "1s", "ping", "prompts/get", "tools/call fail"} {
		if !strings.Contains(s, want) {
			t.Errorf("the view lacks %q:\n%s", want, s)
		}
	}
	if strings.Index(s, "tools/call search") > strings.Index(s, "ping") {
		t.Errorf("the slowest is not first:\n%s", s)
	}
	p.Update(press("L"))
	p.SetFilter("tool:search")
	p.Update(press("L"))
	if rows := p.Latencies(); len(rows) != 1 || rows[0].Name != "tools/call search" {
		t.Errorf("filtered rows %+v", rows)
	}
	if s := ansi.Strip(p.View()); !strings.Contains(s, "100 answers matching tool:search") {
		t.Errorf("filtered view:\n%s", s)
	}
	p.Update(press("esc"))
	if s := ansi.Strip(p.View()); !strings.Contains(s, "TIME") {
		t.Errorf("esc does not go back to the frames:\n%s", s)
	}
}

// TestLatencyNameKeepsTheTool: a row's name too long for its column loses
// the method's start, never the tool's name.
func TestLatencyNameKeepsTheTool(t *testing.T) {
	for _, tc := range []struct {
		name  string
		width int
		want  string
	}{
		{"tools/call long-running-operation", 19, "long-running-opera…"},
		{"tools/call long-running-operation", 28, "…call long-running-operation"},
		{"tools/call echo", 12, "…s/call echo"},
		{"resources/read", 12, "reso…es/read"},
		{"tools/call add", 20, "tools/call add"},
	} {
		if got := fitMethod(tc.name, tc.width); got != tc.want {
			t.Errorf("fitMethod(%q, %d) = %q, want %q", tc.name, tc.width, got, tc.want)
		}
	}
}

// TestShowFrameSaysTheFilterIsCleared: a jump to a row the filter hides
// (enter on a Timeline span) clears the filter and says so; a row it
// shows keeps it, silently.
func TestShowFrameSaysTheFilterIsCleared(t *testing.T) {
	p := New(testCommon(), rows.NewStore(0, 0))
	p.SetSize(100, 12)
	parser := rows.NewParser()
	p.Append([]rows.Entry{
		parser.Event(frame(transport.Outgoing, 0, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)),
		parser.Event(frame(transport.Outgoing, time.Second, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)),
	})
	p.SetFilter("method:ping")
	if cmd := p.Update(common.ShowFrameMsg{Seq: 0}); cmd != nil || p.query.Empty() {
		t.Fatalf("a row the filter shows: the filter went, or something was said")
	}
	cmd := p.Update(common.ShowFrameMsg{Seq: 1})
	if !p.query.Empty() || cmd == nil {
		t.Fatalf("a hidden row: the filter is %q, notice %v", p.query.String(), cmd)
	}
	if n, ok := cmd().(common.Notice); !ok || !strings.Contains(n.Text(), "the filter method:ping hid that frame: it is cleared") {
		t.Errorf("the notice is %#v", cmd())
	}
}

// TestModelRows: a model's turns are rows that name the model or the tool
// and say what the turn holds.
func TestModelRows(t *testing.T) {
	p := New(testCommon(), rows.NewStore(0, 0))
	p.SetSize(160, 10)
	parser := rows.NewParser()
	p.Append([]rows.Entry{
		parser.Event(genai.Event(t0, transport.Outgoing, genai.Turn{Op: genai.OpChat, ID: "chat-1", Model: "gpt-test", Messages: 1, Tools: 18})),
		parser.Event(genai.Event(t0.Add(time.Second), transport.Incoming, genai.Turn{Op: genai.OpChat, ID: "chat-1", Model: "gpt-test", ToolCalls: []genai.ToolCall{{ID: "c", Name: "add"}}})),
	})
	s := ansi.Strip(p.View())
	for _, want := range []string{"model     chat gpt-test · 1 messages, 18 tools", "response · chat gpt-test · calls add"} {
		if !strings.Contains(s, want) {
			t.Errorf("the wire lacks %q:\n%s", want, s)
		}
	}
}

// TestLatencyOneFormat: a latency reads the same in the LATENCY column, in
// the frame's detail and in the L view.
func TestLatencyOneFormat(t *testing.T) {
	p := New(testCommon(), rows.NewStore(0, 0))
	p.SetSize(100, 14)
	parser := rows.NewParser()
	lat := 2870 * time.Microsecond
	p.Append([]rows.Entry{
		parser.Event(frame(transport.Outgoing, 0, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add"}}`)),
		parser.Event(frame(transport.Incoming, lat, `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`)),
	})
	want := rows.FormatLatency(lat)
	if want != "2.87ms" {
		t.Fatalf("FormatLatency(2.87ms) = %q", want)
	}
	if s := ansi.Strip(p.View()); !strings.Contains(s, " "+want) {
		t.Errorf("the LATENCY column lacks %s:\n%s", want, s)
	}
	p.Update(press("enter"))
	if s := ansi.Strip(p.View()); !strings.Contains(s, "latency "+want+" since the request") {
		t.Errorf("the detail lacks %s:\n%s", want, s)
	}
	p.Update(press("esc"))
	p.Update(press("L"))
	if s := ansi.Strip(p.View()); !strings.Contains(s, want) {
		t.Errorf("the L view lacks %s:\n%s", want, s)
	}
}

package timeline

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/mcpi-dev/mcpi/internal/genai"
	"github.com/mcpi-dev/mcpi/internal/mcptest"
	"github.com/mcpi-dev/mcpi/internal/rows"
	"github.com/mcpi-dev/mcpi/internal/safetext"
	"github.com/mcpi-dev/mcpi/internal/transport"
	"github.com/mcpi-dev/mcpi/internal/tui/common"
	"github.com/mcpi-dev/mcpi/internal/tui/keymap"
	"github.com/mcpi-dev/mcpi/internal/tui/styles"
)

var t0 = time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC)

const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

// script is a session's frames: ms is when each was seen, in
// milliseconds since t0; > is sent by mcpi, < received.
type script []struct {
	ms   int
	dir  string
	json string
}

func (s script) entries() []rows.Entry {
	p := rows.NewParser()
	var out []rows.Entry
	for _, f := range s {
		dir := transport.Outgoing
		if f.dir == "<" {
			dir = transport.Incoming
		}
		ev := transport.Event{Time: t0.Add(time.Duration(f.ms) * time.Millisecond), Kind: transport.KindFrame, Dir: dir, Data: []byte(f.json)}
		out = append(out, p.Event(ev))
	}
	return out
}

// session has every lane's shapes: a call and its answer (with a trace
// context), a server request, a notification, a task with its polls, a
// subscription with two updates, an error, an unanswered request, an
// input request in two rounds, and an HTTP 401.
var session = script{
	{0, ">", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`},
	{5, "<", `{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`},
	{100, ">", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{},"_meta":{"traceparent":"` + traceparent + `"}}}`},
	{130, "<", `{"jsonrpc":"2.0","id":"s1","method":"sampling/createMessage","params":{}}`},
	{180, ">", `{"jsonrpc":"2.0","id":"s1","result":{"role":"assistant","content":{"type":"text","text":"4"}}}`},
	{200, "<", `{"jsonrpc":"2.0","id":2,"result":{"content":[]}}`},
	{250, "<", `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"hi"}}`},
	{300, ">", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"slow","arguments":{}}}`},
	{310, "<", `{"jsonrpc":"2.0","id":3,"result":{"resultType":"task","taskId":"T1","status":"working"}}`},
	{400, ">", `{"jsonrpc":"2.0","id":4,"method":"tasks/get","params":{"taskId":"T1"}}`},
	{405, "<", `{"jsonrpc":"2.0","id":4,"result":{"taskId":"T1","status":"working"}}`},
	{500, ">", `{"jsonrpc":"2.0","id":5,"method":"tasks/get","params":{"taskId":"T1"}}`},
	{505, "<", `{"jsonrpc":"2.0","id":5,"result":{"taskId":"T1","status":"completed"}}`},
	{520, ">", `{"jsonrpc":"2.0","id":6,"method":"resources/subscribe","params":{"uri":"demo://counter"}}`},
	{525, "<", `{"jsonrpc":"2.0","id":6,"result":{}}`},
	{600, "<", `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"demo://counter"}}`},
	{700, "<", `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"demo://counter"}}`},
	{750, ">", `{"jsonrpc":"2.0","id":7,"method":"resources/unsubscribe","params":{"uri":"demo://counter"}}`},
	{755, "<", `{"jsonrpc":"2.0","id":7,"result":{}}`},
	{800, ">", `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"fail","arguments":{}}}`},
	{820, "<", `{"jsonrpc":"2.0","id":8,"error":{"code":-32000,"message":"it broke"}}`},
	{850, ">", `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"ask","arguments":{}}}`},
	{860, "<", `{"jsonrpc":"2.0","id":9,"result":{"resultType":"input_required","inputRequests":{"a":{}},"requestState":"x"}}`},
	{900, ">", `{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"ask","arguments":{},"inputResponses":{"a":{}},"requestState":"x"}}`},
	{920, "<", `{"jsonrpc":"2.0","id":10,"result":{"resultType":"complete","content":[]}}`},
	{940, ">", `{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"long","arguments":{}}}`},
	{945, ">", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":12}}`},
	{950, ">", `{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"hang","arguments":{}}}`},
}

// http401 is an HTTP event of the session: an answer 401.
func http401(ms int) rows.Entry {
	return rows.NewParser().Event(transport.Event{Time: t0.Add(time.Duration(ms) * time.Millisecond), Kind: transport.KindHTTP,
		Text: "POST /mcp → 401", HTTP: &transport.HTTPMeta{Method: "POST", URL: "http://x/mcp", StatusCode: 401}})
}

func newPane(w, h int) *Pane {
	c := &common.Common{Styles: styles.DefaultStyles(false), Keys: keymap.Default(), Now: func() time.Time { return t0.Add(time.Second) }}
	p := New(c, NewStore(0), false)
	p.SetSize(w, h)
	return p
}

func fed(w, h int) *Pane {
	p := newPane(w, h)
	p.Append(append(session.entries(), http401(960)))
	return p
}

// namedKeys are the keys the tests press by name; any other name is the
// character it is.
var namedKeys = map[string]rune{
	"enter": tea.KeyEnter, "esc": tea.KeyEscape, "up": tea.KeyUp, "down": tea.KeyDown,
	"left": tea.KeyLeft, "right": tea.KeyRight, "home": tea.KeyHome, "end": tea.KeyEnd,
}

func press(p *Pane, keys ...string) tea.Cmd {
	var cmd tea.Cmd
	for _, k := range keys {
		msg := tea.KeyPressMsg{Code: []rune(k)[0], Text: k}
		if r, ok := namedKeys[k]; ok {
			msg = tea.KeyPressMsg{Code: r}
		}
		cmd = p.Update(msg)
	}
	return cmd
}

// find returns the first span of lane whose label contains what.
func find(t *testing.T, p *Pane, lane Lane, what string) (int64, *Span) {
	t.Helper()
	for i := p.store.First(); i < p.store.Next(); i++ {
		if sp := p.store.Get(i); sp.Lane == lane && !sp.Mark() && strings.Contains(sp.Label(), what) {
			return i, sp
		}
	}
	t.Fatalf("no span %q in lane %s", what, lane)
	return 0, nil
}

func TestLanes(t *testing.T) {
	p := fed(120, 30)
	ms := func(d int64) int { return int(d / int64(time.Millisecond)) }
	for _, tc := range []struct {
		lane       Lane
		what       string
		start, end int // ms; end -1: open
		failed     bool
		marks      int32
		rounds     int32
	}{
		{LaneRequests, "tools/list", 0, 5, false, 0, 0},
		{LaneRequests, "tools/call add", 100, 200, false, 0, 0},
		{LaneServer, "sampling/createMessage", 130, 180, false, 0, 0},
		{LaneTasks, "task slow T1", 300, 505, false, 2, 0},
		{LaneSubscriptions, "resources/subscribe demo://counter", 520, 750, false, 2, 0},
		{LaneRequests, "tools/call fail", 800, 820, true, 0, 0},
		{LaneRequests, "tools/call ask", 850, 920, false, 1, 1},
		{LaneRequests, "tools/call hang", 950, -1, false, 0, 0},
		{LaneRequests, "tools/call long", 940, 945, false, 0, 0},
	} {
		_, sp := find(t, p, tc.lane, tc.what)
		start := ms(sp.Start - t0.UnixNano())
		end := -1
		if !sp.Open() {
			end = ms(sp.End - t0.UnixNano())
		}
		if start != tc.start || end != tc.end || sp.Failed() != tc.failed || sp.Marks != tc.marks || sp.Rounds != tc.rounds {
			t.Errorf("%s %q: start %d end %d failed %v marks %d rounds %d; want %d %d %v %d %d",
				tc.lane, tc.what, start, end, sp.Failed(), sp.Marks, sp.Rounds, tc.start, tc.end, tc.failed, tc.marks, tc.rounds)
		}
	}
	if _, sp := find(t, p, LaneRequests, "tools/call add"); sp.TraceID != "4bf92f3577b34da6a3ce929d0e0e4736" {
		t.Errorf("trace id %q", sp.TraceID)
	}
	if _, sp := find(t, p, LaneNotifications, "notifications/message"); !sp.Point() {
		t.Errorf("a notification is not a point: %+v", sp)
	}
	if _, sp := find(t, p, LaneErrors, "tools/call fail"); sp.Err != "it broke" {
		t.Errorf("the error lane says %q", sp.Err)
	}
	if _, sp := find(t, p, LaneHTTP, "401"); !sp.Failed() {
		t.Errorf("an HTTP 401 is not marked failed: %+v", sp)
	}
}

// TestGolden draws the session at 80x24 and 200x50, the unanswered
// request selected.
func TestGolden(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {200, 50}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			p := fed(size[0], size[1])
			press(p, "end", "up")
			golden.RequireEqual(t, []byte(ansi.Strip(p.View())+"\n"))
		})
	}
}

func TestFailedAndOpenStandOut(t *testing.T) {
	p := fed(120, 30)
	v := ansi.Strip(p.View())
	row := lineOf(v, "▾ Requests")
	if !strings.Contains(row, glyphFail) || !strings.Contains(row, glyphOpenEnd) {
		t.Errorf("the requests lane shows no %s (failed) or %s (open):\n%s", glyphFail, glyphOpenEnd, v)
	}
	i, _ := find(t, p, LaneRequests, "tools/call fail")
	p.cursor = i
	p.layout()
	if d := ansi.Strip(p.lines[len(p.lines)-1]); !strings.Contains(d, "✗ it broke") {
		t.Errorf("the details of a failed call: %q", d)
	}
	i, _ = find(t, p, LaneRequests, "tools/call hang")
	p.cursor = i
	p.layout()
	if d := ansi.Strip(p.lines[len(p.lines)-1]); !strings.Contains(d, "never ended") {
		t.Errorf("the details of an unanswered call: %q", d)
	}
}

func lineOf(view, prefix string) string {
	for _, l := range strings.Split(view, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}

func TestZoomAndPan(t *testing.T) {
	p := fed(120, 30)
	a, b := p.Window()
	if !p.fit || !a.Equal(t0) {
		t.Fatalf("the window starts fitted at the first event: %v…%v", a, b)
	}
	whole := b.Sub(a)
	press(p, "+", "+")
	a2, b2 := p.Window()
	if got := b2.Sub(a2); got != whole/4 || p.fit {
		t.Errorf("two zooms in: %v of %v", got, whole)
	}
	press(p, "right")
	a3, _ := p.Window()
	if a3.Sub(a2) != whole/16 {
		t.Errorf("a pan moved the window by %v, want a quarter of %v", a3.Sub(a2), whole/4)
	}
	press(p, "h")
	if a4, _ := p.Window(); !a4.Equal(a2) {
		t.Errorf("h pans back: %v, want %v", a4, a2)
	}
	for range 20 {
		press(p, "+")
	}
	if a5, b5 := p.Window(); b5.Sub(a5) != time.Millisecond {
		t.Errorf("zooming in stops at a millisecond: %v", b5.Sub(a5))
	}
	if s := ansi.Strip(p.View()); !strings.Contains(s, "µs") {
		t.Errorf("the axis at a millisecond is in µs:\n%s", s)
	}
	press(p, "0")
	if a6, b6 := p.Window(); !p.fit || b6.Sub(a6) != whole {
		t.Errorf("0 fits the whole session: %v", b6.Sub(a6))
	}
	press(p, "+", "-")
	if !p.fit {
		t.Errorf("zooming out to the whole session fits it again")
	}
}

func TestCollapse(t *testing.T) {
	p := fed(120, 30)
	i, _ := find(t, p, LaneTasks, "task")
	p.cursor = i
	press(p, "c")
	v := ansi.Strip(p.View())
	if !strings.Contains(v, "▸ Tasks") || strings.Contains(v, "▾ Tasks") {
		t.Fatalf("c folds the lane of the span:\n%s", v)
	}
	// Keys no longer reach the folded lane's spans.
	press(p, "home")
	for range 60 {
		if sp := p.Selected(); sp != nil && sp.Lane == LaneTasks {
			t.Fatalf("a folded lane's span was selected")
		}
		press(p, "down")
	}
	press(p, "C")
	if v := ansi.Strip(p.View()); !strings.Contains(v, "▾ Tasks") {
		t.Errorf("C opens every lane:\n%s", v)
	}
}

func TestEnterShowsTheFrame(t *testing.T) {
	p := fed(120, 30)
	i, sp := find(t, p, LaneRequests, "tools/call fail")
	p.cursor = i
	cmd := press(p, "enter")
	if cmd == nil {
		t.Fatal("enter did nothing")
	}
	msg, ok := cmd().(common.ShowFrameMsg)
	// tools/call fail is the 20th frame of the script (row 19).
	if !ok || msg.Seq != 19 || sp.Seq != 19 {
		t.Errorf("enter asks for %#v, want the wire row 19", msg)
	}
}

func TestFilter(t *testing.T) {
	p := fed(120, 30)
	press(p, "/")
	for _, r := range "status:error" {
		p.Update(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
	press(p, "enter")
	press(p, "home")
	var got []string
	for seen := map[int64]bool{}; !seen[p.cursor]; press(p, "down") {
		seen[p.cursor] = true
		got = append(got, p.Selected().Label())
	}
	// The failed call once: its echo in the errors lane is drawn, not
	// selected or counted a second time.
	if want := "tools/call fail,POST /mcp → 401"; strings.Join(got, ",") != want {
		t.Errorf("status:error selects %q, want %q", strings.Join(got, ","), want)
	}
	if s := p.View(); !strings.Contains(s, "2 in view of") {
		t.Errorf("status:error counts:\n%s", s)
	}
	// The lanes' headers count what the filter shows, not every span.
	s := ansi.Strip(p.View())
	for _, want := range []string{"▾ Requests 1 ", "▾ HTTP/auth 1 ", "▾ Errors 1 ", "▾ Notifications  "} {
		if !strings.Contains(s, want) {
			t.Errorf("under status:error the headers lack %q:\n%s", want, s)
		}
	}
	p.SetFilter("dur:>150ms")
	press(p, "home")
	if sp := p.Selected(); sp == nil || sp.Label() != "task slow T1" {
		t.Errorf("dur:>150ms selects %+v first", sp)
	}
	if s := ansi.Strip(p.View()); !strings.Contains(s, "filter: dur:>150ms") {
		t.Errorf("the status line does not say the filter:\n%s", s)
	}
	press(p, "esc")
	if !p.query.Empty() {
		t.Errorf("esc clears the filter")
	}
}

func TestCopyTraceID(t *testing.T) {
	p := fed(120, 30)
	i, _ := find(t, p, LaneRequests, "tools/call add")
	p.cursor = i
	p.layout()
	if d := ansi.Strip(p.lines[len(p.lines)-1]); !strings.Contains(d, "trace 4bf92f3577b34da6a3ce929d0e0e4736") {
		t.Errorf("the details do not show the trace id: %q", d)
	}
	if cmd := press(p, "Y"); cmd == nil {
		t.Error("Y copies nothing")
	}
}

// TestBounds: past the store's bound the oldest spans go, counted and
// said; past MaxOpen unanswered requests, new ones are not followed,
// counted and said.
func TestBounds(t *testing.T) {
	c := &common.Common{Styles: styles.DefaultStyles(false), Keys: keymap.Default(), Now: time.Now}
	p := New(c, NewStore(100), true)
	p.SetSize(120, 30)
	var s script
	for i := range 300 {
		s = append(s, script{{i, ">", fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, i)}, {i, "<", fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{}}`, i)}}...)
	}
	p.Append(s.entries())
	if p.store.Len() != 100 || p.store.Evicted != 200 {
		t.Errorf("the store keeps %d spans, evicted %d", p.store.Len(), p.store.Evicted)
	}
	if v := ansi.Strip(p.View()); !strings.Contains(v, "200 older spans dropped") {
		t.Errorf("the pane does not say what was dropped:\n%s", v)
	}

	p = New(c, NewStore(0), true)
	p.SetSize(120, 30)
	batch := make([]rows.Entry, 0, MaxOpen+10)
	for i := range MaxOpen + 10 {
		batch = append(batch, rows.Entry{Time: t0, Kind: rows.KindFrame, Dir: transport.Outgoing, Method: "tools/call", ID: fmt.Sprint(i)})
	}
	p.Append(batch)
	if p.store.Open() != MaxOpen || p.store.Untracked != 10 {
		t.Errorf("open %d, not followed %d", p.store.Open(), p.store.Untracked)
	}
	if v := ansi.Strip(p.View()); !strings.Contains(v, "10 not followed (over 50000 open)") {
		t.Errorf("the pane does not say what was not followed:\n%s", v)
	}
}

// TestMillionNotifications: a server's flood of notifications stays
// within the store's bound.
func TestMillionNotifications(t *testing.T) {
	if testing.Short() {
		t.Skip("a million entries")
	}
	p := newPane(120, 30)
	batch := make([]rows.Entry, 0, 10_000)
	for i := range 1_000_000 {
		batch = append(batch, rows.Entry{Time: t0.Add(time.Duration(i) * time.Microsecond), Kind: rows.KindFrame, Dir: transport.Incoming, Method: "notifications/message"})
		if len(batch) == cap(batch) {
			p.Append(batch)
			batch = batch[:0]
		}
	}
	s := p.store
	if s.Events != 1_000_000 || s.Len() != MaxSpans || s.Evicted != 1_000_000-MaxSpans || len(s.ring) != MaxSpans || s.Open() != 0 {
		t.Errorf("events %d, kept %d, evicted %d, ring %d, open %d", s.Events, s.Len(), s.Evicted, len(s.ring), s.Open())
	}
	if s.LaneCount(LaneNotifications) != MaxSpans {
		t.Errorf("the lane counts %d", s.LaneCount(LaneNotifications))
	}
}

// TestHostileNames: what a server names (methods, tools, ids, errors,
// task ids) reaches the screen made safe, and the view holds no escape
// sequence of the server's.
func TestHostileNames(t *testing.T) {
	P := mcptest.Poison
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	s := script{
		{0, ">", `{"jsonrpc":"2.0","id":` + q(P) + `,"method":"tools/call","params":{"name":` + q(P) + `}}`},
		{1, "<", `{"jsonrpc":"2.0","id":` + q(P) + `,"error":{"code":1,"message":` + q(P) + `}}`},
		{2, "<", `{"jsonrpc":"2.0","method":` + q(P) + `,"params":{"uri":` + q(P) + `}}`},
		{3, "<", `{"jsonrpc":"2.0","id":5,"method":` + q(P) + `,"params":{}}`},
		{4, ">", `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"t"}}`},
		{5, "<", `{"jsonrpc":"2.0","id":6,"result":{"resultType":"task","taskId":` + q(P) + `}}`},
	}
	p := newPane(160, 30)
	p.Append(s.entries())
	press(p, "home")
	for range 8 {
		v := p.View()
		if safetext.Screen(v) != v {
			t.Fatalf("the view holds what the screen sink had to make safe:\n%q", v)
		}
		press(p, "down")
	}
	if v := p.View(); !strings.Contains(v, `\e]0;pwned`) {
		t.Errorf("the poison is not shown, made visible:\n%s", v)
	}
}

// TestFilterMovesTheSelection: a filter that hides the selected span
// selects the first span it shows, or none.
func TestFilterMovesTheSelection(t *testing.T) {
	p := fed(120, 30)
	press(p, "home")
	if sp := p.Selected(); sp == nil || sp.Method != "tools/list" {
		t.Fatalf("home selects %+v", sp)
	}
	p.SetFilter("status:error")
	if sp := p.Selected(); sp == nil || !sp.match {
		t.Errorf("the selected span %+v does not match the filter", sp)
	}
	p.SetFilter("method:nosuch")
	if sp := p.Selected(); sp != nil {
		t.Errorf("a filter that shows nothing leaves %+v selected", sp)
	}
}

// TestAppLane: an MCP App's messages with mcpi's host are points of the
// App lane, an answer named after its request, a refusal failed; kind:app
// finds them, and their ids do not end the session's requests.
func TestAppLane(t *testing.T) {
	p := newPane(120, 30)
	wp := rows.NewParser()
	ev := func(ms int, kind transport.EventKind, dir transport.Direction, data string) rows.Entry {
		return wp.Event(transport.Event{Time: t0.Add(time.Duration(ms) * time.Millisecond), Kind: kind, Dir: dir, Data: []byte(data)})
	}
	p.Append([]rows.Entry{
		ev(0, transport.KindFrame, transport.Outgoing, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"show"}}`),
		ev(10, transport.KindApp, transport.Incoming, `{"jsonrpc":"2.0","id":1,"method":"ui/initialize","params":{}}`),
		ev(11, transport.KindApp, transport.Outgoing, `{"jsonrpc":"2.0","id":1,"result":{}}`),
		ev(20, transport.KindApp, transport.Incoming, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"secret"}}`),
		ev(21, transport.KindApp, transport.Outgoing, `{"jsonrpc":"2.0","id":2,"error":{"code":-32000,"message":"not visible to Apps"}}`),
	})
	var labels []string
	var failed int
	for i := p.store.First(); i < p.store.Next(); i++ {
		sp := p.store.Get(i)
		if sp.Lane == LaneApp {
			labels = append(labels, sp.Method)
			if sp.Failed() {
				failed++
			}
		}
		if sp.Lane == LaneRequests && !sp.Open() {
			t.Errorf("the session's request was ended by an App message: %+v", sp)
		}
	}
	if got := strings.Join(labels, ","); got != "ui/initialize,response · ui/initialize,tools/call,error · tools/call" || failed != 1 {
		t.Errorf("App lane %q, %d failed", got, failed)
	}
	p.SetFilter("kind:app")
	if s := p.View(); !strings.Contains(s, "4 in view of") {
		t.Errorf("kind:app:\n%s", s)
	}
}

// TestModelLane: a model's turns and the tools it asked for are bars in
// the Model lane, a refused tool ends in ✗, and kind:model finds them.
func TestModelLane(t *testing.T) {
	p := newPane(120, 30)
	parser := rows.NewParser()
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	p.Append([]rows.Entry{
		parser.Event(genai.Event(at(0), transport.Outgoing, genai.Turn{Op: genai.OpChat, ID: "chat-1", Model: "gpt-4.1", Messages: 1, Tools: 2})),
		parser.Event(genai.Event(at(400), transport.Incoming, genai.Turn{Op: genai.OpChat, ID: "chat-1", Model: "gpt-4.1", ToolCalls: []genai.ToolCall{{ID: "c1", Name: "delete_file"}}})),
		parser.Event(genai.Event(at(450), transport.Outgoing, genai.Turn{Op: genai.OpExecuteTool, ID: "c1", Tool: "delete_file"})),
		parser.Event(genai.Event(at(900), transport.Incoming, genai.Turn{Op: genai.OpExecuteTool, ID: "c1", Tool: "delete_file", Denied: true})),
	})
	s := ansi.Strip(p.View())
	if !strings.Contains(s, "▾ Model 2") || !strings.Contains(s, "✗") {
		t.Fatalf("the Model lane:\n%s", s)
	}
	p.SetFilter("kind:model status:error")
	press(p, "home")
	if sp := p.Selected(); sp == nil || sp.Label() != "execute_tool delete_file" || !sp.Failed() {
		t.Errorf("kind:model status:error selects %+v", sp)
	}
}

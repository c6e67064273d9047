package intercept

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcpi-dev/mcpi/internal/transport"
)

func engine(t *testing.T, yaml string, tap transport.Tap) *Engine {
	t.Helper()
	fs, err := ParseFaults([]byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	return NewEngine(Options{Faults: fs, Seed: 1, Tap: tap})
}

// The first rule that matches, applies and wins its draw decides; a
// rule's count stops it; an error answers requests only.
func TestJudge(t *testing.T) {
	var events []transport.Event
	e := engine(t, `faults:
  - name: once
    match: method:ping
    error: {code: -1, message: no}
    count: 1
  - name: then
    match: method:ping
    drop: true
`, transport.TapFunc(func(ev transport.Event) { events = append(events, ev) }))
	ping := []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	v := e.Judge(Frame{Dir: transport.Outgoing, Data: ping})
	if v.Send != nil || len(v.Reply) != 1 || string(v.Reply[0]) != `{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"no"}}` {
		t.Errorf("first ping: %+v", v)
	}
	if v := e.Judge(Frame{Dir: transport.Outgoing, Data: ping}); !v.Changed || v.Send != nil || v.Reply != nil {
		t.Errorf("second ping: %+v", v)
	}
	note := []byte(`{"jsonrpc":"2.0","method":"notifications/message"}`)
	if v := e.Judge(Frame{Dir: transport.Incoming, Data: note}); v.Changed || !bytes.Equal(v.Send[0], note) {
		t.Errorf("a notification: %+v", v)
	}
	if len(events) != 2 || events[0].Kind != transport.KindIntercept || !bytes.Contains(events[0].Data, []byte(`"action":"error","rule":"once"`)) {
		t.Errorf("events %v", events)
	}
	var sum strings.Builder
	e.WriteSummary(&sum)
	for _, want := range []string{"3 frames judged, seed 1", "once", "fired 1 of 1 matching", "then", "fired 1 of 1 matching"} {
		if !strings.Contains(sum.String(), want) {
			t.Errorf("summary %q lacks %q", sum.String(), want)
		}
	}
}

// A rule's name from the file reaches the terminal clean.
func TestSummaryIsClean(t *testing.T) {
	e := engine(t, "faults:\n  - name: \"\\e[31mred\"\n    drop: true\n", nil)
	var sum strings.Builder
	e.WriteSummary(&sum)
	if strings.Contains(sum.String(), "\x1b") {
		t.Errorf("summary %q has an escape", sum.String())
	}
}

// close: after the Nth matching frame, or at the first at or after a
// time since the start (the engine's clock).
func TestJudgeClose(t *testing.T) {
	now := time.Unix(0, 0)
	fs, err := ParseFaults([]byte("faults:\n  - match: dir:out\n    close: {after: 3}\n  - match: dir:in\n    close: {at: 2s}\n"))
	if err != nil {
		t.Fatal(err)
	}
	e := NewEngine(Options{Faults: fs, Now: func() time.Time { return now }})
	ping := []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	answer := []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`)
	for i, want := range []bool{false, false, true} {
		if v := e.Judge(Frame{Dir: transport.Outgoing, Data: ping}); v.Close != want {
			t.Errorf("frame %d: close %v", i+1, v.Close)
		}
	}
	if v := e.Judge(Frame{Dir: transport.Incoming, Data: answer}); v.Close {
		t.Error("closed before 2s")
	}
	now = now.Add(2 * time.Second)
	if v := e.Judge(Frame{Dir: transport.Incoming, Data: answer}); !v.Close || v.Send != nil {
		t.Errorf("at 2s: %+v", v)
	}
}

// An error answer echoes the request's id as it was sent: a string with
// characters Go and JSON quote differently too.
func TestErrorAnswerEchoesTheID(t *testing.T) {
	e := engine(t, "faults:\n  - error: {code: -1, message: no}\n", nil)
	for _, id := range []string{`7`, `"a\u0001b"`, `"é"`, `-3`} {
		v := e.Judge(Frame{Dir: transport.Outgoing, Data: []byte(`{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`)})
		var ans struct {
			ID json.RawMessage `json:"id"`
		}
		if len(v.Reply) != 1 || json.Unmarshal(v.Reply[0], &ans) != nil {
			t.Fatalf("id %s: %+v", id, v)
		}
		var want, got any
		json.Unmarshal([]byte(id), &want)
		json.Unmarshal(ans.ID, &got)
		if want != got {
			t.Errorf("id %s answered as %s", id, ans.ID)
		}
	}
}

// Where an action cannot act, its rule does not fire: an error on a
// request in the body of an HTTP answer (nothing could answer it), a
// duplicate or reorder of an HTTP answer's body; the host's HTTP request
// may be duplicated or held back.
func TestRulesActOnlyWhereTheyCan(t *testing.T) {
	req := []byte(`{"jsonrpc":"2.0","id":"s1","method":"roots/list"}`)
	for _, c := range []struct {
		rule  string
		f     Frame
		fires bool
	}{
		{"error: {code: -1, message: no}", Frame{Dir: transport.Incoming, Data: req, Carrier: HTTPBody}, false},
		{"error: {code: -1, message: no}", Frame{Dir: transport.Incoming, Data: req, Carrier: SSEEvent}, true},
		{"error: {code: -1, message: no}", Frame{Dir: transport.Outgoing, Data: req, Carrier: HTTPBody}, true},
		{"duplicate: 2", Frame{Dir: transport.Incoming, Data: req, Carrier: HTTPBody}, false},
		{"duplicate: 2", Frame{Dir: transport.Outgoing, Data: req, Carrier: HTTPBody}, true},
		{"reorder: 2", Frame{Dir: transport.Incoming, Data: req, Carrier: HTTPBody}, false},
		{"reorder: 2", Frame{Dir: transport.Outgoing, Data: req, Carrier: HTTPBody}, true},
	} {
		e := engine(t, "faults:\n  - "+c.rule+"\n", nil)
		if v := e.Judge(c.f); v.Changed != c.fires {
			t.Errorf("%s on %+v: fired %v", c.rule, c.f, v.Changed)
		}
	}
}

package otlp

import (
	"path/filepath"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcpi-dev/mcpi/internal/mcptest"
	"github.com/mcpi-dev/mcpi/internal/record"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// A change mcpi proxy made is a span event: on the span of the request
// it changed while that span is open, else on the session's span.
func TestInterceptSpanEvents(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.jsonl")
	w, err := record.Create(path, record.Header{Mcpi: "test", Created: t0, Role: record.RoleProxy, Target: record.Target{Transport: record.TransportStdio, Command: []string{"server"}}}, record.Options{})
	if err != nil {
		t.Fatal(err)
	}
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	call := `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"add","arguments":{"a":1}}}`
	answer := `{"jsonrpc":"2.0","id":5,"result":{"content":[]}}`
	w.Observe(transport.Event{Kind: transport.KindFrame, Dir: transport.Outgoing, Time: at(1), Data: []byte(call)})
	w.Observe(transport.Event{Kind: transport.KindIntercept, Dir: transport.Outgoing, Time: at(2),
		Data: []byte(`{"action":"delay","rule":"slow","note":"delayed tools/call id 5 by 10ms","original":` + call + `,"sent":[` + call + `]}`)})
	w.Observe(transport.Event{Kind: transport.KindFrame, Dir: transport.Incoming, Time: at(20), Data: []byte(answer)})
	w.Observe(transport.Event{Kind: transport.KindIntercept, Dir: transport.Incoming, Time: at(21),
		Data: []byte(`{"action":"drop","rule":"rule 2","note":"dropped the answer id 5","original":` + answer + `,"sent":[]}`)})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	back := exportedBack(t, path)
	spans := spansByName(t, back)
	event := func(s ptrace.Span) (name, action string, at time.Time) {
		if s.Events().Len() != 1 {
			t.Fatalf("span %s has %d events", s.Name(), s.Events().Len())
		}
		e := s.Events().At(0)
		v, _ := e.Attributes().Get("mcpi.intercept.action")
		return e.Name(), v.Str(), e.Timestamp().AsTime()
	}
	if name, action, when := event(spans["tools/call add"]); name != "mcpi.intercept" || action != "delay" || !when.Equal(at(2)) {
		t.Errorf("the call's event: %s %s %v", name, action, when)
	}
	if _, action, _ := event(spans["mcp session"]); action != "drop" {
		t.Errorf("the session's event: %s", action)
	}
}

// The live export sends a change on the wire as a span event too.
func TestLiveInterceptSpanEvent(t *testing.T) {
	rcv := mcptest.NewOTLPReceiver(t)
	h := record.Header{Mcpi: "test", Created: t0, Role: record.RoleProxy}
	l := startLive(t, h, rcv.URL, 2*time.Second)
	w := record.NewTap(h, record.Options{Events: l.Event})
	call := `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"add"}}`
	w.Observe(transport.Event{Kind: transport.KindFrame, Dir: transport.Outgoing, Time: t0, Data: []byte(call)})
	w.Observe(transport.Event{Kind: transport.KindIntercept, Dir: transport.Outgoing, Time: t0.Add(time.Millisecond),
		Data: []byte(`{"action":"error","rule":"quota","note":"answered tools/call id 5 with error -32000 in the peer's place","original":` + call + `,"sent":[]}`)})
	w.Close()
	if st := l.Close(); st.Err != nil || st.Exported != 2 {
		t.Fatalf("stats %+v", st)
	}
	s, ok := rcv.SpansByName()["tools/call add"]
	if !ok || s.Events().Len() != 1 || s.Events().At(0).Name() != "mcpi.intercept" {
		t.Fatalf("the call's span: %v", ok)
	}
	if rule, _ := s.Events().At(0).Attributes().Get("mcpi.intercept.rule"); rule.Str() != "quota" {
		t.Errorf("rule %q", rule.Str())
	}
}

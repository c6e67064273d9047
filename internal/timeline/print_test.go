package timeline

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/mcpi-dev/mcpi/internal/record"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// Print pairs each answer with its request as the Wire pane does: the
// method and latency of what it answers, an error's code and message, a
// tool's isError, each message of a batch on its line, an App's ids apart
// from the session's, and a frame that is no message as its size.
func TestPrintPairsAsTheWireDoes(t *testing.T) {
	var buf bytes.Buffer
	w := record.NewWriter(&buf, record.Header{Mcpi: "test"}, record.Options{})
	at := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	ev := func(ms int, kind transport.EventKind, dir transport.Direction, data string) {
		w.Observe(transport.Event{Time: at.Add(time.Duration(ms) * time.Millisecond), Kind: kind, Dir: dir, Data: []byte(data)})
	}
	out, in := transport.Outgoing, transport.Incoming
	frame := transport.KindFrame
	ev(0, frame, out, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add"}}`)
	ev(0, transport.KindApp, in, `{"jsonrpc":"2.0","id":1,"method":"ui/initialize","params":{}}`)
	ev(5, frame, in, `{"jsonrpc":"2.0","id":1,"result":{"content":[],"isError":true}}`)
	ev(6, frame, out, `{"jsonrpc":"2.0","id":"r2","method":"resources/read","params":{"uri":"demo://x"}}`)
	ev(9, frame, in, `{"jsonrpc":"2.0","id":"r2","error":{"code":-32002,"message":"no such\nresource"}}`)
	ev(10, frame, out, `[{"jsonrpc":"2.0","id":3,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"}]`)
	ev(12, frame, in, `[{"jsonrpc":"2.0","id":3,"result":{}}]`)
	ev(13, transport.KindApp, out, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	ev(14, frame, out, `{"jsonrpc":"2.0","nothing":1}`)
	// What a hostile server says reaches the terminal made safe.
	ev(15, frame, in, `{"jsonrpc":"2.0","id":"x\u001b[2J","method":"sampling/createMessage\u001b]52;c;aGk=\u0007","params":{"name":"n\u202eame"}}`)
	ev(16, frame, out, `{"jsonrpc":"2.0","id":"x\u001b[2J","error":{"code":-1,"message":"bad\u001b[31mred"}}`)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := record.NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	var got, errs strings.Builder
	if err := Print(&got, &errs, "t.jsonl", r, nil, nil); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"→ #1 tools/call add  ",
		"← app #1 ui/initialize  ",
		"← #1 result isError of tools/call (5ms)  ",
		`→ #"r2" resources/read demo://x  `,
		`← #"r2" error -32002 no such resource of resources/read (3ms)  `,
		"→ #3 ping  ",
		"→ notifications/initialized  ",
		"← #3 result of ping (2ms)  ",
		"→ app #1 result of ui/initialize (13ms)  ",
		"→ frame ",
	} {
		if !strings.Contains(got.String(), want) {
			t.Errorf("no line with %q in:\n%s", want, got.String())
		}
	}
	if strings.ContainsAny(got.String(), "\x1b\x07\u202e") {
		t.Errorf("a control character reached the output:\n%q", got.String())
	}
	if !strings.Contains(got.String(), "error -1 bad") {
		t.Errorf("the hostile error's line is missing:\n%s", got.String())
	}
	if errs.Len() > 0 {
		t.Errorf("stderr: %s", errs.String())
	}
}

package record

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
	"unicode/utf8"

	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

var t0 = time.Date(2026, 3, 14, 15, 9, 26, 535897932, time.UTC)

func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

// writeTrace records events to a buffer and returns the trace.
func writeTrace(t *testing.T, h Header, opts Options, events ...transport.Event) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := NewWriter(&buf, h, opts)
	for _, e := range events {
		w.Observe(e)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	return buf.Bytes()
}

// readAll reads a trace to its end and fails on any error.
func readAll(t *testing.T, trace []byte) (Header, []Event) {
	t.Helper()
	r, err := NewReader(bytes.NewReader(trace))
	if err != nil {
		t.Fatalf("NewReader: %v", err)
	}
	var evs []Event
	for {
		ev, err := r.Next()
		if err == io.EOF {
			return r.Header(), evs
		}
		if err != nil {
			t.Fatalf("Next after %d events: %v", len(evs), err)
		}
		evs = append(evs, ev)
	}
}

// checkLines checks that every line of a trace is a valid UTF-8 JSON object,
// as a jq user needs it to be.
func checkLines(t *testing.T, trace []byte) {
	t.Helper()
	if !bytes.HasSuffix(trace, []byte("\n")) {
		t.Errorf("trace does not end with a newline")
	}
	for i, line := range bytes.Split(bytes.TrimSuffix(trace, []byte("\n")), []byte("\n")) {
		if !utf8.Valid(line) {
			t.Errorf("line %d is not valid UTF-8", i+1)
		}
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Errorf("line %d is not a JSON object: %v\n%s", i+1, err, line)
		}
	}
}

func TestRoundTripEveryKind(t *testing.T) {
	stdioReq := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"h\u00e9llo \"w\"\n"}}}`)
	stdioResp := []byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"héllo"}]}}`)
	// A pretty-printed HTTP body: valid JSON with line breaks.
	pretty := []byte("{\n  \"jsonrpc\": \"2.0\",\n  \"id\": 2,\n  \"result\": {}\n}\n")
	notUTF8 := []byte("\xff\xfe garbage \x00 {\"jsonrpc\"")
	sseMeta := &transport.HTTPMeta{
		Method:         "POST",
		URL:            "https://example.com/mcp?x=1&y=<2>",
		StatusCode:     200,
		RequestHeader:  http.Header{"Accept": {"application/json", "text/event-stream"}, "Mcp-Session-Id": {"abc"}},
		ResponseHeader: http.Header{"Content-Type": {"text/event-stream"}},
		SSEEventID:     "ev-7",
		SSEEvent:       "message",
	}
	events := []transport.Event{
		{Time: at(0), Kind: transport.KindLifecycle, Text: "spawned pid 42: server --flag"},
		{Time: at(1), Kind: transport.KindFrame, Dir: transport.Outgoing, Data: stdioReq},
		{Time: at(2), Kind: transport.KindFrame, Dir: transport.Incoming, Data: stdioResp, HTTP: sseMeta},
		{Time: at(3), Kind: transport.KindFrame, Dir: transport.Incoming, Data: pretty},
		{Time: at(4), Kind: transport.KindBadFrame, Dir: transport.Incoming, Data: notUTF8, Err: "frame is not valid UTF-8 (first bad byte at offset 0)"},
		{Time: at(5), Kind: transport.KindBadFrame, Dir: transport.Incoming, Data: []byte("Starting server on port 3000..."), Err: "frame is not JSON"},
		{Time: at(6), Kind: transport.KindStderr, Dir: transport.Incoming, Data: []byte("warning: \"quoted\"\ttab \x1b[31mred")},
		{Time: at(7), Kind: transport.KindStderr, Dir: transport.Incoming, Data: []byte("bad \xc3\x28 utf8")},
		{Time: at(8), Kind: transport.KindHTTP, Text: "202 Accepted", HTTP: &transport.HTTPMeta{Method: "POST", URL: "https://example.com/mcp", StatusCode: 202}},
		{Time: at(9), Kind: transport.KindHTTP, Text: "405 Method Not Allowed", Data: []byte("<html>no GET</html>"), HTTP: &transport.HTTPMeta{Method: "GET", URL: "https://example.com/mcp", StatusCode: 405}},
		{Time: at(10), Kind: transport.KindLifecycle, Text: "exited", Err: "server exited with status 1"},
	}
	h := Header{
		Mcpi:            "1.2.3",
		Created:         t0,
		Target:          Target{Transport: TransportStdio, Command: []string{"server", "--flag"}},
		ProtocolVersion: mcp.Rev20251125,
		Args:            []string{"call", "echo", "text=hi", "--record", "t.jsonl", "--", "server", "--flag"},
	}
	var buf bytes.Buffer
	w := NewWriter(&buf, h, Options{NoRedact: true})
	for _, e := range events {
		w.Observe(e)
	}
	w.Annotate(NoteSession, SessionNote{ProtocolVersion: mcp.Rev20251125, Era: "legacy", ServerInfo: &mcp.Implementation{Name: "demo", Version: "1.0"}})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	trace := buf.Bytes()
	checkLines(t, trace)
	// The frame is in the line byte for byte, not re-encoded.
	if !bytes.Contains(trace, append([]byte(`"msg":`), stdioReq...)) {
		t.Errorf("the request frame is not embedded verbatim:\n%s", trace)
	}

	gotH, evs := readAll(t, trace)
	if gotH.Version != Version || gotH.Mcpi != "1.2.3" || !gotH.Created.Equal(t0) || gotH.Role != RoleClient ||
		gotH.ProtocolVersion != mcp.Rev20251125 || gotH.Redacted || gotH.Host.OS == "" ||
		!reflect.DeepEqual(gotH.Target, h.Target) || !reflect.DeepEqual(gotH.Args, h.Args) {
		t.Errorf("header = %+v", gotH)
	}
	if len(evs) != len(events)+1 {
		t.Fatalf("got %d events, want %d", len(evs), len(events)+1)
	}
	for i, e := range events {
		ev := evs[i]
		if ev.Seq != int64(i+1) || ev.LineNo != i+2 {
			t.Errorf("event %d: seq %d line %d", i, ev.Seq, ev.LineNo)
		}
		got, ok := ev.TransportEvent()
		if !ok {
			t.Errorf("event %d (%s): no transport event", i, ev.Type)
			continue
		}
		want := e
		if want.Kind == transport.KindStderr {
			// A stderr line keeps its bytes, even invalid UTF-8.
			if ev.Line != string(e.Data) {
				t.Errorf("stderr line = %q, want %q", ev.Line, e.Data)
			}
		}
		if len(want.Data) == 0 {
			want.Data = nil
		}
		if !got.Time.Equal(want.Time) {
			t.Errorf("event %d: time %v, want %v", i, got.Time, want.Time)
		}
		got.Time, want.Time = time.Time{}, time.Time{}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("event %d:\n got %+v\nwant %+v", i, got, want)
		}
		if e.Kind == transport.KindFrame || e.Kind == transport.KindBadFrame {
			if ev.Size != len(e.Data) {
				t.Errorf("event %d: size %d, want %d", i, ev.Size, len(e.Data))
			}
		}
		if ev.Redacted {
			t.Errorf("event %d: redacted without redaction", i)
		}
	}
	note := evs[len(evs)-1]
	var sn SessionNote
	if note.Type != TypeNote || note.Kind != NoteSession || note.DecodeNote(&sn) != nil ||
		sn.ProtocolVersion != mcp.Rev20251125 || sn.ServerInfo == nil || sn.ServerInfo.Name != "demo" {
		t.Errorf("note = %+v (%+v)", note, sn)
	}
	if _, ok := note.TransportEvent(); ok {
		t.Errorf("a note has a transport event")
	}
}

func TestFrameWithHTTPMeta(t *testing.T) {
	meta := &transport.HTTPMeta{
		Method:         "POST",
		URL:            "http://127.0.0.1:3000/mcp",
		StatusCode:     200,
		RequestHeader:  http.Header{"Mcp-Protocol-Version": {"2025-11-25"}},
		ResponseHeader: http.Header{"Content-Type": {"text/event-stream"}, "Mcp-Session-Id": {"s1"}},
		SSEEventID:     "42",
		SSEEvent:       "message",
	}
	trace := writeTrace(t, Header{}, Options{}, transport.Event{Time: t0, Kind: transport.KindFrame, Dir: transport.Incoming, Data: []byte(`{"jsonrpc":"2.0","method":"notifications/message"}`), HTTP: meta})
	_, evs := readAll(t, trace)
	want := &HTTPMeta{
		Method: "POST", URL: meta.URL, StatusCode: 200,
		RequestHeader: meta.RequestHeader, ResponseHeader: meta.ResponseHeader,
		SSEEventID: "42", SSEEvent: "message",
	}
	if len(evs) != 1 || !reflect.DeepEqual(evs[0].HTTP, want) || evs[0].Dir != transport.Incoming {
		t.Fatalf("got %+v", evs)
	}
}

func TestLargeFrameByteExact(t *testing.T) {
	const size = 8 << 20
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"`)
	chunk := `abc\"\\\n\u00e9\ud83d\ude00 é😀 `
	for b.Len() < size {
		b.WriteString(chunk)
	}
	b.WriteString(`"}]}}`)
	frame := b.Bytes()
	if !json.Valid(frame) {
		t.Fatal("test frame is not JSON")
	}
	path := filepath.Join(t.TempDir(), "big.jsonl")
	w, err := Create(path, Header{}, Options{SecretValues: []string{"not-in-the-frame"}})
	if err != nil {
		t.Fatal(err)
	}
	w.Observe(transport.Event{Time: t0, Kind: transport.KindFrame, Dir: transport.Incoming, Data: frame})
	w.Observe(transport.Event{Time: t0, Kind: transport.KindLifecycle, Text: "after"})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ev, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(ev.Msg, frame) || ev.Size != len(frame) || ev.Redacted {
		t.Fatalf("large frame not byte exact (got %d bytes, want %d)", len(ev.Msg), len(frame))
	}
	if ev, err := r.Next(); err != nil || ev.Text != "after" || ev.LineNo != 3 {
		t.Fatalf("after the large frame: %+v, %v", ev, err)
	}
	if _, err := r.Next(); err != io.EOF {
		t.Fatalf("want EOF, got %v", err)
	}
}

func TestCreateMode(t *testing.T) {
	dir := t.TempDir()
	fresh := filepath.Join(dir, "fresh.jsonl")
	old := filepath.Join(dir, "old.jsonl")
	if err := os.WriteFile(old, []byte("previous contents, longer than a header would be..........................................................................................................................................................................................................................................................."), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{fresh, old} {
		w, err := Create(path, Header{Target: Target{Transport: TransportStdio}}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if perm := fi.Mode().Perm(); perm != 0o600 {
			t.Errorf("%s: mode %v, want 0600", filepath.Base(path), perm)
		}
		r, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.Next(); err != io.EOF {
			t.Errorf("%s: want an empty trace, got %v", filepath.Base(path), err)
		}
		r.Close()
	}
	if _, err := Create(filepath.Join(dir, "no", "such", "dir.jsonl"), Header{}, Options{}); err == nil {
		t.Errorf("Create in a missing directory succeeded")
	}
}

func TestConcurrentObserve(t *testing.T) {
	const goroutines, each = 16, 300
	var buf bytes.Buffer
	w := NewWriter(&buf, Header{}, Options{SecretValues: []string{"hunter22"}, FlushInterval: time.Millisecond})
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				switch i % 4 {
				case 0:
					w.Annotate("test", map[string]int{"g": g, "i": i})
				case 1:
					w.Observe(transport.Event{Kind: transport.KindStderr, Data: fmt.Appendf(nil, "g=%d i=%d hunter22", g, i)})
				default:
					w.Observe(transport.Event{Time: time.Now(), Kind: transport.KindFrame, Dir: transport.Outgoing,
						Data: fmt.Appendf(nil, `{"g":%d,"i":%d,"pw":"hunter22"}`, g, i), HTTP: &transport.HTTPMeta{Method: "POST", RequestHeader: http.Header{"Authorization": {"Bearer x"}}}})
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range 50 {
			if err := w.Flush(); err != nil {
				t.Error(err)
			}
		}
	}()
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	w.Observe(transport.Event{Kind: transport.KindLifecycle, Text: "after close"}) // dropped, no panic
	if err := w.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	trace := buf.Bytes()
	checkLines(t, trace)
	if bytes.Contains(trace, []byte("hunter22")) {
		t.Errorf("a secret value reached the trace")
	}
	_, evs := readAll(t, trace)
	if len(evs) != goroutines*each {
		t.Fatalf("got %d events, want %d", len(evs), goroutines*each)
	}
	last := map[int]int{}
	for i, ev := range evs {
		if ev.Seq != int64(i+1) {
			t.Fatalf("event %d has seq %d", i, ev.Seq)
		}
		if ev.Type != TypeFrame {
			continue
		}
		var f struct{ G, I int }
		if err := json.Unmarshal(ev.Msg, &f); err != nil {
			t.Fatal(err)
		}
		if prev, ok := last[f.G]; ok && f.I <= prev {
			t.Fatalf("goroutine %d: frame %d after %d", f.G, f.I, prev)
		}
		last[f.G] = f.I
	}
}

// syncBuffer is a bytes.Buffer the timer's goroutine may write while the
// test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestFlushLatency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var out syncBuffer
		w := NewWriter(&out, Header{}, Options{})
		if !strings.Contains(out.String(), `"type":"header"`) {
			t.Fatalf("the header is not written at once: %q", out.String())
		}
		w.Observe(transport.Event{Kind: transport.KindLifecycle, Text: "first"})
		if strings.Contains(out.String(), "first") {
			t.Fatalf("an event reached the file without a flush; expected it buffered")
		}
		// In the bubble the sleep is the fake clock moving on by the
		// flush interval, which is what is under test; it takes no time.
		flushInterval := func() {
			time.Sleep(DefaultFlushInterval)
			synctest.Wait()
		}
		flushInterval()
		if !strings.Contains(out.String(), "first") {
			t.Fatalf("the event is still buffered after %v", DefaultFlushInterval)
		}
		// The timer is armed again by the next event only.
		w.Observe(transport.Event{Kind: transport.KindLifecycle, Text: "second"})
		flushInterval()
		if !strings.Contains(out.String(), "second") {
			t.Fatalf("the second event is still buffered")
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	})
}

type failWriter struct{ after int }

func (f *failWriter) Write(p []byte) (int, error) {
	if f.after <= 0 {
		return 0, errors.New("disk full")
	}
	f.after--
	return len(p), nil
}

func TestWriteErrorsAreKept(t *testing.T) {
	w := NewWriter(&failWriter{after: 0}, Header{}, Options{})
	if err := w.Err(); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("Err after a failed header = %v", err)
	}
	w = NewWriter(&failWriter{after: 1}, Header{}, Options{})
	if err := w.Err(); err != nil {
		t.Fatal(err)
	}
	w.Observe(transport.Event{Kind: transport.KindFrame, Data: bytes.Repeat([]byte(" "), 100<<10)}) // bigger than the buffer
	w.Observe(transport.Event{Kind: transport.KindLifecycle, Text: "dropped"})
	if err := w.Flush(); err == nil {
		t.Errorf("Flush after a failed write succeeded")
	}
	if err := w.Close(); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("Close = %v, want the write error", err)
	}
	if err := w.Flush(); err == nil {
		t.Errorf("Flush after Close succeeded")
	}
}

func TestTruncatedLastLine(t *testing.T) {
	trace := writeTrace(t, Header{}, Options{},
		transport.Event{Time: t0, Kind: transport.KindFrame, Dir: transport.Outgoing, Data: []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)},
		transport.Event{Time: t0, Kind: transport.KindFrame, Dir: transport.Incoming, Data: []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`)},
	)
	cut := len(trace) - 10
	src := &growingReader{data: append([]byte(nil), trace[:cut]...)}
	r, err := NewReader(src)
	if err != nil {
		t.Fatal(err)
	}
	if ev, err := r.Next(); err != nil || ev.Seq != 1 {
		t.Fatalf("first event: %+v, %v", ev, err)
	}
	_, err = r.Next()
	var te *TruncatedError
	var ce *CorruptError
	if !errors.As(err, &te) || !errors.Is(err, ErrTruncated) || errors.As(err, &ce) {
		t.Fatalf("want a *TruncatedError, got %T %v", err, err)
	}
	if te.Line != 3 || te.Offset != int64(bytes.Index(trace, []byte(`{"type":"frame","t":"2026-03-14T15:09:26.535897932Z","seq":2`))) {
		t.Errorf("truncation at line %d offset %d", te.Line, te.Offset)
	}
	t.Log(err)
	// A follower gets the event once the rest is written.
	src.data = append(src.data, trace[cut:]...)
	if ev, err := r.Next(); err != nil || ev.Seq != 2 || ev.LineNo != 3 {
		t.Fatalf("after the rest arrived: %+v, %v", ev, err)
	}
	if _, err := r.Next(); err != io.EOF {
		t.Fatalf("want EOF, got %v", err)
	}
}

// growingReader returns io.EOF when drained; data may be appended later.
type growingReader struct {
	data []byte
	off  int
}

func (g *growingReader) Read(p []byte) (int, error) {
	if g.off >= len(g.data) {
		return 0, io.EOF
	}
	n := copy(p, g.data[g.off:])
	g.off += n
	return n, nil
}

func TestLastLineWithoutNewline(t *testing.T) {
	trace := writeTrace(t, Header{}, Options{},
		transport.Event{Kind: transport.KindLifecycle, Text: "one"},
		transport.Event{Kind: transport.KindLifecycle, Text: "two"},
	)
	src := &growingReader{data: bytes.TrimSuffix(trace, []byte("\n"))}
	r, err := NewReader(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"one", "two"} {
		if ev, err := r.Next(); err != nil || ev.Text != want {
			t.Fatalf("want %q, got %+v, %v", want, ev, err)
		}
	}
	if _, err := r.Next(); err != io.EOF {
		t.Fatalf("want EOF, got %v", err)
	}
	// The missing newline arrives, then another event: line numbers stay right.
	src.data = append(src.data, "\n{\"type\":\"lifecycle\",\"seq\":3,\"text\":\"three\"}\n"...)
	if ev, err := r.Next(); err != nil || ev.Text != "three" || ev.LineNo != 4 {
		t.Fatalf("want three at line 4, got %+v, %v", ev, err)
	}
}

func TestCorruptMiddleLine(t *testing.T) {
	trace := writeTrace(t, Header{}, Options{},
		transport.Event{Kind: transport.KindLifecycle, Text: "one"},
		transport.Event{Kind: transport.KindLifecycle, Text: "two"},
		transport.Event{Kind: transport.KindLifecycle, Text: "three"},
	)
	lines := bytes.SplitAfter(trace, []byte("\n"))
	offset := len(lines[0]) + len(lines[1])
	lines[2] = []byte(`{"type":"lifecycle","seq":2,"te` + "\n")
	r, err := NewReader(bytes.NewReader(bytes.Join(lines, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if ev, err := r.Next(); err != nil || ev.Text != "one" {
		t.Fatalf("first: %+v, %v", ev, err)
	}
	_, err = r.Next()
	var ce *CorruptError
	if !errors.As(err, &ce) || errors.Is(err, ErrTruncated) {
		t.Fatalf("want a *CorruptError, got %T %v", err, err)
	}
	if ce.Line != 3 || ce.Offset != int64(offset) {
		t.Errorf("corrupt at line %d offset %d, want line 3 offset %d", ce.Line, ce.Offset, offset)
	}
	t.Log(err)
	if ev, err := r.Next(); err != nil || ev.Text != "three" {
		t.Fatalf("after the damage: %+v, %v", ev, err)
	}
	if _, err := r.Next(); err != io.EOF {
		t.Fatalf("want EOF, got %v", err)
	}
}

func TestCorruptLines(t *testing.T) {
	header := `{"type":"header","format":"mcpi-trace","version":1,"mcpi":"x","created":"2026-01-01T00:00:00Z","target":{"transport":"stdio"},"host":{},"redacted":true}` + "\n"
	for name, line := range map[string]string{
		"not JSON":        "hello",
		"array":           `[1,2]`,
		"no type":         `{"seq":1}`,
		"second header":   header,
		"frame no msg":    `{"type":"frame","seq":1}`,
		"bad seq":         `{"type":"frame","seq":"x","msg":{}}`,
		"bad base64":      `{"type":"bad-frame","encoding":"base64","data":"!!!"}`,
		"unknown enc":     `{"type":"bad-frame","encoding":"zstd","data":"x"}`,
		"data not string": `{"type":"bad-frame","data":12}`,
	} {
		t.Run(name, func(t *testing.T) {
			r, err := NewReader(strings.NewReader(header + line + "\n"))
			if err != nil {
				t.Fatal(err)
			}
			_, err = r.Next()
			var ce *CorruptError
			if !errors.As(err, &ce) || ce.Line != 2 {
				t.Fatalf("want a *CorruptError at line 2, got %v", err)
			}
			t.Log(err)
			if _, err := r.Next(); err != io.EOF {
				t.Fatalf("want EOF after, got %v", err)
			}
		})
	}
}

func TestUnknownTypesAndFieldsSkipped(t *testing.T) {
	trace := `{"type":"header","format":"mcpi-trace","version":1,"mcpi":"9.9","created":"2031-01-01T00:00:00Z","target":{"transport":"quic","newField":[1]},"host":{},"redacted":true,"futureTopLevel":{"a":1}}
{"type":"future-kind","seq":1,"whatever":{"x":[1,2,3]}}
{"type":"frame","seq":2,"dir":"send","size":2,"futureField":"ignored","msg":{}}

{"type":"metrics","seq":3,"size":{"p99":3},"msg":"not a frame"}
{"type":"note","seq":4,"kind":"future-note","data":[1,"two",{"3":null}]}
`
	r, err := NewReader(strings.NewReader(trace))
	if err != nil {
		t.Fatal(err)
	}
	if h := r.Header(); h.Target.Transport != "quic" || !bytes.Contains(h.Raw, []byte("futureTopLevel")) {
		t.Errorf("header = %+v", h)
	}
	var types []string
	for {
		ev, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		types = append(types, ev.Type)
		if ev.Type == TypeNote && string(ev.Data) != `[1,"two",{"3":null}]` {
			t.Errorf("note data = %s", ev.Data)
		}
	}
	if !reflect.DeepEqual(types, []string{TypeFrame, TypeNote}) || r.Skipped() != 2 {
		t.Errorf("types %v, skipped %d", types, r.Skipped())
	}
}

func TestHeaderErrors(t *testing.T) {
	for name, tc := range map[string]struct {
		in    string
		check func(error) bool
		msg   string
	}{
		"newer": {
			in:    `{"type":"header","format":"mcpi-trace","version":3,"target":"a shape v1 does not know"}` + "\n",
			check: func(err error) bool { var ve *VersionError; return errors.As(err, &ve) && ve.Version == 3 },
			msg:   "trace format version 3 is newer than this mcpi understands (1)",
		},
		"empty":       {in: "", check: isNotTrace, msg: "not an mcpi trace: the file is empty"},
		"text":        {in: "hello world\n", check: isNotTrace},
		"other JSONL": {in: `{"type":"header","format":"har"}` + "\n", check: isNotTrace},
		"version 0":   {in: `{"type":"header","format":"mcpi-trace","version":0}` + "\n", check: isNotTrace},
		"bad version": {in: `{"type":"header","format":"mcpi-trace","version":"1"}` + "\n", check: isNotTrace},
		"damaged v1": {
			in:    `{"type":"header","format":"mcpi-trace","version":1,"created":"yesterday"}` + "\n",
			check: func(err error) bool { var ce *CorruptError; return errors.As(err, &ce) && ce.Line == 1 },
		},
		"cut header": {
			in:    `{"type":"header","format":"mcpi-tr`,
			check: func(err error) bool { return errors.Is(err, ErrTruncated) },
		},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := NewReader(strings.NewReader(tc.in))
			if err == nil || !tc.check(err) {
				t.Fatalf("got %T %v", err, err)
			}
			if tc.msg != "" && err.Error() != tc.msg {
				t.Errorf("message %q, want %q", err, tc.msg)
			}
		})
	}
	if _, err := Open(filepath.Join(t.TempDir(), "missing.jsonl")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Open of a missing file: %v", err)
	}
}

func isNotTrace(err error) bool { return errors.Is(err, ErrNotTrace) }

func TestHeaderDefaultsAndRedaction(t *testing.T) {
	trace := writeTrace(t, Header{
		Target: Target{Transport: TransportHTTP, URL: "https://u:pw@example.com/mcp?api_key=k1&v=2"},
		Args:   []string{"tools", "-H", "Authorization: Bearer tok123", "-e", "API_TOKEN=sekrit-value", "--url", "https://example.com/mcp?api_key=k1"},
	}, Options{SecretValues: []string{"sekrit-value"}})
	h, _ := readAll(t, trace)
	if !h.Redacted || h.Role != RoleClient || h.Created.IsZero() || h.Host.OS == "" || h.Mcpi == "" {
		t.Errorf("defaults not filled: %+v", h)
	}
	if h.Target.URL != "https://u:[REDACTED]@example.com/mcp?api_key=[REDACTED]&v=2" {
		t.Errorf("target URL = %s", h.Target.URL)
	}
	wantArgs := []string{"tools", "-H", "Authorization: Bearer [REDACTED]", "-e", "API_TOKEN=[REDACTED]", "--url", "https://example.com/mcp?api_key=[REDACTED]"}
	if !reflect.DeepEqual(h.Args, wantArgs) {
		t.Errorf("args = %q\nwant %q", h.Args, wantArgs)
	}
	for _, s := range []string{"tok123", "sekrit", "pw@", "k1"} {
		if bytes.Contains(trace, []byte(s)) {
			t.Errorf("%q reached the trace", s)
		}
	}
}

func TestRedactionInEvents(t *testing.T) {
	secret := `s3cr"t\val/ü` // needs escaping in JSON
	secretJSON, _ := json.Marshal(secret)
	frame := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"login","arguments":{"password":` + string(secretJSON) +
		`,"again":"prefix-s3cr\"t\\val\/\u00fc-suffix","other":"keep \u00e9 \/ as is"}}}`)
	if !json.Valid(frame) {
		t.Fatal("test frame is not JSON")
	}
	events := []transport.Event{
		{Kind: transport.KindFrame, Dir: transport.Outgoing, Data: frame, HTTP: &transport.HTTPMeta{
			Method: "POST",
			URL:    "https://example.com/mcp?access_token=tok-abc&state=xyz&code=code-c0de",
			RequestHeader: http.Header{
				"Authorization":  {"Bearer eyJhbGciOi"},
				"Cookie":         {"sid=c00kie-123; theme=dark"},
				"X-Api-Key":      {"k-999"},
				"X-Custom-Token": {"t-888"},
				"X-Echo":         {"contains " + secret},
				"Mcp-Session-Id": {"session-1"},
			},
			ResponseHeader: http.Header{
				"Set-Cookie":       {"sid=s3t-456; Path=/; HttpOnly"},
				"Www-Authenticate": {`Bearer resource_metadata="https://example.com/.well-known/oauth-protected-resource"`},
				"Content-Type":     {"application/json"},
			},
		}},
		{Kind: transport.KindStderr, Data: []byte("connecting with " + secret + " to https://example.com/?token=zzz")},
		{Kind: transport.KindBadFrame, Data: []byte("\xffraw " + secret)},
		{Kind: transport.KindLifecycle, Text: "spawned: server --password " + secret, Err: `Post "https://example.com/mcp?client_secret=cs1": dial tcp: refused`},
	}
	var buf bytes.Buffer
	w := NewWriter(&buf, Header{}, Options{SecretValues: []string{secret, "ab"}})
	for _, e := range events {
		w.Observe(e)
	}
	w.Annotate("login", map[string]string{"user": "me", "pass": secret})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	trace := buf.Bytes()
	checkLines(t, trace)
	// The secrets are distinctive strings: a timestamp's digits must not
	// look like a leak.
	for _, leak := range []string{string(secretJSON[1 : len(secretJSON)-1]), "s3cr", "eyJhbGciOi", "c00kie-123", "s3t-456", "k-999", "t-888", "tok-abc", "code-c0de", "zzz", "cs1"} {
		if bytes.Contains(trace, []byte(leak)) {
			t.Errorf("%q reached the trace", leak)
		}
	}
	_, evs := readAll(t, trace)
	if len(evs) != 5 {
		t.Fatalf("got %d events", len(evs))
	}
	fr := evs[0]
	if !fr.Redacted || fr.Size != len(frame) || !json.Valid(fr.Msg) {
		t.Errorf("frame: redacted=%v size=%d valid=%v", fr.Redacted, fr.Size, json.Valid(fr.Msg))
	}
	var msg struct {
		Params struct {
			Arguments map[string]string
		}
	}
	if err := json.Unmarshal(fr.Msg, &msg); err != nil {
		t.Fatal(err)
	}
	wantArgs := map[string]string{"password": Redacted, "again": "prefix-" + Redacted + "-suffix", "other": "keep é / as is"}
	if !reflect.DeepEqual(msg.Params.Arguments, wantArgs) {
		t.Errorf("arguments = %q", msg.Params.Arguments)
	}
	// A string without a secret keeps its original escapes.
	if !bytes.Contains(fr.Msg, []byte(`"other":"keep \u00e9 \/ as is"`)) {
		t.Errorf("untouched string re-encoded: %s", fr.Msg)
	}
	wantReq := http.Header{
		"Authorization":  {"Bearer [REDACTED]"},
		"Cookie":         {"sid=[REDACTED]; theme=[REDACTED]"},
		"X-Api-Key":      {Redacted},
		"X-Custom-Token": {Redacted},
		"X-Echo":         {"contains " + Redacted},
		"Mcp-Session-Id": {"session-1"},
	}
	wantResp := http.Header{
		"Set-Cookie":       {"sid=[REDACTED]; Path=/; HttpOnly"},
		"Www-Authenticate": {`Bearer resource_metadata="https://example.com/.well-known/oauth-protected-resource"`},
		"Content-Type":     {"application/json"},
	}
	if !reflect.DeepEqual(fr.HTTP.RequestHeader, wantReq) || !reflect.DeepEqual(fr.HTTP.ResponseHeader, wantResp) {
		t.Errorf("headers:\n%q\n%q", fr.HTTP.RequestHeader, fr.HTTP.ResponseHeader)
	}
	if fr.HTTP.URL != "https://example.com/mcp?access_token=[REDACTED]&state=xyz&code=[REDACTED]" {
		t.Errorf("url = %s", fr.HTTP.URL)
	}
	if got := evs[1].Line; got != "connecting with [REDACTED] to https://example.com/?token=[REDACTED]" || !evs[1].Redacted {
		t.Errorf("stderr = %q", got)
	}
	if got := string(evs[2].Data); got != "\xffraw [REDACTED]" || evs[2].Size != len(events[2].Data) {
		t.Errorf("bad frame = %q", got)
	}
	if evs[3].Text != "spawned: server --password [REDACTED]" || evs[3].Error != `Post "https://example.com/mcp?client_secret=[REDACTED]": dial tcp: refused` {
		t.Errorf("lifecycle = %q / %q", evs[3].Text, evs[3].Error)
	}
	if string(evs[4].Data) != `{"pass":"[REDACTED]","user":"me"}` {
		t.Errorf("note = %s", evs[4].Data)
	}
}

func TestNoRedact(t *testing.T) {
	trace := writeTrace(t, Header{Args: []string{"-H", "Authorization: Bearer tok"}}, Options{NoRedact: true, SecretValues: []string{"sekrit"}},
		transport.Event{Kind: transport.KindFrame, Data: []byte(`{"p":"sekrit"}`), HTTP: &transport.HTTPMeta{RequestHeader: http.Header{"Authorization": {"Bearer tok"}}}})
	h, evs := readAll(t, trace)
	if h.Redacted || h.Args[1] != "Authorization: Bearer tok" || string(evs[0].Msg) != `{"p":"sekrit"}` ||
		evs[0].HTTP.RequestHeader.Get("Authorization") != "Bearer tok" || evs[0].Redacted {
		t.Errorf("redacted with NoRedact: %+v %+v", h, evs[0])
	}
	if !bytes.Contains(trace, []byte(`"redacted":false`)) {
		t.Errorf(`header lacks "redacted":false`)
	}
}

// TestExample keeps docs/trace-format.md's example readable.
func TestExample(t *testing.T) {
	data, err := os.ReadFile("testdata/example.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	checkLines(t, data)
	h, evs := readAll(t, data)
	if h.Target.Transport != TransportStreamableHTTP || len(evs) < 6 {
		t.Fatalf("header %+v, %d events", h, len(evs))
	}
	for _, ev := range evs {
		if ev.Type == TypeFrame && !json.Valid(ev.Msg) {
			t.Errorf("line %d: frame is not JSON", ev.LineNo)
		}
	}
	doc, err := os.ReadFile("../../docs/trace-format.md")
	if err != nil {
		t.Skip("no docs/trace-format.md")
	}
	if !bytes.Contains(doc, []byte("```jsonl\n"+string(data)+"```")) {
		t.Errorf("docs/trace-format.md does not show testdata/example.jsonl as its example")
	}
}

// TestReadLineLengths crosses the bufio buffer's size in every way.
func TestReadLineLengths(t *testing.T) {
	var events []transport.Event
	for _, n := range []int{0, 1, readBufSize - 200, readBufSize - 60, readBufSize, readBufSize + 1, 3*readBufSize + 7} {
		text := strings.Repeat("x", n)
		events = append(events, transport.Event{Kind: transport.KindFrame, Data: []byte(`{"t":"` + text + `"}`)})
		events = append(events, transport.Event{Kind: transport.KindStderr, Data: []byte(text)})
	}
	trace := writeTrace(t, Header{}, Options{}, events...)
	_, evs := readAll(t, trace)
	if len(evs) != len(events) {
		t.Fatalf("got %d events", len(evs))
	}
	for i, ev := range evs {
		got, _ := ev.TransportEvent()
		if !bytes.Equal(got.Data, events[i].Data) {
			t.Errorf("event %d: %d bytes, want %d", i, len(got.Data), len(events[i].Data))
		}
	}
}

// TestEventsHookReadsAsTheTrace: what Options.Events is given is what a
// Reader reads back from the trace, event for event, redaction included;
// a tap (NewTap) gives the same without a file.
func TestEventsHookReadsAsTheTrace(t *testing.T) {
	secret := "hunter2-secret"
	events := []transport.Event{
		{Time: at(0), Kind: transport.KindLifecycle, Text: "spawned pid 42: server --flag"},
		{Time: at(1), Kind: transport.KindFrame, Dir: transport.Outgoing, Data: []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"login","arguments":{"p":"` + secret + `"}}}`),
			HTTP: &transport.HTTPMeta{Method: "POST", URL: "https://example.com/mcp?access_token=tok-abc", RequestHeader: http.Header{"Authorization": {"Bearer eyJhbGciOi"}, "Accept": {"a", "b"}}}},
		{Time: at(2), Kind: transport.KindFrame, Dir: transport.Incoming, Data: []byte("{\n  \"jsonrpc\": \"2.0\",\n  \"id\": 1,\n  \"result\": {}\n}\n")},
		{Time: at(3), Kind: transport.KindBadFrame, Dir: transport.Incoming, Data: []byte("\xff not utf8"), Err: "frame is not valid UTF-8"},
		{Time: at(4), Kind: transport.KindStderr, Dir: transport.Incoming, Data: []byte("token " + secret)},
		{Time: at(5), Kind: transport.KindHTTP, Text: "405 Method Not Allowed", Data: []byte("<html>no</html>"), HTTP: &transport.HTTPMeta{Method: "GET", URL: "https://example.com/mcp", StatusCode: 405, Exchange: 3}},
	}
	h := Header{Mcpi: "1", Created: t0, Target: Target{Transport: TransportStdio, Command: []string{"server"}}}
	opts := Options{SecretValues: []string{secret}}
	var hooked []Event
	opts.Events = func(ev Event) { hooked = append(hooked, ev) }
	var buf bytes.Buffer
	w := NewWriter(&buf, h, opts)
	var tapped []Event
	topts := opts
	topts.Events = func(ev Event) { tapped = append(tapped, ev) }
	tap := NewTap(h, topts)
	for _, e := range events {
		w.Observe(e)
		tap.Observe(e)
	}
	w.Annotate(NoteSession, SessionNote{ProtocolVersion: mcp.Rev20251125})
	tap.Annotate(NoteSession, SessionNote{ProtocolVersion: mcp.Rev20251125})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := tap.Close(); err != nil {
		t.Fatal(err)
	}
	_, read := readAll(t, buf.Bytes())
	if len(hooked) != len(read) || len(tapped) != len(read) {
		t.Fatalf("hook %d events, tap %d, trace %d", len(hooked), len(tapped), len(read))
	}
	for i := range read {
		for name, got := range map[string]Event{"hook": hooked[i], "tap": tapped[i]} {
			want := read[i]
			want.LineNo, want.Offset = 0, 0
			if name == "tap" && want.Type == TypeNote {
				// The tap's note was annotated a moment later.
				want.Time = got.Time
			}
			if len(got.Data) == 0 {
				got.Data = nil
			}
			if len(want.Data) == 0 {
				want.Data = nil
			}
			if !got.Time.Equal(want.Time) {
				t.Errorf("%s event %d: time %v, want %v", name, i, got.Time, want.Time)
			}
			got.Time, want.Time = time.Time{}, time.Time{}
			if string(got.Msg) != string(want.Msg) {
				t.Errorf("%s event %d: msg\n got %s\nwant %s", name, i, got.Msg, want.Msg)
			}
			got.Msg, want.Msg = nil, nil
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s event %d:\n got %+v\nwant %+v", name, i, got, want)
			}
			if strings.Contains(fmt.Sprintf("%s %s %s %v", got.Msg, got.Line, got.Data, got.HTTP), secret) {
				t.Errorf("%s event %d keeps the secret", name, i)
			}
		}
	}
	if !hooked[1].Redacted || hooked[1].HTTP.RequestHeader.Get("Authorization") == "Bearer eyJhbGciOi" {
		t.Errorf("the request was not redacted: %+v", hooked[1])
	}
}

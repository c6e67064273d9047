package record

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"os"
	"testing"
	"unicode/utf8"

	"github.com/mcpi-dev/mcpi/internal/transport"
)

// FuzzReader feeds arbitrary bytes to the reader: it must never panic and
// never loop, and every error must be one of the documented kinds.
func FuzzReader(f *testing.F) {
	var buf bytes.Buffer
	w := NewWriter(&buf, Header{Target: Target{Transport: TransportStreamableHTTP, URL: "https://example.com/mcp"}}, Options{})
	w.Observe(transport.Event{Kind: transport.KindFrame, Dir: transport.Outgoing, Data: []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`),
		HTTP: &transport.HTTPMeta{Method: "POST", URL: "https://example.com/mcp", RequestHeader: http.Header{"Accept": {"application/json"}}}})
	w.Observe(transport.Event{Kind: transport.KindFrame, Dir: transport.Incoming, Data: []byte("{\n \"jsonrpc\": \"2.0\"\n}")})
	w.Observe(transport.Event{Kind: transport.KindBadFrame, Dir: transport.Incoming, Data: []byte("\xff\xfe"), Err: "not UTF-8"})
	w.Observe(transport.Event{Kind: transport.KindStderr, Data: []byte("log \xc3")})
	w.Observe(transport.Event{Kind: transport.KindHTTP, Text: "202 Accepted", Data: []byte("ok")})
	w.Annotate(NoteSession, SessionNote{ProtocolVersion: "2025-11-25"})
	w.Close()
	trace := buf.Bytes()
	f.Add(trace)
	f.Add(trace[:len(trace)-7])
	f.Add(bytes.TrimSuffix(trace, []byte("\n")))
	f.Add([]byte(""))
	f.Add([]byte("\n\n"))
	f.Add([]byte(`{"type":"header","format":"mcpi-trace","version":2}`))
	f.Add([]byte(`{"type":"header","format":"mcpi-trace","version":1}` + "\n" + `{"type":"frame","msg":{}}` + "\n" + `{"type"`))
	f.Add([]byte(`{"type":"header","format":"mcpi-trace","version":1}` + "\r\n" + `{"type":"stderr","encoding":"base64","line":"AAEC"}` + "\r\n\r\n{]\n"))
	f.Add([]byte(`{"type":"header","format":"mcpi-trace","version":1}` + "\n" + `{"type":"x","size":{}}` + "\n" + `{"type":"frame","data":"{\n}"}`))
	if ex, err := os.ReadFile("testdata/example.jsonl"); err == nil {
		f.Add(ex)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := NewReader(bytes.NewReader(data))
		if err != nil {
			var ve *VersionError
			var ce *CorruptError
			if !errors.Is(err, ErrNotTrace) && !errors.As(err, &ve) && !errors.As(err, &ce) && !errors.Is(err, ErrTruncated) {
				t.Fatalf("NewReader: unexpected error %T %v", err, err)
			}
			return
		}
		for i := 0; ; i++ {
			if i > len(data)+1 {
				t.Fatalf("Next did not end after %d calls", i)
			}
			ev, err := r.Next()
			var ce *CorruptError
			switch {
			case err == nil:
				if ev.LineNo < 2 || ev.Offset <= 0 || ev.Offset >= int64(len(data)) {
					t.Fatalf("event at line %d offset %d in %d bytes", ev.LineNo, ev.Offset, len(data))
				}
				continue
			case errors.As(err, &ce):
				continue
			case err == io.EOF, errors.Is(err, ErrTruncated):
				return
			default:
				t.Fatalf("Next: unexpected error %T %v", err, err)
			}
		}
	})
}

// FuzzRoundTrip writes arbitrary events and checks that they read back
// unchanged.
func FuzzRoundTrip(f *testing.F) {
	f.Add(uint8(1), []byte(`{"jsonrpc":"2.0","id":1}`), "text", "err")
	f.Add(uint8(1), []byte(" {\r\n} "), "", "")
	f.Add(uint8(1), []byte("\xff{}"), "", "")
	f.Add(uint8(2), []byte("\x00\xff\n"), "", "bad")
	f.Add(uint8(3), []byte("line \xc3"), "", "")
	f.Add(uint8(4), []byte(nil), "exited \x1b[0m", "status 1")
	f.Add(uint8(5), []byte("<html>"), "404 Not Found", "")
	f.Fuzz(func(t *testing.T, kind uint8, data []byte, text, errText string) {
		// The known kinds, and one past them that this version does not know.
		unknown := transport.KindLast + 1
		k := transport.EventKind(kind%uint8(unknown) + 1)
		e := transport.Event{Kind: k, Dir: transport.Incoming, Data: data, Text: text, Err: errText,
			HTTP: &transport.HTTPMeta{URL: text, RequestHeader: http.Header{"X-" + errText: {text}}}}
		var buf bytes.Buffer
		w := NewWriter(&buf, Header{}, Options{NoRedact: true})
		w.Observe(e)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		r, err := NewReader(&buf)
		if err != nil {
			t.Fatal(err)
		}
		ev, err := r.Next()
		if k == unknown { // a kind this version does not know: written, then skipped
			if err != io.EOF || r.Skipped() != 1 {
				t.Fatalf("unknown kind: %v, skipped %d", err, r.Skipped())
			}
			return
		}
		if err != nil {
			t.Fatalf("Next: %v\n%s", err, buf.Bytes())
		}
		got, ok := ev.TransportEvent()
		if !ok {
			t.Fatalf("no transport event for %+v", ev)
		}
		if !bytes.Equal(got.Data, e.Data) && (len(got.Data) > 0 || len(e.Data) > 0) {
			t.Fatalf("data %q, want %q", got.Data, e.Data)
		}
		if utf8.ValidString(text) && utf8.ValidString(errText) && (got.Text != text || got.Err != errText || got.HTTP.URL != text) {
			t.Fatalf("text %q / %q, want %q / %q", got.Text, got.Err, text, errText)
		}
	})
}

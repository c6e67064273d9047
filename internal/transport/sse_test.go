package transport

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// readEvents returns every event of stream and the error that ended it.
func readEvents(r io.Reader, maxEvent int) ([]sseEvent, error) {
	sr := newSSEReader(r, maxEvent)
	var evs []sseEvent
	for {
		ev, err := sr.Next()
		if err != nil {
			return evs, err
		}
		// Copy: nothing promises that Data outlives the next call.
		ev.Data = bytes.Clone(ev.Data)
		evs = append(evs, ev)
	}
}

func data(s string) sseEvent { return sseEvent{Data: []byte(s), HasData: true} }

func TestSSEReader(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		maxEvent int // 0: no limit
		want     []sseEvent
		wantErr  string // "": the stream ends with io.EOF
	}{
		{name: "empty stream", in: ""},
		{name: "one event", in: "data: hello\n\n", want: []sseEvent{data("hello")}},
		{
			name: "several events",
			in:   "data: a\n\ndata: b\n\n\n\ndata: c\n\n",
			want: []sseEvent{data("a"), data("b"), data("c")},
		},
		{name: "multi-line data", in: "data: a\ndata: b\ndata:c\n\n", want: []sseEvent{data("a\nb\nc")}},
		{name: "empty data lines keep their newlines", in: "data: a\ndata:\ndata\ndata: b\n\n", want: []sseEvent{data("a\n\n\nb")}},
		{name: "one leading space removed", in: "data:  two\n\n", want: []sseEvent{data(" two")}},
		{name: "no space after colon", in: "data:x\n\n", want: []sseEvent{data("x")}},
		{name: "colons in the value", in: "data: {\"a\":\"b:c\"}\n\n", want: []sseEvent{data(`{"a":"b:c"}`)}},
		{name: "CRLF", in: "data: a\r\ndata: b\r\n\r\ndata: c\r\n\r\n", want: []sseEvent{data("a\nb"), data("c")}},
		{name: "lone CR", in: "data: a\rdata: b\r\rdata: c\r\r", want: []sseEvent{data("a\nb"), data("c")}},
		{name: "mixed line ends", in: "data: a\r\ndata: b\rdata: c\n\r\ndata: d\r\n\n", want: []sseEvent{data("a\nb\nc"), data("d")}},
		{name: "CR then CRLF is two line ends", in: "data: a\r\r\n", want: []sseEvent{data("a")}},
		{name: "leading blank lines", in: "\n\r\n\rdata: x\n\n", want: []sseEvent{data("x")}},
		{name: "byte order mark", in: "\ufeffdata: x\n\n", want: []sseEvent{data("x")}},
		{
			name: "comments are skipped",
			in:   ": keep-alive\n\n:\ndata: a\n: inside\ndata: b\n\n",
			want: []sseEvent{data("a\nb")},
		},
		{name: "a comment alone is no event", in: ": ping\n\n: ping\n\n"},
		{name: "event type", in: "event: endpoint\ndata: /messages\n\n", want: []sseEvent{{Event: "endpoint", Data: []byte("/messages"), HasData: true}}},
		{name: "last event type wins", in: "event: a\nevent: b\ndata: x\n\n", want: []sseEvent{{Event: "b", Data: []byte("x"), HasData: true}}},
		{name: "event type without data", in: "event: ping\n\n", want: []sseEvent{{Event: "ping"}}},
		{name: "id", in: "id: 42\ndata: x\n\n", want: []sseEvent{{ID: "42", HasID: true, Data: []byte("x"), HasData: true}}},
		{name: "empty id", in: "id\ndata: x\n\n", want: []sseEvent{{HasID: true, Data: []byte("x"), HasData: true}}},
		{name: "id with NUL ignored", in: "id: a\x00b\ndata: x\n\n", want: []sseEvent{data("x")}},
		{name: "id with NUL keeps an earlier id", in: "id: good\nid: a\x00b\ndata: x\n\n", want: []sseEvent{{ID: "good", HasID: true, Data: []byte("x"), HasData: true}}},
		{name: "id is per event", in: "id: 1\ndata: a\n\ndata: b\n\n", want: []sseEvent{{ID: "1", HasID: true, Data: []byte("a"), HasData: true}, data("b")}},
		{name: "retry", in: "retry: 1500\ndata: x\n\n", want: []sseEvent{{Retry: 1500 * time.Millisecond, HasRetry: true, Data: []byte("x"), HasData: true}}},
		{name: "retry zero", in: "retry: 0\n\n", want: []sseEvent{{HasRetry: true}}},
		{
			name: "invalid retry ignored",
			in:   "retry: 1.5\nretry: -1\nretry: +5\nretry: abc\nretry:\nretry: 10 \nretry: 99999999999999999999\ndata: x\n\n",
			want: []sseEvent{data("x")},
		},
		{name: "invalid retry keeps a valid one", in: "retry: 7\nretry: x\ndata: x\n\n", want: []sseEvent{{Retry: 7 * time.Millisecond, HasRetry: true, Data: []byte("x"), HasData: true}}},
		{
			name: "priming event with empty data",
			in:   "id: p1\nretry: 100\ndata: \n\n",
			want: []sseEvent{{ID: "p1", HasID: true, Retry: 100 * time.Millisecond, HasRetry: true, Data: []byte{}, HasData: true}},
		},
		{
			name: "priming event without data",
			in:   "id: p1\nretry: 100\n\n",
			want: []sseEvent{{ID: "p1", HasID: true, Retry: 100 * time.Millisecond, HasRetry: true}},
		},
		{name: "unknown fields ignored", in: "foo: bar\nDATA: no\ndata: x\n\n", want: []sseEvent{data("x")}},
		{name: "event cut off by EOF is dropped", in: "data: a\n\ndata: b\n", want: []sseEvent{data("a")}},
		{name: "line cut off by EOF is dropped", in: "data: a\n\ndata: b", want: []sseEvent{data("a")}},
		{name: "event cut off after a lone CR is dropped", in: "data: a\r\rdata: b\r", want: []sseEvent{data("a")}},
		{name: "priming event cut off by EOF is dropped", in: "id: 9\nretry: 5\n"},
		{
			name:     "data at the limit",
			in:       "data:12345\ndata:1234\n\n",
			maxEvent: 10,
			want:     []sseEvent{data("12345\n1234")},
		},
		{
			name:     "data over the limit",
			in:       "data: ok\n\ndata:123456\ndata:123456\n\n",
			maxEvent: 12,
			want:     []sseEvent{data("ok")},
			wantErr:  "exceeds the 12-byte limit",
		},
		{
			name:     "line over the limit",
			in:       "data: ok\n\n: " + strings.Repeat("c", 100) + "\n\n",
			maxEvent: 12,
			want:     []sseEvent{data("ok")},
			wantErr:  "exceeds the 12-byte limit",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, rd := range []struct {
				name string
				r    io.Reader
			}{
				{"whole", strings.NewReader(tt.in)},
				{"byte by byte", iotest.OneByteReader(strings.NewReader(tt.in))},
			} {
				got, err := readEvents(rd.r, tt.maxEvent)
				if !eventsEqual(got, tt.want) {
					t.Errorf("%s reader: events\n got %s\nwant %s", rd.name, fmtEvents(got), fmtEvents(tt.want))
				}
				if tt.wantErr == "" {
					if !errors.Is(err, io.EOF) {
						t.Errorf("%s reader: stream ended with %v, want io.EOF", rd.name, err)
					}
				} else if !errorContains(err, tt.wantErr) {
					t.Errorf("%s reader: stream ended with %v, want an error containing %q", rd.name, err, tt.wantErr)
				}
			}
		})
	}
}

// eventsEqual compares events, treating nil and empty data alike: a caller
// sees blank data either way.
func eventsEqual(a, b []sseEvent) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if !bytes.Equal(x.Data, y.Data) {
			return false
		}
		x.Data, y.Data = nil, nil
		if !reflect.DeepEqual(x, y) {
			return false
		}
	}
	return true
}

func fmtEvents(evs []sseEvent) string {
	var parts []string
	for _, e := range evs {
		parts = append(parts, fmt.Sprintf("{id=%q(%v) event=%q data=%q(%v) retry=%v(%v)}", e.ID, e.HasID, e.Event, e.Data, e.HasData, e.Retry, e.HasRetry))
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func TestSSEReaderLongLines(t *testing.T) {
	// Lines much longer than the reader's 64 KiB buffer.
	big := strings.Repeat("x", 300<<10)
	in := "data: " + big + "\ndata: " + big + "\n\ndata: after\n\n"
	got, err := readEvents(strings.NewReader(in), 1<<20)
	if !errors.Is(err, io.EOF) {
		t.Fatalf("stream ended with %v", err)
	}
	want := []sseEvent{data(big + "\n" + big), data("after")}
	if !eventsEqual(got, want) {
		t.Fatalf("got %d events (first data %d bytes), want 2 of %d and 5 bytes", len(got), len(got[0].Data), len(want[0].Data))
	}
}

func TestSSEReaderReaderError(t *testing.T) {
	boom := errors.New("connection reset")
	r := io.MultiReader(strings.NewReader("data: a\n\ndata: b\n"), iotest.ErrReader(boom))
	got, err := readEvents(r, 0)
	if !eventsEqual(got, []sseEvent{data("a")}) {
		t.Errorf("events = %s", fmtEvents(got))
	}
	if !errors.Is(err, boom) {
		t.Errorf("stream ended with %v, want %v", err, boom)
	}
}

// TestSSEReaderLive checks that an event is returned as soon as its blank
// line arrives, whatever the line ends, without waiting for more input: a
// live stream must not hold events back.
func TestSSEReaderLive(t *testing.T) {
	for _, tt := range []struct{ name, first, second string }{
		{"LF", "data: a\n\n", "data: b\n\n"},
		{"CRLF", "data: a\r\n\r\n", "data: b\r\n\r\n"},
		{"lone CR", "data: a\r\r", "\ndata: b\r\r"}, // the LF after a CR belongs to it
	} {
		t.Run(tt.name, func(t *testing.T) {
			pr, pw := io.Pipe()
			defer pw.Close()
			sr := newSSEReader(pr, 0)
			events := make(chan sseEvent)
			errs := make(chan error, 1)
			go func() {
				for {
					ev, err := sr.Next()
					if err != nil {
						errs <- err
						return
					}
					ev.Data = bytes.Clone(ev.Data)
					events <- ev
				}
			}()
			write := func(s string) {
				go func() { pw.Write([]byte(s)) }()
			}
			write(tt.first)
			if ev := wait(t, "the first event", events); string(ev.Data) != "a" {
				t.Fatalf("first event data = %q", ev.Data)
			}
			write(tt.second)
			if ev := wait(t, "the second event", events); string(ev.Data) != "b" {
				t.Fatalf("second event data = %q", ev.Data)
			}
			pw.Close()
			if err := wait(t, "the end of the stream", errs); !errors.Is(err, io.EOF) {
				t.Fatalf("stream ended with %v", err)
			}
		})
	}
}

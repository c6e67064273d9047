package transport

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"testing"
	"testing/iotest"
	"unicode/utf8"
)

func FuzzSSEReader(f *testing.F) {
	for _, seed := range []string{
		"data: hello\n\n",
		"data: a\r\ndata: b\r\n\r\n",
		"data: a\rdata: b\r\r",
		"id: p1\nretry: 100\ndata: \n\n",
		"id: a\x00b\nretry: x\nevent: e\ndata:x\n\n",
		": comment\n\nevent: endpoint\ndata: /m?sid=1\n\n",
		"\ufeffdata: bom\n\n",
		"data: cut",
		"data: 0123456789abcdef\ndata: 0123456789abcdef\n\n",
		"\r\n\r\r\n\n",
	} {
		f.Add([]byte(seed), uint8(16))
	}
	f.Fuzz(func(t *testing.T, in []byte, limit uint8) {
		maxEvent := int(limit) + 1
		for _, r := range []io.Reader{bytes.NewReader(in), iotest.OneByteReader(bytes.NewReader(in))} {
			sr := newSSEReader(r, maxEvent)
			for n := 0; ; n++ {
				if n > len(in) {
					t.Fatalf("more events than input bytes")
				}
				ev, err := sr.Next()
				if err != nil {
					break
				}
				if len(ev.Data) > maxEvent {
					t.Fatalf("event data of %d bytes over the %d-byte limit", len(ev.Data), maxEvent)
				}
				if !ev.HasData && len(ev.Data) > 0 {
					t.Fatalf("data %q without HasData", ev.Data)
				}
				if bytes.IndexByte([]byte(ev.ID), 0) >= 0 {
					t.Fatalf("id %q holds a NUL", ev.ID)
				}
				if ev.Retry < 0 || !ev.HasRetry && ev.Retry != 0 {
					t.Fatalf("retry %v (HasRetry %v)", ev.Retry, ev.HasRetry)
				}
				if bytes.ContainsAny(ev.Data, "\r") || bytes.ContainsAny([]byte(ev.ID+ev.Event), "\r\n") {
					t.Fatalf("a line end inside a field: %+v", ev)
				}
			}
		}
	})
}

func FuzzReadLine(f *testing.F) {
	for _, seed := range []string{
		"",
		"a\nb\n",
		"no newline",
		"\n\n\n",
		"a very long line that is longer than the sixteen-byte buffer\nshort\n",
		"crlf\r\nline\r\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		br := bufio.NewReaderSize(bytes.NewReader(in), 16)
		var got []byte
		for n := 0; ; n++ {
			if n > len(in)+1 {
				t.Fatal("readLine never ends")
			}
			line, tooLong, err := readLine(br, len(in)+1, 0)
			if tooLong != 0 {
				t.Fatalf("line of %d bytes too long for a %d-byte limit", tooLong, len(in)+1)
			}
			if i := bytes.IndexByte(line, '\n'); i >= 0 && i != len(line)-1 {
				t.Fatalf("line %q holds a newline before its end", line)
			}
			if err == nil && !bytes.HasSuffix(line, []byte("\n")) {
				t.Fatalf("line %q returned without error does not end in a newline", line)
			}
			got = append(got, line...)
			if err != nil {
				if !errors.Is(err, io.EOF) {
					t.Fatalf("error %v", err)
				}
				break
			}
		}
		if !bytes.Equal(got, in) {
			t.Fatalf("lines make %q, want %q", got, in)
		}

		// With a small limit, long lines are cut to their first keep bytes
		// and their full length is reported.
		const max, keep = 8, 3
		br = bufio.NewReaderSize(bytes.NewReader(in), 16)
		rest := in
		for {
			line, tooLong, err := readLine(br, max, keep)
			i := bytes.IndexByte(rest, '\n')
			whole := rest
			if i >= 0 {
				whole = rest[:i+1]
			}
			if len(whole) > max {
				if tooLong != len(whole) || !bytes.Equal(line, whole[:keep]) {
					t.Fatalf("line %q: got %q, tooLong %d", whole, line, tooLong)
				}
			} else if tooLong != 0 || !bytes.Equal(line, whole) {
				t.Fatalf("line %q: got %q, tooLong %d", whole, line, tooLong)
			}
			rest = rest[len(whole):]
			if err != nil {
				break
			}
		}
		if len(rest) != 0 {
			t.Fatalf("%d bytes left unread", len(rest))
		}
	})
}

func FuzzCheckFrame(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`[{"jsonrpc":"2.0","method":"a"}]`,
		" \n{}",
		"42",
		"null",
		"\xff{}",
		"{\"a\":\"\xed\xa0\x80\"}",
		"",
		"{} {}",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		err := checkFrame(data)
		if err == nil {
			if !json.Valid(data) || !utf8.Valid(data) {
				t.Fatalf("checkFrame(%q) accepted invalid data", data)
			}
			if c := bytes.TrimLeft(data, " \t\r\n"); c[0] != '{' && c[0] != '[' {
				t.Fatalf("checkFrame(%q) accepted a scalar", data)
			}
			return
		}
		if !errors.Is(err, ErrNotUTF8) && !errors.Is(err, ErrNotJSON) {
			t.Fatalf("checkFrame(%q) = %v, wrapping neither sentinel", data, err)
		}
		if errors.Is(err, ErrNotUTF8) {
			if utf8.Valid(data) {
				t.Fatalf("checkFrame(%q) says not UTF-8", data)
			}
			if i := firstInvalidUTF8(data); i < 0 || !utf8.Valid(data[:i]) || utf8.Valid(data[i:]) {
				t.Fatalf("first invalid byte of %q at %d", data, i)
			}
		}
	})
}

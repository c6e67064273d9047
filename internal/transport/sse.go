package transport

import (
	"bufio"
	"bytes"
	"io"
	"strconv"
	"time"
)

// sseEvent is one event of a text/event-stream, as the WHATWG
// server-sent-events parser sees it.
type sseEvent struct {
	ID       string
	HasID    bool
	Event    string
	Data     []byte
	HasData  bool
	Retry    time.Duration
	HasRetry bool
}

// sseReader parses a text/event-stream. It keeps no limit on line length but
// maxEvent on the data of one event.
type sseReader struct {
	r        *bufio.Reader
	maxEvent int
	started  bool // the leading byte order mark, if any, has been skipped
	skipLF   bool // the last line ended in CR: a LF right after it is part of that line end
}

func newSSEReader(r io.Reader, maxEvent int) *sseReader {
	if maxEvent <= 0 {
		maxEvent = 1 << 30
	}
	return &sseReader{r: bufio.NewReaderSize(r, 64<<10), maxEvent: maxEvent}
}

var utf8BOM = []byte("\xef\xbb\xbf")

// line returns the next line without its terminator. Lines end in LF, CRLF
// or a lone CR, and a line is returned as soon as its terminator arrives: a
// stream whose lines end in CR is not held up waiting for a LF. A line cut
// off by the end of the stream is no line: line returns io.EOF. The line may
// point into the reader's buffer and is valid until the next call.
func (s *sseReader) line() ([]byte, error) {
	if !s.started {
		s.started = true
		// Every event is at least 3 bytes long, so this wait holds none back.
		if b, _ := s.r.Peek(len(utf8BOM)); bytes.Equal(b, utf8BOM) {
			s.r.Discard(len(utf8BOM))
		}
	}
	var l []byte
	for {
		if _, err := s.r.Peek(1); err != nil {
			return nil, err
		}
		buf, _ := s.r.Peek(s.r.Buffered())
		if s.skipLF {
			s.skipLF = false
			if buf[0] == '\n' {
				s.r.Discard(1)
				continue
			}
		}
		i := bytes.IndexAny(buf, "\r\n")
		if i < 0 {
			i = len(buf)
		}
		if len(l)+i > s.maxEvent {
			return nil, &LimitError{What: "an SSE line", Limit: s.maxEvent}
		}
		if i == len(buf) {
			l = append(l, buf...)
			s.r.Discard(len(buf))
			continue
		}
		if l == nil {
			l = buf[:i:i]
		} else {
			l = append(l, buf[:i]...)
		}
		s.skipLF = buf[i] == '\r'
		s.r.Discard(i + 1)
		return l, nil
	}
}

// Next returns the next event. Events without data are returned too, so that
// the caller sees ids and retry values of priming events; their HasData is
// false. At the end of the stream Next returns io.EOF (an event cut off by the
// end of the stream is dropped, as the standard says).
func (s *sseReader) Next() (sseEvent, error) {
	var ev sseEvent
	var data bytes.Buffer
	seen := false
	for {
		l, err := s.line()
		if err != nil {
			return sseEvent{}, err
		}
		if len(l) == 0 {
			if !seen {
				continue
			}
			if ev.HasData {
				ev.Data = bytes.TrimSuffix(data.Bytes(), []byte{'\n'})
			}
			return ev, nil
		}
		if l[0] == ':' {
			continue // comment, used as keep-alive
		}
		seen = true
		field, value, _ := bytes.Cut(l, []byte{':'})
		value = bytes.TrimPrefix(value, []byte{' '})
		switch string(field) {
		case "event":
			ev.Event = string(value)
		case "data":
			if data.Len()+len(value) > s.maxEvent {
				return sseEvent{}, &LimitError{What: "an SSE event's data", Limit: s.maxEvent}
			}
			ev.HasData = true
			data.Write(value)
			data.WriteByte('\n')
		case "id":
			if bytes.IndexByte(value, 0) < 0 {
				ev.ID, ev.HasID = string(value), true
			}
		case "retry":
			if n, err := strconv.ParseUint(string(value), 10, 31); err == nil {
				ev.Retry, ev.HasRetry = time.Duration(n)*time.Millisecond, true
			}
		}
	}
}

// SSEEvent is one event of a text/event-stream.
type SSEEvent struct {
	ID      string
	Event   string
	Data    []byte
	HasData bool
}

// ReadSSE parses r as a text/event-stream and calls fn for each event,
// until r ends (nil) or breaks (its error). maxEvent bounds one event's data
// (0: 1 GiB).
func ReadSSE(r io.Reader, maxEvent int, fn func(SSEEvent)) error {
	sr := newSSEReader(r, maxEvent)
	for {
		ev, err := sr.Next()
		if err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
		fn(SSEEvent{ID: ev.ID, Event: ev.Event, Data: ev.Data, HasData: ev.HasData})
	}
}

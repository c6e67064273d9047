package transport

import (
	"bufio"
	"bytes"
	"fmt"
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
	pending  [][]byte // lines split off a chunk that had bare CRs
}

func newSSEReader(r io.Reader, maxEvent int) *sseReader {
	if maxEvent <= 0 {
		maxEvent = 1 << 30
	}
	return &sseReader{r: bufio.NewReaderSize(r, 64<<10), maxEvent: maxEvent}
}

// line returns the next line without its terminator. Lines end in LF, CRLF
// or a lone CR.
func (s *sseReader) line() ([]byte, error) {
	if len(s.pending) > 0 {
		l := s.pending[0]
		s.pending = s.pending[1:]
		return l, nil
	}
	l, tooLong, err := readLine(s.r, s.maxEvent, 256)
	if tooLong > 0 {
		return nil, fmt.Errorf("SSE line of %d bytes exceeds the %d-byte limit", tooLong, s.maxEvent)
	}
	if err != nil && (err != io.EOF || len(l) == 0) {
		return nil, err
	}
	l = trimEOL(l)
	if bytes.IndexByte(l, '\r') >= 0 {
		parts := bytes.Split(l, []byte{'\r'})
		s.pending = append(s.pending, parts[1:]...)
		l = parts[0]
	}
	return l, nil
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
				return sseEvent{}, fmt.Errorf("SSE event data exceeds the %d-byte limit", s.maxEvent)
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

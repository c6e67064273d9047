package record

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/mcpi-dev/mcpi/internal/transport"
)

// ErrNotTrace is returned (wrapped) for a file that is not an mcpi trace.
var ErrNotTrace = errors.New("not an mcpi trace")

// ErrTruncated is matched (errors.Is) by a *TruncatedError.
var ErrTruncated = errors.New("trace is truncated")

// VersionError is returned for a trace written in a newer format than this
// mcpi reads.
type VersionError struct {
	Version int // the trace's
}

func (e *VersionError) Error() string {
	return fmt.Sprintf("trace format version %d is newer than this mcpi understands (%d)", e.Version, Version)
}

// CorruptError is returned by Next for a line that is not a well-formed
// event. The events before it were returned; Next may be called again to
// go on with the next line.
type CorruptError struct {
	Line   int   // 1-based; the header is line 1
	Offset int64 // byte offset of the start of the line
	Err    error
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("trace is corrupt at line %d (byte offset %d): %v", e.Line, e.Offset, e.Err)
}

func (e *CorruptError) Unwrap() error { return e.Err }

// Skipped is what every reader of a trace says of a corrupt line it skips
// and reads past: the same words whether the trace is printed, shown,
// served or verified.
func (e *CorruptError) Skipped(path string) string {
	return fmt.Sprintf("%s line %d (byte offset %d) is not a trace event and was skipped: %v", path, e.Line, e.Offset, e.Err)
}

// TruncatedError is returned by Next when the trace ends in the middle of an
// event: the last line has no line ending and is not complete JSON, as when
// the recorder was killed mid-write. It is also what a reader following a
// trace that is being written sees until the line is complete: if more data
// is appended to the underlying reader, Next may be called again.
type TruncatedError struct {
	Line   int
	Offset int64
	Size   int // bytes of the incomplete line
}

func (e *TruncatedError) Error() string {
	return fmt.Sprintf("trace ends in the middle of an event at line %d (byte offset %d, %d bytes): the recording was cut short", e.Line, e.Offset, e.Size)
}

// Is makes errors.Is(err, ErrTruncated) true.
func (e *TruncatedError) Is(target error) bool { return target == ErrTruncated }

// A Reader reads a trace: the header when it is made, then one event per
// call to Next. Lines have no length limit. A Reader is not safe for
// concurrent use.
type Reader struct {
	br     *bufio.Reader
	closer io.Closer
	hdr    Header

	lineNo  int   // lines consumed
	off     int64 // offset of the next line
	partial []byte
	// noEOL says the last line was taken without its '\n' (complete JSON at
	// the end of the data); a lone line ending that follows belongs to it.
	noEOL   bool
	skipped int
	// corrupt counts the damaged lines Each skipped.
	corrupt int
}

// readBufSize is the bufio buffer's size. A line that fits is decoded in
// place and its payload copied; a longer one is read into a buffer of its
// own that the event's Msg then shares.
const readBufSize = 64 << 10

// Open opens the trace at path and reads its header.
func Open(path string) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	r, err := newReader(f, f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// NewReader reads the header of the trace in r. The error is ErrNotTrace
// (wrapped) when r does not hold a trace, a *VersionError when the trace is
// newer than this package, and a *CorruptError or *TruncatedError when the
// header is damaged.
func NewReader(r io.Reader) (*Reader, error) {
	return newReader(r, nil)
}

func newReader(r io.Reader, closer io.Closer) (*Reader, error) {
	rd := &Reader{br: bufio.NewReaderSize(r, readBufSize), closer: closer}
	line, _, err := rd.readLine()
	switch {
	case err == io.EOF && len(rd.partial) == 0:
		return nil, fmt.Errorf("%w: the file is empty", ErrNotTrace)
	case err == io.EOF:
		line, rd.partial, rd.noEOL = rd.partial, nil, true
		if p := bytes.TrimSpace(line); bytes.HasPrefix(p, []byte("{")) && !json.Valid(p) {
			return nil, &TruncatedError{Line: 1, Size: len(line)}
		}
	case err != nil:
		return nil, fmt.Errorf("reading trace: %w", err)
	}
	rd.lineNo, rd.off = 1, int64(len(line))
	line = bytes.TrimPrefix(transport.TrimEOL(line), []byte("\xef\xbb\xbf"))
	hdr, err := decodeHeader(line)
	if err != nil {
		return nil, err
	}
	rd.hdr = hdr
	return rd, nil
}

func decodeHeader(line []byte) (Header, error) {
	var probe struct {
		Type    string          `json:"type"`
		Format  string          `json:"format"`
		Version json.RawMessage `json:"version"`
	}
	if !json.Valid(line) || json.Unmarshal(line, &probe) != nil ||
		probe.Type != TypeHeader || probe.Format != Format {
		return Header{}, fmt.Errorf("%w: the first line is not an mcpi-trace header", ErrNotTrace)
	}
	v, err := strconv.Atoi(string(probe.Version))
	if err != nil || v < 1 {
		return Header{}, fmt.Errorf("%w: bad format version %s", ErrNotTrace, probe.Version)
	}
	if v > Version {
		return Header{}, &VersionError{Version: v}
	}
	var h Header
	if err := json.Unmarshal(line, &h); err != nil {
		return Header{}, &CorruptError{Line: 1, Err: fmt.Errorf("bad header: %w", err)}
	}
	h.Raw = bytes.Clone(line)
	return h, nil
}

// Header returns the trace's header.
func (r *Reader) Header() Header { return r.hdr }

// Skipped returns how many events of types this version does not know Next
// has skipped so far.
func (r *Reader) Skipped() int { return r.skipped }

// Close closes the file of a Reader made by Open.
func (r *Reader) Close() error {
	if r.closer == nil {
		return nil
	}
	return r.closer.Close()
}

// Next returns the next event. It returns io.EOF at the end of the trace, a
// *TruncatedError when the trace ends inside an event and a *CorruptError
// for a damaged line; after a *CorruptError, Next goes on with the next
// line. Events of unknown types are skipped (see Skipped), unknown fields
// ignored. Blank lines are allowed.
func (r *Reader) Next() (Event, error) {
	for {
		start := r.off
		line, owned, err := r.readLine()
		if err == io.EOF {
			if transport.IsBlank(r.partial) {
				return Event{}, io.EOF
			}
			p := bytes.TrimRight(r.partial, " \t\r")
			if !json.Valid(p) {
				return Event{}, &TruncatedError{Line: r.lineNo + 1, Offset: start, Size: len(r.partial)}
			}
			// A complete last line without its line ending.
			line, owned, err = r.partial, true, nil
			r.partial = nil
			r.lineNo++
			r.off += int64(len(line))
			r.noEOL = true
		} else if err != nil {
			return Event{}, fmt.Errorf("reading trace: %w", err)
		} else {
			r.off += int64(len(line))
			if r.noEOL && (len(line) == 1 || len(line) == 2 && line[0] == '\r') {
				r.noEOL = false
				continue
			}
			r.noEOL = false
			r.lineNo++
		}
		line = transport.TrimEOL(line)
		if transport.IsBlank(line) {
			continue
		}
		ev, known, err := decodeEvent(line, owned)
		if err != nil {
			return Event{}, &CorruptError{Line: r.lineNo, Offset: start, Err: err}
		}
		if !known {
			r.skipped++
			continue
		}
		ev.LineNo, ev.Offset = r.lineNo, start
		return ev, nil
	}
}

// Each hands every event of the rest of the trace to fn, in order,
// skipping damaged lines (each a *CorruptError, counted in Corrupt). It
// returns what ended the trace early: nil at its end, a *TruncatedError
// when it ends inside an event, or an error reading it.
func (r *Reader) Each(fn func(Event)) error {
	for {
		ev, err := r.Next()
		switch {
		case errors.Is(err, io.EOF):
			return nil
		case errors.As(err, new(*CorruptError)):
			r.corrupt++
			continue
		case err != nil:
			return err
		}
		fn(ev)
	}
}

// Corrupt counts the damaged lines Each skipped.
func (r *Reader) Corrupt() int { return r.corrupt }

// readLine returns the next line with its '\n'. owned says the slice is
// the caller's; otherwise it lies in the bufio buffer and is valid until
// the next read. At the end of the data it returns io.EOF and keeps the
// incomplete line in r.partial, to be completed if more data comes.
func (r *Reader) readLine() ([]byte, bool, error) {
	for {
		chunk, err := r.br.ReadSlice('\n')
		switch err {
		case nil:
			if len(r.partial) == 0 {
				return chunk, false, nil
			}
			line := appendGrow(r.partial, chunk)
			r.partial = nil
			return line, true, nil
		case bufio.ErrBufferFull:
			r.partial = appendGrow(r.partial, chunk)
		default:
			r.partial = appendGrow(r.partial, chunk)
			return nil, false, err
		}
	}
}

// appendGrow appends, doubling the capacity when it must grow: append's
// gentler growth for large slices would copy a 50 MB line many times over.
func appendGrow(dst, p []byte) []byte {
	if n := len(dst) + len(p); n > cap(dst) {
		grown := make([]byte, len(dst), max(2*cap(dst), n, readBufSize))
		copy(grown, dst)
		dst = grown
	}
	return append(dst, p...)
}

// wireEvent is an event line as written.
type wireEvent struct {
	Type     string    `json:"type"`
	Time     time.Time `json:"t"`
	Seq      int64     `json:"seq"`
	Dir      string    `json:"dir"`
	Size     int       `json:"size"`
	Kind     string    `json:"kind"`
	Text     string    `json:"text"`
	Error    string    `json:"error"`
	HTTP     *HTTPMeta `json:"http"`
	Redacted bool      `json:"redacted"`
	Encoding string    `json:"encoding"`
	Msg      rawRef    `json:"msg"`
	Line     rawRef    `json:"line"`
	Data     rawRef    `json:"data"`
}

// rawRef is a json.RawMessage that shares the decoded line instead of
// copying it, so that a 50 MB frame is not copied again.
type rawRef []byte

func (r *rawRef) UnmarshalJSON(b []byte) error {
	if string(b) != "null" {
		*r = b
	}
	return nil
}

var knownTypes = map[string]bool{
	TypeFrame: true, TypeBadFrame: true, TypeStderr: true,
	TypeLifecycle: true, TypeHTTP: true, TypeNote: true, TypeApp: true, TypeModel: true, TypeIntercept: true,
}

// decodeEvent decodes one line. owned says the event may keep pieces of
// line; otherwise they are copied.
func decodeEvent(line []byte, owned bool) (ev Event, known bool, err error) {
	if line = bytes.TrimLeft(line, " \t"); len(line) == 0 || line[0] != '{' {
		return Event{}, false, errors.New("the line is not a JSON object")
	}
	var w wireEvent
	if err := json.Unmarshal(line, &w); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			err = fmt.Errorf("field %q: got a JSON %s, want %s", te.Field, te.Value, te.Type)
		}
		// A type from a newer version may give a known field another
		// shape: skip it rather than call it damage.
		var probe struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(line, &probe) == nil && probe.Type != "" && probe.Type != TypeHeader && !knownTypes[probe.Type] {
			return Event{}, false, nil
		}
		return Event{}, false, err
	}
	if w.Type == "" {
		return Event{}, false, errors.New(`the event has no "type"`)
	}
	if w.Type == TypeHeader {
		return Event{}, false, errors.New("a second header (traces concatenated?)")
	}
	if !knownTypes[w.Type] {
		return Event{}, false, nil
	}
	ev = Event{
		Type: w.Type, Time: w.Time, Seq: w.Seq, Dir: parseDir(w.Dir), Size: w.Size,
		Kind: w.Kind, Text: w.Text, Error: w.Error, HTTP: w.HTTP, Redacted: w.Redacted,
	}
	keep := func(b []byte) []byte {
		if owned {
			return b
		}
		return bytes.Clone(b)
	}
	switch w.Encoding {
	case "", "base64":
	default:
		return Event{}, false, fmt.Errorf("unknown encoding %q", w.Encoding)
	}
	switch w.Type {
	case TypeFrame, TypeApp, TypeModel, TypeIntercept:
		switch {
		case w.Msg != nil:
			ev.Msg = json.RawMessage(keep(w.Msg))
		case w.Data != nil:
			if ev.Msg, err = decodePayload(w.Data, w.Encoding); err != nil {
				return Event{}, false, fmt.Errorf("frame data: %w", err)
			}
		default:
			return Event{}, false, errors.New(`a frame without "msg" or "data"`)
		}
	case TypeStderr:
		b, err := decodePayload(w.Line, w.Encoding)
		if err != nil {
			return Event{}, false, fmt.Errorf("stderr line: %w", err)
		}
		ev.Line = string(b)
	case TypeNote:
		if w.Data != nil {
			ev.Data = keep(w.Data)
		}
	default:
		if w.Data != nil {
			if ev.Data, err = decodePayload(w.Data, w.Encoding); err != nil {
				return Event{}, false, fmt.Errorf("data: %w", err)
			}
		}
	}
	return ev, true, nil
}

// decodePayload decodes a JSON string holding text, or base64.
func decodePayload(lit []byte, encoding string) ([]byte, error) {
	if lit == nil {
		return nil, nil
	}
	b, ok := unquote(lit)
	if !ok {
		return nil, errors.New("not a string")
	}
	if encoding == "base64" {
		dst := make([]byte, base64.StdEncoding.DecodedLen(len(b)))
		n, err := base64.StdEncoding.Decode(dst, b)
		if err != nil {
			return nil, fmt.Errorf("bad base64: %w", err)
		}
		b = dst[:n]
	}
	return b, nil
}

package record

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/mcpi-dev/mcpi/internal/transport"
)

// DefaultFlushInterval bounds how long an event may wait in the Writer's
// buffer before it reaches the file, so that a reader following the trace
// sees frames promptly.
const DefaultFlushInterval = 100 * time.Millisecond

// timeLayout is RFC 3339 with a fixed nine-digit fraction, so that the
// times of a trace sort as strings (jq 'sort_by(.t)').
const timeLayout = "2006-01-02T15:04:05.000000000Z07:00"

// Options tune a Writer.
type Options struct {
	// NoRedact keeps secrets in the trace (--no-redact).
	NoRedact bool
	// SecretValues are strings replaced by [REDACTED] wherever they occur:
	// the values the user passed with -e. Values shorter than MinSecretLen
	// are ignored, and so are all of them with NoRedact.
	SecretValues []string
	// FlushInterval is the longest an event waits in the buffer;
	// DefaultFlushInterval when zero.
	FlushInterval time.Duration
	// Events, when set, is given each event as a Reader reads it back
	// from the trace: redacted as the trace is, numbered, in the trace's
	// order. It is called under the Writer's lock, and must not block.
	// A live export of spans reads the session this way, so that what
	// the trace redacts, the spans redact.
	Events func(Event)
}

// ErrClosed is returned by a Writer used after Close.
var ErrClosed = errors.New("trace writer closed")

// A Writer records a connection's tap events to a trace. It is a
// transport.Tap.
//
// Observe and Annotate may be called concurrently, from any goroutine. They
// write into a buffer under a lock and return: the buffer goes to the file
// when it is full, at most FlushInterval after an event, and on Flush and
// Close. A write error is kept, later events are dropped, and the error is
// returned by Err, Flush and Close: the caller learns that the trace is
// incomplete.
type Writer struct {
	red      *Redactor // nil with NoRedact
	interval time.Duration
	events   func(Event)

	mu     sync.Mutex
	bw     *bufio.Writer
	closer io.Closer
	seq    int64
	err    error
	closed bool
	timer  *time.Timer // flushes the buffer; armed while it holds events
	armed  bool
}

var _ transport.Tap = (*Writer)(nil)

// NewWriter writes the header h to w and returns a Writer for the events.
// Close flushes but does not close w. A failure to write the header is
// returned by Err.
func NewWriter(w io.Writer, h Header, opts Options) *Writer {
	return newWriter(w, nil, h, opts)
}

// Create creates (or truncates) the file at path with mode 0600, writes the
// header h and returns a Writer whose Close closes the file.
func Create(path string, h Header, opts Options) (*Writer, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("creating trace: %w", err)
	}
	// An existing file keeps its mode through O_TRUNC: tighten it before
	// anything is written. Devices and pipes (--record /dev/stderr) are
	// left alone.
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o077 != 0 {
		if err := f.Chmod(0o600); err != nil {
			f.Close()
			return nil, fmt.Errorf("creating trace: %w", err)
		}
	}
	w := newWriter(f, f, h, opts)
	if err := w.Err(); err != nil {
		f.Close()
		return nil, err
	}
	return w, nil
}

// NewTap returns a Writer that writes no file: it hands each event to
// opts.Events, redacted as a trace would be.
func NewTap(h Header, opts Options) *Writer {
	return newWriter(nil, nil, h, opts)
}

func newWriter(w io.Writer, closer io.Closer, h Header, opts Options) *Writer {
	wr := &Writer{
		closer:   closer,
		interval: opts.FlushInterval,
		events:   opts.Events,
	}
	if wr.interval <= 0 {
		wr.interval = DefaultFlushInterval
	}
	if !opts.NoRedact {
		wr.red = NewRedactor(opts.SecretValues)
	}
	wr.timer = time.AfterFunc(time.Hour, wr.timedFlush)
	wr.timer.Stop()
	if w == nil {
		return wr
	}
	wr.bw = bufio.NewWriterSize(w, 64<<10)

	h = wr.completeHeader(h)
	line, err := marshalHeader(h)
	if err != nil {
		wr.err = fmt.Errorf("writing trace header: %w", err)
		return wr
	}
	wr.bw.Write(line)
	if err := wr.bw.Flush(); err != nil {
		wr.err = fmt.Errorf("writing trace: %w", err)
	}
	return wr
}

func (w *Writer) completeHeader(h Header) Header {
	h.Version = Version
	if h.Mcpi == "" {
		h.Mcpi = "unknown"
		if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
			h.Mcpi = bi.Main.Version
		}
	}
	if h.Created.IsZero() {
		h.Created = time.Now()
	}
	h.Created = h.Created.UTC()
	if h.Role == "" {
		h.Role = RoleClient
	}
	if h.Host == (Host{}) {
		h.Host = Host{OS: runtime.GOOS, Arch: runtime.GOARCH, Go: runtime.Version()}
	}
	h.Redacted = w.red != nil
	if w.red != nil {
		h.Args = w.red.Args(h.Args)
		h.Target.Command = w.red.Args(h.Target.Command)
		h.Target.URL = w.red.URL(h.Target.URL)
	}
	return h
}

func marshalHeader(h Header) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf) // ends the line with '\n'
	enc.SetEscapeHTML(false)
	err := enc.Encode(struct {
		Type   string `json:"type"`
		Format string `json:"format"`
		Header
	}{TypeHeader, Format, h})
	return buf.Bytes(), err
}

// entry is an event ready to be written: redacted, its payload chosen.
type entry struct {
	typ      string
	t        time.Time
	dir      string
	size     int
	hasSize  bool
	msg      []byte // a frame embedded verbatim
	data     []byte // written as a JSON string, or base64
	hasData  bool
	line     []byte // a stderr line (UTF-8, or base64)
	hasLine  bool
	base64   bool // data or line is base64
	text     string
	err      string
	kind     string
	note     []byte // a note's data, JSON
	http     *httpEntry
	redacted bool
}

type httpEntry struct {
	method, url  string
	status       int
	reqH, respH  []headerField
	sseID, sseEv string
	exchange     uint64
}

type headerField struct {
	name   string
	values []string
}

// Observe records a tap event. It implements transport.Tap.
func (w *Writer) Observe(e transport.Event) {
	en := w.prepare(e)
	w.write(&en)
}

// Annotate records a note: something the session learnt that the tap does
// not see (the negotiated revision, the server's name). data is encoded as
// JSON and redacted like a frame.
func (w *Writer) Annotate(kind string, data any) {
	en := entry{typ: TypeNote, t: time.Now(), kind: kind}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(data); err != nil {
		en.err = "cannot encode the note: " + err.Error()
	} else {
		en.note = bytes.TrimRight(buf.Bytes(), "\n")
		if w.red != nil {
			en.note, en.redacted = w.red.JSON(en.note)
		}
	}
	w.write(&en)
}

// prepare redacts e and chooses how its payload is written. It runs
// outside the lock: a big frame's checks do not hold up the other
// goroutines' events.
func (w *Writer) prepare(e transport.Event) entry {
	en := entry{typ: e.Kind.String(), t: e.Time, dir: dirString(e.Dir), text: e.Text, err: e.Err}
	if en.typ == "?" {
		en.typ = "kind-" + strconv.Itoa(int(e.Kind))
	}
	if w.red != nil {
		if e.Kind == transport.KindLifecycle && strings.HasPrefix(en.text, SpawnPrefix) {
			en.text = w.red.spawnText(en.text)
		}
		en.text = w.red.Text(en.text)
		en.err = w.red.Text(en.err)
		en.redacted = en.text != e.Text || en.err != e.Err
	}
	if e.HTTP != nil {
		en.http = w.httpEntry(e.HTTP)
	}
	data, changed := e.Data, false
	switch e.Kind {
	case transport.KindFrame, transport.KindApp, transport.KindModel, transport.KindIntercept:
		en.size, en.hasSize = len(data), true
		// The transport sends only valid JSON as a frame; check anyway,
		// since one bad line would damage the whole trace.
		valid := utf8.Valid(data) && transport.ValidJSON(data)
		if w.red != nil {
			if valid {
				data, changed = w.red.JSON(data)
			} else {
				data, changed = w.red.Bytes(data)
			}
		}
		if valid && embeddable(data) {
			en.msg = data
		} else {
			en.setData(data)
		}
	case transport.KindStderr:
		if w.red != nil {
			if s := w.red.Text(string(data)); s != string(data) {
				data, changed = []byte(s), true
			}
		}
		en.line, en.hasLine, en.base64 = data, true, !utf8.Valid(data)
	default:
		if e.Kind == transport.KindBadFrame {
			en.size, en.hasSize = len(data), true
		}
		if len(data) > 0 || e.Kind == transport.KindBadFrame {
			if w.red != nil {
				data, changed = w.red.Bytes(data)
			}
			en.setData(data)
		}
	}
	en.redacted = en.redacted || changed
	return en
}

// event is the entry as a Reader reads it back from the trace.
func (en *entry) event(seq int64) Event {
	ev := Event{Type: en.typ, Time: en.t, Seq: seq, Dir: parseDir(en.dir), Text: en.text, Error: en.err, Kind: en.kind, Redacted: en.redacted}
	if en.hasSize {
		ev.Size = en.size
	}
	switch {
	case en.typ == TypeNote:
		ev.Data = en.note
	case en.msg != nil:
		ev.Msg = en.msg
	case en.typ == TypeFrame || en.typ == TypeApp || en.typ == TypeModel || en.typ == TypeIntercept:
		ev.Msg = en.data
	case en.hasLine:
		ev.Line = string(en.line)
	case en.hasData:
		ev.Data = en.data
	}
	if h := en.http; h != nil {
		ev.HTTP = &HTTPMeta{Method: h.method, URL: h.url, StatusCode: h.status, Exchange: h.exchange, SSEEventID: h.sseID, SSEEvent: h.sseEv,
			RequestHeader: headerOf(h.reqH), ResponseHeader: headerOf(h.respH)}
	}
	return ev
}

func headerOf(fs []headerField) http.Header {
	if len(fs) == 0 {
		return nil
	}
	h := make(http.Header, len(fs))
	for _, f := range fs {
		h[f.name] = f.values
	}
	return h
}

func (en *entry) setData(b []byte) {
	en.data, en.hasData, en.base64 = b, true, !utf8.Valid(b)
}

// embeddable reports whether a valid JSON frame can be written as is: it
// must hold no line break (a pretty-printed HTTP body does) and, so that a
// reader gets back exactly these bytes, begin and end with its value.
func embeddable(b []byte) bool {
	if len(b) == 0 || isSpace(b[0]) || isSpace(b[len(b)-1]) {
		return false
	}
	return bytes.IndexByte(b, '\n') < 0 && bytes.IndexByte(b, '\r') < 0
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

func (w *Writer) httpEntry(m *transport.HTTPMeta) *httpEntry {
	h := &httpEntry{
		method:   m.Method,
		url:      m.URL,
		status:   m.StatusCode,
		reqH:     w.headerFields(m.RequestHeader),
		respH:    w.headerFields(m.ResponseHeader),
		sseID:    m.SSEEventID,
		sseEv:    m.SSEEvent,
		exchange: m.Exchange,
	}
	if w.red != nil {
		h.url = w.red.URL(h.url)
	}
	return h
}

func (w *Writer) headerFields(h map[string][]string) []headerField {
	if len(h) == 0 {
		return nil
	}
	fs := make([]headerField, 0, len(h))
	for name, vs := range h {
		if w.red != nil {
			rv := make([]string, len(vs))
			for i, v := range vs {
				rv[i] = w.red.HeaderValue(name, v)
			}
			vs = rv
		}
		fs = append(fs, headerField{name, vs})
	}
	slices.SortFunc(fs, func(a, b headerField) int {
		switch {
		case a.name < b.name:
			return -1
		case a.name > b.name:
			return 1
		}
		return 0
	})
	return fs
}

func (w *Writer) write(en *entry) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed || w.err != nil {
		return
	}
	w.seq++
	if w.events != nil {
		w.events(en.event(w.seq))
	}
	if w.bw == nil {
		return
	}
	w.encode(en)
	// bufio keeps its first error and returns it from every later write.
	if _, err := w.bw.Write(nil); err != nil {
		w.err = fmt.Errorf("writing trace: %w", err)
		return
	}
	if w.bw.Buffered() > 0 && !w.armed {
		w.armed = true
		w.timer.Reset(w.interval)
	}
}

// encode writes one line. The frame goes last and straight from the
// caller's slice: bufio hands a large one to the file without copying it.
func (w *Writer) encode(en *entry) {
	b := w.bw
	var num [32]byte
	b.WriteString(`{"type":`)
	writeQuotedString(b, en.typ)
	if !en.t.IsZero() {
		b.WriteString(`,"t":"`)
		b.Write(en.t.UTC().AppendFormat(num[:0], timeLayout))
		b.WriteByte('"')
	}
	b.WriteString(`,"seq":`)
	b.Write(strconv.AppendInt(num[:0], w.seq, 10))
	if en.dir != "" {
		b.WriteString(`,"dir":"`)
		b.WriteString(en.dir)
		b.WriteByte('"')
	}
	if en.hasSize {
		b.WriteString(`,"size":`)
		b.Write(strconv.AppendInt(num[:0], int64(en.size), 10))
	}
	if en.kind != "" {
		b.WriteString(`,"kind":`)
		writeQuotedString(b, en.kind)
	}
	if en.text != "" {
		b.WriteString(`,"text":`)
		writeQuotedString(b, en.text)
	}
	if en.err != "" {
		b.WriteString(`,"error":`)
		writeQuotedString(b, en.err)
	}
	if en.http != nil {
		w.encodeHTTP(en.http)
	}
	if en.redacted {
		b.WriteString(`,"redacted":true`)
	}
	if en.base64 {
		b.WriteString(`,"encoding":"base64"`)
	}
	switch {
	case en.msg != nil:
		b.WriteString(`,"msg":`)
		b.Write(en.msg)
	case en.note != nil:
		b.WriteString(`,"data":`)
		b.Write(en.note)
	case en.hasLine:
		b.WriteString(`,"line":`)
		w.writePayload(en.line, en.base64)
	case en.hasData:
		b.WriteString(`,"data":`)
		w.writePayload(en.data, en.base64)
	}
	b.WriteString("}\n")
}

func (w *Writer) writePayload(p []byte, b64 bool) {
	if !b64 {
		writeQuoted(w.bw, p)
		return
	}
	w.bw.WriteByte('"')
	enc := base64.NewEncoder(base64.StdEncoding, w.bw)
	enc.Write(p)
	enc.Close()
	w.bw.WriteByte('"')
}

func (w *Writer) encodeHTTP(h *httpEntry) {
	b := w.bw
	var num [20]byte
	b.WriteString(`,"http":{`)
	sep := ""
	str := func(key, v string) {
		if v != "" {
			b.WriteString(sep + `"` + key + `":`)
			writeQuotedString(b, v)
			sep = ","
		}
	}
	str("method", h.method)
	str("url", h.url)
	if h.status != 0 {
		b.WriteString(sep + `"status":`)
		b.Write(strconv.AppendInt(num[:0], int64(h.status), 10))
		sep = ","
	}
	for _, hs := range []struct {
		key    string
		fields []headerField
	}{{"requestHeaders", h.reqH}, {"responseHeaders", h.respH}} {
		if len(hs.fields) == 0 {
			continue
		}
		b.WriteString(sep + `"` + hs.key + `":{`)
		sep = ","
		for i, f := range hs.fields {
			if i > 0 {
				b.WriteByte(',')
			}
			writeQuotedString(b, f.name)
			b.WriteString(":[")
			for j, v := range f.values {
				if j > 0 {
					b.WriteByte(',')
				}
				writeQuotedString(b, v)
			}
			b.WriteByte(']')
		}
		b.WriteByte('}')
	}
	str("sseEventId", h.sseID)
	str("sseEvent", h.sseEv)
	if h.exchange != 0 {
		b.WriteString(sep + `"exchange":`)
		b.Write(strconv.AppendUint(num[:0], h.exchange, 10))
	}
	b.WriteByte('}')
}

func (w *Writer) timedFlush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.armed = false
	if !w.closed && w.err == nil {
		w.flushLocked()
	}
}

func (w *Writer) flushLocked() {
	if w.bw == nil {
		return
	}
	if err := w.bw.Flush(); err != nil && w.err == nil {
		w.err = fmt.Errorf("writing trace: %w", err)
	}
}

// Flush writes the buffered events to the file now.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return cmpErr(w.err, ErrClosed)
	}
	if w.err == nil {
		w.flushLocked()
	}
	return w.err
}

// Err returns the first error the Writer met, if any.
func (w *Writer) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// Close flushes the buffered events, closes the file of a Writer made by
// Create, and returns the first error met while recording. Events observed
// after Close are dropped. Close may be called more than once; later calls
// return the same error.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return w.err
	}
	w.closed = true
	w.timer.Stop()
	if w.err == nil {
		w.flushLocked()
	}
	if w.closer != nil {
		if err := w.closer.Close(); err != nil && w.err == nil {
			w.err = fmt.Errorf("closing trace: %w", err)
		}
	}
	return w.err
}

func cmpErr(err, otherwise error) error {
	if err != nil {
		return err
	}
	return otherwise
}

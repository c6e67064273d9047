package proxy

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"

	"github.com/mcpi-dev/mcpi/internal/bounds"
	"github.com/mcpi-dev/mcpi/internal/intercept"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// errFault ends a stream a fault closes or cuts: the reverse proxy
// aborts the host's connection on it.
var errFault = errors.New("mcpi proxy: the connection closed by a fault")

// judging says frames are judged: by a faults engine, a gate, or both.
func (h *httpProxy) judging() bool { return h.faults != nil || h.gate != nil }

// pass puts a frame through the gate, when there is one, and waits for
// its fate (the gate's hold deadline bounds the wait). ok is false when
// the host went away first.
func (h *httpProxy) pass(ctx context.Context, dir transport.Direction, frame []byte, noReply bool) (d intercept.Delivery, ok bool) {
	if h.gate == nil {
		return intercept.Delivery{AsIs: frame, Frame: frame}, true
	}
	box := make(chan intercept.Delivery, 1)
	if err := h.gate.PushWith(dir, frame, intercept.PushOptions{Tag: box, NoReply: noReply}); err != nil {
		return d, false
	}
	select {
	case d = <-box:
		return d, true
	case <-ctx.Done():
		return d, false
	}
}

// passed is the frame a gate's delivery sends on (nil: none), with drop
// saying that nothing goes.
func passed(d intercept.Delivery) (frame []byte, drop bool) {
	switch {
	case d.AsIs != nil:
		return d.AsIs, false
	case len(d.Frames) > 0:
		return d.Frames[0], false
	}
	return nil, true
}

// judgeRequest judges the frame a host POSTed, and reports whether the
// request goes on to the upstream (with body, its bytes now, and copies,
// the bodies to send again once the host has its answer); when it does
// not, the host has been answered.
func (h *httpProxy) judgeRequest(w http.ResponseWriter, r *http.Request, body []byte) (_ []byte, copies [][]byte, goOn bool) {
	frame := bytes.TrimSpace(body)
	if frameError(frame) != nil || len(frame) == 0 {
		return body, nil, true
	}
	session := h.sessionOf(r)
	if h.strays.judge(transport.Outgoing, session, "", frame) {
		w.WriteHeader(http.StatusAccepted)
		return nil, nil, false
	}
	d, ok := h.pass(r.Context(), transport.Outgoing, frame, false)
	switch {
	case !ok:
		return nil, nil, false
	case d.Close:
		panic(http.ErrAbortHandler)
	case len(d.Reply) > 0:
		h.strays.keep(transport.Outgoing, session, frame, true)
		h.replyToHost(w, r, d.Reply[0])
		return nil, nil, false
	}
	if f, drop := passed(d); drop {
		h.strays.keep(transport.Outgoing, session, frame, false)
		w.WriteHeader(http.StatusAccepted)
		return nil, nil, false
	} else if d.AsIs == nil {
		body, frame = f, f
	}
	v := h.faults.Judge(intercept.Frame{Dir: transport.Outgoing, Data: frame, Carrier: intercept.HTTPBody})
	if !v.Changed {
		return body, nil, true
	}
	if v.Delay > 0 && !bounds.Sleep(r.Context(), v.Delay) {
		return nil, nil, false
	}
	switch {
	case v.Status != 0:
		// Not kept: the host is told the request failed, and may send it
		// again.
		if v.RetryAfter > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(v.RetryAfter))
		}
		http.Error(w, "mcpi proxy: status "+strconv.Itoa(v.Status)+" given by a fault", v.Status)
	case len(v.Reply) > 0:
		h.strays.keep(transport.Outgoing, session, frame, true)
		h.replyToHost(w, r, v.Reply[0])
	case v.Close:
		panic(http.ErrAbortHandler)
	case len(v.Send) == 0:
		// Dropped: the upstream never sees it, and the host's request is
		// answered as a notification would be.
		h.strays.keep(transport.Outgoing, session, frame, false)
		w.WriteHeader(http.StatusAccepted)
	case v.Hold > 0:
		// Held back: it goes once that many later requests of the host
		// went on, or a second passed.
		if !h.overtaken.wait(r.Context(), v.Hold) {
			return nil, nil, false
		}
		return v.Send[0], nil, true
	default:
		return v.Send[0], v.Send[1:], true
	}
	return nil, nil, false
}

// judgeJSON judges the frame of a JSON answer, recorded as it came: its
// body changed as the verdict says (dropped: a 202 with no body). A body
// too long to judge goes on unchanged.
func (h *httpProxy) judgeJSON(resp *http.Response, meta *transport.HTTPMeta, ct string) error {
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxRecordedBody+1))
	rest := resp.Body
	if err != nil || len(body) > maxRecordedBody {
		h.tapJSON(resp, meta, ct, struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(body), rest), rest})
		return nil
	}
	rest.Close()
	frame := bytes.TrimSpace(body)
	var v intercept.Verdict
	if len(frame) > 0 {
		emitFrame(h.emit, transport.Incoming, frame, meta)
		if frameError(frame) == nil && h.strays.judge(transport.Incoming, h.sessionOf(resp.Request), ownID(resp.Request.Context()), frame) {
			v = intercept.Verdict{Changed: true}
		} else if frameError(frame) == nil {
			d, ok := h.pass(resp.Request.Context(), transport.Incoming, frame, true)
			f, drop := passed(d)
			switch {
			case !ok:
				return resp.Request.Context().Err()
			case d.Close:
				v = intercept.Verdict{Changed: true, Close: true}
			case drop:
				v = intercept.Verdict{Changed: true}
			default:
				if d.AsIs == nil {
					body, frame = f, f
				}
				v = h.faults.Judge(intercept.Frame{Dir: transport.Incoming, Data: frame, Carrier: intercept.HTTPBody})
				if d.AsIs == nil && !v.Changed {
					v = intercept.Verdict{Changed: true, Send: [][]byte{f}}
				}
			}
		}
	}
	if !v.Changed {
		setBody(resp, body, nil)
		return nil
	}
	if v.Delay > 0 && v.Rate == 0 && !bounds.Sleep(resp.Request.Context(), v.Delay) {
		return resp.Request.Context().Err()
	}
	switch {
	case v.Close && len(v.Send) > 0: // cut
		setBody(resp, v.Send[0], errFault)
		resp.ContentLength = -1
		resp.Header.Del("Content-Length")
	case v.Close:
		setBody(resp, nil, errFault)
		resp.ContentLength = -1
		resp.Header.Del("Content-Length")
	case len(v.Send) == 0:
		resp.StatusCode, resp.Status = http.StatusAccepted, "202 Accepted"
		resp.Header.Del("Content-Type")
		setBody(resp, nil, nil)
	default:
		setBody(resp, v.Send[0], nil)
		if v.Rate > 0 {
			resp.Body = &slowBody{ReadCloser: resp.Body, o: &outlet{ctx: resp.Request.Context()}, rate: v.Rate}
		}
	}
	return nil
}

func setBody(resp *http.Response, b []byte, end error) {
	var r io.Reader = bytes.NewReader(b)
	if end != nil {
		r = io.MultiReader(r, errReader{end})
	}
	resp.Body = io.NopCloser(r)
	resp.ContentLength = int64(len(b))
	resp.Header.Set("Content-Length", strconv.Itoa(len(b)))
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// slowBody reads its body at rate bytes per second.
type slowBody struct {
	io.ReadCloser
	o    *outlet
	rate int
}

func (s *slowBody) Read(p []byte) (int, error) {
	chunk := max(1, s.rate/10)
	if len(p) > chunk {
		p = p[:chunk]
	}
	n, err := s.ReadCloser.Read(p)
	if n > 0 && !bounds.Sleep(s.o.ctx, timeFor(n, s.rate)) {
		return n, s.o.ctx.Err()
	}
	return n, err
}

// judgeSSE rewrites an event stream as the host reads it: each event
// whose data is a frame is judged, and sent, changed or not, by an
// outlet (so that reorders and slow streams work as over stdio). Events
// that no rule changes go out as their bytes came.
func (h *httpProxy) judgeSSE(resp *http.Response, meta *transport.HTTPMeta) {
	pr, pw := io.Pipe()
	src := resp.Body
	out := &outlet{ctx: resp.Request.Context(), w: pw}
	way := newWayBack(resp)
	go func() {
		defer src.Close()
		defer func() {
			if way.legacy != "" {
				h.legacy.CompareAndDelete(way.legacy, out)
			}
		}()
		r := bufio.NewReader(src)
		for {
			block, err := readEventBlock(r)
			if len(block) > 0 && !h.judgeEvent(resp, meta, block, out, way) {
				out.flush()
				pw.CloseWithError(errFault)
				return
			}
			if err != nil {
				out.flush()
				if err == io.EOF {
					err = nil
				}
				pw.CloseWithError(err)
				return
			}
		}
	}()
	resp.Body = pr
}

// judgeEvent sends one event block, and reports whether the stream goes
// on.
func (h *httpProxy) judgeEvent(resp *http.Response, meta *transport.HTTPMeta, block []byte, out *outlet, way *wayBack) bool {
	ev := parseEventBlock(block)
	if ev.Event == "endpoint" && ev.HasData {
		if u, ok := h.announce(resp.Request.URL, ev.Data); ok {
			h.legacy.Store(way.endpoint(u), out)
		}
	}
	frame := bytes.TrimSpace(ev.Data)
	if !ev.HasData || len(frame) == 0 {
		out.send([][]byte{block}, 0)
		return true
	}
	m := *meta
	m.SSEEventID, m.SSEEvent = ev.ID, ev.Event
	emitFrame(h.emit, transport.Incoming, ev.Data, &m)
	if frameError(frame) != nil {
		out.send([][]byte{block}, 0)
		return true
	}
	session := way.session()
	if h.strays.judge(transport.Incoming, session, ownID(resp.Request.Context()), frame) {
		return true
	}
	d, ok := h.pass(out.ctx, transport.Incoming, frame, false)
	f, drop := passed(d)
	switch {
	case !ok || d.Close:
		return false
	case len(d.Reply) > 0:
		h.strays.keep(transport.Incoming, session, frame, true)
		h.answerUpstream(out.ctx, way, d.Reply[0])
		return true
	case drop:
		h.strays.keep(transport.Incoming, session, frame, false)
		return true
	case d.AsIs == nil:
		block, frame = withData(block, f), f
	}
	v := h.faults.Judge(intercept.Frame{Dir: transport.Incoming, Data: frame, Carrier: intercept.SSEEvent})
	if !v.Changed {
		out.send([][]byte{block}, 0)
		return true
	}
	if v.Delay > 0 && v.Rate == 0 && !bounds.Sleep(out.ctx, v.Delay) {
		return false
	}
	switch {
	case len(v.Reply) > 0:
		// The server's request, answered in the host's place: the answer
		// goes to the server as the host would send it.
		h.strays.keep(transport.Incoming, session, frame, true)
		h.answerUpstream(out.ctx, way, v.Reply[0])
		return true
	case len(v.Send) == 0 && !v.Close:
		h.strays.keep(transport.Incoming, session, frame, false)
	}
	var events [][]byte
	for _, s := range v.Send {
		events = append(events, withData(block, s))
	}
	switch {
	case v.Hold > 0:
		out.holdBack(events[0], v.Hold)
	case v.Close && len(events) > 0:
		// Cut mid-event: half the data, and no blank line to end it.
		out.send([][]byte{bytes.TrimRight(events[0], "\n")}, 0)
		return false
	case v.Close:
		return false
	default:
		out.send(events, v.Rate)
	}
	return true
}

// readEventBlock reads one event's lines and the blank line that ends
// it, as they came.
func readEventBlock(r *bufio.Reader) ([]byte, error) {
	var block []byte
	for {
		line, err := r.ReadBytes('\n')
		block = append(block, line...)
		if err != nil {
			return block, err
		}
		if len(bytes.TrimRight(line, "\r\n")) == 0 {
			return block, nil
		}
	}
}

// parseEventBlock reads an event's fields (as transport.ReadSSE does).
func parseEventBlock(block []byte) transport.SSEEvent {
	var ev transport.SSEEvent
	transport.ReadSSE(bytes.NewReader(append(bytes.Clone(block), '\n')), 0, func(e transport.SSEEvent) {
		if e.HasData || e.ID != "" || e.Event != "" {
			ev = e
		}
	})
	return ev
}

// withData is the event block with its data lines replaced by data's
// (its other fields and their order kept).
func withData(block, data []byte) []byte {
	var out []byte
	wrote := false
	for _, line := range bytes.SplitAfter(block, []byte("\n")) {
		field := bytes.TrimRight(line, "\r\n")
		if bytes.HasPrefix(field, []byte("data:")) || bytes.Equal(field, []byte("data")) {
			if !wrote {
				for _, d := range bytes.Split(data, []byte("\n")) {
					out = append(append(append(out, "data: "...), d...), '\n')
				}
				wrote = true
			}
			continue
		}
		out = append(out, line...)
	}
	return out
}

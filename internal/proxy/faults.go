package proxy

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpi-dev/mcpi/internal/bounds"
	"github.com/mcpi-dev/mcpi/internal/intercept"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// maxJudged bounds a line read whole to be judged; a longer line is
// forwarded as it comes, unchanged, and only recorded. (Atomic for the
// tests, which lower it while other proxies' goroutines may still read.)
var maxJudged = atomicInt(64 << 20)

// reorderWait is how long a frame held back by a reorder waits for the
// frames that are to overtake it before it goes anyway: a host waiting
// for its answer is not left hanging when nothing else comes. (In
// nanoseconds, atomic for the tests.)
var reorderWait = atomicInt(int64(time.Second))

func atomicInt(v int64) *atomic.Int64 {
	a := new(atomic.Int64)
	a.Store(v)
	return a
}

// reorderClock is reorderWait's clock.
func reorderClock() bounds.Clock {
	return bounds.Clock{Name: "reorder", D: time.Duration(reorderWait.Load())}
}

// outlet is one side's writer: the frames of its direction, and the
// answers given in the peer's place, written whole one at a time.
type outlet struct {
	ctx    context.Context
	mu     sync.Mutex
	w      io.Writer
	closed bool
	held   []heldBack
}

// heldBack is a frame a reorder holds until left more frames have gone.
type heldBack struct {
	data []byte
	left int
}

// send writes frames, each with its framing (an end of line, an SSE
// event's lines): at rate bytes per second when it is set, then the
// reorders that waited for them.
func (o *outlet) send(frames [][]byte, rate int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, f := range frames {
		o.writeLocked(f, rate)
		o.overtaken()
	}
}

func (o *outlet) writeLocked(f []byte, rate int) {
	if o.closed {
		return
	}
	if rate <= 0 {
		o.w.Write(f)
		return
	}
	chunk := max(1, rate/10)
	for len(f) > 0 && !o.closed {
		n := min(chunk, len(f))
		o.w.Write(f[:n])
		f = f[n:]
		if len(f) > 0 && !bounds.Sleep(o.ctx, timeFor(n, rate)) {
			return
		}
	}
}

// timeFor is how long n bytes take at rate bytes per second.
func timeFor(n, rate int) time.Duration {
	return time.Duration(n) * time.Second / time.Duration(rate)
}

// overtaken counts one more frame past the held ones, and sends those
// whose turn came.
func (o *outlet) overtaken() {
	kept := o.held[:0]
	var due [][]byte
	for _, h := range o.held {
		if h.left--; h.left <= 0 {
			due = append(due, h.data)
			continue
		}
		kept = append(kept, h)
	}
	o.held = kept
	for _, d := range due {
		o.writeLocked(d, 0)
	}
}

// holdBack keeps a framed frame until n later frames went, or
// reorderWait.
func (o *outlet) holdBack(data []byte, n int) {
	o.mu.Lock()
	o.held = append(o.held, heldBack{data: data, left: n})
	o.mu.Unlock()
	time.AfterFunc(reorderClock().D, o.flush)
}

// flush sends every frame still held back.
func (o *outlet) flush() {
	o.mu.Lock()
	defer o.mu.Unlock()
	held := o.held
	o.held = nil
	for _, h := range held {
		o.writeLocked(h.data, 0)
	}
}

func (o *outlet) close() {
	o.mu.Lock()
	o.closed = true
	o.mu.Unlock()
}

// judgedRelay copies src to out line by line, each line recorded and,
// when it is a frame, passed by the gate (when there is one) and judged
// by the engine (when there is one), then sent as they say; answers in
// the peer's place go to back. stop ends the connection.
func judgedRelay(src io.Reader, out, back *outlet, dir transport.Direction, emit func(transport.Event), j *judges, stop func()) {
	sp := newSplitter(dir, emit)
	sink := func(wire []byte, raw bool) bool {
		if !raw && j.strays.judge(dir, "", "", trimEOL(wire)) {
			return true
		}
		if j.gate != nil {
			return j.gate.Push(dir, wire, raw) == nil
		}
		return j.deliver(intercept.Delivery{AsIs: wire, Frame: trimEOL(wire), Raw: raw}, out, back, dir, stop)
	}
	r := bufio.NewReaderSize(src, 64<<10)
	limit := int(maxJudged.Load())
	var line []byte
	long := false // the line is past maxJudged: it goes on as it comes
	for {
		chunk, err := r.ReadSlice('\n')
		sp.write(chunk)
		switch {
		case long || len(line)+len(chunk) > limit:
			long = true
			if len(line) > 0 && !sink(line, true) {
				return
			}
			line = nil
			if !sink(bytes.Clone(chunk), true) {
				return
			}
			if err != bufio.ErrBufferFull {
				long = false
			}
		case err == bufio.ErrBufferFull:
			line = append(line, chunk...)
			continue
		default:
			line = append(line, chunk...)
			if len(line) > 0 && !sink(line, false) {
				flushAll(out, back)
				drain(r)
				return
			}
			line = nil
		}
		if err != nil && err != bufio.ErrBufferFull {
			sp.flush()
			out.flush()
			return
		}
	}
}

// drain reads what the peer still sends once the connection is closed,
// so that it never blocks on a full pipe.
func drain(r io.Reader) { io.Copy(io.Discard, r) }

// judges are what a frame passes through: the gate of breakpoints, and
// the engine of faults.
type judges struct {
	gate   *intercept.Gate
	eng    *intercept.Engine
	strays *strays
}

// deliver sends what was decided for a line, and reports whether the
// relay goes on.
func (j *judges) deliver(d intercept.Delivery, out, back *outlet, dir transport.Direction, stop func()) bool {
	if len(d.Reply) > 0 {
		j.strays.keep(dir, "", d.Frame, true)
		back.send(lines(d.Reply), 0)
	} else if d.AsIs == nil && len(d.Frames) == 0 && !d.Close {
		j.strays.keep(dir, "", d.Frame, false)
	}
	switch {
	case d.Close:
		stop()
		return false
	case d.AsIs != nil && !d.Raw && j.eng != nil:
		return judgeLine(d.AsIs, out, back, dir, j.eng, j.strays, stop)
	case d.AsIs != nil:
		out.send([][]byte{d.AsIs}, 0)
	default:
		out.send(lines(d.Frames), 0)
	}
	return true
}

// judgeLine sends one line as the engine's verdict says, and reports
// whether the relay goes on.
func judgeLine(line []byte, out, back *outlet, dir transport.Direction, eng *intercept.Engine, st *strays, stop func()) bool {
	body := trimEOL(line)
	if frameError(body) != nil {
		out.send([][]byte{line}, 0)
		return true
	}
	v := eng.Judge(intercept.Frame{Dir: dir, Data: body, Carrier: intercept.Stdio})
	if !v.Changed {
		out.send([][]byte{line}, 0)
		return true
	}
	if v.Delay > 0 && v.Rate == 0 && !bounds.Sleep(out.ctx, v.Delay) {
		return false
	}
	if len(v.Reply) > 0 {
		st.keep(dir, "", body, true)
		back.send(lines(v.Reply), 0)
	} else if len(v.Send) == 0 && !v.Close {
		st.keep(dir, "", body, false)
	}
	switch {
	case v.Hold > 0:
		out.holdBack(lines(v.Send)[0], v.Hold)
	case v.Close:
		// A cut frame goes without its end of line: the peer reads half
		// a frame, then the end of the stream.
		out.send(v.Send, 0)
		stop()
		return false
	default:
		out.send(lines(v.Send), v.Rate)
	}
	return true
}

// lines are frames with their ends of line.
func lines(frames [][]byte) [][]byte {
	out := make([][]byte, len(frames))
	for i, f := range frames {
		out[i] = append(f[:len(f):len(f)], '\n')
	}
	return out
}

func flushAll(outs ...*outlet) {
	for _, o := range outs {
		o.flush()
	}
}

func trimEOL(line []byte) []byte {
	for len(line) > 0 && (line[len(line)-1] == '\n' || line[len(line)-1] == '\r') {
		line = line[:len(line)-1]
	}
	return line
}

package intercept

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/mcpi-dev/mcpi/internal/rows"
	"github.com/mcpi-dev/mcpi/internal/safetext"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// Carrier says how a frame travels: on stdio, in an HTTP body, or in an
// SSE event. Some actions are of one carrier only (status: HTTP).
type Carrier uint8

// The carriers.
const (
	Stdio Carrier = iota
	HTTPBody
	SSEEvent
)

// Frame is a frame on its way through the proxy.
type Frame struct {
	Dir     transport.Direction
	Data    []byte
	Carrier Carrier
}

// Verdict is what the proxy does in a frame's place. The zero Verdict
// with Send holding the frame is "forward it unchanged".
type Verdict struct {
	// Send is what goes on the frame's way, in order (nil: nothing).
	Send [][]byte
	// Reply goes back to the sender, in the peer's place.
	Reply [][]byte
	// Delay comes before Send; Rate, when set, is the bytes per second
	// Send is written at.
	Delay time.Duration
	Rate  int
	// Hold, for a reorder: the frame goes after this many later frames of
	// its direction (or when the stream ends or pauses).
	Hold int
	// Close ends the connection after Send (a cut sends half a frame).
	Close bool
	// Status answers the host's HTTP request with this status instead.
	Status, RetryAfter int
	// Changed says a rule fired.
	Changed bool
}

// Options make an Engine.
type Options struct {
	Faults *Faults
	// Seed makes the draws: the same seed, rules and frames give the
	// same changes.
	Seed uint64
	// Tap gets the intercept events.
	Tap transport.Tap
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// Engine judges frames against the rules of a faults file. It is safe
// for concurrent use; each direction draws from a source of its own, so
// that the draws of one direction do not depend on the timing of the
// other.
type Engine struct {
	o     Options
	start time.Time

	mu      sync.Mutex
	parser  *rows.Parser
	rng     map[transport.Direction]*rand.Rand
	matched []int
	fired   []int
	frames  int
}

// NewEngine returns an engine of the rules of o.Faults.
func NewEngine(o Options) *Engine {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Faults == nil {
		o.Faults = &Faults{}
	}
	n := len(o.Faults.Rules)
	return &Engine{o: o, start: o.Now(), parser: rows.NewParser(),
		rng: map[transport.Direction]*rand.Rand{
			transport.Outgoing: rand.New(rand.NewPCG(o.Seed, 1)),
			transport.Incoming: rand.New(rand.NewPCG(o.Seed, 2)),
		},
		matched: make([]int, n), fired: make([]int, n)}
}

// Judge decides a frame's fate: the first rule that matches it, applies
// to it and wins its draw changes it; any other frame is forwarded as it
// came. A change is told to the tap as an intercept event. A nil Engine
// changes nothing.
func (e *Engine) Judge(f Frame) Verdict {
	if e == nil {
		return Verdict{Send: [][]byte{f.Data}}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.frames++
	en := e.parser.Event(transport.Event{Kind: transport.KindFrame, Dir: f.Dir, Data: f.Data})
	rec := en.Record()
	m := fromEntry(&en)
	rng := e.rng[f.Dir]
	for i := range e.o.Faults.Rules {
		r := &e.o.Faults.Rules[i]
		if (r.Count > 0 && e.fired[i] >= r.Count) || !r.Match.Match(&rec) || !r.appliesTo(f, m) {
			continue
		}
		e.matched[i]++
		switch {
		case r.Action == ActClose && r.After > 0 && e.matched[i] < r.After:
			continue
		case r.Action == ActClose && r.At > 0 && e.o.Now().Sub(e.start) < r.At:
			continue
		}
		if r.Probability < 1 && rng.Float64() >= r.Probability {
			continue
		}
		e.fired[i]++
		v, note := r.apply(f, m, rng)
		v.Changed = true
		e.emit(f, r, v, note)
		return v
	}
	return Verdict{Send: [][]byte{f.Data}}
}

// appliesTo says whether the rule's action can change this frame: an
// error answers a request (the server's, in an SSE event, with a POST of
// the proxy's own; never one in the body of an HTTP answer, which no
// protocol has and nothing could answer), a wrong id needs an id, a
// status an HTTP request of the host; the body of an HTTP answer holds
// one frame, which is not duplicated or held back (a host's request is:
// sent again, or after later ones).
func (r *Rule) appliesTo(f Frame, m message) bool {
	switch r.Action {
	case ActError:
		return m.request() && (f.Carrier != HTTPBody || f.Dir == transport.Outgoing)
	case ActDuplicate, ActReorder:
		return f.Carrier != HTTPBody || f.Dir == transport.Outgoing
	case ActStatus:
		return f.Carrier == HTTPBody && f.Dir == transport.Outgoing
	case ActCorrupt:
		return r.Corrupt != "id" || len(m.ID) > 0
	}
	return true
}

func (r *Rule) apply(f Frame, m message, rng *rand.Rand) (Verdict, string) {
	v := Verdict{Send: [][]byte{f.Data}}
	what := m.describe()
	switch r.Action {
	case ActDelay:
		v.Delay = r.delay(rng)
		return v, fmt.Sprintf("delayed %s by %s", what, v.Delay)
	case ActDrop:
		v.Send = nil
		return v, "dropped " + what
	case ActError:
		v.Send = nil
		v.Reply = [][]byte{answerFrame(m.ID, nil, r.Code, r.Message)}
		return v, fmt.Sprintf("answered %s with error %d in the peer's place", what, r.Code)
	case ActCorrupt:
		v.Send = [][]byte{corrupt(f.Data, r.Corrupt, m)}
		return v, fmt.Sprintf("corrupted %s (%s)", what, r.Corrupt)
	case ActDuplicate:
		v.Send = nil
		for range r.Copies {
			v.Send = append(v.Send, f.Data)
		}
		return v, fmt.Sprintf("sent %s %d times", what, r.Copies)
	case ActReorder:
		v.Hold = 1 + rng.IntN(r.Copies)
		return v, fmt.Sprintf("held %s back behind up to %d later frames", what, v.Hold)
	case ActSlow:
		v.Rate = r.Rate
		v.Delay = time.Duration(float64(len(f.Data)+1) / float64(r.Rate) * float64(time.Second))
		return v, fmt.Sprintf("sent %s at %d bytes per second", what, r.Rate)
	case ActClose:
		v.Send, v.Close = nil, true
		return v, fmt.Sprintf("closed the connection instead of sending %s", what)
	case ActStatus:
		v.Send, v.Status, v.RetryAfter = nil, r.Status, r.RetryAfter
		return v, fmt.Sprintf("answered the HTTP request of %s with status %d", what, r.Status)
	case ActCut:
		v.Send, v.Close = [][]byte{f.Data[:len(f.Data)/2]}, true
		return v, fmt.Sprintf("cut %s in the middle and ended the stream", what)
	}
	return v, ""
}

func (r *Rule) delay(rng *rand.Rand) time.Duration {
	switch {
	case r.Max > r.Min:
		return r.Min + time.Duration(rng.Int64N(int64(r.Max-r.Min)+1))
	case r.Mean > 0 || r.StdDev > 0:
		d := float64(r.Mean) + rng.NormFloat64()*float64(r.StdDev)
		return time.Duration(math.Min(math.Max(d, 0), float64(maxDelay)))
	}
	return r.Min
}

// corrupt returns the frame broken as asked.
func corrupt(data []byte, how string, m message) []byte {
	out := append([]byte(nil), data...)
	switch how {
	case "cut":
		return out[:len(out)/2]
	case "json":
		// The first quote becomes an apostrophe: no JSON parser takes it.
		for i, c := range out {
			if c == '"' {
				out[i] = '\''
				return out
			}
		}
		return append(out, '}')
	case "utf8":
		for i, c := range out {
			if c == '"' {
				return append(append(out[:i+1:i+1], 0xff, 0xfe), data[i+1:]...)
			}
		}
		return append(out, 0xff)
	case "id":
		var members map[string]json.RawMessage
		if json.Unmarshal(data, &members) != nil {
			return out
		}
		members["id"] = wrongID(m.ID)
		b, _ := json.Marshal(members)
		return b
	}
	return out
}

// wrongID is an id that is not id: a number a million on, a string with
// a suffix.
func wrongID(id json.RawMessage) json.RawMessage {
	if n, err := strconv.ParseInt(string(id), 10, 64); err == nil {
		return json.RawMessage(strconv.FormatInt(n+1_000_000, 10))
	}
	var s string
	if json.Unmarshal(id, &s) == nil {
		b, _ := json.Marshal(s + "-wrong")
		return b
	}
	return json.RawMessage(`"wrong"`)
}

// answerFrame is the answer to the request of id: its result, or the
// error of code (not 0) and message.
func answerFrame(id, result json.RawMessage, code int64, message string) []byte {
	type rpcError struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	}
	var e *rpcError
	if code != 0 {
		e, result = &rpcError{code, message}, nil
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  json.RawMessage `json:"result,omitempty"`
		Error   *rpcError       `json:"error,omitempty"`
	}{"2.0", id, result, e})
	return b
}

// message is what a rule needs of a frame: its id and method.
type message struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
}

// fromEntry is the message of a row of rows: its id key is the id as
// written (a number as sent, a string quoted).
func fromEntry(en *rows.Entry) message {
	m := message{ID: json.RawMessage(en.ID)}
	if s, err := strconv.Unquote(en.ID); err == nil && strings.HasPrefix(en.ID, `"`) {
		// A string id's key is Go-quoted: the answer echoes it as JSON.
		m.ID, _ = json.Marshal(s)
	}
	if en.Kind == rows.KindFrame && en.Method != "response" && en.Method != "error" && !strings.HasPrefix(en.Method, "batch(") {
		m.Method = en.Method
	}
	return m
}

func peek(data []byte) message {
	var m message
	if len(data) > 0 && data[0] == '{' {
		json.Unmarshal(data, &m)
	}
	if string(m.ID) == "null" {
		m.ID = nil
	}
	return m
}

func (m message) request() bool { return m.Method != "" && len(m.ID) > 0 }

func (m message) describe() string {
	switch {
	case m.Method != "" && len(m.ID) > 0:
		return fmt.Sprintf("%s id %s", m.Method, m.ID)
	case m.Method != "":
		return m.Method
	case len(m.ID) > 0:
		return fmt.Sprintf("the answer id %s", m.ID)
	}
	return "a frame"
}

// maxChangeFrame bounds a frame kept whole in an intercept event.
const maxChangeFrame = 1 << 20

// Change is the data of an intercept event (docs/trace-format.md).
type Change struct {
	Action       string            `json:"action"`
	Rule         string            `json:"rule"`
	Note         string            `json:"note"`
	Original     json.RawMessage   `json:"original,omitempty"`
	OriginalSize int               `json:"originalSize,omitempty"`
	Sent         []json.RawMessage `json:"sent"`
	Reply        []json.RawMessage `json:"reply,omitempty"`
	DelayMs      float64           `json:"delayMs,omitempty"`
}

// Event is the intercept event of a change to a frame of direction dir.
func (c *Change) Event(dir transport.Direction, original []byte, sent, reply [][]byte, now time.Time) transport.Event {
	if len(original) <= maxChangeFrame {
		c.Original = asJSON(original)
	} else {
		c.OriginalSize = len(original)
	}
	c.Sent = make([]json.RawMessage, 0, len(sent))
	for _, s := range sent {
		c.Sent = append(c.Sent, asJSON(s))
	}
	for _, s := range reply {
		c.Reply = append(c.Reply, asJSON(s))
	}
	data, _ := json.Marshal(c)
	return transport.Event{Time: now, Kind: transport.KindIntercept, Dir: dir, Data: data}
}

// asJSON is a frame as it goes into a change: itself when it is JSON, a
// string of its bytes when it is not (a corruption), its size alone past
// maxChangeFrame.
func asJSON(b []byte) json.RawMessage {
	if len(b) > maxChangeFrame {
		return json.RawMessage(strconv.Quote(fmt.Sprintf("(%d bytes)", len(b))))
	}
	if utf8.Valid(b) && json.Valid(b) {
		return b
	}
	s, _ := json.Marshal(string(b))
	return s
}

func (e *Engine) emit(f Frame, r *Rule, v Verdict, note string) {
	if e.o.Tap == nil {
		return
	}
	c := Change{Action: string(r.Action), Rule: r.Name, Note: note,
		DelayMs: float64(v.Delay.Microseconds()) / 1000}
	e.o.Tap.Observe(c.Event(f.Dir, f.Data, v.Send, v.Reply, e.o.Now()))
}

// RuleStat is how often a rule matched a frame and changed one.
type RuleStat struct {
	Name    string
	Action  Action
	Matched int
	Fired   int
}

// Stats returns each rule's counts, in the file's order, and the frames
// judged.
func (e *Engine) Stats() ([]RuleStat, int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]RuleStat, len(e.o.Faults.Rules))
	for i, r := range e.o.Faults.Rules {
		out[i] = RuleStat{Name: r.Name, Action: r.Action, Matched: e.matched[i], Fired: e.fired[i]}
	}
	return out, e.frames
}

// WriteSummary writes which rule fired how often, and the seed that
// repeats the run.
func (e *Engine) WriteSummary(w io.Writer) {
	stats, frames := e.Stats()
	fmt.Fprintf(w, "mcpi proxy: faults: %d frames judged, seed %d (--seed %d repeats the run)\n", frames, e.o.Seed, e.o.Seed)
	for _, s := range stats {
		fmt.Fprintf(w, "  %-24s %-9s fired %d of %d matching frames\n", safetext.OneLine(s.Name), s.Action, s.Fired, s.Matched)
	}
}

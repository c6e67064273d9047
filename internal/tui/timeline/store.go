// Package timeline is the timeline pane: the session's requests, server
// requests, notifications, tasks, subscriptions, HTTP events and errors as
// spans on a time axis, in lanes. It is fed the wire pane's entries (the
// same batches, in the same order) and keeps its spans in a bounded store of
// its own. It imports the wire pane's package for its entries and nothing
// above it.
package timeline

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/query"
	"github.com/mcpi-dev/mcpi/internal/rows"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// Memory bounds: at most MaxSpans spans are kept (the oldest go first, and
// are counted), and at most MaxOpen requests, tasks and subscriptions wait
// for their end at a time (past that, a new one is drawn as a point and
// counted): a server that never answers, or sends a million notifications,
// costs the newest MaxSpans spans.
const (
	MaxSpans = 200_000
	MaxOpen  = 50_000
)

// Lane is a row group of the timeline.
type Lane uint8

// The lanes, top to bottom.
const (
	LaneRequests Lane = iota
	LaneServer
	LaneNotifications
	LaneTasks
	LaneSubscriptions
	LaneHTTP
	// LaneApp holds the messages of an MCP App with mcpi's host.
	LaneApp
	// LaneModel holds a model's turns (a request to it and its answer)
	// and the tools it asked for, run by mcpi.
	LaneModel
	LaneErrors
	numLanes
)

var laneNames = [numLanes]string{"Requests", "Server reqs", "Notifications", "Tasks", "Subscriptions", "HTTP/auth", "App", "Model", "Errors"}

func (l Lane) String() string { return laneNames[l] }

// tracks is how many rows a lane may use for spans that overlap.
var tracks = [numLanes]int{3, 2, 1, 2, 2, 1, 1, 2, 1}

// Flags of a span.
const (
	// flagOpen: no end seen yet (unanswered, running, subscribed).
	flagOpen uint8 = 1 << iota
	// flagFailed: an error answer, isError, a bad frame, an HTTP error.
	flagFailed
	// flagPoint: an event, not a span (a notification, an HTTP event).
	flagPoint
	// flagMark: drawn inside its parent's bar (a task's poll, a
	// subscription's update, a round of an input request).
	flagMark
	// flagUntracked: more than MaxOpen were open; its end is not looked
	// for.
	flagUntracked
	// flagOut: sent by mcpi (else received from the server).
	flagOut
	// flagCancelled: withdrawn by notifications/cancelled; it gets no
	// answer.
	flagCancelled
	// flagEcho: the errors lane's point for a failed request that has a
	// span of its own: drawn, but neither counted nor selected twice.
	flagEcho
)

// Span is one item of the timeline.
type Span struct {
	// Start and End are Unix nanoseconds; End is 0 while open.
	Start, End int64
	// Seq is the wire row of the frame that began it; EndSeq the row that
	// ended it (-1: none).
	Seq, EndSeq int64
	// Parent is the span a mark is drawn inside (-1: none).
	Parent int64
	Lane   Lane
	Track  uint8
	Flags  uint8
	// match says the span matches the pane's query.
	match bool
	// Rounds counts the input-required rounds of a request; Marks the
	// polls or updates drawn inside it.
	Rounds, Marks int32
	Method, Name  string
	ID, TraceID   string
	// Err is why it failed (an error's message, "isError", an HTTP status).
	Err string
}

// Open reports whether the span has no end yet.
func (s *Span) Open() bool { return s.Flags&flagOpen != 0 }

// Failed reports whether the span failed.
func (s *Span) Failed() bool { return s.Flags&flagFailed != 0 }

// Cancelled reports whether the span was withdrawn before its answer.
func (s *Span) Cancelled() bool { return s.Flags&flagCancelled != 0 }

// Point reports whether the span is an event.
func (s *Span) Point() bool { return s.Flags&flagPoint != 0 }

// Mark reports whether the span is drawn inside another.
func (s *Span) Mark() bool { return s.Flags&flagMark != 0 }

// Label names the span: its method and what it is about.
func (s *Span) Label() string {
	if s.Name == "" {
		return s.Method
	}
	return s.Method + " " + s.Name
}

// Record is the span as the search language sees it.
func (s *Span) Record() query.Record {
	r := query.Record{Kind: "frame", Out: s.Flags&flagOut != 0, In: s.Flags&flagOut == 0,
		Method: s.Method, Name: s.Name, ID: s.ID, Error: s.Failed(), Text: s.Err}
	switch {
	case s.Lane == LaneHTTP:
		r.Kind = "http"
	case s.Lane == LaneApp:
		r.Kind = "app"
	case s.Lane == LaneModel:
		r.Kind = "model"
	case s.Lane == LaneErrors && s.Method == "bad frame":
		r.Kind = "bad"
	case s.Lane == LaneErrors && s.ID == "":
		r.Kind = "warning"
	}
	if !s.Point() && s.ID != "" {
		r.Request, r.Answered = true, !s.Open()
		r.Response = !s.Open()
	}
	if !s.Open() && !s.Point() {
		r.Latency, r.HasLatency = time.Duration(s.End-s.Start), true
	}
	return r
}

// Store is a bounded ring of spans, addressed by index, with what is open.
type Store struct {
	ring  []Span
	max   int
	first int64
	next  int64
	// seq is the wire row the next entry gets (the wire store counts the
	// same entries in the same order).
	seq int64
	// Evicted counts spans dropped for the bound; Untracked the requests
	// and the like whose end was not looked for (past MaxOpen).
	Evicted, Untracked int64
	// Events counts the entries read.
	Events int64

	// open maps a request's direction and id to its span; tasks a task's
	// id; subs a subscribed URI; rounds a request (method and name) that
	// asked for input and will be sent again; listen is the open
	// subscriptions/listen (-1: none).
	open, tasks, subs, rounds map[string]int64
	listen                    int64
	// trackEnd is, per lane and track, when the track's last span ends
	// (0: free; -1: open).
	trackEnd [numLanes][4]int64
	// tracksUsed is, per lane, how many tracks its spans took.
	tracksUsed [numLanes]int
	// first and last times seen; maxDur the longest closed span.
	begin, end, maxDur int64
	// touched are the spans ended since Touched was called, bounded by
	// maxTouched (past it, the pane matches every span again).
	touched []int64
	// laneCount counts the spans kept by lane.
	laneCount [numLanes]int64
}

// NewStore returns a store of at most max spans (zero: MaxSpans).
func NewStore(max int) *Store {
	if max <= 0 {
		max = MaxSpans
	}
	return &Store{max: max, listen: -1, open: map[string]int64{}, tasks: map[string]int64{},
		subs: map[string]int64{}, rounds: map[string]int64{}}
}

// Get returns span i, or nil when it is no longer kept.
func (s *Store) Get(i int64) *Span {
	if i < s.first || i >= s.next || i < 0 {
		return nil
	}
	return &s.ring[int(i%int64(s.max))]
}

// First and Next bound the indexes kept: [First, Next).
func (s *Store) First() int64 { return s.first }

// Next is the index the next span gets.
func (s *Store) Next() int64 { return s.next }

// Len is the number of spans kept.
func (s *Store) Len() int { return int(s.next - s.first) }

// Open is the number of requests, tasks and subscriptions open.
func (s *Store) Open() int { return len(s.open) + len(s.tasks) + len(s.subs) + len(s.rounds) }

// Extent is the first and last time seen, in Unix nanoseconds.
func (s *Store) Extent() (int64, int64) { return s.begin, s.end }

func (s *Store) add(sp Span) int64 {
	i := s.next
	s.next++
	if sp.Parent == 0 {
		sp.Parent = -1
	}
	if sp.End == 0 && sp.Flags&(flagOpen|flagPoint) == 0 {
		sp.End = sp.Start
	}
	if sp.Flags&flagPoint != 0 {
		sp.End = sp.Start
	}
	if !sp.Mark() {
		sp.Track = s.place(sp.Lane, sp.Start, sp.Open())
	}
	if len(s.ring) < s.max {
		s.ring = append(s.ring, sp)
	} else {
		old := &s.ring[int(i%int64(s.max))]
		if !old.Mark() {
			s.laneCount[old.Lane]--
		}
		*old = sp
		s.first = s.next - int64(s.max)
		s.Evicted++
	}
	if !sp.Mark() {
		s.laneCount[sp.Lane]++
	}
	return i
}

// place picks the track of a new span in lane: the first that is free at
// start, else the one that frees first (the spans are drawn over each
// other there).
func (s *Store) place(l Lane, start int64, open bool) uint8 {
	best, bestEnd := 0, int64(-1)
	for t := range tracks[l] {
		e := s.trackEnd[l][t]
		if e >= 0 && e <= start {
			best = t
			break
		}
		// Of busy tracks, the one that frees first; an open one frees
		// never.
		if e >= 0 && (bestEnd < 0 || e < bestEnd) {
			best, bestEnd = t, e
		}
	}
	end := start
	if open {
		end = -1
	}
	s.trackEnd[l][best] = end
	s.tracksUsed[l] = max(s.tracksUsed[l], best+1)
	return uint8(best)
}

// close ends span i at t.
func (s *Store) close(i int64, t int64, endSeq int64) *Span {
	sp := s.Get(i)
	if sp == nil || !sp.Open() {
		return nil
	}
	sp.Flags &^= flagOpen
	sp.End, sp.EndSeq = max(t, sp.Start), endSeq
	s.maxDur = max(s.maxDur, sp.End-sp.Start)
	if !sp.Mark() && s.trackEnd[sp.Lane][sp.Track] == -1 {
		s.trackEnd[sp.Lane][sp.Track] = sp.End
	}
	s.touch(i)
	return sp
}

// maxTouched bounds the list of spans changed between two batches.
const maxTouched = 4096

func (s *Store) touch(i int64) {
	if len(s.touched) < maxTouched {
		s.touched = append(s.touched, i)
	}
}

// Overflowed reports whether more spans changed than Touched could list.
func (s *Store) Overflowed() bool { return len(s.touched) >= maxTouched }

// LaneCount is the number of spans kept in lane l (not counting the marks
// inside them).
func (s *Store) LaneCount(l Lane) int64 { return s.laneCount[l] }

// track remembers key → i in m, within MaxOpen; past it the span is
// marked untracked and counted.
func (s *Store) track(m map[string]int64, key string, i int64) {
	if s.Open() >= MaxOpen {
		s.sweep()
	}
	if s.Open() >= MaxOpen {
		if sp := s.Get(i); sp != nil {
			sp.Flags = sp.Flags&^flagOpen | flagUntracked
			sp.End = sp.Start
		}
		s.Untracked++
		return
	}
	m[key] = i
}

// sweep forgets the open spans the bound evicted.
func (s *Store) sweep() {
	for _, m := range []map[string]int64{s.open, s.tasks, s.subs, s.rounds} {
		for k, i := range m {
			if i < s.first {
				delete(m, k)
			}
		}
	}
}

// Touched returns the spans ended or changed since the last call, and
// forgets them (the pane matches them against its query again).
func (s *Store) Touched() []int64 {
	t := s.touched
	s.touched = s.touched[:0:0]
	return t
}

// Add reads a batch of the wire's entries, in the wire store's order.
func (s *Store) Add(entries []rows.Entry) {
	for i := range entries {
		s.entry(&entries[i], s.seq)
		s.seq++
	}
}

func (s *Store) entry(e *rows.Entry, seq int64) {
	s.Events++
	t := e.Time.UnixNano()
	if s.begin == 0 || t < s.begin {
		s.begin = t
	}
	s.end = max(s.end, t)
	switch e.Kind {
	case rows.KindFrame:
		s.frame(e, seq, t)
	case rows.KindBadFrame:
		s.add(Span{Start: t, Seq: seq, EndSeq: -1, Lane: LaneErrors, Flags: flagPoint | flagFailed, Method: "bad frame", Err: e.Err})
	case rows.KindWarning:
		s.add(Span{Start: t, Seq: seq, EndSeq: -1, Lane: LaneErrors, Flags: flagPoint | flagFailed, Method: e.Method, Err: e.Text})
	case rows.KindHTTP:
		s.http(e, seq, t)
	case rows.KindApp:
		s.app(e, seq, t)
	case rows.KindModel:
		s.model(e, seq, t)
	case rows.KindLifecycle:
		if e.Err != "" {
			s.add(Span{Start: t, Seq: seq, EndSeq: -1, Lane: LaneErrors, Flags: flagPoint | flagFailed, Method: e.Text, Err: e.Err})
		}
	}
}

func (s *Store) http(e *rows.Entry, seq int64, t int64) {
	sp := Span{Start: t, Seq: seq, EndSeq: -1, Lane: LaneHTTP, Flags: flagPoint | flagOut, Method: e.Text, Err: e.Err}
	if e.HTTP != nil {
		if e.HTTP.StatusCode >= 400 {
			sp.Flags |= flagFailed
			if sp.Err == "" {
				sp.Err = "HTTP " + strconv.Itoa(e.HTTP.StatusCode)
			}
		}
		if !strings.HasPrefix(e.Text, e.HTTP.Method+" ") {
			sp.Method = e.HTTP.Method + " " + e.Text
		}
	}
	if e.Err != "" {
		sp.Flags |= flagFailed
	}
	s.add(sp)
}

func dirKey(d transport.Direction) string {
	if d == transport.Outgoing {
		return "o"
	}
	return "i"
}

func (s *Store) frame(e *rows.Entry, seq int64, t int64) {
	switch {
	case e.Method == "response" || e.Method == "error":
		s.answer(e, seq, t)
	case strings.HasPrefix(e.Method, "batch"), e.Method == "not JSON":
		s.add(Span{Start: t, Seq: seq, EndSeq: -1, Lane: LaneNotifications, Flags: flagPoint | outFlag(e.Dir), Method: e.Method})
	case e.ID == "":
		s.notification(e, seq, t)
	default:
		s.request(e, seq, t)
	}
}

func outFlag(d transport.Direction) uint8 {
	if d == transport.Outgoing {
		return flagOut
	}
	return 0
}

func (s *Store) notification(e *rows.Entry, seq int64, t int64) {
	if e.Method == "notifications/cancelled" {
		s.cancelled(e, t, seq)
	}
	sp := Span{Start: t, Seq: seq, EndSeq: -1, Lane: LaneNotifications, Flags: flagPoint | outFlag(e.Dir), Method: e.Method, Name: e.Name}
	parent := int64(-1)
	switch {
	case e.Method == "notifications/resources/updated":
		if i, ok := s.subs[e.Name]; ok {
			parent = i
		} else if s.listen >= 0 {
			parent = s.listen
		}
	case strings.HasPrefix(e.Method, "notifications/tasks"):
		if i, ok := s.tasks[e.Name]; ok {
			parent = i
		}
	}
	s.addMark(sp, parent)
}

// app adds a message between an MCP App and mcpi's host: a point on the
// App lane (an answer named after the request it answers, a failed one
// marked); its ids are the App's, not the session's.
func (s *Store) app(e *rows.Entry, seq int64, t int64) {
	sp := Span{Start: t, Seq: seq, EndSeq: -1, Lane: LaneApp, Flags: flagPoint | outFlag(e.Dir), Method: e.Method, Name: e.Name, ID: e.ID}
	if (e.Method == "response" || e.Method == "error") && e.Answers != "" {
		sp.Method = e.Method + " · " + e.Answers
	}
	if e.RPCError {
		sp.Flags |= flagFailed
		sp.Err = errText(e)
	}
	s.add(sp)
}

// model draws a model's turn, or a tool it asked for, as a bar from its
// request to its answer in the model lane; a failed or refused one ends
// in ✗.
func (s *Store) model(e *rows.Entry, seq int64, t int64) {
	key := "m" + e.ID
	if e.Method != "response" {
		sp := Span{Start: t, Seq: seq, EndSeq: -1, Lane: LaneModel, Flags: flagOpen | flagOut, Method: e.Method, Name: e.Name, ID: e.ID}
		s.track(s.open, key, s.add(sp))
		return
	}
	i, ok := s.open[key]
	if !ok {
		return
	}
	delete(s.open, key)
	if sp := s.Get(i); sp != nil && e.ToolError {
		sp.Flags |= flagFailed
		sp.Err = e.Text
	}
	s.close(i, t, seq)
}

// cancelled ends the request a notifications/cancelled withdraws: it
// will get no answer.
func (s *Store) cancelled(e *rows.Entry, t int64, seq int64) {
	var v struct {
		Params struct {
			RequestID json.RawMessage `json:"requestId"`
		} `json:"params"`
	}
	if json.Unmarshal(e.Data, &v) != nil {
		return
	}
	id, ok := mcp.IDKey(v.Params.RequestID)
	if !ok {
		return
	}
	// The side that cancels is the side that asked.
	key := dirKey(e.Dir) + id
	i, ok := s.open[key]
	if !ok {
		return
	}
	delete(s.open, key)
	if sp := s.close(i, t, seq); sp != nil {
		sp.Flags |= flagCancelled
		if sp.Method == "subscriptions/listen" {
			s.listen = -1
		}
	}
}

// addMark adds sp inside parent when parent is kept, else as it is.
func (s *Store) addMark(sp Span, parent int64) int64 {
	if p := s.Get(parent); p != nil {
		sp.Lane, sp.Track, sp.Parent = p.Lane, p.Track, parent
		sp.Flags |= flagMark
		p.Marks++
		s.touch(parent)
	}
	return s.add(sp)
}

func (s *Store) request(e *rows.Entry, seq int64, t int64) {
	key := dirKey(e.Dir) + e.ID
	sp := Span{Start: t, Seq: seq, EndSeq: -1, Lane: LaneRequests, Flags: flagOpen | outFlag(e.Dir),
		Method: e.Method, Name: e.Name, ID: e.ID, TraceID: e.TraceID}
	if e.Dir == transport.Incoming {
		sp.Lane = LaneServer
		s.track(s.open, key, s.add(sp))
		return
	}
	round := e.Method + "\x00" + e.Name
	switch {
	case strings.HasPrefix(e.Method, "tasks/") && s.isTask(e.Name):
		// A poll, the result or a cancel: drawn inside the task.
		s.track(s.open, key, s.addMark(sp, s.tasks[e.Name]))
	case e.Method == "resources/subscribe":
		sub := sp
		sub.Lane = LaneSubscriptions
		i := s.add(sub)
		if old, ok := s.subs[e.Name]; ok {
			s.close(old, t, seq)
		}
		s.track(s.subs, e.Name, i)
		s.track(s.open, key, i)
	case e.Method == "subscriptions/listen":
		sp.Lane = LaneSubscriptions
		i := s.add(sp)
		s.listen = i
		s.track(s.open, key, i)
	case s.isRound(round):
		// The request sent again with the input asked for: one more round
		// of the same span.
		i := s.rounds[round]
		delete(s.rounds, round)
		if p := s.Get(i); p != nil {
			p.Rounds++
			s.addMark(Span{Start: t, Seq: seq, EndSeq: -1, Flags: flagPoint | flagOut, Method: e.Method, Name: "round", ID: e.ID}, i)
			s.track(s.open, key, i)
			return
		}
		s.track(s.open, key, s.add(sp))
	default:
		if e.Method == "resources/unsubscribe" {
			if old, ok := s.subs[e.Name]; ok {
				delete(s.subs, e.Name)
				s.close(old, t, seq)
			}
		}
		s.track(s.open, key, s.add(sp))
	}
}

func (s *Store) isTask(id string) bool { _, ok := s.tasks[id]; return ok }
func (s *Store) isRound(k string) bool { _, ok := s.rounds[k]; return ok }

// answer ends the request an answer answers.
func (s *Store) answer(e *rows.Entry, seq int64, t int64) {
	key := "o" + e.ID
	if e.Dir == transport.Outgoing {
		key = "i" + e.ID
	}
	i, ok := s.open[key]
	if !ok {
		if e.RPCError || e.ToolError {
			s.failure(e, seq, t, nil)
		}
		return
	}
	delete(s.open, key)
	sp := s.Get(i)
	if sp == nil {
		return
	}
	if e.InputRequired {
		// The request is sent again with the input: its span goes on.
		s.track(s.rounds, sp.Method+"\x00"+sp.Name, i)
		return
	}
	if e.RPCError || e.ToolError {
		sp.Flags |= flagFailed
		sp.Err = errText(e)
		s.failure(e, seq, t, sp)
	}
	switch {
	case sp.Lane == LaneSubscriptions && sp.Method == "resources/subscribe" && !sp.Failed():
		// A subscription goes on past its acknowledgement.
		return
	case sp.Lane == LaneSubscriptions && sp.Method == "subscriptions/listen":
		s.listen = -1
	}
	if sp.Failed() && sp.Method == "resources/subscribe" {
		delete(s.subs, sp.Name)
	}
	s.close(i, t, seq)
	if sp.Mark() {
		s.taskStep(sp, e, seq, t)
		return
	}
	if sp.Method == "tools/call" && !sp.Failed() {
		if id := createdTask(e.Data); id != "" {
			s.newTask(sp, id, seq)
		}
	}
}

// failure adds a point to the errors lane for a failed answer.
func (s *Store) failure(e *rows.Entry, seq int64, t int64, req *Span) {
	sp := Span{Start: t, Seq: seq, EndSeq: -1, Lane: LaneErrors, Flags: flagPoint | flagFailed | outFlag(e.Dir),
		Method: e.Answers, Name: e.Name, ID: e.ID, Err: errText(e)}
	if req != nil {
		sp.Method, sp.Name, sp.Seq = req.Method, req.Name, req.Seq
		sp.Flags |= flagEcho
	}
	s.add(sp)
}

// newTask starts the span of a task a tools/call created: from the call.
func (s *Store) newTask(call *Span, id string, seq int64) {
	i := s.add(Span{Start: call.Start, Seq: call.Seq, EndSeq: -1, Lane: LaneTasks, Flags: flagOpen | flagOut,
		Method: "task", Name: call.Name + " " + id, ID: call.ID, TraceID: call.TraceID})
	s.track(s.tasks, id, i)
}

// taskStep ends a task when a poll says it is over, or its result came.
func (s *Store) taskStep(poll *Span, e *rows.Entry, seq int64, t int64) {
	parent := s.Get(poll.Parent)
	if parent == nil || !parent.Open() {
		return
	}
	status := ""
	if poll.Method == "tasks/get" || poll.Method == "tasks/cancel" {
		status = taskStatus(e.Data)
	}
	switch {
	case poll.Method == "tasks/result", poll.Method == "tasks/cancel" && !poll.Failed():
	case status == "completed", status == "cancelled":
	case status == "failed":
		parent.Flags |= flagFailed
		parent.Err = "the task failed"
	default:
		return
	}
	if poll.Failed() {
		parent.Flags |= flagFailed
		parent.Err = poll.Err
	}
	for id, i := range s.tasks {
		if i == poll.Parent {
			delete(s.tasks, id)
			break
		}
	}
	s.close(poll.Parent, t, seq)
}

// createdTask is the task id of a CreateTaskResult (2026-07-28's
// resultType "task", or 2025-11-25's result.task).
func createdTask(data []byte) string {
	if !bytes.Contains(data, []byte(`"taskId"`)) {
		return ""
	}
	var v struct {
		Result struct {
			ResultType string `json:"resultType"`
			TaskID     string `json:"taskId"`
			Task       *struct {
				TaskID string `json:"taskId"`
			} `json:"task"`
		} `json:"result"`
	}
	if json.Unmarshal(data, &v) != nil {
		return ""
	}
	switch {
	case v.Result.ResultType == mcp.ResultTask:
		return v.Result.TaskID
	case v.Result.Task != nil:
		return v.Result.Task.TaskID
	}
	return ""
}

// taskStatus is the status a tasks/get answer gives.
func taskStatus(data []byte) string {
	var v struct {
		Result struct {
			Status string `json:"status"`
			Task   *struct {
				Status string `json:"status"`
			} `json:"task"`
		} `json:"result"`
	}
	if json.Unmarshal(data, &v) != nil {
		return ""
	}
	if v.Result.Task != nil {
		return v.Result.Task.Status
	}
	return v.Result.Status
}

// errText is why an answer failed: the error's message, or isError.
func errText(e *rows.Entry) string {
	if e.ToolError {
		return "isError"
	}
	var v struct {
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(e.Data, &v) != nil || v.Error.Message == "" {
		return "error"
	}
	return v.Error.Message
}

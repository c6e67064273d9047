package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/mcpi-dev/mcpi/internal/bounds"
	"github.com/mcpi-dev/mcpi/internal/mcp"
)

// The tasks extension of 2026-07-28 (io.modelcontextprotocol/tasks,
// SEP-2663). The client declares it in every request's capabilities; a
// server that declares it may answer tools/call with a task handle
// (resultType "task"), whether or not anything asked for one. The task is
// then followed with tasks/get until it ends: its result comes inline when
// it completes, its error when it fails; the input it waits for
// (input_required, inputRequests) is answered through the Handler and sent
// with tasks/update; tasks/cancel asks the server to stop it. There is no
// tasks/list and no tasks/result.

// TaskError is a task that ended without a result: failed (Err is the
// error the task carries) or cancelled.
type TaskError struct {
	TaskID string
	Status string
	Err    *mcp.RPCError
	// Rounds, when set, is how many rounds of input the task was given
	// before mcpi gave up on it and cancelled it.
	Rounds int
	// Elsewhere says the task was cancelled by someone else than the
	// command following it (another client, the server); Note is the
	// task's statusMessage, which may say who.
	Elsewhere bool
	Note      string
}

func (e *TaskError) Error() string {
	if e.Rounds > 0 {
		return fmt.Sprintf("task %s asked for input again after %d rounds: given up on and cancelled (a task gets at most %d rounds of input)", e.TaskID, e.Rounds, maxRounds)
	}
	if e.Err != nil {
		return fmt.Sprintf("task %s failed: %s", e.TaskID, e.Err.Error())
	}
	if e.Status == "cancelled" {
		msg := fmt.Sprintf("task %s was cancelled, so it has no result", e.TaskID)
		if e.Elsewhere {
			msg = fmt.Sprintf("task %s was cancelled elsewhere (by another client or the server), so it has no result", e.TaskID)
		}
		if e.Note != "" {
			msg += ": " + e.Note
		}
		return msg
	}
	return fmt.Sprintf("task %s ended %s, without a result", e.TaskID, e.Status)
}

// Unwrap gives the task's JSON-RPC error, so a failed task is a protocol
// error as a failed request is.
func (e *TaskError) Unwrap() error {
	if e.Rounds > 0 {
		return ErrTooManyRounds
	}
	if e.Err != nil {
		return &RPCError{Method: "tasks/get", RPCError: e.Err}
	}
	return ErrTaskCancelled
}

// ErrTaskCancelled is what a cancelled task's TaskError unwraps to.
var ErrTaskCancelled = fmt.Errorf("the task was cancelled")

// ErrTooManyRounds is what a task that asked for input too often unwraps
// to.
var ErrTooManyRounds = errors.New("the server asked for input too many times")

// detached returns ctx without its cancellation and outside any operation:
// for a last word (tasks/cancel) after the operation ended or ran out.
func detached(ctx context.Context) context.Context {
	return context.WithValue(context.WithoutCancel(ctx), operationKey{}, (*operation)(nil))
}

// GetTaskDetail returns a task of the tasks extension (tasks/get), decoded
// and as sent.
func (c *Client) GetTaskDetail(ctx context.Context, id string) (*mcp.DetailedTask, json.RawMessage, error) {
	var raw json.RawMessage
	if err := c.Call(ctx, "tasks/get", mcp.TaskParams{TaskID: id}, &raw, nil); err != nil {
		return nil, nil, err
	}
	var t mcp.DetailedTask
	if err := json.Unmarshal(raw, &t); err != nil || t.TaskID == "" {
		return nil, raw, &RPCError{Method: "tasks/get", RPCError: &mcp.RPCError{Code: mcp.CodeInvalidParams, Message: "the result is not a task", Data: quote(raw)}}
	}
	if t.TaskID != id {
		return nil, raw, &RPCError{Method: "tasks/get", RPCError: &mcp.RPCError{Code: mcp.CodeInvalidParams,
			Message: fmt.Sprintf("asked for task %s, the server answered with task %s", id, t.TaskID)}}
	}
	return &t, raw, nil
}

// UpdateTask answers input requests of a task (tasks/update), by their keys.
func (c *Client) UpdateTask(ctx context.Context, id string, responses map[string]any) error {
	return c.Call(ctx, "tasks/update", mcp.UpdateTaskParams{TaskID: id, InputResponses: responses}, nil, nil)
}

// asksAgain reports whether t asks for input that answered does not hold.
func asksAgain(t *mcp.DetailedTask, answered map[string]bool) bool {
	for k := range t.InputRequests {
		if !answered[k] {
			return true
		}
	}
	return false
}

// AnswerTask answers, through the Handler, the input requests of t that
// answered does not hold, and sends the answers with tasks/update; the keys
// answered are added to answered. It sends nothing when there is nothing new.
func (c *Client) AnswerTask(ctx context.Context, t *mcp.DetailedTask, answered map[string]bool) error {
	fresh := map[string]json.RawMessage{}
	for k, r := range t.InputRequests {
		if !answered[k] {
			fresh[k] = r
		}
	}
	if len(fresh) == 0 {
		return nil
	}
	responses, err := c.resolveInputs(ctx, "tasks/update", fresh)
	if err != nil {
		return err
	}
	if err := c.UpdateTask(ctx, t.TaskID, responses); err != nil {
		return err
	}
	for k := range fresh {
		answered[k] = true
	}
	return nil
}

// IsTaskHandle reports whether raw is a CreateTaskResult (resultType
// "task"), and returns its task.
func IsTaskHandle(raw json.RawMessage) (*mcp.DetailedTask, bool) {
	if rt, ok := mcp.MemberString(raw, "resultType"); !ok || rt != mcp.ResultTask {
		return nil, false
	}
	var t mcp.DetailedTask
	if json.Unmarshal(raw, &t) != nil || t.TaskID == "" {
		return nil, false
	}
	return &t, true
}

// CallToolFollow calls a tool and, when the server answers with a task
// handle (the tasks extension), follows the task to its end (FollowTask).
// Any other result is returned as sent.
func (c *Client) CallToolFollow(ctx context.Context, params mcp.CallToolParams, opts *CallOptions, onStatus func(mcp.Task)) (json.RawMessage, error) {
	ctx, _ = c.operation(ctx)
	raw, err := c.CallToolRaw(ctx, params, opts)
	if err != nil {
		return raw, err
	}
	return c.FollowTask(ctx, raw, onStatus)
}

// FollowTask follows the task raw announces (a CreateTaskResult) to its
// end and returns its result, the CallToolResult inlined in the completed
// task; raw that announces no task is returned as it is. The task is polled
// with tasks/get at its pollIntervalMs (kept within 200 ms and 5 s, else
// 500 ms), and at once when a notifications/tasks names it; onStatus sees
// each state that differs from the last. Input it asks for is answered
// through the Handler, each key once, with tasks/update. A failed task is a
// *TaskError wrapping its error; a cancelled one a *TaskError too.
// Cancelling ctx sends tasks/cancel before returning.
func (c *Client) FollowTask(ctx context.Context, raw json.RawMessage, onStatus func(mcp.Task)) (json.RawMessage, error) {
	t, ok := IsTaskHandle(raw)
	if !ok {
		return raw, nil
	}
	ctx, op := c.operation(ctx)
	f := &taskFollow{c: c, ctx: ctx, op: op, id: t.TaskID, onStatus: onStatus, answered: map[string]bool{}}
	f.poke = c.watchTask(f.id)
	defer c.unwatchTask(f.id, f.poke)
	fetched := false // t came from tasks/get, not from the handle
	for {
		f.report(t)
		if !fetched && (t.Status == "completed" && len(t.Result) == 0 || t.Status == "failed" && t.Error == nil) {
			// A handle says how the task stands, not what it gave: tasks/get
			// has the result or the error.
			next, _, err := c.GetTaskDetail(ctx, f.id)
			if err != nil {
				return nil, f.giveUp(err)
			}
			t, fetched = next, true
			continue
		}
		if ended, res, err := taskOutcome(t, f.id); ended {
			return res, err
		}
		if t.Status == "input_required" {
			if err := f.answer(t); err != nil {
				return nil, err
			}
		}
		if err := f.wait(t); err != nil {
			return nil, f.giveUp(err)
		}
		next, _, err := c.GetTaskDetail(ctx, f.id)
		if err != nil {
			return nil, f.giveUp(err)
		}
		t, fetched = next, true
	}
}

// taskFollow is the following of one task of the tasks extension.
type taskFollow struct {
	c        *Client
	ctx      context.Context
	op       *operation
	id       string
	poke     chan struct{} // a notifications/tasks named the task
	onStatus func(mcp.Task)
	last     mcp.Task        // the last state reported
	rounds   int             // of input asked for again
	answered map[string]bool // the input keys answered
	lastGet  time.Time       // of the last tasks/get after a wait
}

// taskOutcome is the result of task id once it ended, with ended true; a
// task that goes on has none.
func taskOutcome(t *mcp.DetailedTask, id string) (ended bool, res json.RawMessage, err error) {
	switch t.Status {
	case "completed":
		if len(t.Result) == 0 {
			return true, nil, &RPCError{Method: "tasks/get", RPCError: &mcp.RPCError{Code: mcp.CodeInvalidParams, Message: "task " + id + " completed without a result"}}
		}
		return true, t.Result, nil
	case "failed":
		if t.Error == nil {
			t.Error = &mcp.RPCError{Code: mcp.CodeInternalError, Message: "the task failed and gave no error"}
		}
		return true, nil, &TaskError{TaskID: id, Status: t.Status, Err: t.Error}
	case "cancelled":
		return true, nil, &TaskError{TaskID: id, Status: t.Status, Elsewhere: true, Note: t.StatusMessage}
	}
	return false, nil, nil
}

// cancel tells the server to cancel the task, even when ctx has ended.
func (f *taskFollow) cancel() {
	cctx, cancel := bounds.Cancel.Context(detached(f.ctx))
	f.c.Call(cctx, "tasks/cancel", mcp.TaskParams{TaskID: f.id}, nil, nil)
	cancel()
}

// giveUp ends the follow on err, cancelling the task when the user or
// the operation's clock ended it.
func (f *taskFollow) giveUp(err error) error {
	var te *TimeoutError
	if f.ctx.Err() != nil || errors.As(err, &te) && te.Max {
		f.cancel()
	}
	return err
}

// report tells onStatus of a state that differs from the last.
func (f *taskFollow) report(t *mcp.DetailedTask) {
	s := t.Task()
	if f.onStatus != nil && (s.Status != f.last.Status || s.StatusMessage != f.last.StatusMessage) {
		f.onStatus(s)
	}
	f.last = s
}

// answer gives the task the input it asks for. A task asks for input in
// rounds, as a multi round-trip request does, and is given up on after
// as many.
func (f *taskFollow) answer(t *mcp.DetailedTask) error {
	if asksAgain(t, f.answered) {
		if f.rounds == maxRounds {
			f.cancel()
			return &TaskError{TaskID: f.id, Status: "input_required", Rounds: f.rounds}
		}
		f.rounds++
	}
	// While the Handler asks its person, the task is watched: input given
	// elsewhere (mcpi tasks update, another client) ends the asking.
	actx, cancel := context.WithCancelCause(f.ctx)
	elsewhere := make(chan bool, 1)
	prior := maps.Clone(f.answered) // AnswerTask writes f.answered meanwhile
	go func() { elsewhere <- f.watchInput(actx, t, prior, func() { cancel(ErrInputGivenElsewhere) }) }()
	err := f.c.AnswerTask(actx, t, f.answered)
	cancel(nil)
	if <-elsewhere {
		for k := range t.InputRequests {
			f.answered[k] = true
		}
		return nil
	}
	if err != nil {
		return f.giveUp(err)
	}
	return nil
}

// ErrInputGivenElsewhere is the cause of the end of a request for a
// task's input that the task stopped asking for: given elsewhere (mcpi
// tasks update, another client), or the task ended.
var ErrInputGivenElsewhere = errors.New("the task no longer asks for this input (given elsewhere, or the task ended)")

// watchInput polls the task at its poll interval (or when a notification
// names it, but no sooner than pollFloor after the last poll) while its
// input requests are being answered, and reports whether the task stopped
// asking for those answered does not hold first: answered elsewhere, or
// ended. Then it calls done (which ends the asking). It returns false
// when ctx ends first. Its polls are outside the operation: the person's
// time, which the operation does not count, is not over yet.
func (f *taskFollow) watchInput(ctx context.Context, t *mcp.DetailedTask, answered map[string]bool, done func()) bool {
	pctx := context.WithValue(ctx, operationKey{}, (*operation)(nil))
	last := time.Now()
	for {
		wait := bounds.Clock{Name: "poll", D: pollWait(t.Task())}.Timer()
		select {
		case <-ctx.Done():
			wait.Stop()
			return false
		case <-f.poke:
		case <-wait.C:
		}
		wait.Stop()
		if since := time.Since(last); since < pollFloor && !bounds.Sleep(ctx, pollFloor-since) {
			return false
		}
		last = time.Now()
		next, _, err := f.c.GetTaskDetail(pctx, f.id)
		if err != nil || ctx.Err() != nil {
			continue
		}
		if !stillAsks(next, t, answered) {
			done()
			return true
		}
	}
}

// stillAsks reports whether now still asks for an input of asked that is
// not answered.
func stillAsks(now, asked *mcp.DetailedTask, answered map[string]bool) bool {
	if now.Status != "input_required" {
		return false
	}
	for k := range asked.InputRequests {
		if _, ok := now.InputRequests[k]; ok && !answered[k] {
			return true
		}
	}
	return false
}

// wait waits until the task is to be polled again: its poll interval, or
// a notification naming it, but no sooner than pollFloor after the last
// tasks/get, however many come.
func (f *taskFollow) wait(t *mcp.DetailedTask) error {
	left := f.op.left()
	if left <= 0 {
		return f.op.spent("tools/call")
	}
	wait := bounds.Clock{Name: "poll", D: min(pollWait(t.Task()), left)}.Timer()
	defer wait.Stop()
	select {
	case <-f.ctx.Done():
		return f.ctx.Err()
	case <-f.poke:
		if since := time.Since(f.lastGet); since < pollFloor {
			if !bounds.Sleep(f.ctx, pollFloor-since) {
				return f.ctx.Err()
			}
		}
	case <-wait.C:
	}
	if f.op.left() <= 0 {
		return f.op.spent("tools/call")
	}
	f.lastGet = time.Now()
	return nil
}

// watchTask returns a channel poked when a notifications/tasks names id.
func (c *Client) watchTask(id string) chan struct{} {
	ch := make(chan struct{}, 1)
	c.mu.Lock()
	if c.taskWatch == nil {
		c.taskWatch = map[string][]chan struct{}{}
	}
	c.taskWatch[id] = append(c.taskWatch[id], ch)
	c.mu.Unlock()
	return ch
}

func (c *Client) unwatchTask(id string, ch chan struct{}) {
	c.mu.Lock()
	c.taskWatch[id] = slices.DeleteFunc(c.taskWatch[id], func(x chan struct{}) bool { return x == ch })
	if len(c.taskWatch[id]) == 0 {
		delete(c.taskWatch, id)
	}
	c.mu.Unlock()
}

// noteTask pokes the followers of the task a notifications/tasks names.
func (c *Client) noteTask(params json.RawMessage) {
	id, ok := mcp.MemberString(params, "taskId")
	if !ok {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, ch := range c.taskWatch[id] {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

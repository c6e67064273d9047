package session

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/mcpi-dev/mcpi/internal/bounds"
	"github.com/mcpi-dev/mcpi/internal/mcp"
)

func cursorParams(cursor string) any {
	if cursor == "" {
		return nil
	}
	return mcp.PaginatedParams{Cursor: cursor}
}

// Ping checks that the server answers. The modern era has no ping: there
// a server/discover round trip stands in for it.
func (c *Client) Ping(ctx context.Context) error {
	if c.Era() == EraModern {
		return c.Call(ctx, "server/discover", nil, nil, &CallOptions{Force: true})
	}
	return c.Call(ctx, "ping", nil, nil, nil)
}

// ListTools returns one page of tools.
func (c *Client) ListTools(ctx context.Context, cursor string) (*mcp.ListToolsResult, error) {
	var r mcp.ListToolsResult
	err := c.Call(ctx, "tools/list", cursorParams(cursor), &r, nil)
	r.Tools = c.checkTools(r.Tools)
	return &r, err
}

// AllTools returns every tool, following the cursors.
func (c *Client) AllTools(ctx context.Context) ([]mcp.Tool, error) {
	return Paginate(c.Operation(ctx), "tools/list", c.maxPages(), func(ctx context.Context, cur string) ([]mcp.Tool, string, error) {
		r, err := c.ListTools(ctx, cur)
		return r.Tools, r.NextCursor, err
	})
}

// FindTool returns the tool named name (nil when no page lists it),
// following the cursors only until the page that has it: a one-shot call
// needs that tool's schema, not the tools listed after it.
func (c *Client) FindTool(ctx context.Context, name string) (*mcp.Tool, error) {
	var found *mcp.Tool
	_, err := Paginate(c.Operation(ctx), "tools/list", c.maxPages(), func(ctx context.Context, cur string) ([]mcp.Tool, string, error) {
		r, err := c.ListTools(ctx, cur)
		if err != nil {
			return nil, "", err
		}
		for i := range r.Tools {
			if r.Tools[i].Name == name {
				found = &r.Tools[i]
				return nil, "", nil
			}
		}
		return nil, r.NextCursor, nil
	})
	if err != nil {
		return nil, err
	}
	return found, nil
}

// CallTool calls a tool. args is the arguments object (nil for none).
func (c *Client) CallTool(ctx context.Context, name string, args json.RawMessage, opts *CallOptions) (*mcp.CallToolResult, error) {
	raw, err := c.CallToolRaw(ctx, mcp.CallToolParams{Name: name, Arguments: args}, opts)
	var r mcp.CallToolResult
	if err != nil {
		return &r, err
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return &r, &RPCError{Method: "tools/call", RPCError: &mcp.RPCError{Code: mcp.CodeInvalidParams, Message: "result does not match the schema: " + err.Error(), Data: quote(raw)}}
	}
	return &r, nil
}

// CallToolRaw calls a tool and returns the result as sent. In the modern
// era over HTTP, parameters annotated with x-mcp-header are mirrored into
// Mcp-Param headers (the tool must have been listed first).
func (c *Client) CallToolRaw(ctx context.Context, params mcp.CallToolParams, opts *CallOptions) (json.RawMessage, error) {
	var o callOptions
	if opts != nil {
		o.CallOptions = *opts
	}
	if why := c.droppedReason(params.Name); why != "" && !o.Force && !c.opts.Force {
		return nil, &InvalidToolError{Tool: params.Name, Reason: why}
	}
	o.header = c.paramHeaders(params.Name, params.Arguments)
	return c.callMRTR(ctx, "tools/call", params, &o)
}

// ListResources returns one page of resources.
func (c *Client) ListResources(ctx context.Context, cursor string) (*mcp.ListResourcesResult, error) {
	var r mcp.ListResourcesResult
	return &r, c.Call(ctx, "resources/list", cursorParams(cursor), &r, nil)
}

// AllResources returns every resource, following the cursors.
func (c *Client) AllResources(ctx context.Context) ([]mcp.Resource, error) {
	return Paginate(c.Operation(ctx), "resources/list", c.maxPages(), func(ctx context.Context, cur string) ([]mcp.Resource, string, error) {
		r, err := c.ListResources(ctx, cur)
		return r.Resources, r.NextCursor, err
	})
}

// ListResourceTemplates returns one page of resource templates.
func (c *Client) ListResourceTemplates(ctx context.Context, cursor string) (*mcp.ListResourceTemplatesResult, error) {
	var r mcp.ListResourceTemplatesResult
	return &r, c.Call(ctx, "resources/templates/list", cursorParams(cursor), &r, nil)
}

// AllResourceTemplates returns every resource template, following the cursors.
func (c *Client) AllResourceTemplates(ctx context.Context) ([]mcp.ResourceTemplate, error) {
	return Paginate(c.Operation(ctx), "resources/templates/list", c.maxPages(), func(ctx context.Context, cur string) ([]mcp.ResourceTemplate, string, error) {
		r, err := c.ListResourceTemplates(ctx, cur)
		return r.ResourceTemplates, r.NextCursor, err
	})
}

// ReadResource reads a resource.
func (c *Client) ReadResource(ctx context.Context, uri string, opts *CallOptions) (*mcp.ReadResourceResult, error) {
	var r mcp.ReadResourceResult
	return &r, c.Call(ctx, "resources/read", mcp.ReadResourceParams{URI: uri}, &r, opts)
}

// Subscribe asks for notifications/resources/updated about uri. The modern
// era has no resources/subscribe: use Listen.
func (c *Client) Subscribe(ctx context.Context, uri string) error {
	return c.Call(ctx, "resources/subscribe", mcp.SubscribeParams{URI: uri}, nil, nil)
}

// Unsubscribe stops notifications about uri.
func (c *Client) Unsubscribe(ctx context.Context, uri string) error {
	return c.Call(ctx, "resources/unsubscribe", mcp.SubscribeParams{URI: uri}, nil, nil)
}

// ListPrompts returns one page of prompts.
func (c *Client) ListPrompts(ctx context.Context, cursor string) (*mcp.ListPromptsResult, error) {
	var r mcp.ListPromptsResult
	return &r, c.Call(ctx, "prompts/list", cursorParams(cursor), &r, nil)
}

// AllPrompts returns every prompt, following the cursors.
func (c *Client) AllPrompts(ctx context.Context) ([]mcp.Prompt, error) {
	return Paginate(c.Operation(ctx), "prompts/list", c.maxPages(), func(ctx context.Context, cur string) ([]mcp.Prompt, string, error) {
		r, err := c.ListPrompts(ctx, cur)
		return r.Prompts, r.NextCursor, err
	})
}

// GetPrompt gets a prompt with its arguments filled in.
func (c *Client) GetPrompt(ctx context.Context, name string, args map[string]string, opts *CallOptions) (*mcp.GetPromptResult, error) {
	var r mcp.GetPromptResult
	return &r, c.Call(ctx, "prompts/get", mcp.GetPromptParams{Name: name, Arguments: args}, &r, opts)
}

// Complete asks for completions of an argument of a prompt or a resource
// template. The context of already-filled arguments is dropped for servers
// older than 2025-06-18, which do not know it.
func (c *Client) Complete(ctx context.Context, p mcp.CompleteParams) (*mcp.CompleteResult, error) {
	if p.Context != nil && !mcp.RevisionAtLeast(c.ProtocolVersion(), mcp.Rev20250618) {
		p.Context = nil
	}
	var r mcp.CompleteResult
	return &r, c.Call(ctx, "completion/complete", p, &r, nil)
}

// SetLogLevel asks the server to send log messages at level and above. In
// the modern era there is no logging/setLevel: the level goes in the _meta
// of every later request instead.
func (c *Client) SetLogLevel(ctx context.Context, level mcp.LoggingLevel) error {
	if c.Era() == EraModern {
		c.stateMu.Lock()
		c.logLevel = level
		c.stateMu.Unlock()
		return nil
	}
	return c.Call(ctx, "logging/setLevel", mcp.SetLevelParams{Level: level}, nil, nil)
}

// GetTask returns the state of a task.
func (c *Client) GetTask(ctx context.Context, id string) (*mcp.Task, error) {
	var r mcp.Task
	return &r, c.Call(ctx, "tasks/get", mcp.TaskParams{TaskID: id}, &r, nil)
}

// TaskResult waits for a task's result and returns it as sent.
func (c *Client) TaskResult(ctx context.Context, id string, opts *CallOptions) (json.RawMessage, error) {
	var r json.RawMessage
	return r, c.Call(ctx, "tasks/result", mcp.TaskParams{TaskID: id}, &r, opts)
}

// ListTasks returns one page of tasks.
func (c *Client) ListTasks(ctx context.Context, cursor string) (*mcp.ListTasksResult, error) {
	var r mcp.ListTasksResult
	return &r, c.Call(ctx, "tasks/list", cursorParams(cursor), &r, nil)
}

// AllTasks returns the tasks of every page of tasks/list.
func (c *Client) AllTasks(ctx context.Context) ([]mcp.Task, error) {
	return Paginate(c.Operation(ctx), "tasks/list", c.maxPages(), func(ctx context.Context, cur string) ([]mcp.Task, string, error) {
		r, err := c.ListTasks(ctx, cur)
		return r.Tasks, r.NextCursor, err
	})
}

// CancelTask asks the server to cancel a task.
func (c *Client) CancelTask(ctx context.Context, id string) (*mcp.Task, error) {
	var r mcp.Task
	return &r, c.Call(ctx, "tasks/cancel", mcp.TaskParams{TaskID: id}, &r, nil)
}

// RootsChanged tells the server that the roots changed, when the client
// declared roots.listChanged.
func (c *Client) RootsChanged(ctx context.Context) error {
	if c.Era() == EraModern {
		return nil // the modern era asks for roots in each request instead
	}
	caps := c.capabilities()
	if caps.Roots == nil || !caps.Roots.ListChanged {
		return nil
	}
	return c.Notify(ctx, "notifications/roots/list_changed", nil)
}

// TaskStatuses that end a task.
var taskDone = map[string]bool{"completed": true, "failed": true, "cancelled": true}

// CallToolAsTask calls a tool as a task (2025-11-25 tasks): the server
// answers at once with a task, which is polled with tasks/get (at the
// server's pollInterval, 200 ms to 5 s) until it ends or needs input, then
// its result is fetched with tasks/result, which blocks until the result is
// there; tasks/get goes on meanwhile, so that onStatus sees each state
// (input_required, working again, completed...), the last one possibly
// after the result came. A server that runs the call at once anyway
// returns its result directly. Cancelling ctx cancels the task with
// tasks/cancel, whether it was being polled or its result awaited. In the
// modern era it is CallToolFollow: the tasks extension has no opt-in.
func (c *Client) CallToolAsTask(ctx context.Context, params mcp.CallToolParams, opts *CallOptions, onStatus func(mcp.Task)) (json.RawMessage, error) {
	if c.Era() == EraModern {
		// The tasks extension has no opt-in: the server decides.
		params.Task = nil
		return c.CallToolFollow(ctx, params, opts, onStatus)
	}
	if len(params.Task) == 0 {
		params.Task = json.RawMessage(`{}`)
	}
	ctx, op := c.operation(ctx)
	raw, err := c.CallToolRaw(ctx, params, opts)
	if err != nil {
		return nil, err
	}
	var created struct {
		Task *mcp.Task `json:"task"`
	}
	if json.Unmarshal(raw, &created) != nil || created.Task == nil || created.Task.TaskID == "" {
		return raw, nil
	}
	tc := &taskCall{c: c, ctx: ctx, op: op, id: created.Task.TaskID, onStatus: onStatus}
	task, err := tc.poll(*created.Task)
	if err != nil {
		return nil, err
	}
	res, last, err := tc.awaitResult(task, opts)
	return tc.settle(res, last, err)
}

// taskCall is one tool call run as a task (2025-11-25 tasks), from the
// task's creation to its result.
type taskCall struct {
	c        *Client
	ctx      context.Context
	op       *operation
	id       string
	onStatus func(mcp.Task)
}

// cancel tells the server to cancel the task, even when ctx has ended.
func (tc *taskCall) cancel() {
	cctx, cancel := bounds.Cancel.Context(detached(tc.ctx))
	tc.c.CancelTask(cctx, tc.id)
	cancel()
}

func (tc *taskCall) report(t mcp.Task) {
	if tc.onStatus != nil {
		tc.onStatus(t)
	}
}

// maxTimeUp reports whether err is the end of the maximum time.
func maxTimeUp(err error) bool {
	var te *TimeoutError
	return errors.As(err, &te) && te.Max
}

// poll polls the task with tasks/get until it ends or needs input, and
// returns that state. The user or the operation's clock ending the poll
// cancel the task.
func (tc *taskCall) poll(task mcp.Task) (mcp.Task, error) {
	for {
		tc.report(task)
		if taskDone[task.Status] || task.Status == "input_required" {
			return task, nil
		}
		left := tc.op.left()
		if left <= 0 {
			tc.cancel()
			return task, tc.op.spent("tools/call")
		}
		if !bounds.Sleep(tc.ctx, min(pollWait(task), left)) {
			tc.cancel()
			return task, tc.ctx.Err()
		}
		t, err := tc.c.GetTask(tc.ctx, tc.id)
		if err != nil {
			if tc.ctx.Err() != nil || maxTimeUp(err) {
				tc.cancel()
			}
			return task, err
		}
		task = *t
	}
}

// awaitResult fetches the result with tasks/result, which carries the
// server's requests (input_required) on the way, through the Handler;
// tasks/get follows the states meanwhile. It returns the last state that
// poll saw.
func (tc *taskCall) awaitResult(task mcp.Task, opts *CallOptions) (json.RawMessage, mcp.Task, error) {
	done := make(chan struct{})
	polled := make(chan struct{})
	last := task
	// The poll ends with the result: a tasks/get under way then is
	// abandoned, not waited for.
	pctx, pcancel := context.WithCancel(tc.ctx)
	defer pcancel()
	go func() {
		defer close(polled)
		tc.follow(pctx, done, &last)
	}()
	res, err := tc.c.TaskResult(tc.ctx, tc.id, opts)
	close(done)
	pcancel()
	<-polled
	return res, last, err
}

// follow polls the task's states beside tasks/result until it ends or
// done is closed, reporting each change; *last is the latest state.
func (tc *taskCall) follow(ctx context.Context, done <-chan struct{}, last *mcp.Task) {
	for !taskDone[last.Status] {
		wait := bounds.Clock{Name: "poll", D: pollWait(*last)}.Timer()
		select {
		case <-done:
			wait.Stop()
			return
		case <-wait.C:
		}
		t, err := tc.c.GetTask(ctx, tc.id)
		if err != nil {
			return
		}
		if t.Status != last.Status || t.StatusMessage != last.StatusMessage {
			tc.report(*t)
		}
		*last = *t
	}
}

// settle ends the call once tasks/result answered: it cancels a task the
// user or the clock gave up on, names a task cancelled elsewhere, and
// reports the final state the poll may have missed.
func (tc *taskCall) settle(res json.RawMessage, last mcp.Task, err error) (json.RawMessage, error) {
	ctx := tc.ctx
	if err != nil && (ctx.Err() != nil || maxTimeUp(err)) && !taskDone[last.Status] {
		tc.cancel()
	}
	if err != nil && ctx.Err() == nil && !maxTimeUp(err) {
		// A task cancelled elsewhere (another client, the server) has no
		// result: say that, not the server's error about the result.
		gctx, cancel := bounds.Cancel.Context(detached(ctx))
		if t, gerr := tc.c.GetTask(gctx, tc.id); gerr == nil && t.Status == "cancelled" {
			err = &TaskError{TaskID: tc.id, Status: t.Status, Elsewhere: true, Note: t.StatusMessage}
		}
		cancel()
	}
	if err == nil && !taskDone[last.Status] {
		// The result came before the poll saw the end: one more look, for
		// the final state.
		gctx, cancel := bounds.Clock{Name: "last look", D: 500 * time.Millisecond}.Context(ctx)
		if t, gerr := tc.c.GetTask(gctx, tc.id); gerr == nil && (t.Status != last.Status || t.StatusMessage != last.StatusMessage) {
			tc.report(*t)
		}
		cancel()
	}
	return res, err
}

// pollWait is how long to wait before polling t again: its pollInterval,
// kept within 200 ms and 5 s, else 500 ms.
// pollFloor is the shortest time between two polls of a task.
const pollFloor = 200 * time.Millisecond

func pollWait(t mcp.Task) time.Duration {
	if t.PollInterval == nil {
		return 500 * time.Millisecond
	}
	return min(max(time.Duration(*t.PollInterval)*time.Millisecond, pollFloor), 5*time.Second)
}

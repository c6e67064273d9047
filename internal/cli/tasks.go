package cli

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/mcpi-dev/mcpi/internal/command"
	"github.com/mcpi-dev/mcpi/internal/iostreams"
	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/mcptext"
	"github.com/mcpi-dev/mcpi/internal/session"
)

// Tasks (2025-11-25): `mcpi call` runs a tool as a task when the tool
// requires it or --task asks, and `mcpi tasks` lists, shows, cancels and
// fetches the results of the server's tasks. Tasks outlive a one-shot
// command's connection, so `mcpi tasks` means most in a live session.

// asTask decides whether the call runs as a task: always when the tool's
// execution.taskSupport is required; with --task when the tool and the
// server both offer it, or anyway with --force.
func (opts *CallOptions) asTask(c *session.Client, tool *mcp.Tool) (bool, error) {
	support := ""
	if tool != nil && tool.Execution != nil {
		support = tool.Execution.TaskSupport
	}
	if support == "required" {
		// Sent as a task, it could not be followed: refused before the
		// server starts a task no one polls.
		if err := c.Check("tasks/get"); err != nil && !opts.Target.Force {
			return false, fmt.Errorf("tool %s runs only as a task (execution.taskSupport required): %w", opts.Tool, err)
		}
		return true, nil
	}
	if !opts.Task {
		return false, nil
	}
	if opts.Target.Force {
		return true, nil
	}
	if support != "optional" {
		shown := support
		switch {
		case tool == nil:
			shown = "unknown: the tool is not listed"
		case shown == "":
			shown = "absent, which means forbidden"
		}
		return false, command.FlagErrorf("tool %s does not run as a task (execution.taskSupport %s); --force sends it as one anyway", opts.Tool, shown)
	}
	if !serverTakesToolTasks(c) {
		return false, command.FlagErrorf("the server does not take tools/call as a task (no capabilities.tasks.requests.tools.call); --force sends it as one anyway")
	}
	return true, nil
}

// serverTakesToolTasks reports whether the server declared
// capabilities.tasks.requests.tools.call.
func serverTakesToolTasks(c *session.Client) bool {
	ir := c.InitializeResult()
	if ir == nil || ir.Capabilities.Tasks == nil {
		return false
	}
	var req struct {
		Tools *struct {
			Call json.RawMessage `json:"call"`
		} `json:"tools"`
	}
	return json.Unmarshal(ir.Capabilities.Tasks.Requests, &req) == nil && req.Tools != nil && req.Tools.Call != nil
}

// NewCmdTasks returns `mcpi tasks list|get|cancel|result`.
func NewCmdTasks(f *command.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tasks",
		Short: "List, show, cancel, answer and fetch the results of the server's tasks",
		Long: `List, show, cancel and fetch the results of the server's tasks (2025-11-25
tasks: tasks/list, tasks/get, tasks/cancel, tasks/result). With a 2026-07-28
server (the io.modelcontextprotocol/tasks extension): get, cancel and update
(tasks/update answers the input a task waits for); the extension has no
tasks/list and no tasks/result, and a completed task carries its result.

A task outlives the request that started it, but not the connection: against a
one-shot TARGET these see only the tasks of their own connection (none, for
most servers). Use them in a live session (mcpi session start; --session NAME),
where mcpi call --task, or a tool that requires tasks, leaves its task behind.`,
		Example: `  mcpi tasks list --session everything
  mcpi tasks get 3f1c... --session everything --json
  mcpi tasks result 3f1c... --session everything
  mcpi tasks update 3f1c... --elicit-field confirm=true --session modern`,
	}
	cmd.AddCommand(NewCmdTasksList(f, nil), NewCmdTasksGet(f, "get", "Show a task's state", nil),
		NewCmdTasksGet(f, "cancel", "Cancel a task (tasks/cancel) and show its state", nil), NewCmdTasksResult(f, nil),
		NewCmdTasksUpdate(f, nil))
	return cmd
}

// TasksListOptions are the input of `mcpi tasks list`.
type TasksListOptions struct {
	command.ConnOptions
}

// NewCmdTasksList returns `mcpi tasks list TARGET`.
func NewCmdTasksList(f *command.Factory, runF func(context.Context, *TasksListOptions) error) *cobra.Command {
	opts := &TasksListOptions{ConnOptions: f.Conn()}
	return withConnFlags(&cobra.Command{
		Use:     "list TARGET",
		Short:   "List the server's tasks (every page)",
		Example: "  mcpi tasks list --session everything\n  mcpi tasks list --session everything --json",
		Args:    command.TargetArgs(&opts.Target, command.None),
		RunE:    command.RunE(opts, runF, tasksListRun),
	}, &opts.ConnOptions)
}

func tasksListRun(ctx context.Context, opts *TasksListOptions) error {
	return opts.With(ctx, func(c *session.Client) error {
		if c.Era() == session.EraModern {
			return &removedMethod{method: "tasks/list", instead: "a task is known by the id its call returned (mcpi call shows it on stderr): mcpi tasks get ID"}
		}
		tasks, err := c.AllTasks(ctx)
		return printListing(&opts.ConnOptions, tasks, err, []string{"TASK ID", "STATUS", "UPDATED", "MESSAGE"}, func(t mcp.Task) []string {
			updated := t.LastUpdatedAt
			if updated == "" {
				updated = t.CreatedAt
			}
			return []string{t.TaskID, t.Status, updated, t.StatusMessage}
		})
	})
}

// TasksGetOptions are the input of `mcpi tasks get` and `mcpi tasks
// cancel`.
type TasksGetOptions struct {
	command.ConnOptions
	Verb string // get or cancel
	ID   string
}

// NewCmdTasksGet returns `mcpi tasks get ID` or `mcpi tasks cancel ID`:
// both answer with the task.
func NewCmdTasksGet(f *command.Factory, verb, short string, runF func(context.Context, *TasksGetOptions) error) *cobra.Command {
	opts := &TasksGetOptions{ConnOptions: f.Conn(), Verb: verb}
	return withConnFlags(&cobra.Command{
		Use:     verb + " ID TARGET",
		Short:   short,
		Example: fmt.Sprintf("  mcpi tasks %s 3f1c... --session everything", verb),
		Args:    command.TargetArgs(&opts.Target, command.One("the task ID", &opts.ID)),
		RunE:    command.RunE(opts, runF, tasksGetRun),
	}, &opts.ConnOptions)
}

func tasksGetRun(ctx context.Context, opts *TasksGetOptions) error {
	verb, id := opts.Verb, opts.ID
	return opts.With(ctx, func(c *session.Client) error {
		if c.Era() == session.EraModern {
			return showTaskDetail(ctx, &opts.ConnOptions, c, verb, id)
		}
		var raw json.RawMessage
		if err := c.Call(ctx, "tasks/"+verb, mcp.TaskParams{TaskID: id}, &raw, nil); err != nil {
			return err
		}
		if opts.JSON {
			return iostreams.WriteRawJSON(opts.IO, raw)
		}
		var t mcp.Task
		if err := json.Unmarshal(raw, &t); err != nil {
			return &session.RPCError{Method: "tasks/" + verb, RPCError: &mcp.RPCError{Code: mcp.CodeInvalidParams, Message: "the result is not a task: " + err.Error()}}
		}
		mcptext.PrintTask(opts.IO, t)
		return nil
	})
}

// TasksResultOptions are the input of `mcpi tasks result`.
type TasksResultOptions struct {
	command.ConnOptions
	ID   string
	Save string
}

// NewCmdTasksResult returns `mcpi tasks result ID TARGET`.
func NewCmdTasksResult(f *command.Factory, runF func(context.Context, *TasksResultOptions) error) *cobra.Command {
	opts := &TasksResultOptions{ConnOptions: f.Conn()}
	cmd := withConnFlags(&cobra.Command{
		Use:     "result ID TARGET",
		Short:   "Wait for a task's result (tasks/result) and print it as mcpi call does",
		Example: "  mcpi tasks result 3f1c... --session everything\n  mcpi tasks result 3f1c... --session everything --json",
		Args:    command.TargetArgs(&opts.Target, command.One("the task ID", &opts.ID)),
		RunE:    command.RunE(opts, runF, tasksResultRun),
	}, &opts.ConnOptions)
	end := command.FlagGroup(cmd, command.GroupOutput)
	cmd.Flags().StringVar(&opts.Save, "save", "", "write images, audio and blobs of the result into this directory")
	end()
	return cmd
}

func tasksResultRun(ctx context.Context, opts *TasksResultOptions) error {
	return opts.WithRun(ctx, func(r *command.ConnRun) error {
		c := r.Client
		if c.Era() == session.EraModern {
			return &removedMethod{method: "tasks/result", instead: "a completed task carries its result: mcpi tasks get ID prints it"}
		}
		progress, endProgress := mcptext.ProgressReporter(opts.IO, r.SayVerbose)
		raw, err := c.TaskResult(ctx, opts.ID, &session.CallOptions{OnProgress: progress})
		endProgress()
		if err != nil {
			return err
		}
		return printToolResult(opts.IO, opts.JSON, opts.Save, nil, "task "+opts.ID, raw)
	})
}

// removedMethod is a tasks verb the 2026-07-28 tasks extension removed.
type removedMethod struct{ method, instead string }

func (e *removedMethod) Error() string {
	return fmt.Sprintf("%s does not exist in 2026-07-28: the tasks extension (%s) removed it; %s", e.method, mcp.TasksExtension, e.instead)
}

// Is makes it a version error (exit 4).
func (e *removedMethod) Is(target error) bool { return target == session.ErrVersion }

// showTaskDetail is `mcpi tasks get|cancel ID` in the modern era: cancel
// sends tasks/cancel (whose answer is an empty acknowledgement), then both
// show the task as tasks/get gives it.
func showTaskDetail(ctx context.Context, o *command.ConnOptions, c *session.Client, verb, id string) error {
	if verb == "cancel" {
		if err := c.Call(ctx, "tasks/cancel", mcp.TaskParams{TaskID: id}, nil, nil); err != nil {
			return err
		}
	}
	t, raw, err := c.GetTaskDetail(ctx, id)
	if err != nil {
		return err
	}
	if o.JSON {
		return iostreams.WriteRawJSON(o.IO, raw)
	}
	mcptext.PrintTask(o.IO, t.Task())
	switch t.Status {
	case "input_required":
		mcptext.PrintInputRequests(o.IO, t)
	case "failed":
		if t.Error != nil {
			fmt.Fprintf(o.IO.Out, "error: %d %s\n", t.Error.Code, command.OneLine(t.Error.Message))
		}
	case "completed":
		if len(t.Result) > 0 {
			fmt.Fprintln(o.IO.Out)
			return printToolResult(o.IO, false, "", nil, "task "+id, t.Result)
		}
	}
	return nil
}

// TasksUpdateOptions are the input of `mcpi tasks update`.
type TasksUpdateOptions struct {
	command.ConnOptions
	ID string
	// Responses are the inputResponses to send as they are (JSON, @FILE
	// or -), instead of the answers of the flags.
	Responses string
}

// NewCmdTasksUpdate returns `mcpi tasks update ID TARGET`: the input a
// task of the tasks extension waits for, answered with the usual flags
// (--elicit, --elicit-field, --sampling-reply, --root) or given whole
// with --responses, sent with tasks/update; then the task as it is.
func NewCmdTasksUpdate(f *command.Factory, runF func(context.Context, *TasksUpdateOptions) error) *cobra.Command {
	opts := &TasksUpdateOptions{ConnOptions: f.Conn()}
	cmd := withConnFlags(&cobra.Command{
		Use:     "update ID TARGET",
		Short:   "Answer the input a task waits for (tasks/update, 2026-07-28) and show the task",
		Example: "  mcpi tasks update 3f1c... --elicit-field confirm=true --session modern\n  mcpi tasks update 3f1c... --responses '{\"confirm\":{\"action\":\"decline\"}}' --session modern",
		Args: command.TargetArgs(&opts.Target, func(rest []string) error {
			opts.ReadsStdin = opts.Responses == "-"
			return command.One("the task ID", &opts.ID)(rest)
		}),
		RunE: command.RunE(opts, runF, tasksUpdateRun),
	}, &opts.ConnOptions)
	end := command.FlagGroup(cmd, command.GroupArgs)
	cmd.Flags().StringVar(&opts.Responses, "responses", "", "send these inputResponses as they are (JSON, @FILE or -) instead of answering with the flags")
	end()
	return cmd
}

func tasksUpdateRun(ctx context.Context, opts *TasksUpdateOptions) error {
	id := opts.ID
	return opts.With(ctx, func(c *session.Client) error {
		if c.Era() != session.EraModern {
			return &session.VersionError{Method: "tasks/update", Needs: mcp.Rev20260728, Got: c.ProtocolVersion()}
		}
		if opts.Responses != "" {
			data, err := readArg(opts.Responses, opts.IO)
			if err != nil {
				return err
			}
			var r map[string]any
			if err := json.Unmarshal(data, &r); err != nil {
				return command.FlagErrorf("--responses must be a JSON object of answers by input key: %v", err)
			}
			if err := c.UpdateTask(ctx, id, r); err != nil {
				return err
			}
			return showTaskDetail(ctx, &opts.ConnOptions, c, "get", id)
		}
		t, _, err := c.GetTaskDetail(ctx, id)
		if err != nil {
			return err
		}
		if t.Status != "input_required" || len(t.InputRequests) == 0 {
			return protocolError("tasks/get", fmt.Sprintf("task %s waits for no input (status %s): nothing to answer", id, t.Status))
		}
		if err := c.AnswerTask(ctx, t, map[string]bool{}); err != nil {
			return err
		}
		return showTaskDetail(ctx, &opts.ConnOptions, c, "get", id)
	})
}

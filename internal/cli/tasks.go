package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/session"
)

// Tasks (2025-11-25): `mcpi call` runs a tool as a task when the tool
// requires it or --task asks, and `mcpi tasks` lists, shows, cancels and
// fetches the results of the server's tasks. Tasks outlive a one-shot
// command's connection, so `mcpi tasks` means most in a live session.

func init() { sessionVerbs["tasks"] = true }

// asTask decides whether the call runs as a task: always when the tool's
// execution.taskSupport is required; with --task when the tool and the
// server both offer it, or anyway with --force.
func (opts *CallOptions) asTask(c *session.Client, tool *mcp.Tool) (bool, error) {
	support := ""
	if tool != nil && tool.Execution != nil {
		support = tool.Execution.TaskSupport
	}
	if support == "required" {
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
		return false, flagErrorf("tool %s does not run as a task (execution.taskSupport %s); --force sends it as one anyway", opts.Tool, shown)
	}
	if !serverTakesToolTasks(c) {
		return false, flagErrorf("the server does not take tools/call as a task (no capabilities.tasks.requests.tools.call); --force sends it as one anyway")
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

// taskReporter shows a task's states on stderr, each change once: one line
// each, or, on a terminal, one line that updates itself and stays when the
// task ends. end finishes that line.
func taskReporter(ios *IOStreams) (report func(mcp.Task), end func()) {
	var mu sync.Mutex
	var last string
	shown := false
	report = func(t mcp.Task) {
		msg := taskLine(t)
		mu.Lock()
		defer mu.Unlock()
		if msg == last {
			return
		}
		last = msg
		if ios.StderrTTY {
			shown = true
			ios.ErrOut.EraseLine()
			fmt.Fprint(ios.ErrOut, msg)
			return
		}
		fmt.Fprintln(ios.ErrOut, msg)
	}
	end = func() {
		mu.Lock()
		defer mu.Unlock()
		if shown {
			fmt.Fprintln(ios.ErrOut)
			shown = false
		}
	}
	return report, end
}

// taskLine is a task's state on one line: task ID: STATUS — MESSAGE.
func taskLine(t mcp.Task) string {
	msg := "task " + oneLine(t.TaskID) + ": " + oneLine(t.Status)
	if t.StatusMessage != "" {
		msg += " — " + oneLine(t.StatusMessage)
	}
	return msg
}

// NewCmdTasks returns `mcpi tasks list|get|cancel|result`.
func NewCmdTasks(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tasks",
		Short: "List, show, cancel and fetch the results of the server's tasks",
		Long: `List, show, cancel and fetch the results of the server's tasks (2025-11-25
tasks: tasks/list, tasks/get, tasks/cancel, tasks/result).

A task outlives the request that started it, but not the connection: against a
one-shot TARGET these see only the tasks of their own connection (none, for
most servers). Use them in a live session (mcpi session start; --session NAME),
where mcpi call --task, or a tool that requires tasks, leaves its task behind.`,
		Example: `  mcpi tasks list --session everything
  mcpi tasks get 3f1c... --session everything --json
  mcpi tasks result 3f1c... --session everything`,
	}
	cmd.AddCommand(newCmdTasksList(f), newCmdTasksGet(f, "get", "Show a task's state"),
		newCmdTasksGet(f, "cancel", "Cancel a task (tasks/cancel) and show its state"), newCmdTasksResult(f))
	return cmd
}

func newCmdTasksList(f *Factory) *cobra.Command {
	o := &ConnOptions{IO: f.IO, Args: f.Args}
	return simpleCmd(o, "list TARGET", "List the server's tasks (every page)",
		"  mcpi tasks list --session everything\n  mcpi tasks list --session everything --json",
		exactly(0, ""),
		func(ctx context.Context, c *session.Client) error {
			tasks, err := c.AllTasks(ctx)
			if err != nil {
				return err
			}
			if o.JSON {
				return writeJSON(o.IO, nonNil(tasks))
			}
			tw := table(o.IO.Out, "TASK ID", "STATUS", "UPDATED", "MESSAGE")
			for _, t := range tasks {
				updated := t.LastUpdatedAt
				if updated == "" {
					updated = t.CreatedAt
				}
				row(tw, t.TaskID, t.Status, updated, t.StatusMessage)
			}
			return tw.Flush()
		})
}

// newCmdTasksGet returns `mcpi tasks get ID` or `mcpi tasks cancel ID`:
// both answer with the task.
func newCmdTasksGet(f *Factory, verb, short string) *cobra.Command {
	o := &ConnOptions{IO: f.IO, Args: f.Args}
	var id string
	return simpleCmd(o, verb+" ID TARGET", short,
		fmt.Sprintf("  mcpi tasks %s 3f1c... --session everything", verb),
		func(rest []string) error {
			if err := exactly(1, "the task ID")(rest); err != nil {
				return err
			}
			id = rest[0]
			return nil
		},
		func(ctx context.Context, c *session.Client) error {
			var raw json.RawMessage
			if err := c.Call(ctx, "tasks/"+verb, mcp.TaskParams{TaskID: id}, &raw, nil); err != nil {
				return err
			}
			if o.JSON {
				return writeRawJSON(o.IO, raw)
			}
			var t mcp.Task
			if err := json.Unmarshal(raw, &t); err != nil {
				return &session.RPCError{Method: "tasks/" + verb, RPCError: &mcp.RPCError{Code: mcp.CodeInvalidParams, Message: "the result is not a task: " + err.Error()}}
			}
			printTask(o.IO, t)
			return nil
		})
}

// printTask shows a task, one field a line.
func printTask(ios *IOStreams, t mcp.Task) {
	tw := tabwriter.NewWriter(ios.Out, 2, 4, 2, ' ', 0)
	row(tw, "task", t.TaskID)
	field := func(name, v string) {
		if v != "" {
			row(tw, name, v)
		}
	}
	field("status", t.Status)
	field("message", t.StatusMessage)
	field("created", t.CreatedAt)
	field("updated", t.LastUpdatedAt)
	if ttl := strings.TrimSpace(string(t.TTL)); ttl != "" {
		if ttl != "null" {
			ttl += " ms"
		}
		field("ttl", ttl)
	}
	if t.PollInterval != nil {
		field("poll interval", fmt.Sprintf("%d ms", *t.PollInterval))
	}
	tw.Flush()
}

func newCmdTasksResult(f *Factory) *cobra.Command {
	o := &ConnOptions{IO: f.IO, Args: f.Args}
	var id, save string
	cmd := simpleCmd(o, "result ID TARGET", "Wait for a task's result (tasks/result) and print it as mcpi call does",
		"  mcpi tasks result 3f1c... --session everything\n  mcpi tasks result 3f1c... --session everything --json",
		func(rest []string) error {
			if err := exactly(1, "the task ID")(rest); err != nil {
				return err
			}
			id = rest[0]
			return nil
		},
		func(ctx context.Context, c *session.Client) error {
			progress, endProgress := progressReporter(o.IO, o.verbose)
			raw, err := c.TaskResult(ctx, id, &session.CallOptions{OnProgress: progress})
			endProgress()
			if err != nil {
				return err
			}
			return printToolResult(o.IO, o.JSON, save, nil, "task "+id, raw)
		})
	cmd.Flags().StringVar(&save, "save", "", "write images, audio and blobs of the result into this directory")
	return cmd
}

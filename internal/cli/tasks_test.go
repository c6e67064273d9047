package cli

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcpi-dev/mcpi/internal/command"
	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/mcptest"
	"github.com/mcpi-dev/mcpi/internal/mcptext"
)

var taskIDLine = regexp.MustCompile(`(?m)^task (\S+): working`)

// A tool whose execution.taskSupport is required runs as a task: its
// states go to stderr, one line each, and stdout holds the result alone,
// as text or as the --json CallToolResult, which names the task in _meta.
func TestTaskCallRequired(t *testing.T) {
	t.Parallel()
	ev := mcptest.Everything(t)
	code, out, errOut := runCLI(t, "", append([]string{"call", "simulate-research-query", "topic=kelp", "--"}, ev...)...)
	if code != command.ExitOK || !strings.HasPrefix(out, "# Research Report: kelp") || strings.Contains(out, "task ") {
		t.Fatalf("exit %d\nstdout %q\nstderr %q", code, out, errOut)
	}
	if !taskIDLine.MatchString(errOut) || !regexp.MustCompile(`(?m)^task \S+: completed`).MatchString(errOut) {
		t.Errorf("stderr lacks the task's states: %q", errOut)
	}

	code, out, errOut = runCLI(t, "", append([]string{"call", "simulate-research-query", "topic=python", "ambiguous=true",
		"--elicit-field", "interpretation=snake", "--json", "--"}, ev...)...)
	var res struct {
		mcp.CallToolResult
		Meta map[string]struct {
			TaskID string `json:"taskId"`
		} `json:"_meta"`
	}
	if code != command.ExitOK || json.Unmarshal([]byte(out), &res) != nil || len(res.Content) == 0 || !strings.Contains(res.Content[0].Text, "python (snake)") {
		t.Fatalf("--json: exit %d\nstdout %q\nstderr %q", code, out, errOut)
	}
	m := taskIDLine.FindStringSubmatch(errOut)
	if m == nil || res.Meta["io.modelcontextprotocol/related-task"].TaskID != m[1] {
		t.Errorf("the task id: _meta %+v, stderr %q", res.Meta, errOut)
	}
	if !strings.Contains(errOut, ": input_required — Found multiple interpretations") {
		t.Errorf("no input_required state: %q", errOut)
	}

	// Under a revision without tasks such a tool is refused before it is
	// sent: a task no one could poll is not started.
	code, out, errOut = runCLI(t, "", append([]string{"call", "simulate-research-query", "topic=kelp", "--protocol-version", "2025-06-18", "--"}, ev...)...)
	if code != command.ExitProtocol || out != "" || taskIDLine.MatchString(errOut) ||
		!strings.Contains(errOut, "runs only as a task (execution.taskSupport required): tasks/get needs protocol revision 2025-11-25") {
		t.Errorf("2025-06-18: exit %d\nstdout %q\nstderr %q", code, out, errOut)
	}
}

// --task is refused (exit 2) for a tool that does not take tasks, and for
// a server without tasks, unless --force sends it anyway.
func TestTaskCallRefused(t *testing.T) {
	t.Parallel()
	ev := mcptest.Everything(t)
	code, out, errOut := runCLI(t, "", append([]string{"call", "echo", "message=hi", "--task", "--"}, ev...)...)
	if code != command.ExitUsage || out != "" || !strings.Contains(errOut, "tool echo does not run as a task (execution.taskSupport forbidden)") {
		t.Errorf("forbidden: exit %d\nstdout %q\nstderr %q", code, out, errOut)
	}
	code, out, errOut = runCLI(t, "", append([]string{"call", "echo", "message=hi", "--task", "--json", "--"}, ev...)...)
	if code != command.ExitUsage || !strings.Contains(out, `"error"`) {
		t.Errorf("forbidden, --json: exit %d\nstdout %q\nstderr %q", code, out, errOut)
	}
	// Forced, it goes out and the server's own refusal comes back.
	code, _, errOut = runCLI(t, "", append([]string{"call", "echo", "message=hi", "--task", "--force", "--"}, ev...)...)
	if code != command.ExitProtocol {
		t.Errorf("forced: exit %d, stderr %q", code, errOut)
	}
	code, _, errOut = runCLI(t, "", append([]string{"call", "add", "a=1", "b=2", "--task"}, peerArgs("demo")...)...)
	if code != command.ExitUsage || !strings.Contains(errOut, "execution.taskSupport absent, which means forbidden") {
		t.Errorf("demo server: exit %d, stderr %q", code, errOut)
	}
}

// In a live session tasks outlive the command that started them: ctrl+c
// cancels the task; tasks list, get, cancel and result reach them.
func TestTasksInSession(t *testing.T) {
	t.Parallel()
	ev := mcptest.Everything(t)
	dir := liveDir(t)
	startSession(t, dir, "ev", append([]string{"--"}, ev...)...)

	// Interrupted: the task is cancelled.
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	code, out, errOut := runLive(t, dir, ctx, "call", "simulate-research-query", "topic=moss", "--session", "ev")
	m := taskIDLine.FindStringSubmatch(errOut)
	if code != command.ExitInterrupted || out != "" || m == nil {
		t.Fatalf("interrupted: exit %d\nstdout %q\nstderr %q", code, out, errOut)
	}
	cancelled := m[1]
	code, out, errOut = runLive(t, dir, nil, "tasks", "get", cancelled, "--session", "ev")
	if code != command.ExitOK || !regexp.MustCompile(`(?m)^status\s+cancelled$`).MatchString(out) {
		t.Errorf("tasks get: exit %d\nstdout %q\nstderr %q", code, out, errOut)
	}

	// A task that completes; its result can be fetched again.
	code, _, errOut = runLive(t, dir, nil, "call", "simulate-research-query", "topic=kelp", "--session", "ev", "--json")
	m = taskIDLine.FindStringSubmatch(errOut)
	if code != command.ExitOK || m == nil {
		t.Fatalf("call: exit %d, stderr %q", code, errOut)
	}
	done := m[1]
	code, out, errOut = runLive(t, dir, nil, "tasks", "list", "--session", "ev", "--json")
	var tasks []mcp.Task
	if code != command.ExitOK || json.Unmarshal([]byte(out), &tasks) != nil {
		t.Fatalf("tasks list --json: exit %d\nstdout %q\nstderr %q", code, out, errOut)
	}
	states := map[string]string{}
	for _, task := range tasks {
		states[task.TaskID] = task.Status
	}
	if states[cancelled] != "cancelled" || states[done] != "completed" {
		t.Errorf("tasks list: %+v", tasks)
	}
	code, out, errOut = runLive(t, dir, nil, "tasks", "list", "--session", "ev")
	if code != command.ExitOK || !strings.HasPrefix(out, "TASK ID") || !strings.Contains(out, done) {
		t.Errorf("tasks list: exit %d\nstdout %q\nstderr %q", code, out, errOut)
	}
	code, out, errOut = runLive(t, dir, nil, "tasks", "result", done, "--session", "ev")
	if code != command.ExitOK || !strings.HasPrefix(out, "# Research Report: kelp") {
		t.Errorf("tasks result: exit %d\nstdout %q\nstderr %q", code, out, errOut)
	}
	code, out, errOut = runLive(t, dir, nil, "tasks", "get", done, "--session", "ev", "--json")
	var task mcp.Task
	if code != command.ExitOK || json.Unmarshal([]byte(out), &task) != nil || task.TaskID != done || task.Status != "completed" {
		t.Errorf("tasks get --json: exit %d\nstdout %q\nstderr %q", code, out, errOut)
	}

	// tasks cancel ends a task that another command waits for.
	type ended struct {
		code     command.ExitCode
		out, err string
	}
	waiting := make(chan ended, 1)
	go func() {
		code, out, errOut := runLive(t, dir, nil, "call", "simulate-research-query", "topic=reef", "--session", "ev")
		waiting <- ended{code, out, errOut}
	}()
	var running string
	poll(20*time.Second, func() bool {
		_, out, _ := runLive(t, dir, nil, "tasks", "list", "--session", "ev", "--json")
		var tasks []mcp.Task
		json.Unmarshal([]byte(out), &tasks)
		for _, task := range tasks {
			if task.Status == "working" {
				running = task.TaskID
			}
		}
		return running != ""
	})
	if running == "" {
		t.Fatal("no task under way")
	}
	code, out, errOut = runLive(t, dir, nil, "tasks", "cancel", running, "--session", "ev")
	if code != command.ExitOK || !regexp.MustCompile(`(?m)^status\s+cancelled$`).MatchString(out) {
		t.Errorf("tasks cancel: exit %d\nstdout %q\nstderr %q", code, out, errOut)
	}
	select {
	case e := <-waiting:
		if e.code != command.ExitInterrupted || !strings.Contains(e.err, "was cancelled elsewhere (by another client or the server), so it has no result") {
			t.Errorf("the cancelled call: exit %d\nstdout %q\nstderr %q", e.code, e.out, e.err)
		}
	case <-time.After(20 * time.Second):
		t.Error("the call of a cancelled task did not end")
	}

	// Usage errors.
	if code, _, errOut := runLive(t, dir, nil, "tasks", "get", "--session", "ev"); code != command.ExitUsage || !strings.Contains(errOut, "missing the task ID") {
		t.Errorf("tasks get without an id: exit %d, stderr %q", code, errOut)
	}
	if code, _, errOut := runLive(t, dir, nil, "tasks", "get", "no-such-task", "--session", "ev"); code != command.ExitProtocol {
		t.Errorf("tasks get of an unknown task: exit %d, stderr %q", code, errOut)
	}
}

// The states are sanitised, each change shown once; on a terminal one line
// updates in place and stays when the task ends.
func TestTaskReporter(t *testing.T) {
	states := []mcp.Task{
		{TaskID: "t1", Status: "working", StatusMessage: "step \x1b]0;pwned\x07one\nmore"},
		{TaskID: "t1", Status: "working", StatusMessage: "step \x1b]0;pwned\x07one\nmore"},
		{TaskID: "t1", Status: "completed"},
	}
	ios, _, _, errOut := command.Test()
	report, end := mcptext.TaskReporter(ios)
	for _, s := range states {
		report(s)
	}
	end()
	want := "task t1: working — step \\e]0;pwned\\x07one more\ntask t1: completed\n"
	if errOut.String() != want {
		t.Errorf("not a terminal:\n got %q\nwant %q", errOut, want)
	}

	ios, _, _, errOut = command.Test()
	ios.StderrTTY = true
	report, end = mcptext.TaskReporter(ios)
	for _, s := range states {
		report(s)
	}
	end()
	want = "\r\x1b[Ktask t1: working — step \\e]0;pwned\\x07one more\r\x1b[Ktask t1: completed\n"
	if errOut.String() != want {
		t.Errorf("on a terminal:\n got %q\nwant %q", errOut, want)
	}
}

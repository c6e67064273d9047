package cli

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcpi-dev/mcpi/internal/command"
	"github.com/mcpi-dev/mcpi/internal/mcptest"
)

// The tasks extension of 2026-07-28: mcpi call follows the task a server
// creates unasked, its states on stderr and its result on stdout as for a
// plain call; input it asks for is answered with the usual flags through
// tasks/update; tasks list and result, which the extension removed, are
// refused saying so.
func TestTasksExtensionCommands(t *testing.T) {
	t.Parallel()
	p := peerArgs(mcptest.TasksPeer)
	for _, tc := range []cliCase{
		{name: "unsolicited task", args: with(p, "call", "slow"), code: command.ExitOK, stdout: []string{"slow done"},
			stderr: []string{"task t-1: working — warming up", "task t-1: completed"}},
		{name: "status notifications", args: with(p, "call", "slow", "-v"), code: command.ExitOK, stdout: []string{"slow done"},
			stderr: []string{"task notification: task t-1: completed"}},
		{name: "json", args: with(p, "call", "slow", "--json"), code: command.ExitOK, stdout: []string{`"text":"slow done"`}, jsonStdout: true},
		{name: "no task", args: with(p, "call", "greet"), code: command.ExitOK, stdout: []string{"Hello!"}},
		{name: "input", args: with(p, "call", "confirm", "--elicit-field", "confirm=true"), code: command.ExitOK,
			stdout: []string{`answered confirm={"action":"accept","content":{"confirm":true}}`}, stderr: []string{"task t-1: input_required", "task t-1: completed"}},
		{name: "input declined", args: with(p, "call", "multi", "--elicit", "decline"), code: command.ExitOK,
			stdout: []string{`answered a={"action":"decline"} b={"action":"decline"}`}},
		{name: "isError", args: with(p, "call", "iserr"), code: command.ExitToolError, stdout: []string{"it went wrong"}},
		{name: "failed", args: with(p, "call", "fail"), code: command.ExitProtocol, stderr: []string{"mcpi: task t-1 failed: boom"}},
		{name: "--task warns", args: with(p, "call", "slow", "--task"), code: command.ExitOK, stderr: []string{"--task has no effect in 2026-07-28"}},
		{name: "list refused", args: with(p, "tasks", "list"), code: command.ExitProtocol,
			stderr: []string{"tasks/list does not exist in 2026-07-28: the tasks extension (io.modelcontextprotocol/tasks) removed it"}},
		{name: "result refused", args: with(p, "tasks", "result", "t-1"), code: command.ExitProtocol, stderr: []string{"tasks/result does not exist in 2026-07-28", "mcpi tasks get ID prints it"}},
		{name: "unknown task", args: with(p, "tasks", "get", "nope"), code: command.ExitProtocol, stderr: []string{"no task nope"}},
		{name: "update legacy", args: with(peerArgs("demo"), "tasks", "update", "x"), code: command.ExitProtocol, stderr: []string{"tasks/update needs protocol revision 2026-07-28"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			checkCase(t, tc)
		})
	}
}

// In a live session tasks outlive the command: get shows a completed
// task's result, a call interrupted cancels its task (tasks/cancel), and
// update answers a task's input with the flags, through tasks/update.
func TestTasksExtensionSession(t *testing.T) {
	t.Parallel()
	dir := liveDir(t)
	startSession(t, dir, "tx", peerArgs(mcptest.TasksPeer)...)
	in := func(args ...string) (command.ExitCode, string, string) {
		return runLive(t, dir, nil, append(args, "--session", "tx")...)
	}
	code, out, errOut := in("call", "slow")
	id := regexp.MustCompile(`task (t-\d+): working`).FindStringSubmatch(errOut)
	if code != command.ExitOK || id == nil || !strings.Contains(out, "slow done") {
		t.Fatalf("call: exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	code, out, errOut = in("tasks", "get", id[1])
	if code != command.ExitOK || !strings.Contains(out, "status") || !strings.Contains(out, "completed") || !strings.Contains(out, "slow done") {
		t.Errorf("get: exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	code, out, _ = in("tasks", "get", id[1], "--json")
	if code != command.ExitOK || !strings.Contains(out, `"result":{`) {
		t.Errorf("get --json: exit %d\nstdout %s", code, out)
	}

	// A call interrupted: its task is cancelled.
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan string)
	go func() {
		code, _, errOut := runLive(t, dir, ctx, "call", "forever", "--session", "tx")
		done <- fmt.Sprint(code, " ", errOut)
	}()
	// Interrupt it once its task exists.
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		if code, out, _ := in("tasks", "get", "t-2"); code == command.ExitOK && strings.Contains(out, "working") {
			break
		}
	}
	cancel()
	if got := <-done; !strings.HasPrefix(got, "130 ") {
		t.Errorf("the interrupted call: %s", got)
	}
	code, out, errOut = in("tasks", "get", "t-2")
	if code != command.ExitOK || !strings.Contains(out, "cancelled") {
		t.Errorf("after the interrupt: exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	code, out, errOut = in("tasks", "cancel", "t-2")
	if code != command.ExitOK || !strings.Contains(out, "cancelled") {
		t.Errorf("cancel: exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}

	// A task cancelled from another shell: the waiting call says so.
	go func() {
		code, _, errOut := runLive(t, dir, nil, "call", "forever", "--session", "tx")
		done <- fmt.Sprint(code, " ", errOut)
	}()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		if code, out, _ := in("tasks", "get", "t-3"); code == command.ExitOK && strings.Contains(out, "working") {
			break
		}
	}
	if code, out, errOut := in("tasks", "cancel", "t-3"); code != command.ExitOK {
		t.Fatalf("cancel t-3: exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	if got := <-done; !strings.HasPrefix(got, "130 ") || !strings.Contains(got, "task t-3 was cancelled elsewhere") {
		t.Errorf("the call whose task was cancelled elsewhere: %s", got)
	}

	// A task's input given from another shell while the call waits for
	// it (parked for mcpi answer): the call goes on to the task's result.
	go func() {
		code, out, errOut := runLive(t, dir, nil, "call", "confirm", "--session", "tx")
		done <- fmt.Sprint(code, " ", out, errOut)
	}()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		if code, out, _ := in("pending"); code == command.ExitOK && strings.Contains(out, "elicitation") {
			break
		}
	}
	if code, out, errOut := in("tasks", "update", "t-4", "--elicit-field", "confirm=true"); code != command.ExitOK {
		t.Fatalf("update t-4: exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	select {
	case got := <-done:
		if !strings.HasPrefix(got, "0 ") || !strings.Contains(got, `answered confirm={"action":"accept","content":{"confirm":true}}`) {
			t.Errorf("the call whose task was answered elsewhere: %s", got)
		}
	case <-time.After(20 * time.Second):
		t.Error("the call still waits after its task was answered from another shell")
	}
	if code, out, _ := in("pending"); code != command.ExitOK || strings.Contains(out, "elicitation") {
		t.Errorf("a request still parked: exit %d %s", code, out)
	}
}

package mcptext

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"text/tabwriter"

	"github.com/mcpi-dev/mcpi/internal/iostreams"
	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/safetext"
	"github.com/mcpi-dev/mcpi/internal/session"
)

// TaskLine is a task's state on one line: task ID: STATUS — MESSAGE.
func TaskLine(t mcp.Task) string {
	msg := "task " + safetext.OneLine(t.TaskID) + ": " + safetext.OneLine(t.Status)
	if t.StatusMessage != "" {
		msg += " — " + safetext.OneLine(t.StatusMessage)
	}
	return msg
}

// TaskReporter shows a task's states on stderr, each change once: one line
// each, or, on a terminal, one line that updates itself and stays when the
// task ends. end finishes that line.
func TaskReporter(ios *iostreams.IOStreams) (report func(mcp.Task), end func()) {
	var mu sync.Mutex
	var last string
	shown := false
	report = func(t mcp.Task) {
		msg := TaskLine(t)
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

// PrintTask shows a task, one field a line.
func PrintTask(ios *iostreams.IOStreams, t mcp.Task) {
	tw := tabwriter.NewWriter(ios.Out, 2, 4, 2, ' ', 0)
	Row(tw, "task", t.TaskID)
	field := func(name, v string) {
		if v != "" {
			Row(tw, name, v)
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

// PrintInputRequests lists what an input_required task waits for, one
// request a line: its key, its method and its message.
func PrintInputRequests(ios *iostreams.IOStreams, t *mcp.DetailedTask) {
	keys := make([]string, 0, len(t.InputRequests))
	for k := range t.InputRequests {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		var ir struct {
			Method string `json:"method"`
			Params struct {
				Message string `json:"message"`
			} `json:"params"`
		}
		json.Unmarshal(t.InputRequests[k], &ir)
		line := "input " + k + ": " + ir.Method
		if ir.Params.Message != "" {
			line += " — " + ir.Params.Message
		}
		fmt.Fprintln(ios.Out, safetext.OneLine(line))
	}
}

// TaskNotification decodes a notifications/tasks (the tasks extension's
// status notification).
func TaskNotification(n session.Notification) (*mcp.DetailedTask, bool) {
	if n.Method != "notifications/tasks" {
		return nil, false
	}
	var t mcp.DetailedTask
	if json.Unmarshal(n.Params, &t) != nil || t.TaskID == "" {
		return nil, false
	}
	return &t, true
}

package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcpi-dev/mcpi/internal/command"
	"github.com/mcpi-dev/mcpi/internal/loadreport"
	"github.com/mcpi-dev/mcpi/internal/mcptest"
)

// benchJSON runs mcpi bench --json and decodes its document.
// benchJSONDoc is the --json document of mcpi bench, as a reader
// decodes it.
type benchJSONDoc struct {
	OK                                        bool
	Started, Completed, Failed, Calls, Errors int64
	MaxErrors                                 float64
	ErrorsByKind                              []struct {
		Kind    string
		Count   int64
		Example string
	}
	Steps         []loadreport.Step
	Notifications int64
	Aborted       string
}

func benchJSON(t *testing.T, args ...string) (command.ExitCode, benchJSONDoc, string) {
	t.Helper()
	code, out, errOut := runCLI(t, "", append([]string{"bench", "--json"}, args...)...)
	var d benchJSONDoc
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("exit %d: stdout is no bench document: %v\n%s\nstderr: %s", code, err, out, errOut)
	}
	return code, d, errOut
}

func kinds(d benchJSONDoc) map[string]int64 {
	m := map[string]int64{}
	for _, k := range d.ErrorsByKind {
		m[k.Kind] = k.Count
	}
	return m
}

// TestBenchCounts: n calls sent, n answers counted, every failure in its
// kind: the server numbers its calls in arrival order, so how many of
// each kind it sent is known whatever the concurrency.
func TestBenchCounts(t *testing.T) {
	t.Parallel()
	for _, conns := range []string{connectionsOne, connectionsPerWorker} {
		t.Run(conns, func(t *testing.T) {
			t.Parallel()
			args := []string{"t", "-n", "700", "-c", "4", "--connections", conns}
			code, d, errOut := benchJSON(t, with(peerArgs(mcptest.LoadPrefix+mcptest.LoadMixed), args...)...)
			if code != command.ExitToolError || d.OK {
				t.Errorf("exit %d, ok %v: errors past --max-errors 0 must fail", code, d.OK)
			}
			if d.Started != 700 || d.Completed != 700 || d.Calls != 700 || d.Steps[0].Calls != 700 {
				t.Errorf("started %d, completed %d, calls %d, step calls %d; want 700", d.Started, d.Completed, d.Calls, d.Steps[0].Calls)
			}
			// Per worker connection the servers number their own calls:
			// the counts hold per server, so their sum does too only when
			// each got a multiple of 70; with one connection they are exact.
			if conns == connectionsOne {
				want := map[string]int64{"jsonrpc -32603": 70, "isError": 90}
				if got := kinds(d); got["jsonrpc -32603"] != want["jsonrpc -32603"] || got["isError"] != want["isError"] || len(got) != 2 {
					t.Errorf("errors by kind %v, want %v", got, want)
				}
				if d.Errors != 160 || d.Failed != 160 {
					t.Errorf("errors %d, failed %d; want 160", d.Errors, d.Failed)
				}
			} else if got := kinds(d); got["jsonrpc -32603"] < 60 || got["isError"] < 80 || len(got) != 2 {
				t.Errorf("errors by kind %v", got)
			}
			if !strings.Contains(errOut, "mcpi: ") || !strings.Contains(errOut, "more than --max-errors 0%") {
				t.Errorf("stderr %q", errOut)
			}
		})
	}
	// Within --max-errors (23% failed): exit 0.
	code, d, _ := benchJSON(t, with(peerArgs(mcptest.LoadPrefix+mcptest.LoadMixed), "t", "-n", "700", "-c", "4", "--max-errors", "25%")...)
	if code != command.ExitOK || !d.OK || d.MaxErrors != 0.25 {
		t.Errorf("--max-errors 25%%: exit %d, ok %v, max %v", code, d.OK, d.MaxErrors)
	}
}

// TestBenchOutOfOrder: answers that come back in another order than the
// calls went out are each matched to their call: none lost, none an error.
func TestBenchOutOfOrder(t *testing.T) {
	t.Parallel()
	code, d, errOut := benchJSON(t, with(peerArgs(mcptest.LoadPrefix+mcptest.LoadOutOfOrder), "t", "-n", "2000", "-c", "32")...)
	if code != command.ExitOK || d.Completed != 2000 || d.Errors != 0 {
		t.Errorf("exit %d, completed %d, errors %d %v; stderr %q", code, d.Completed, d.Errors, kinds(d), errOut)
	}
}

// TestBenchNotificationFlood: 100 notifications before each answer are
// counted, not printed one by one, and do not make a call fail.
func TestBenchNotificationFlood(t *testing.T) {
	t.Parallel()
	code, d, errOut := benchJSON(t, with(peerArgs(mcptest.LoadPrefix+mcptest.LoadFlood), "t", "-n", "300", "-c", "4")...)
	if code != command.ExitOK || d.Completed != 300 || d.Errors != 0 {
		t.Errorf("exit %d, completed %d, errors %d %v", code, d.Completed, d.Errors, kinds(d))
	}
	if d.Notifications != 300*100 {
		t.Errorf("notifications %d, want %d", d.Notifications, 300*100)
	}
	if strings.Count(errOut, "\n") > 3 {
		t.Errorf("stderr has %d lines: %.300q", strings.Count(errOut, "\n"), errOut)
	}
}

// TestBenchServerStopsAnswering: a server that stops answering mid-run
// gets each later call counted as a timeout, within --timeout; the run
// ends and says so.
func TestBenchServerStopsAnswering(t *testing.T) {
	t.Parallel()
	code, d, errOut := benchJSON(t, with(peerArgs(mcptest.LoadPrefix+mcptest.LoadStops+":50"), "t", "-n", "60", "-c", "5", "--timeout", "300ms")...)
	if code != command.ExitToolError || d.Completed != 60 || kinds(d)["timeout"] != 10 || d.Errors != 10 {
		t.Errorf("exit %d, completed %d, errors %v; stderr %q", code, d.Completed, kinds(d), errOut)
	}
	for _, k := range d.ErrorsByKind {
		if k.Kind == "timeout" && !strings.Contains(k.Example, "300ms") {
			t.Errorf("the timeout's example does not say its clock: %q", k.Example)
		}
	}
}

// TestBenchServerExits: a server that exits mid-run ends the run at once
// (every later call would fail): exit 3, with what ran so far.
func TestBenchServerExits(t *testing.T) {
	t.Parallel()
	code, d, errOut := benchJSON(t, with(peerArgs(mcptest.LoadPrefix+mcptest.LoadExits+":100"), "t", "-n", "100000", "-c", "4")...)
	if code != command.ExitConnect || d.OK || d.Aborted == "" || d.Completed < 100 || d.Completed > 110 || kinds(d)["transport"] < 1 {
		t.Errorf("exit %d, ok %v, aborted %q, completed %d, errors %v", code, d.OK, d.Aborted, d.Completed, kinds(d))
	}
	if !strings.Contains(errOut, "the run ended early") {
		t.Errorf("stderr %q", errOut)
	}
}

// TestBenchCollection: a collection's steps make an iteration, each
// worker with its captures; per-step counts and failures are its own.
func TestBenchCollection(t *testing.T) {
	t.Parallel()
	path := writeCollection(t, `steps:
  - call: add
    args: {a: 2, b: 3}
    capture: {sum: structuredContent.sum}
  - call: echo
    args: {text: "sum=${sum}"}
    expect: {text: {equals: "sum=5"}}
  - call: echo
    args: {text: "x"}
    expect: {text: {equals: "y"}}
  - call: echo
    args: {text: "never reached"}
`)
	expected := writeCollection(t, "steps:\n  - call: no_such_tool\n    expect: {error: {code: -32602}}\n")
	if code, d, errOut := benchJSON(t, with(peerArgs("demo"), expected, "-n", "10", "-c", "2")...); code != command.ExitOK || d.Errors != 0 || d.Completed != 10 {
		t.Errorf("an expected error counted as a failure: exit %d, %+v, %s", code, kinds(d), errOut)
	}
	code, d, errOut := benchJSON(t, with(peerArgs("demo"), path, "-n", "50", "-c", "3", "--max-errors", "100%")...)
	if code != command.ExitOK || d.Completed != 50 || d.Failed != 50 {
		t.Fatalf("exit %d, completed %d, failed %d; stderr %q", code, d.Completed, d.Failed, errOut)
	}
	calls := []int64{50, 50, 50, 0}
	errs := []int64{0, 0, 50, 0}
	for i, s := range d.Steps {
		if s.Calls != calls[i] || s.Errors != errs[i] {
			t.Errorf("step %d %s: %d calls, %d errors; want %d, %d", i, s.Name, s.Calls, s.Errors, calls[i], errs[i])
		}
	}
	if k := kinds(d); k["expectation"] != 50 {
		t.Errorf("errors %v", k)
	}
	code, out, _ := runCLI(t, "", with(peerArgs("demo"), "bench", path, "-n", "4", "-c", "1", "--max-errors", "100%")...)
	if code != command.ExitOK || !strings.Contains(out, "not run: an earlier step failed every time") || !strings.Contains(out, "by step") {
		t.Errorf("text: exit %d\n%s", code, out)
	}
	// A collection that answers the server's requests needs a connection
	// per worker when workers share one.
	asks := writeCollection(t, "steps:\n  - call: sample\n    args: {prompt: \"2+2?\"}\n    answers: {sampling: four}\n    expect: {text: {contains: four}}\n")
	code, _, errOut = runCLI(t, "", with(peerArgs("demo"), "bench", asks, "-c", "2")...)
	if code != command.ExitUsage || !strings.Contains(errOut, "--connections per-worker") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
	code, d, _ = benchJSON(t, with(peerArgs("demo"), asks, "-c", "2", "-n", "6", "--connections", "per-worker")...)
	if code != command.ExitOK || d.Completed != 6 || d.Errors != 0 {
		t.Errorf("per-worker answers: exit %d, completed %d, errors %v", code, d.Completed, kinds(d))
	}
}

// TestBenchText: the report a person reads, and the flags refused.
func TestBenchText(t *testing.T) {
	t.Parallel()
	code, out, errOut := runCLI(t, "", with(peerArgs("demo"), "bench", "echo", "text=hi", "-n", "200", "-c", "2", "--rate", "1000")...)
	wantIn(t, "stdout", out, "call echo: 2 workers on one connection, at 1,000/s", "200 calls in", "rate     asked 1,000/s, kept", "latency  min", "p99.9", "errors   0 (0%)")
	if code != command.ExitOK || errOut != "" {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
	// Fewer calls than workers: as many workers as calls, and said so.
	_, out, _ = runCLI(t, "", with(peerArgs("demo"), "bench", "echo", "text=hi", "-n", "3")...)
	wantIn(t, "stdout", out, "call echo: 3 workers on one connection", "3 calls in")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"echo", "-c", "0"}, "give 1 to 10000 workers"},
		{[]string{"echo", "--connections", "many"}, "want one or per-worker"},
		{[]string{"echo", "--max-errors", "lots"}, "invalid --max-errors"},
		{[]string{"echo", "--record", "x.jsonl"}, "--record is not for load"},
		{[]string{"echo", "-n", "-1"}, "cannot be negative"},
	} {
		code, _, errOut := runCLI(t, "", with(peerArgs("demo"), append([]string{"bench"}, c.args...)...)...)
		if code != command.ExitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stderr %q", c.args, code, errOut)
		}
	}
}

// TestBenchFlags: the flags reach the options; -n 1000 when neither -n
// nor -d is given.
func TestBenchFlags(t *testing.T) {
	f := &command.Factory{IO: nil}
	ios, _, _, _ := command.Test()
	f.IO = ios
	var got *BenchOptions
	cmd := NewCmdBench(f, func(_ context.Context, o *BenchOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"add", "a=1", "-c", "7", "-d", "3s", "--rate", "50", "--max-errors", "0.5%", "--", "srv"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.Tool != "add" || got.Concurrency != 7 || got.Duration != 3*time.Second || got.Rate != 50 || got.MaxErrors != 0.005 || got.Count != 0 || got.Target.Command[0] != "srv" {
		t.Errorf("%+v", got)
	}
	cmd = NewCmdBench(f, func(_ context.Context, o *BenchOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"smoke.yaml"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.Collection != "smoke.yaml" || got.Count != 1000 || got.cliTarget {
		t.Errorf("%+v", got)
	}
}

// TestBenchRefusesNothing: -n 0 and -d 0s would run the default 1000
// calls: refused, as a usage error.
func TestBenchRefusesNothing(t *testing.T) {
	for _, args := range [][]string{{"-n", "0"}, {"-d", "0s"}, {"-n", "0", "-d", "1s"}} {
		code, out, errOut := runCLI(t, "", with(peerArgs("demo"), append([]string{"bench", "echo", "text=hi"}, args...)...)...)
		if code != command.ExitUsage || !strings.Contains(errOut, "runs nothing") {
			t.Errorf("%v: exit %d\n%s\n%s", args, code, out, errOut)
		}
	}
}

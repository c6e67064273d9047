package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpi-dev/mcpi/internal/bounds"
	"github.com/mcpi-dev/mcpi/internal/command"
	"github.com/mcpi-dev/mcpi/internal/daemon"
	"github.com/mcpi-dev/mcpi/internal/live"
	"github.com/mcpi-dev/mcpi/internal/mcptext"
)

// lockedBuffer is a buffer a command writes while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// liveCmd is a command running in the background, its output readable
// while it runs.
type liveCmd struct {
	out, errOut *lockedBuffer
	cancel      context.CancelFunc
	done        chan command.ExitCode
}

func startLive(t *testing.T, dir string, args ...string) *liveCmd {
	t.Helper()
	c := &liveCmd{out: &lockedBuffer{}, errOut: &lockedBuffer{}, done: make(chan command.ExitCode, 1)}
	ios := command.NewIOStreams(strings.NewReader(""), c.out, c.errOut)
	f := &command.Factory{IO: ios, Executable: func() (string, error) { return os.Args[0], nil }, RuntimeDir: dir}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	c.cancel = cancel
	go func() { c.done <- run(ctx, f, args) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-c.done:
		case <-time.After(10 * time.Second):
		}
	})
	return c
}

// wait returns the command's exit code once it ended.
func (c *liveCmd) wait(t *testing.T) command.ExitCode {
	t.Helper()
	select {
	case code := <-c.done:
		c.done <- code
		return code
	case <-time.After(30 * time.Second):
		t.Fatalf("the command did not end; stdout %q, stderr %q", c.out, c.errOut)
	}
	return 0
}

func (c *liveCmd) running() bool {
	select {
	case code := <-c.done:
		c.done <- code
		return false
	default:
		return true
	}
}

// eventually polls cond for up to 15 seconds.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	if !poll(15*time.Second, cond) {
		t.Fatalf("timed out waiting for %s", what)
	}
}

// budgetsNamed returns the session's budgets called name, as its status
// shows them.
func budgetsNamed(t *testing.T, dir, session, name string) []bounds.Usage {
	t.Helper()
	st, err := live.Ask(dir, session, live.OpStatus)
	if err != nil {
		return nil
	}
	var out []bounds.Usage
	for _, u := range st.Budgets {
		if u.Name == name {
			out = append(out, u)
		}
	}
	return out
}

// poll checks cond every 10 ms until it holds or d has passed, and
// reports whether it held.
func poll(d time.Duration, cond func() bool) bool {
	deadline := time.After(d)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-tick.C:
		case <-deadline:
			return cond()
		}
	}
	return true
}

// pendingList returns mcpi pending --json.
func pendingList(t *testing.T, dir, name string) []daemon.Pending {
	t.Helper()
	code, out, errOut := runLive(t, dir, nil, "pending", "--json", "--session", name)
	if code != 0 {
		t.Fatalf("pending: exit %d, stderr %q", code, errOut)
	}
	var doc struct {
		mcptext.PendingHead
		Requests []daemon.Pending `json:"requests"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || doc.Requests == nil || doc.Count != len(doc.Requests) {
		t.Fatalf("pending --json: %v in %q", err, out)
	}
	return doc.Requests
}

func waitPending(t *testing.T, dir, name string, n int) []daemon.Pending {
	t.Helper()
	var list []daemon.Pending
	eventually(t, fmt.Sprintf("%d pending request(s)", n), func() bool {
		list = pendingList(t, dir, name)
		return len(list) == n
	})
	return list
}

func TestSessionPendingSampling(t *testing.T) {
	t.Parallel()
	dir := liveDir(t)
	// A short request timeout: a parked request stops the clock.
	startSession(t, dir, "park", append([]string{"--timeout", "1s"}, peerArgs("demo")...)...)
	// A tail follows the request under the same number.
	tl := startLive(t, dir, "tail", "--session", "park")
	eventually(t, "the tail to subscribe", func() bool { return len(budgetsNamed(t, dir, "park", "tail")) == 1 })
	call := startLive(t, dir, "call", "sample", "prompt=What is the capital of France?", "--session", "park")
	list := waitPending(t, dir, "park", 1)
	p := list[0]
	if p.ID != 1 || p.Kind != "sampling/createMessage" || p.Command != "call sample prompt=What is the capital of France?" ||
		p.LastText != "What is the capital of France?" || !strings.Contains(p.Summary, "capital of France") || len(p.Params) == 0 || p.Since.IsZero() {
		t.Errorf("pending: %+v", p)
	}
	// The raw --json shape.
	_, out, _ := runLive(t, dir, nil, "pending", "--json", "--session", "park")
	for _, key := range []string{`"count":1`, `"refused":0`, `"truncated":false`, `"requests":[`, `"id":1`, `"kind":"sampling/createMessage"`, `"command":`, `"since":`, `"ageMs":`, `"summary":`, `"lastText":`, `"maxTokens":100`, `"params":{"messages":`} {
		if !strings.Contains(out, key) {
			t.Errorf("pending --json lacks %s: %s", key, out)
		}
	}
	code, text, errOut := runLive(t, dir, nil, "pending", "--session", "park")
	if code != 0 || !strings.Contains(text, "#1 sampling/createMessage for: call sample") || !strings.Contains(text, "capital of France") || !strings.Contains(errOut, "1 server request(s) waiting") {
		t.Errorf("pending: exit %d, stdout %q, stderr %q", code, text, errOut)
	}
	// Longer than --timeout: the call waits all the same. (The time
	// passing is what is tested: no condition can stand for it.)
	time.Sleep(1500 * time.Millisecond)
	if !call.running() {
		t.Fatalf("the call ended while its request was parked: stdout %q, stderr %q", call.out, call.errOut)
	}
	// An answer of the wrong kind, and an unknown id: usage errors, and
	// the request keeps waiting.
	if code, _, errOut := runLive(t, dir, nil, "answer", "1", "--elicit-field", "name=x", "--session", "park"); code != command.ExitUsage || !strings.Contains(errOut, "--sampling-reply") {
		t.Errorf("elicitation answer to sampling: exit %d, stderr %q", code, errOut)
	}
	if code, _, errOut := runLive(t, dir, nil, "answer", "7", "--decline", "--session", "park"); code != command.ExitUsage || !strings.Contains(errOut, "no server request #7 is waiting in session park") {
		t.Errorf("unknown id: exit %d, stderr %q", code, errOut)
	}
	if code, _, errOut := runLive(t, dir, nil, "answer", "1", "--session", "park"); code != command.ExitUsage || !strings.Contains(errOut, "give the answer") {
		t.Errorf("no answer: exit %d, stderr %q", code, errOut)
	}
	if code, _, errOut := runLive(t, dir, nil, "answer", "1", "--sampling-reply", "Paris", "--session", "park"); code != 0 || !strings.Contains(errOut, "Answered server request #1") {
		t.Fatalf("answer: exit %d, stderr %q", code, errOut)
	}
	if code := call.wait(t); code != 0 || !strings.Contains(call.out.String(), "Paris") {
		t.Errorf("the call: exit %d, stdout %q, stderr %q", code, call.out, call.errOut)
	}
	if want := "waiting for server request #1 (sampling/createMessage): answer it with `mcpi answer 1 --session park`"; !strings.Contains(call.errOut.String(), want) {
		t.Errorf("the call's stderr %q lacks %q", call.errOut, want)
	}
	eventually(t, "the tail to see the request answered", func() bool {
		return strings.Contains(tl.out.String(), "request #1 sampling/createMessage answered")
	})
	if want := "request #1 sampling/createMessage waiting for: call sample prompt=What is the capital of France?: 1 message(s)"; !strings.Contains(tl.out.String(), want) {
		t.Errorf("the tail %q lacks %q", tl.out, want)
	}
	if list := pendingList(t, dir, "park"); len(list) != 0 {
		t.Errorf("still pending: %+v", list)
	}
	// Answered already: unknown now.
	if code, _, _ := runLive(t, dir, nil, "answer", "1", "--sampling-reply", "again", "--session", "park"); code != command.ExitUsage {
		t.Errorf("answering twice: exit %d", code)
	}
	// Outside a session.
	if code, _, errOut := runLive(t, dir, nil, "pending"); code != command.ExitUsage || !strings.Contains(errOut, "--session") {
		t.Errorf("pending without a session: exit %d, stderr %q", code, errOut)
	}
}

func TestSessionPendingElicitation(t *testing.T) {
	t.Parallel()
	dir := demoSession(t, "form")
	call := startLive(t, dir, "call", "elicit", "--session", "form")
	p := waitPending(t, dir, "form", 1)[0]
	if p.Kind != "elicitation/create" || p.Mode != "form" || p.Message == "" || len(p.Fields) == 0 || !strings.Contains(p.Summary, "name") {
		t.Errorf("pending: %+v", p)
	}
	var name *daemon.PendingField
	for i := range p.Fields {
		if p.Fields[i].Name == "name" {
			name = &p.Fields[i]
		}
	}
	if name == nil || !name.Required || name.Title != "Name" {
		t.Errorf("fields: %+v", p.Fields)
	}
	// A value the form refuses: exit 2, still waiting.
	if code, _, errOut := runLive(t, dir, nil, "answer", fmt.Sprint(p.ID), "--elicit-field", "nope=1", "--session", "form"); code != command.ExitUsage || !strings.Contains(errOut, `no field "nope"`) {
		t.Errorf("bad field: exit %d, stderr %q", code, errOut)
	}
	// An array typed as text: refused, saying how to give it as JSON.
	if code, _, errOut := runLive(t, dir, nil, "answer", fmt.Sprint(p.ID), "--elicit-field", "name=Grace", "--elicit-field", "toppings=cheese, ham", "--session", "form"); code != command.ExitUsage ||
		!strings.Contains(errOut, `is not an array: give an array as JSON, e.g. toppings:='["cheese","ham"]'`) {
		t.Errorf("an array as text: exit %d, stderr %q", code, errOut)
	}
	runLiveOK(t, dir, "answer", fmt.Sprint(p.ID), "--elicit-field", "name=Grace", "--elicit-field", `toppings:=["cheese","ham"]`, "--session", "form")
	if code := call.wait(t); code != 0 || !strings.Contains(call.out.String(), "Grace") || !strings.Contains(call.out.String(), "accept") || !strings.Contains(call.out.String(), "ham") {
		t.Errorf("the call: exit %d, stdout %q, stderr %q", code, call.out, call.errOut)
	}

	// The call's own flags take KEY:=JSON alike, and say the same.
	if code, out, errOut := runLive(t, dir, nil, "call", "elicit", "--elicit-field", "name=Ada", "--elicit-field", `toppings:=["olives"]`, "--session", "form"); code != 0 || !strings.Contains(out, "olives") {
		t.Errorf("call --elicit-field KEY:=JSON: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if code, _, errOut := runLive(t, dir, nil, "call", "elicit", "--elicit-field", ":=1", "--session", "form"); code != command.ExitUsage || !strings.Contains(errOut, "want KEY=VALUE or KEY:=JSON") {
		t.Errorf("--elicit-field :=1: exit %d, stderr %q", code, errOut)
	}

	call = startLive(t, dir, "call", "elicit", "--session", "form")
	p = waitPending(t, dir, "form", 1)[0]
	if code, _, errOut := runLive(t, dir, nil, "answer", fmt.Sprint(p.ID), "--decline", "--json", "--session", "form"); code != 0 || !strings.Contains(strings.TrimSpace(errOut), "") {
		t.Fatalf("decline: exit %d, stderr %q", code, errOut)
	}
	if code := call.wait(t); code != 0 || !strings.Contains(call.out.String(), "decline") {
		t.Errorf("the call: exit %d, stdout %q, stderr %q", code, call.out, call.errOut)
	}
}

// A request whose call is cancelled is withdrawn by the server, and
// leaves the list.
func TestSessionPendingWithdrawn(t *testing.T) {
	t.Parallel()
	dir := demoSession(t, "gone")
	call := startLive(t, dir, "call", "sample", "prompt=hi", "--session", "gone")
	waitPending(t, dir, "gone", 1)
	call.cancel()
	if code := call.wait(t); code != command.ExitInterrupted {
		t.Errorf("the call: exit %d, stderr %q", code, call.errOut)
	}
	waitPending(t, dir, "gone", 0)
}

// In the modern era the input request of a tools/call is parked too, and
// belongs to the call.
func TestSessionPendingModern(t *testing.T) {
	t.Parallel()
	dir := liveDir(t)
	startSession(t, dir, "mrtr", peerArgs("demo:modern")...)
	call := startLive(t, dir, "call", "sample", "prompt=hello", "--session", "mrtr")
	p := waitPending(t, dir, "mrtr", 1)[0]
	if p.Kind != "sampling/createMessage" || p.Command != "call sample prompt=hello" {
		t.Errorf("pending: %+v", p)
	}
	runLiveOK(t, dir, "answer", fmt.Sprint(p.ID), "--sampling-reply", "hi back", "--session", "mrtr")
	if code := call.wait(t); code != 0 || !strings.Contains(call.out.String(), "hi back") {
		t.Errorf("the call: exit %d, stdout %q, stderr %q", code, call.out, call.errOut)
	}
}

// tailUntil makes calls of the log tool until every tail has seen its
// message (a tail follows from when it subscribed, which the test cannot
// see otherwise).
func tailUntil(t *testing.T, dir, name, message string, tails ...*liveCmd) {
	t.Helper()
	eventually(t, "the tails to see "+message+" "+fmt.Sprint(tails[0].out, tails[0].errOut), func() bool {
		runLiveOK(t, dir, "call", "log", "message="+message, "--session", name)
		for _, tl := range tails {
			if !strings.Contains(tl.out.String(), message) {
				return false
			}
		}
		return true
	})
}

func TestSessionTail(t *testing.T) {
	t.Parallel()
	dir := demoSession(t, "logs")
	if code, _, errOut := runLive(t, dir, nil, "log-level", "warning", "--session", "logs"); code != 0 || !strings.Contains(errOut, "warning") {
		t.Fatalf("log-level: exit %d, stderr %q", code, errOut)
	}
	if code, _, errOut := runLive(t, dir, nil, "log-level", "loud", "--session", "logs"); code != command.ExitUsage {
		t.Errorf("log-level loud: exit %d, stderr %q", code, errOut)
	}
	text := startLive(t, dir, "tail", "--session", "logs")
	wire := startLive(t, dir, "tail", "--wire", "--json", "--session", "logs")
	tailUntil(t, dir, "logs", "hello tails", text, wire)
	runLiveOK(t, dir, "call", "log", "message=red\x1b[31m", "--session", "logs")
	tailUntil(t, dir, "logs", "hello again", text, wire)

	// Text: a line per log message at warning and above, sanitised.
	out := text.out.String()
	if !strings.Contains(out, ` log error [mcpi-demo] hello tails (error)`) || !strings.Contains(out, "red") || strings.Contains(out, " log info ") || strings.Contains(out, "\x1b") {
		t.Errorf("tail: %q", out)
	}
	// JSON Lines: the notifications and, with --wire, the frames both ways.
	var sawCall, sawLog, sawResult bool
	for _, line := range strings.Split(strings.TrimSpace(wire.out.String()), "\n") {
		var e daemon.TailEvent
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("tail --json line %q: %v", line, err)
		}
		switch {
		case e.Kind == "frame" && e.Dir == "send" && strings.Contains(string(e.Frame), `"method":"tools/call"`):
			sawCall = true
		case e.Kind == "frame" && e.Dir == "recv" && strings.Contains(string(e.Frame), `"result"`):
			sawResult = true
		case e.Kind == "notification" && e.Method == "notifications/message" && strings.Contains(string(e.Params), "warning"):
			sawLog = true
		}
	}
	if !sawCall || !sawLog || !sawResult {
		t.Errorf("tail --wire --json: call %v, log %v, result %v in\n%s", sawCall, sawLog, sawResult, wire.out)
	}
	// Interrupted, a tail ends; the session's end ends the others.
	text.cancel()
	if code := text.wait(t); code != command.ExitInterrupted {
		t.Errorf("tail interrupted: exit %d", code)
	}
	// An interrupt ends a stream of JSON Lines: it is no document of it.
	wire.cancel()
	if code := wire.wait(t); code != command.ExitInterrupted {
		t.Errorf("tail --json interrupted: exit %d", code)
	}
	if out := wire.out.String(); strings.Contains(out, "\n"+`{"error":`) || strings.Contains(out, "context canceled") {
		t.Errorf("tail --json wrote an error into its stream on an interrupt:\n%s", out[max(0, len(out)-300):])
	}
	runLive(t, dir, nil, "session", "stop", "logs")
}

// A tail that reads nothing holds up neither the session nor the other
// tails; it misses events and says how many.
func TestSessionTailNeverReads(t *testing.T) {
	t.Parallel()
	dir := demoSession(t, "slowtail")
	c, err := live.Dial(dir, "slowtail")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Send(live.Request{Op: live.OpRun, Proto: live.ProtocolVersion(), Args: []string{"tail", "--wire", "--session", "slowtail"}}); err != nil {
		t.Fatal(err)
	}
	other := startLive(t, dir, "tail", "--wire", "--session", "slowtail")
	eventually(t, "both tails to run", func() bool {
		st, err := live.Ask(dir, "slowtail", live.OpStatus)
		return err == nil && st.Active == 2
	})
	eventually(t, "both tails to subscribe", func() bool { return len(budgetsNamed(t, dir, "slowtail", "tail")) == 2 })
	// The 24 calls share one clock: were they held up by the tail that
	// never reads, one would be interrupted (exit 130) when it ran out.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for i := range 24 {
		code, _, errOut := runLive(t, dir, ctx, "call", "big_output", "bytes=500000", "--session", "slowtail")
		if code != 0 {
			t.Fatalf("call %d: exit %d, stderr %q (held up by the tail that never reads?)", i, code, errOut)
		}
	}
	if code, out, _ := runLive(t, dir, nil, "call", "add", "a=1", "b=2", "--session", "slowtail"); code != 0 || !strings.Contains(out, "3") {
		t.Errorf("a call after: exit %d", code)
	}
	eventually(t, "the reading tail to see the last call", func() bool { return strings.Contains(other.out.String(), `"a":1`) })
	// Read the slow tail now: it reports what it dropped.
	dropped := false
	c.SetDeadline(time.Now().Add(20 * time.Second))
	for !dropped {
		var f live.Frame
		if err := c.Recv(&f); err != nil {
			t.Fatalf("reading the slow tail: %v", err)
		}
		dropped = strings.Contains(string(f.Err), "dropped: this tail read too slowly")
	}
}

func TestSessionTailSubscribe(t *testing.T) {
	t.Parallel()
	dir := demoSession(t, "sub")
	if code, _, errOut := runLive(t, dir, nil, "subscribe", "demo://counter", "--session", "sub"); code != 0 || !strings.Contains(errOut, "Subscribed to demo://counter") {
		t.Fatalf("subscribe: exit %d, stderr %q", code, errOut)
	}
	tl := startLive(t, dir, "tail", "--session", "sub")
	eventually(t, "the tail to see the update", func() bool {
		runLive(t, dir, nil, "call", "bump_counter", "--session", "sub")
		return strings.Contains(tl.out.String(), "notifications/resources/updated") && strings.Contains(tl.out.String(), "demo://counter")
	})
	if code, _, errOut := runLive(t, dir, nil, "subscribe", "demo://counter", "--unsubscribe", "--json", "--session", "sub"); code != 0 {
		t.Errorf("unsubscribe: exit %d, stderr %q", code, errOut)
	}
}

// An agent with one shell: call --no-wait returns at once, exit 8, when
// the server asks something the flags do not answer, with the request in
// full and how to answer it; mcpi result then gives the call's outcome.
func TestCallNoWait(t *testing.T) {
	t.Parallel()
	dir := demoSession(t, "nw")
	in := func(args ...string) (command.ExitCode, string, string) {
		return runLive(t, dir, nil, append(args, "--session", "nw")...)
	}
	code, out, errOut := in("call", "elicit", "--no-wait", "--json")
	var w mcptext.Waiting
	if code != ExitWaiting || json.Unmarshal([]byte(out), &w) != nil || w.Status != "waiting" || w.Job != 1 || len(w.Pending) != 1 {
		t.Fatalf("call --no-wait: exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	var name *daemon.PendingField
	for i, f := range w.Pending[0].Fields {
		if f.Name == "name" {
			name = &w.Pending[0].Fields[i]
		}
	}
	if name == nil || !name.Required || name.Description == "" || w.Result != "mcpi result 1 --session nw" || !strings.Contains(w.Answer[0], "mcpi answer 1 --session nw") {
		t.Errorf("the waiting document lacks the form or the commands: %s", out)
	}
	// The text of pending shows the form in full.
	code, out, _ = in("pending")
	if code != command.ExitOK || !strings.Contains(out, "field color (string; one of \"red\", \"green\", \"blue\"; default \"green\")") || !strings.Contains(out, "field name (string; required") {
		t.Errorf("pending: exit %d\n%s", code, out)
	}
	// Asked again before an answer: still waiting.
	if code, out, _ := in("result", "1"); code != ExitWaiting || !strings.Contains(out, "is waiting") {
		t.Errorf("result before the answer: exit %d\n%s", code, out)
	}
	if code, _, errOut := in("answer", "1", "--elicit-field", "name=Ada"); code != command.ExitOK {
		t.Fatalf("answer: exit %d, %s", code, errOut)
	}
	if code, out, errOut := in("result", "1"); code != command.ExitOK || !strings.Contains(out, "Ada") || !strings.Contains(out, `"content":[`) {
		t.Errorf("result: exit %d\nstdout %s\nstderr %s", code, out, errOut)
	} else if strings.Contains(errOut, "waiting for server request #1") || strings.Contains(errOut, "answer it with") {
		// The request was answered: the call's line that said it waited
		// is not replayed.
		t.Errorf("result after the answer still says the request waits:\n%s", errOut)
	}
	if code, _, errOut := in("result", "1"); code != command.ExitUsage || !strings.Contains(errOut, "has no job 1") {
		t.Errorf("result of a job already fetched: exit %d, %s", code, errOut)
	}
	// A call that asks nothing ends as usual.
	if code, out, _ := in("call", "add", "a=1", "b=2", "--no-wait"); code != command.ExitOK || !strings.Contains(out, `"sum": 3`) && !strings.Contains(out, `{"sum":3}`) {
		t.Errorf("call add --no-wait: exit %d, %s", code, out)
	}
	// Outside a session it is a usage error.
	if code, _, errOut := runCLI(t, "", with(peerArgs("demo"), "call", "add", "a=1", "b=2", "--no-wait")...); code != command.ExitUsage || !strings.Contains(errOut, "--no-wait runs the call in a live session") {
		t.Errorf("one-shot --no-wait: exit %d, %s", code, errOut)
	}
	// The jobs are within a budget the status shows.
	_, out, _ = runLive(t, dir, nil, "session", "show", "nw", "--json")
	if !strings.Contains(out, `"name":"jobs (call --no-wait)"`) && !strings.Contains(out, `"name": "jobs (call --no-wait)"`) {
		t.Errorf("no jobs budget in the status: %s", out)
	}
}

// Calls run with --no-wait one after the other against a legacy server
// (whose requests name no call): each job's result lists only its own
// request, pending names each request's command (--json or not), and a
// call that returned while it waits is no failure of the session.
func TestCallNoWaitJobsKeepTheirOwn(t *testing.T) {
	t.Parallel()
	dir := liveDir(t)
	startSession(t, dir, "own", peerArgs("demo:legacy")...)
	in := func(args ...string) (command.ExitCode, string, string) {
		return runLive(t, dir, nil, append(args, "--session", "own")...)
	}
	for i, json := range []bool{true, false, true} {
		args := []string{"call", "elicit", "--no-wait"}
		if json {
			args = append(args, "--json")
		}
		if code, out, errOut := in(args...); code != ExitWaiting {
			t.Fatalf("call %d --no-wait: exit %d\nstdout %s\nstderr %s", i+1, code, out, errOut)
		}
	}
	for _, p := range pendingList(t, dir, "own") {
		if !strings.HasPrefix(p.Command, "call elicit") {
			t.Errorf("pending #%d names command %q", p.ID, p.Command)
		}
	}
	if code, out, _ := in("pending"); code != command.ExitOK || strings.Contains(out, "for: ?") || strings.Count(out, "for: call elicit") != 3 {
		t.Errorf("pending: exit %d, a request with no command:\n%s", code, out)
	}
	code, out, _ := in("result", "1", "--json")
	var w mcptext.Waiting
	if code != ExitWaiting || json.Unmarshal([]byte(out), &w) != nil || len(w.Pending) != 1 || w.Pending[0].ID != 1 {
		t.Errorf("result 1: exit %d, want only request #1:\n%s", code, out)
	}
	_, out, _ = runLive(t, dir, nil, "session", "show", "own", "--json")
	var st live.Status
	if err := json.Unmarshal([]byte(out), &st); err != nil || st.Failed != 0 {
		t.Errorf("session show counts %d failed command(s) (%v), want none:\n%s", st.Failed, err, out)
	}
}

package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcpi-dev/mcpi/internal/bounds"
	"github.com/mcpi-dev/mcpi/internal/command"
	"github.com/mcpi-dev/mcpi/internal/iostreams"
	"github.com/mcpi-dev/mcpi/internal/live"
	"github.com/mcpi-dev/mcpi/internal/mcptest"
	"github.com/mcpi-dev/mcpi/internal/mcptext"
	"github.com/mcpi-dev/mcpi/internal/session"
)

// sessionBudget returns the named budget of a session's status (mcpi
// session show --json).
func sessionBudget(t *testing.T, dir, name, budget string) (bounds.Usage, bool) {
	t.Helper()
	code, out, errOut := runLive(t, dir, nil, "session", "show", name, "--json")
	if code != 0 {
		t.Fatalf("session show: exit %d, stderr %q", code, errOut)
	}
	var st live.Status
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("session show --json: %v in %s", err, out)
	}
	for _, u := range st.Budgets {
		if u.Name == budget {
			return u, true
		}
	}
	return bounds.Usage{}, false
}

// TestSessionStatusShowsRefusalsBudget: the queue of the session client's
// refusals to server requests is one of the budgets session show prints.
func TestSessionStatusShowsRefusalsBudget(t *testing.T) {
	t.Parallel()
	dir := demoSession(t, "refusals")
	u, ok := sessionBudget(t, dir, "refusals", session.RefusalsBudget)
	if !ok || u.MaxCount != 4096 || u.MaxBytes != 1<<20 {
		t.Errorf("the refusals' budget in session show --json: %+v (found: %v)", u, ok)
	}
}

// TestSessionCallEndsWhenAnswersFillThePipe: a server that sends
// requests and stops reading gets its answers piled up in the pipe; a call
// in the session after that still ends within the session's --timeout and
// --max-time (exit 5), it does not hang on its write.
func TestSessionCallEndsWhenAnswersFillThePipe(t *testing.T) {
	t.Parallel()
	dir := liveDir(t)
	startSession(t, dir, "deaf", append([]string{"--timeout", "1s", "--max-time", "2s"},
		peerArgs(mcptest.SessionPeer(mcptest.SessionStopsReading, 5000, 0))...)...)
	runLiveOK(t, dir, "call", "fill", "--session", "deaf")
	// The answers reach the pipe over a moment: call until a call's write
	// is the one that blocks, each call within the session's clocks.
	unread := false
	for i := 0; i < 5 && !unread; i++ {
		var code command.ExitCode
		var errOut string
		within(t, 20*time.Second, fmt.Sprintf("call %d", i+1), func() {
			code, _, errOut = runLive(t, dir, nil, "call", "echo", "--session", "deaf")
		})
		if code != command.ExitTimeout {
			t.Fatalf("call %d: exit %d (want %d within the session's clocks), stderr %q", i+1, code, command.ExitTimeout, errOut)
		}
		unread = strings.Contains(errOut, "did not read the request")
	}
	if !unread {
		t.Errorf("no call found the pipe full")
	}
}

// TestSessionParkedRequestsHaveABudget: a server that floods a session
// with large requests no command answers gets the ones past the parked
// requests' budget (in bytes as in count) refused with a JSON-RPC error;
// the command they hold up is told once; what is parked stays within the
// budget, which the session's status shows.
func TestSessionParkedRequestsHaveABudget(t *testing.T) {
	t.Parallel()
	dir := liveDir(t)
	const n, size, maxBytes = 20, 10000, 64 << 10
	startSession(t, dir, "flood", append([]string{"--parked-max-bytes", fmt.Sprint(maxBytes)},
		peerArgs(mcptest.SessionPeer(mcptest.SessionFloodRequests, n, size))...)...)
	call := startLive(t, dir, "call", "flood", "--session", "flood")
	var u bounds.Usage
	eventually(t, "every request parked or refused", func() bool {
		var ok bool
		u, ok = sessionBudget(t, dir, "flood", "parked requests")
		return ok && int64(u.Count)+u.Refused == n
	})
	if u.Bytes > maxBytes || u.PeakBytes > maxBytes || u.MaxBytes != maxBytes || u.Count == 0 || u.Refused == 0 {
		t.Errorf("parked requests' budget: %+v (at most %d bytes)", u, maxBytes)
	}
	list := pendingList(t, dir, "flood")
	if len(list) != u.Count {
		t.Errorf("pending lists %d requests, the budget holds %d", len(list), u.Count)
	}
	for _, p := range list {
		if len(p.Summary) > bounds.MaxText+32 || len(p.Message) != size {
			t.Errorf("pending #%d: a summary of %d bytes (at most %d and a note), a message of %d (want %d in full)", p.ID, len(p.Summary), bounds.MaxText, len(p.Message), size)
		}
	}
	// The warning reaches the command's stderr through the session's
	// socket: a moment after the budget counts the refusals.
	eventually(t, "the command is warned of the refusals", func() bool {
		return strings.Contains(call.errOut.String(), "mcpi refused server request")
	})
	if got := strings.Count(call.errOut.String(), "mcpi refused server request"); got != 1 {
		t.Errorf("the command was warned %d times of the refusals, want once:\n%s", got, call.errOut)
	}
	code, out, errOut := runLive(t, dir, nil, "pending", "--session", "flood")
	if code != 0 || !strings.Contains(errOut, fmt.Sprintf("%d server request(s) waiting; %d more were refused and are not listed", u.Count, u.Refused)) ||
		strings.Count(out, "\n#") != u.Count-1 {
		t.Errorf("pending: exit %d, stderr %q, %d request(s) listed", code, errOut, strings.Count(out, "\n#")+1)
	}
	_, out, _ = runLive(t, dir, nil, "pending", "--json", "--session", "flood")
	var head mcptext.PendingHead
	if err := json.Unmarshal([]byte(out), &head); err != nil || head.Count != u.Count || head.Refused != u.Refused || !head.Truncated {
		t.Errorf("pending --json says %+v (%v), the budget %+v", head, err, u)
	}
	// An answered request gives its room back.
	runLiveOK(t, dir, "answer", fmt.Sprint(list[0].ID), "--decline", "--session", "flood")
	eventually(t, "the answered request's room given back", func() bool {
		v, _ := sessionBudget(t, dir, "flood", "parked requests")
		return v.Count == u.Count-1 && v.Bytes < u.Bytes
	})
	call.cancel()
}

// TestSessionPendingOneBound: past the server requests a session has in
// progress by default, the parked requests' budget is the one bound: as
// many are parked as it holds, and those past it are refused where
// pending counts them, the same in text and JSON.
func TestSessionPendingOneBound(t *testing.T) {
	t.Parallel()
	dir := liveDir(t)
	const n, parked = session.DefaultMaxServerRequests + 60, session.DefaultMaxServerRequests + 30
	startSession(t, dir, "many", append([]string{"--parked-max", fmt.Sprint(parked)},
		peerArgs(mcptest.SessionPeer(mcptest.SessionFloodRequests, n, 10))...)...)
	call := startLive(t, dir, "call", "flood", "--session", "many")
	defer call.cancel()
	var u bounds.Usage
	eventually(t, "every request parked or refused", func() bool {
		var ok bool
		u, ok = sessionBudget(t, dir, "many", "parked requests")
		return ok && int64(u.Count)+u.Refused == n
	})
	if u.Count != parked || u.Refused != n-parked {
		t.Errorf("parked %d and refused %d of %d, want %d parked (--parked-max)", u.Count, u.Refused, n, parked)
	}
	if list := pendingList(t, dir, "many"); len(list) != parked {
		t.Errorf("pending --json lists %d, want %d", len(list), parked)
	}
	_, out, errOut := runLive(t, dir, nil, "pending", "--session", "many")
	if got := strings.Count(out, "\n#") + 1; got != parked || !strings.Contains(errOut, fmt.Sprintf("%d more were refused", n-parked)) {
		t.Errorf("pending lists %d, want %d; stderr %q", got, parked, errOut)
	}
}

// TestSessionLogIsBounded: a server that floods a session with junk
// stdout lines (each a bad frame the session warns about) leaves a daemon
// log within its budget: the warnings past the first few are counted.
func TestSessionLogIsBounded(t *testing.T) {
	t.Parallel()
	dir := liveDir(t)
	const maxBytes = 16 << 10
	startSession(t, dir, "junk", append([]string{"--log-max-bytes", fmt.Sprint(maxBytes)},
		peerArgs(mcptest.SessionPeer(mcptest.SessionJunkStdout, 100000, 1))...)...)
	code, out, errOut := runLive(t, dir, nil, "call", "junk", "--session", "junk")
	if code != 0 || !strings.Contains(out, "junk sent") {
		t.Fatalf("call junk: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	b, err := os.ReadFile(live.LogPath(dir, "junk"))
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > maxBytes {
		t.Errorf("the daemon's log holds %d bytes, its budget is %d", len(b), maxBytes)
	}
	if !strings.Contains(string(b), "warnings of kind bad-frame so far") {
		t.Errorf("the log does not count the warnings it does not hold:\n%s", bounds.ClipTo(string(b), 4000))
	}
	u, ok := sessionBudget(t, dir, "junk", "daemon log")
	if !ok || u.Bytes > maxBytes || u.MaxBytes != maxBytes {
		t.Errorf("the daemon log's budget: %+v", u)
	}
}

// TestSessionStartRace: two starts of one name at once: one starts, the
// other exits 3 saying the name is running already and touches nothing;
// the winner stays listed, usable and stoppable.
func TestSessionStartRace(t *testing.T) {
	t.Parallel()
	dir := liveDir(t)
	for round := range 10 {
		name := fmt.Sprintf("race%d", round)
		var wg sync.WaitGroup
		type result struct {
			code        command.ExitCode
			out, errOut string
		}
		res := make([]result, 2)
		for i := range res {
			wg.Add(1)
			go func() {
				defer wg.Done()
				code, out, errOut := runLive(t, dir, nil, append([]string{"session", "start", name, "--idle", "2m"}, peerArgs("demo")...)...)
				res[i] = result{code, out, errOut}
			}()
		}
		wg.Wait()
		won := 0
		for _, r := range res {
			switch {
			case r.code == command.ExitOK && strings.TrimSpace(r.out) == name:
				won++
			case r.code == command.ExitConnect && strings.Contains(r.errOut, "running already"):
			default:
				t.Errorf("round %d: exit %d, stdout %q, stderr %q", round, r.code, r.out, r.errOut)
			}
		}
		if won != 1 {
			t.Fatalf("round %d: %d starts won: %+v", round, won, res)
		}
		rec, err := live.ReadRecord(dir, name)
		if err != nil {
			t.Fatalf("round %d: the winner's record: %v", round, err)
		}
		if code, out, errOut := runLive(t, dir, nil, "session", "list"); code != 0 || !strings.Contains(out, name) || !strings.Contains(out, "running") {
			t.Errorf("round %d: session list: exit %d\n%s%s", round, code, out, errOut)
		}
		if code, _, errOut := runLive(t, dir, nil, "ping", "--session", name); code != 0 {
			t.Errorf("round %d: ping: exit %d, stderr %q", round, code, errOut)
		}
		if code, _, errOut := runLive(t, dir, nil, "session", "stop", name); code != 0 {
			t.Errorf("round %d: stop: exit %d, stderr %q", round, code, errOut)
		}
		if syscall.Kill(rec.PID, 0) == nil && !zombie(rec.PID) {
			syscall.Kill(rec.PID, syscall.SIGKILL)
			t.Fatalf("round %d: the winner's daemon (pid %d) outlived session stop", round, rec.PID)
		}
	}
}

// zombie reports whether pid has exited and waits to be reaped.
func zombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	return strings.HasPrefix(rest, "Z")
}

// TestSessionStopIsNoInterrupt: mcpi session stop ends a running tail
// with exit 0 and a call under way with exit 3, each saying the session
// was stopped, as when the server exits; neither is taken for Ctrl-C.
func TestSessionStopIsNoInterrupt(t *testing.T) {
	t.Parallel()
	dir := demoSession(t, "stopped")
	tail := startLive(t, dir, "tail", "--session", "stopped")
	call := startLive(t, dir, "call", "slow", "ms=60000", "--session", "stopped")
	eventually(t, "the tail and the call under way", func() bool {
		code, out, _ := runLive(t, dir, nil, "session", "show", "stopped", "--json")
		var st live.Status
		return code == 0 && json.Unmarshal([]byte(out), &st) == nil && st.Active == 2
	})
	runLiveOK(t, dir, "session", "stop", "stopped")
	if code := tail.wait(t); code != command.ExitOK || !strings.Contains(tail.errOut.String(), "session stopped ended: stopped by mcpi session stop") {
		t.Errorf("tail: exit %d, stderr %q", code, tail.errOut)
	}
	if code := call.wait(t); code != command.ExitConnect || !strings.Contains(call.errOut.String(), "session stopped has ended (stopped): stopped by mcpi session stop") {
		t.Errorf("call: exit %d, stderr %q", code, call.errOut)
	}
}

// TestStoppedSessionStaysListed: after mcpi session stop, the session
// stays listed as stopped, with the reason, and session show works, for
// the hour ended sessions are kept (live.KeepEnded); past it, it is gone.
func TestStoppedSessionStaysListed(t *testing.T) {
	t.Parallel()
	dir := demoSession(t, "kept")
	runLiveOK(t, dir, "session", "stop", "kept")
	const reason = "stopped by mcpi session stop"
	listed := func() (bool, string) {
		t.Helper()
		code, out, errOut := runLive(t, dir, nil, "session", "list")
		if code != 0 {
			t.Fatalf("session list: exit %d, stderr %q", code, errOut)
		}
		return strings.Contains(out, "kept"), out
	}
	if ok, out := listed(); !ok || !strings.Contains(out, "stopped") || !strings.Contains(out, reason) {
		t.Errorf("session list after stop:\n%s", out)
	}
	code, out, errOut := runLive(t, dir, nil, "session", "show", "kept", "--json")
	var st live.Status
	if code != 0 || json.Unmarshal([]byte(out), &st) != nil || st.State != live.StateStopped || st.Reason != reason {
		t.Errorf("session show after stop: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if code, out, errOut := runLive(t, dir, nil, "session", "show", "kept"); code != 0 || !strings.Contains(out, "stopped") {
		t.Errorf("session show (text) after stop: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	// Within the hour it is kept; past it, list forgets it.
	age := func(d time.Duration) {
		t.Helper()
		rec, err := live.ReadRecord(dir, "kept")
		if err != nil {
			t.Fatal(err)
		}
		rec.Ended = time.Now().Add(-d)
		if err := live.WriteRecord(dir, rec); err != nil {
			t.Fatal(err)
		}
	}
	age(live.KeepEnded - time.Minute)
	if ok, out := listed(); !ok {
		t.Errorf("a session stopped %v ago is not listed:\n%s", live.KeepEnded-time.Minute, out)
	}
	age(live.KeepEnded + time.Minute)
	if ok, out := listed(); ok {
		t.Errorf("a session stopped %v ago is still listed:\n%s", live.KeepEnded+time.Minute, out)
	}
}

// TestWriteJSONArray: an array printed one element at a time reads back
// as the whole array would, for a program and on a terminal.
func TestWriteJSONList(t *testing.T) {
	elems := []map[string]any{{"id": 1, "s": "a\u202eb"}, {"id": 2, "params": map[string]any{"x": []int{1, 2}}}}
	want, _ := json.Marshal(elems)
	for _, tty := range []bool{false, true} {
		ios, _, out, _ := command.Test()
		ios.StdoutTTY = tty
		if err := iostreams.WriteJSONList(ios, nil, "", len(elems), func(i int) any { return elems[i] }); err != nil {
			t.Fatal(err)
		}
		var got []map[string]any
		if err := json.Unmarshal(out.Bytes(), &got); err != nil {
			t.Fatalf("tty %v: %v in %s", tty, err, out)
		}
		b, _ := json.Marshal(got)
		if string(b) != string(want) {
			t.Errorf("tty %v: %s, want %s", tty, b, want)
		}
		if strings.Contains(out.String(), "\u202e") {
			t.Errorf("tty %v: a bidi override reached the output raw: %q", tty, out)
		}
	}
	ios, _, out, _ := command.Test()
	iostreams.WriteJSONList(ios, nil, "", 0, nil)
	if out.String() != "[]\n" {
		t.Errorf("no element: %q", out)
	}
	// With a head: one object, the array its last member.
	for _, n := range []int{0, len(elems)} {
		for _, tty := range []bool{false, true} {
			ios, _, out, _ := command.Test()
			ios.StdoutTTY = tty
			if err := iostreams.WriteJSONList(ios, mcptext.PendingHead{Count: n, Refused: 3, Truncated: true}, "requests", n, func(i int) any { return elems[i] }); err != nil {
				t.Fatal(err)
			}
			var got struct {
				mcptext.PendingHead
				Requests []map[string]any `json:"requests"`
			}
			if err := json.Unmarshal(out.Bytes(), &got); err != nil || got.Count != n || got.Refused != 3 || len(got.Requests) != n || got.Requests == nil {
				t.Errorf("%d element(s), tty %v: %+v (%v) from %s", n, tty, got, err, out)
			}
		}
	}
}

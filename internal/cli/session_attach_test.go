package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/mcpi-dev/mcpi/internal/answer"
	"github.com/mcpi-dev/mcpi/internal/command"
	"github.com/mcpi-dev/mcpi/internal/daemon"
	"github.com/mcpi-dev/mcpi/internal/live"
	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/mcptest"
	"github.com/mcpi-dev/mcpi/internal/safetext"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/transport"
	"github.com/mcpi-dev/mcpi/internal/tui"
)

// eventLog is a tap that keeps what it saw.
type eventLog struct {
	mu     sync.Mutex
	events []transport.Event
}

func (l *eventLog) Observe(e transport.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, e)
}

// frames counts the frames whose data contains s.
func (l *eventLog) frames(s string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, e := range l.events {
		if e.Kind == transport.KindFrame && strings.Contains(string(e.Data), s) {
			n++
		}
	}
	return n
}

func (l *eventLog) waitFrames(t *testing.T, s string, n int) {
	t.Helper()
	if !poll(10*time.Second, func() bool { return l.frames(s) >= n }) {
		t.Fatalf("the attached client's tap saw %d frame(s) with %q, want %d", l.frames(s), s, n)
	}
}

// replyHandler answers sampling with a fixed reply, counting the requests.
type replyHandler struct {
	mu    sync.Mutex
	asked int
	reply string
}

func (h *replyHandler) CreateMessage(context.Context, *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	h.mu.Lock()
	h.asked++
	h.mu.Unlock()
	return answer.TextReply(h.reply), nil
}

func (h *replyHandler) Elicit(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	return &mcp.ElicitResult{Action: mcp.ElicitDecline}, nil
}

func (h *replyHandler) ListRoots(context.Context) (*mcp.ListRootsResult, error) {
	return &mcp.ListRootsResult{Roots: []mcp.Root{}}, nil
}

// TestAttachedClient attaches a client to a live session as mcpi connect
// --session does, and checks what a person watching it relies on: the
// session's past on the wire, the commands of other processes live, its
// own calls with their progress, the server requests nobody else answers,
// and the session's end.
func TestAttachedClient(t *testing.T) {
	for _, era := range []string{"legacy", "modern"} {
		t.Run(era, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			dir := liveDir(t)
			startSession(t, dir, "s", "-e", mcptest.PeerEnv+"=demo:"+era, "--", os.Args[0], "-test.run=^$")
			runLiveOK(t, dir, "call", "add", "a=1", "b=2", "--session", "s")

			conn, info, err := attach(dir, "s")
			if err != nil {
				t.Fatal(err)
			}
			if info.Era != era || info.Name != "s" {
				t.Errorf("attached to %+v, want era %s", info, era)
			}
			tap := &eventLog{}
			h := &replyHandler{reply: "from the attached client"}
			var notesMu sync.Mutex
			var notes []session.Notification
			opts := daemon.RelayOptions(info)
			opts.Handler = h
			opts.OnNotification = func(n session.Notification) {
				notesMu.Lock()
				notes = append(notes, n)
				notesMu.Unlock()
			}
			c, err := session.Connect(ctx, daemon.NewRelayConn(conn, info, dir, daemon.ClientHooks{Tap: tap}), opts)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if c.ProtocolVersion() != info.ProtocolVersion || !strings.HasPrefix(c.EraReason(), "session s's: ") {
				t.Errorf("the client speaks %s (%s), want the session's %s", c.ProtocolVersion(), c.EraReason(), info.ProtocolVersion)
			}
			if got, want := c.InitializeResult().ServerInfo.Name, "mcpi-demo"; got != want {
				t.Errorf("server name %q, want %q (the session's start answers the client's)", got, want)
			}
			// The past: the session's start and the call made before.
			tap.waitFrames(t, `"tools/call"`, 1)
			if tap.frames(`"initialize"`)+tap.frames(`"server/discover"`) == 0 {
				t.Error("the history lacks the session's start")
			}

			// Its own call, with progress under its own token.
			var progress int
			res, err := c.CallTool(ctx, "long_running", json.RawMessage(`{"steps":3,"interval_ms":5}`), &session.CallOptions{
				OnProgress: func(mcp.ProgressParams) { progress++ },
			})
			if err != nil || res.IsError {
				t.Fatalf("long_running through the session: %v %+v", err, res)
			}
			if progress != 3 {
				t.Errorf("%d progress notifications reached the call, want 3", progress)
			}
			tap.waitFrames(t, `"long_running"`, 1)

			// Another process's command, whose sampling request no command
			// answers: the attached client does.
			code, out, errOut := runLive(t, dir, nil, "call", "sample", "prompt=hi", "--session", "s")
			if code != command.ExitOK || !strings.Contains(out, "from the attached client") {
				t.Fatalf("call sample: exit %d, stdout %q, stderr %q", code, out, errOut)
			}
			tap.waitFrames(t, `"sample"`, 1)

			if era == "modern" {
				// A subscription of its own: the acknowledgement names its id.
				sub, err := c.Listen(ctx, mcp.SubscriptionFilter{ToolsListChanged: true})
				if err != nil {
					t.Fatalf("subscriptions/listen through the session: %v", err)
				}
				sub.Close()
			}

			// mcpi subscribe, either era: the updates reach the watchers.
			runLiveOK(t, dir, "subscribe", "demo://counter", "--session", "s")
			if code, _, errOut := runLive(t, dir, nil, "subscribe", "demo://counter", "--session", "s"); code != command.ExitOK {
				t.Errorf("subscribe again: exit %d, %q", code, errOut)
			}
			runLive(t, dir, nil, "call", "bump_counter", "--session", "s")
			updated := func() int {
				notesMu.Lock()
				defer notesMu.Unlock()
				n := 0
				for _, x := range notes {
					if x.Method == "notifications/resources/updated" && strings.Contains(string(x.Params), "demo://counter") {
						n++
						if era == "modern" && !strings.Contains(string(x.Params), `"session:`) {
							t.Errorf("the session's subscription reached the client as one of its own: %s", x.Params)
						}
					}
				}
				return n
			}
			if !poll(10*time.Second, func() bool { return updated() > 0 }) {
				t.Fatal("no notifications/resources/updated after subscribe and bump_counter")
			}
			if code, _, errOut := runLive(t, dir, nil, "subscribe", "demo://counter", "--unsubscribe", "--session", "s"); code != command.ExitOK {
				t.Errorf("subscribe --unsubscribe: exit %d, %q", code, errOut)
			}
			if code, _, errOut := runLive(t, dir, nil, "subscribe", "demo://counter", "--unsubscribe", "--session", "s"); code != command.ExitUsage || !strings.Contains(errOut, "is not subscribed to demo://counter") {
				t.Errorf("unsubscribing from what the session is not subscribed to: exit %d, %q; want exit 2", code, errOut)
			}

			// Another process's progress reaches the client under a token
			// none of its own requests can have; its own, under its own.
			runLiveOK(t, dir, "call", "long_running", "steps=2", "interval_ms=5", "--session", "s")
			tap.waitFrames(t, `"notifications/progress"`, 5)
			var own, foreign int
			if !poll(5*time.Second, func() bool {
				own, foreign = 0, 0
				notesMu.Lock()
				for _, n := range notes {
					if n.Method != "notifications/progress" {
						continue
					}
					var p mcp.ProgressParams
					json.Unmarshal(n.Params, &p)
					switch {
					case strings.HasPrefix(string(p.ProgressToken), `"session:`):
						foreign++
					default:
						own++
					}
				}
				notesMu.Unlock()
				return own == 3 && foreign >= 2
			}) {
				t.Fatalf("progress notifications: %d under the client's tokens (want 3), %d under foreign ones (want 2 or more)", own, foreign)
			}

			// A roots change by the TUI is the session's.
			root := t.TempDir()
			if err := setSessionRoots(ctx, dir, "s", []mcp.Root{{URI: "file://" + filepath.ToSlash(root), Name: "r"}}); err != nil {
				t.Fatal(err)
			}
			if _, out, _ := runLive(t, dir, nil, "roots", "--json", "--session", "s"); !strings.Contains(out, root) {
				t.Errorf("mcpi roots after the TUI set them: %s", out)
			}

			runLive(t, dir, nil, "session", "stop", "s")
			select {
			case <-c.Done():
			case <-time.After(10 * time.Second):
				t.Fatal("the attached client did not end with the session")
			}
			if err := c.Err(); err == nil || !strings.HasPrefix(err.Error(), "session s has ended (stopped): stopped by mcpi session stop") {
				t.Errorf("the attached client ended with %v, want the session's end (not a failed connection)", err)
			}
		})
	}
}

// TestSessionPathsAreTheCommands: a path a command gives (@FILE, --save,
// a root) names a file where the command runs, not where the daemon does.
func TestSessionPathsAreTheCommands(t *testing.T) {
	dir := demoSession(t, "p")
	work := t.TempDir()
	if err := os.WriteFile(filepath.Join(work, "args.json"), []byte(`{"a":40,"b":2}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(work, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	t.Chdir(work)
	// The daemon was started elsewhere: these run in work.
	code, out, errOut := runLive(t, dir, nil, "call", "add", "--args", "@args.json", "--json", "--session", "p")
	if code != command.ExitOK || !strings.Contains(out, "42") {
		t.Errorf("call --args @args.json: exit %d, %q, %q", code, out, errOut)
	}
	code, _, errOut = runLive(t, dir, nil, "call", "get_content_types", "--save", "saved", "--session", "p")
	if code != command.ExitOK {
		t.Errorf("call --save saved: exit %d, %q", code, errOut)
	}
	if ents, err := os.ReadDir(filepath.Join(work, "saved")); err != nil || len(ents) == 0 {
		t.Errorf("--save saved wrote nothing under the command's directory: %v", err)
	}
	code, out, errOut = runLive(t, dir, nil, "roots", "add", "sub", "--json", "--session", "p")
	if code != command.ExitOK || !strings.Contains(out, filepath.ToSlash(filepath.Join(work, "sub"))) {
		t.Errorf("roots add sub: exit %d, %q, %q", code, out, errOut)
	}
}

// TestSessionToolCache: a call in a session checks its arguments against
// the tools the session last listed, and a tool the server removes (and
// says so) is no longer taken for one: the call fails as for a tool that
// never was, in either era.
func TestSessionToolCache(t *testing.T) {
	for _, era := range []string{"legacy", "modern"} {
		t.Run(era, func(t *testing.T) {
			t.Parallel()
			dir := liveDir(t)
			startSession(t, dir, "c", "-e", mcptest.PeerEnv+"=demo:"+era, "--", os.Args[0], "-test.run=^$")
			call := func(args ...string) (command.ExitCode, string) {
				code, out, errOut := runLive(t, dir, nil, append(append([]string{"call"}, args...), "--session", "c")...)
				return code, out + errOut
			}
			noTool, out := call("no_such_tool")
			if !strings.Contains(out, "does not list a tool named no_such_tool") {
				t.Fatalf("a call of a tool that is not listed says %q", out)
			}
			if code, out := call("echo", "text=hi"); code != command.ExitOK {
				t.Fatalf("echo: %d %s", code, out)
			}
			if code, out := call("toggle_tool"); code != command.ExitOK {
				t.Fatalf("toggle_tool: %d %s", code, out)
			}
			// Not in the tools the session knew: listed anew.
			if code, out := call("extra_tool"); code != command.ExitOK {
				t.Fatalf("extra_tool once added: %d %s", code, out)
			}
			if code, out := call("toggle_tool"); code != command.ExitOK {
				t.Fatalf("toggle_tool again: %d %s", code, out)
			}
			// As for any tool the server does not list: a warning, then
			// the call anyway, which the server refuses.
			var lastCode command.ExitCode
			var lastOut string
			if !poll(10*time.Second, func() bool {
				lastCode, lastOut = call("extra_tool")
				return lastCode == noTool && strings.Contains(lastOut, "does not list a tool named extra_tool")
			}) {
				t.Fatalf("extra_tool, removed and said so: exit %d (%s), want %d as for a tool that never was", lastCode, lastOut, noTool)
			}
		})
	}
}

// TestAttachedClientThatDoesNotRead: a client attached to a session that
// stops reading (a TUI suspended with ctrl+z, a stalled terminal) never
// holds the session up: other commands go on, while frames, progress and
// answers for it pile up to their bounds; past the write timeout it is let
// go.
func TestAttachedClientThatDoesNotRead(t *testing.T) {
	t.Parallel()
	dir := demoSession(t, "slow")
	conn, _, err := live.Attach(dir, "slow")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// Calls whose answers, progress and frames fill every buffer on the way.
	conn.Send(live.Frame{Msg: json.RawMessage(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"long_running","arguments":{"steps":1000,"interval_ms":0},"_meta":{"progressToken":"p"}}}`)})
	for i := range 4 {
		conn.Send(live.Frame{Msg: json.RawMessage(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"big_output","arguments":{"bytes":4000000}}}`, i+2))})
	}
	// Until what waits for the client holds something: it lags.
	eventually(t, "the client's queue to fill", func() bool {
		u := budgetsNamed(t, dir, "slow", "attached client")
		return len(u) == 1 && (u[0].Bytes > 0 || u[0].Refused > 0)
	})
	for i := range 3 {
		ctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
		code, out, errOut := runLive(t, dir, ctx, "call", "long_running", "steps=50", "interval_ms=0", "--session", "slow")
		cancel()
		if code != command.ExitOK {
			t.Fatalf("call %d while a client does not read: exit %d, %q, %q", i+1, code, out, errOut)
		}
	}
}

// TestEveryFlagIsConnectionOrCommand: each flag a verb's connection takes
// either belongs to the connection (refused next to --session: the session
// made it) or to the command; a new flag must be put on one side.
func TestEveryFlagIsConnectionOrCommand(t *testing.T) {
	perCommand := map[string]bool{"force": true, "sampling-reply": true, "sampling-model": true, "sampling-model-url": true, "elicit": true, "elicit-field": true,
		"json": true, "verbose": true, "session": true}
	conn := map[string]bool{}
	for _, n := range command.ConnectionFlags {
		conn[n] = true
	}
	c := &cobra.Command{}
	o := &command.ConnOptions{}
	command.AddConnFlags(c, o)
	addSessionFlag(c, o)
	c.Flags().VisitAll(func(f *pflag.Flag) {
		switch {
		case conn[f.Name] && perCommand[f.Name]:
			t.Errorf("--%s is both the connection's and the command's", f.Name)
		case !conn[f.Name] && !perCommand[f.Name]:
			t.Errorf("--%s is neither the connection's (connectionFlags) nor the command's: say which", f.Name)
		}
	})
	for _, n := range []string{"grant", "dpop", "dpop-key", "client-secret-file", "assertion-file", "id-token-file", "idp-issuer", "header", "root"} {
		if !conn[n] {
			t.Errorf("--%s is not refused next to --session", n)
		}
	}
}

// TestSessionNoRawControlReachesAPerson: what a live session's commands
// print of a hostile server (its name, stderr, errors, parked requests,
// notifications, frames) and of what a user typed is made safe, as for
// one-shot commands.
func TestSessionNoRawControlReachesAPerson(t *testing.T) {
	t.Parallel()
	dir := liveDir(t)
	startSession(t, dir, "p", peerArgs("hostile:"+mcptest.HostilePoison)...)
	// A call whose elicitation no command answers: parked, with poison in
	// its message and fields.
	parked := make(chan struct{})
	go func() {
		defer close(parked)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		runLive(t, dir, ctx, "call", "elicit", "--session", "p")
	}()
	waitParked := func() {
		if !poll(10*time.Second, func() bool {
			_, out, _ := runLive(t, dir, nil, "pending", "--json", "--session", "p")
			return strings.Contains(out, `"id"`)
		}) {
			t.Fatal("the elicitation was never parked")
		}
	}
	waitParked()
	tailCtx, cancelTail := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancelTail()
	tailed := make(chan [2]string, 1)
	go func() {
		_, out, errOut := runLive(t, dir, tailCtx, "tail", "--wire", "--session", "p")
		tailed <- [2]string{out, errOut}
	}()
	eventually(t, "the tail to subscribe", func() bool { return len(budgetsNamed(t, dir, "p", "tail")) == 1 })
	for _, args := range [][]string{
		{"session", "list"},
		{"session", "show", "p"},
		{"info", "--session", "p"},
		{"tools", "--session", "p"},
		{"call", "fail", "--session", "p"},
		{"call", "progress", "--session", "p"},
		{"pending", "--session", "p"},
		{"answer", "1", "--sampling-reply", "x", "--session", "p"},
		{"subscribe", "poison://" + mcptest.Poison, "--unsubscribe", "--session", "p"},
		{"roots", "add", "/" + mcptest.Poison, "--session", "p"},
		{"log-level", mcptest.Poison, "--session", "p"},
		{"call", mcptest.Poison, "--session", "p"},
	} {
		code, out, errOut := runLive(t, dir, nil, args...)
		for name, s := range map[string]string{"stdout": out, "stderr": errOut} {
			if !safetext.Clean(s) {
				t.Errorf("%v: exit %d: raw control reached %s: %q", args, code, name, s)
			}
		}
		// The poison is shown, made visible, where the server's words are.
		if (args[0] == "pending" || args[0] == "info" || args[1] == "show") && !poisonShown.MatchString(out+errOut) {
			t.Errorf("%v: the poisoned field was not shown:\n%s%s", args, out, errOut)
		}
	}
	runLive(t, dir, nil, "answer", "1", "--decline", "--session", "p")
	<-parked
	got := <-tailed
	if !poisonShown.MatchString(got[0]) {
		t.Errorf("the tail did not show the poisoned frames:\n%s", got[0])
	}
	for i, s := range got {
		if !safetext.Clean(s) {
			t.Errorf("tail --wire: raw control reached stream %d: %q", i+1, s)
		}
	}
}

// noteLog keeps the notifications a hook was given.
type noteLog struct {
	mu    sync.Mutex
	notes []session.Notification
}

func (l *noteLog) add(n session.Notification) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.notes = append(l.notes, n)
}

func (l *noteLog) get() []session.Notification {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.notes)
}

// waitFor waits until a notification satisfies ok, and returns it.
func (l *noteLog) waitFor(t *testing.T, what string, ok func(session.Notification) bool) session.Notification {
	t.Helper()
	var found session.Notification
	if !poll(10*time.Second, func() bool {
		for _, n := range l.get() {
			if ok(n) {
				found = n
				return true
			}
		}
		return false
	}) {
		t.Fatalf("no %s among %d notification(s)", what, len(l.get()))
	}
	return found
}

// attachClient attaches a client to the session name with hooks, as mcpi
// connect --session does.
func attachClient(t *testing.T, ctx context.Context, dir, name string, h tui.Hooks) *session.Client {
	t.Helper()
	conn, info, err := attach(dir, name)
	if err != nil {
		t.Fatal(err)
	}
	opts := daemon.RelayOptions(info)
	opts.Handler, opts.OnNotification = h.Handler, h.OnNotification
	c, err := session.Connect(ctx, daemon.NewRelayConn(conn, info, dir, daemon.ClientHooks{Tap: h.Tap, OnPast: h.OnPast, OnRoots: h.OnRoots}), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestAttachedClientSeesThePast: a client that attaches to a session is
// given the notifications of the session's history (log messages, list
// changes), at their own times and apart from the live ones, which they
// are not taken for; then, live, the new ones.
func TestAttachedClientSeesThePast(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dir := liveDir(t)
	startSession(t, dir, "past", peerArgs("demo:legacy")...)
	// The server says a list changed a moment after the change (the Go
	// SDK waits 10 ms for more changes): a first client, attached while
	// the commands run, sees it come, so that it is in the past when the
	// client under test attaches.
	wctx, wcancel := context.WithCancel(ctx)
	seen := &noteLog{}
	watcher := attachClient(t, wctx, dir, "past", tui.Hooks{Handler: &replyHandler{}, OnNotification: seen.add})
	for _, args := range [][]string{{"call", "toggle_tool"}, {"log-level", "debug"}, {"tools"}, {"call", "log"}} {
		runLiveOK(t, dir, append(args, "--session", "past")...)
	}
	seen.waitFor(t, "tools/list_changed, live", func(n session.Notification) bool {
		return n.Method == "notifications/tools/list_changed"
	})
	watcher.Close()
	wcancel()
	attached := time.Now()
	past, live := &noteLog{}, &noteLog{}
	attachClient(t, ctx, dir, "past", tui.Hooks{Handler: &replyHandler{}, OnPast: past.add, OnNotification: live.add})
	logged := past.waitFor(t, "log message of the past", func(n session.Notification) bool {
		return n.Method == "notifications/message" && strings.Contains(string(n.Params), "mcpi-demo")
	})
	if !logged.Time.Before(attached) {
		t.Errorf("a log message of the past is given the time %v, after the client attached (%v)", logged.Time, attached)
	}
	past.waitFor(t, "tools/list_changed of the past", func(n session.Notification) bool {
		return n.Method == "notifications/tools/list_changed"
	})
	if n := len(past.get()); n < 9 {
		t.Errorf("%d notification(s) of the past, want the 8 log messages and the list change", n)
	}
	// Live, a new one arrives as such, and the past is not given again.
	before := len(past.get())
	runLiveOK(t, dir, "call", "toggle_tool", "--session", "past")
	live.waitFor(t, "live tools/list_changed", func(n session.Notification) bool {
		return n.Method == "notifications/tools/list_changed"
	})
	for _, n := range live.get() {
		if n.Method == "notifications/message" {
			t.Errorf("a log message of the past reached the client as a live one: %s", n.Params)
		}
	}
	if after := len(past.get()); after != before {
		t.Errorf("%d notification(s) of the past after a live one, want %d", after, before)
	}
}

// TestAttachedClientFollowsTheRoots: a change of the session's roots, by
// mcpi roots in another process or by an attached client, reaches every
// attached client.
func TestAttachedClientFollowsTheRoots(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dir := demoSession(t, "roots")
	var mu sync.Mutex
	var got [][]mcp.Root
	onRoots := func(rs []mcp.Root) {
		mu.Lock()
		got = append(got, rs)
		mu.Unlock()
	}
	last := func() ([]mcp.Root, int) {
		mu.Lock()
		defer mu.Unlock()
		if len(got) == 0 {
			return nil, 0
		}
		return got[len(got)-1], len(got)
	}
	waitRoots := func(what string, ok func([]mcp.Root) bool) {
		t.Helper()
		if !poll(10*time.Second, func() bool { rs, n := last(); return n > 0 && ok(rs) }) {
			rs, _ := last()
			t.Fatalf("the attached client's roots are %v, want %s", rs, what)
		}
	}
	attachClient(t, ctx, dir, "roots", tui.Hooks{Handler: &replyHandler{}, OnRoots: onRoots})
	work := t.TempDir()
	runLiveOK(t, dir, "roots", "add", work, "--session", "roots")
	waitRoots("the root mcpi roots added", func(rs []mcp.Root) bool {
		return len(rs) == 1 && strings.HasSuffix(rs[0].URI, filepath.ToSlash(work))
	})
	// Another attached client's change.
	if err := setSessionRoots(ctx, dir, "roots", nil); err != nil {
		t.Fatal(err)
	}
	waitRoots("none, as another client set them", func(rs []mcp.Root) bool { return len(rs) == 0 })
}

// blockHandler waits for the request's end, keeping why it ended.
type blockHandler struct {
	asked chan struct{}
	cause chan error
}

func (h *blockHandler) CreateMessage(ctx context.Context, _ *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	close(h.asked)
	<-ctx.Done()
	h.cause <- context.Cause(ctx)
	return nil, ctx.Err()
}

func (h *blockHandler) Elicit(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	return &mcp.ElicitResult{Action: mcp.ElicitDecline}, nil
}

func (h *blockHandler) ListRoots(context.Context) (*mcp.ListRootsResult, error) {
	return &mcp.ListRootsResult{Roots: []mcp.Root{}}, nil
}

// TestAttachedClientToldAsTheSession: a parked request put to an attached
// client and answered by mcpi answer is withdrawn from the client by the
// daemon, which says so as the session (mcp.MetaFromSession), never as
// the server; and a server cannot say it is the session.
func TestAttachedClientToldAsTheSession(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dir := demoSession(t, "w")
	h := &blockHandler{asked: make(chan struct{}), cause: make(chan error, 1)}
	notes := &noteLog{}
	attachClient(t, ctx, dir, "w", tui.Hooks{Handler: h, OnNotification: notes.add})
	called := make(chan struct{})
	go func() {
		defer close(called)
		runLive(t, dir, ctx, "call", "sample", "prompt=hi", "--session", "w")
	}()
	select {
	case <-h.asked:
	case <-ctx.Done():
		t.Fatal("the parked request never reached the attached client")
	}
	runLiveOK(t, dir, "answer", "1", "--sampling-reply", "elsewhere", "--session", "w")
	<-called
	var ce *session.CancelledError
	if err := <-h.cause; !errors.As(err, &ce) {
		t.Fatalf("the request ended with %v, want the daemon's notifications/cancelled", err)
	}
	n := notes.waitFor(t, "notifications/cancelled", func(n session.Notification) bool { return n.Method == "notifications/cancelled" })
	var p struct {
		Meta map[string]string `json:"_meta"`
	}
	if json.Unmarshal(n.Params, &p) != nil || p.Meta[mcp.MetaFromSession] != "w" {
		t.Errorf("the daemon's notifications/cancelled does not say it is session w's: %s", n.Params)
	}
}

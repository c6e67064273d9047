package bounds_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// waits are the calls that start a clock of their own: outside this
// package each must be listed in allowedWaits with its reason.
var waits = map[string]bool{
	"time.After": true, "time.NewTimer": true, "time.AfterFunc": true, "time.Tick": true,
	"time.NewTicker": true, "time.Sleep": true,
	"context.WithTimeout": true, "context.WithDeadline": true,
	"context.WithTimeoutCause": true, "context.WithDeadlineCause": true,
}

// site names a function of a file: "internal/cli/conn.go:awaitRoots".
type site = string

// allowedWaits lists, per function, how many raw waits and queues it may
// make and why they are bounded without going through this package. A new
// one anywhere fails TestEveryWaitHasAClock until it goes through a Clock,
// a Budget or a Queue, or is listed here with its reason.
var allowedWaits = map[site]struct {
	n   int
	why string
}{
	"internal/auth/flow.go:Transport.waitBrowser":              {2, "the loopback listener's 1 s shutdown and the --oauth-browser-wait a person is given to sign in"},
	"internal/check/capability.go:run.missingCapability":       {2, "one probe under the check's --timeout (three requests: 3x)"},
	"internal/check/apps.go:run.appsView":                      {1, "the Apps connection and its tools/list under 3x the check's --timeout"},
	"internal/check/apps.go:run.listedResources":               {1, "one resources/list under the check's --timeout"},
	"internal/check/apps.go:run.appResource":                   {1, "one resources/read under the check's --timeout"},
	"internal/apphost/host.go:Host.Close":                      {1, "the App host's 1 s shutdown"},
	"internal/loadmcp/loadmcp.go:Outcome":                      {1, "goneWait (0.5 s): the moment a failed request waits for its connection to say it ended"},
	"internal/collection/runner.go:Runner.useRoots":            {1, "rootsWait (0.5 s): the wait for a legacy server to ask for the roots a step changed"},
	"internal/tui/chatpane/pane.go:Pane.send":                  {1, "the chat's events: 64 a channel, its sender held until the pane reads (the model's stream is bounded by internal/llm)"},
	"internal/check/check.go:run.probe":                        {1, "one probe under the check's --timeout"},
	"internal/check/http.go:httpProbe.post":                    {1, "one raw HTTP probe under the check's --timeout"},
	"internal/check/http.go:httpProbe.endSession":              {1, "the DELETE of a probe's session under the check's --timeout"},
	"internal/check/http.go:run.sessionEnd":                    {1, "the DELETE probe under the check's --timeout"},
	"internal/check/second.go:run.otherEra":                    {1, "the other era's connection and lists under 3x the check's --timeout"},
	"internal/check/second.go:run.roundTrip":                   {1, "one raw round trip under the check's --timeout"},
	"internal/check/sse.go:run.sseChecks":                      {2, "the legacy SSE probe under 2x --timeout; its events channel of 16 is filled by one reader that stops with that context"},
	"internal/check/tools.go:run.callReadOnly":                 {1, "one read-only tool call under the check's --timeout"},
	"internal/cli/replay.go:replayPrint":                       {1, "a 100 ms poll of a trace that is still being written, ended by the command's context"},
	"internal/cli/replay.go:replayTUI":                         {1, "a 100 ms poll of a trace that is still being written, ended by the command's context"},
	"internal/command/run.go:ConnRun.awaitRoots":               {2, "rootsWait and rootsSettle: fixed pauses of 200 and 50 ms"},
	"internal/cli/serve.go:serveHTTP":                          {1, "the HTTP server's 2 s shutdown"},
	"internal/live/start.go:Await":                             {1, "an unbuffered hand-over of the daemon's one start report, read by a waiter with a start clock"},
	"internal/daemon/relay.go:Held.ServeAttached":              {1, "a 1 s wait for the attached client's goodbye"},
	"internal/daemon/relay.go:newRelay":                        {1, "the relay's queue to its client, bounded by watchBuffer items and watchBytes"},
	"internal/daemon/relayconn.go:NewRelayConn":                {1, "frames from one attached client: 64, its reader waits (the client's socket pushes back)"},
	"internal/cli/session_list.go:sessionStopRun":              {1, "20 ms polls of a stopping daemon, bounded by the stop's deadline"},
	"internal/demoserver/resources.go:demo.tick":               {1, "the demo server's counter ticker, stopped with its resource"},
	"internal/demoserver/tools.go:slow":                        {1, "the demo tool that sleeps for the time asked, ended by its request's context"},
	"internal/demoserver/tools_client.go:longRunning":          {1, "the demo tool's progress interval, ended by its request's context"},
	"internal/live/server.go:Server.Serve":                     {2, "the idle check's ticker and a 5 s wait for the work of a stopping daemon"},
	"internal/live/server.go:frameBatch.write":                 {1, "the output batch's flush delay"},
	"internal/proxy/stdio.go:spawn":                            {1, "the server is killed 3 s after the proxy's client went away"},
	"internal/intercept/gate.go:Gate.judge":                    {1, "a held frame's deadline: --hold-timeout (60 s by default), then it is forwarded and the trace says so"},
	"internal/proxy/faults.go:outlet.holdBack":                 {1, "reorderWait (1 s): a frame a reorder fault holds back goes then at the latest"},
	"internal/record/writer.go:newWriter":                      {1, "the trace's flush timer (100 ms after a write)"},
	"internal/replay/server.go:Server.ServeStdio":              {1, "lines of the client handed over one at a time: the reader waits for the server (the pipe pushes back)"},
	"internal/session/clock.go:callClock.start":                {1, "the request clocks themselves, on one timer: --timeout (reset by progress) and --max-time"},
	"internal/session/clock.go:sendContext.made":               {1, "the request's write under the first of its clocks, made only for a write that waits"},
	"internal/session/health.go:Client.backgroundContext":      {1, "a background request (keepalive ping, renewal) under the request timeout"},
	"internal/session/health.go:Client.keepAlive":              {1, "the keepalive interval, stopped with the client"},
	"internal/session/modern.go:Client.Listen":                 {1, "the wait for subscriptions/listen's acknowledgement, under the request timeout"},
	"internal/session/modern.go:Client.Start":                  {1, "the server/discover probe under ProbeTimeout"},
	"internal/transport/http.go:NewStreamableHTTP":             {1, "frames to the session's reader: 64, the HTTP readers wait (the server's streams push back)"},
	"internal/transport/http.go:StreamableHTTP.Close":          {1, "the DELETE of the session on close: 2 s"},
	"internal/transport/http.go:StreamableHTTP.Listen":         {1, "ListenWait for the server's answer to the first GET"},
	"internal/transport/http.go:StreamableHTTP.keepListening":  {1, "the GET stream's reconnect delay, ended by the stream's context"},
	"internal/transport/http.go:StreamableHTTP.readPostStream": {1, "the server's retry delay before resuming a stream, ended by the request's context"},
	"internal/transport/legacysse.go:DialLegacySSE":            {1, "frames to the session's reader: 64, the SSE reader waits (the server's stream pushes back)"},
	"internal/transport/stdio.go:Spawn":                        {1, "frames to the session's reader: 64, stdout's reader waits (the pipe pushes back)"},
	"internal/transport/stdio.go:Stdio.Close":                  {2, "ShutdownGrace after closing stdin and after SIGTERM"},
	"internal/transport/stdio.go:Stdio.Recv":                   {1, "2 s for a process that closed stdout to exit"},
	"internal/transport/stdio.go:Stdio.endGroup":               {1, "20 ms polls of the server's group, bounded by ShutdownGrace"},
	"internal/transport/stdio.go:Stdio.wait":                   {1, "drainQuiet where pipes take no deadline"},
	"internal/transport/stdio_write.go:Stdio.writeFailed":      {1, "100 ms to learn whether a failed write means the server exited"},
	"internal/tui/argform/argform.go:Model.fetch":              {1, "a completion request: 10 s"},
	"internal/tui/checkpane/pane.go:Pane.start":                {1, "the check's progress lines: 16, the check waits for the pane"},
	"internal/tui/common/inbox.go:Inbox.Next":                  {1, "the inbox's 15 ms coalescing pause"},
	"internal/tui/composer.go:composer.send":                   {1, "a raw frame's answer: 30 s"},
	"internal/tui/rootspane/pane.go:Pane.changed":              {2, "telling the server of new roots, under the default request timeout"},
}

// TestEveryWaitHasAClock parses every non-test Go file of the binary and
// refuses raw timers, timeouts and channel queues outside internal/bounds,
// but for the listed ones.
func TestEveryWaitHasAClock(t *testing.T) {
	root := "../.."
	found := map[site]int{}
	where := map[site][]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			switch rel {
			case ".git", ".cache", "testdata", "node_modules", "internal/bounds", "internal/mcptest", "internal/perf", "internal/auth/authtest":
				return filepath.SkipDir
			}
			if strings.HasSuffix(rel, "/testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		for s, w := range rawWaits(fset, f, rel) {
			found[s] += len(w)
			where[s] = append(where[s], w...)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for s := range found {
		keys = append(keys, s)
	}
	sort.Strings(keys)
	if os.Getenv("BOUNDS_LIST") != "" {
		for _, s := range keys {
			fmt.Printf("%q: {%d, \"\"},\n", s, found[s])
		}
	}
	for _, s := range keys {
		a, ok := allowedWaits[s]
		switch {
		case !ok:
			t.Errorf("%s waits or queues without a bound of internal/bounds:\n\t%s\nuse a bounds.Clock, Budget or Queue, or list it in allowedWaits with the reason it is bounded", s, strings.Join(where[s], "\n\t"))
		case found[s] > a.n:
			t.Errorf("%s has %d raw waits or queues, %d listed (%s):\n\t%s", s, found[s], a.n, a.why, strings.Join(where[s], "\n\t"))
		}
	}
	for s, a := range allowedWaits {
		if a.why == "" {
			t.Errorf("%s is listed without a reason", s)
		}
		if found[s] < a.n {
			t.Errorf("%s is listed for %d raw waits, has %d: lower the count", s, a.n, found[s])
		}
	}
}

// rawWaits returns, per function of the file f (at rel), where it waits or
// queues without internal/bounds. The calls are matched by package, not by
// name: an import of "time" or "context" under another name (or with a
// dot) is seen as well.
func rawWaits(fset *token.FileSet, f *ast.File, rel string) map[site][]string {
	// local names the packages of waits by the names this file gives
	// them; dot is the package imported with a dot, when one is.
	local := map[string]string{}
	dot := map[string]bool{}
	for _, imp := range f.Imports {
		path := strings.Trim(imp.Path.Value, `"`)
		if path != "time" && path != "context" {
			continue
		}
		switch {
		case imp.Name == nil:
			local[path] = path
		case imp.Name.Name == ".":
			dot[path] = true
		case imp.Name.Name != "_":
			local[imp.Name.Name] = path
		}
	}
	out := map[site][]string{}
	for _, decl := range f.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok || fn.Body == nil {
			continue
		}
		name := fn.Name.Name
		if fn.Recv != nil && len(fn.Recv.List) > 0 {
			name = recvName(fn.Recv.List[0].Type) + "." + name
		}
		s := rel + ":" + name
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			what := ""
			switch fun := call.Fun.(type) {
			case *ast.SelectorExpr:
				if x, ok := fun.X.(*ast.Ident); ok {
					if pkg, ok := local[x.Name]; ok && waits[pkg+"."+fun.Sel.Name] {
						what = pkg + "." + fun.Sel.Name
					}
				}
			case *ast.Ident:
				for pkg := range dot {
					if waits[pkg+"."+fun.Name] {
						what = pkg + "." + fun.Name
					}
				}
				if fun.Name == "make" && len(call.Args) > 0 {
					if ch, ok := call.Args[0].(*ast.ChanType); ok && !signal(ch) && !mailbox(call) {
						what = "a channel queue"
					}
				}
			}
			if what != "" {
				out[s] = append(out[s], fmt.Sprintf("%s (%s)", fset.Position(call.Pos()), what))
			}
			return true
		})
	}
	return out
}

// TestRawWaitsUnderAnyName: a wait is found whatever name the file gives
// the "time" or "context" package, and a local name that is not one of
// them is not taken for it.
func TestRawWaitsUnderAnyName(t *testing.T) {
	const src = `package p

import (
	t "time"
	ctx "context"
	. "time"
)

type timer struct{}

func (timer) After(int) {}

func aliased(parent ctx.Context) {
	<-t.After(t.Second)
	c, cancel := ctx.WithTimeout(parent, t.Second)
	_, _ = c, cancel
}

func dotted() { Sleep(Second) }

func other() {
	var time timer
	time.After(1)
}
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := rawWaits(fset, f, "p.go")
	for s, n := range map[site]int{"p.go:aliased": 2, "p.go:dotted": 1, "p.go:other": 0} {
		if len(got[s]) != n {
			t.Errorf("%s: %d raw waits found, want %d: %v", s, len(got[s]), n, got[s])
		}
	}
}

func recvName(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.StarExpr:
		return recvName(x.X)
	case *ast.IndexExpr:
		return recvName(x.X)
	case *ast.IndexListExpr:
		return recvName(x.X)
	case *ast.Ident:
		return x.Name
	}
	return "?"
}

// signal reports a chan struct{}: a signal, not a queue.
func signal(ch *ast.ChanType) bool {
	st, ok := ch.Value.(*ast.StructType)
	return ok && len(st.Fields.List) == 0
}

// mailbox reports a channel of capacity 1: one answer handed over, never a
// queue.
func mailbox(call *ast.CallExpr) bool {
	if len(call.Args) != 2 {
		return false
	}
	lit, ok := call.Args[1].(*ast.BasicLit)
	return ok && lit.Value == "1"
}

package main

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// sessionScenarios are the calls against a connection held open: mcpi's
// live session and mcpdo's connection, over stdio and Streamable HTTP.
func sessionScenarios(p func(string) string, node, mcpdo, tmp string, n int) []scenario {
	// Each tool keeps its state under a directory of the run's own.
	runtimeDir := filepath.Join(tmp, "run")
	b := &sessionBench{
		mcpi: p("mcpi"), node: node, mcpdo: mcpdo, rounds: n, runtimeDir: runtimeDir,
		mcpiEnv:  []string{"XDG_RUNTIME_DIR=" + runtimeDir},
		mcpdoEnv: []string{"HOME=" + filepath.Join(tmp, "mcpdo-home"), "MCP_INSPECTOR_SECRET_STORE=memory"},
	}
	stdio := []string{"--", p("benchserver"), "-mode", "demo"}
	// The HTTP server's address is chosen now: the contenders' command
	// lines name it.
	addr := "127.0.0.1:0"
	if ln, err := net.Listen("tcp", addr); err == nil {
		addr = ln.Addr().String()
		ln.Close()
	}
	httpTarget := []string{"--url", "http://" + addr + "/mcp"}
	serveHTTP := func() (func(), error) { return serveDemoHTTP(b.mcpi, addr) }
	return []scenario{
		b.scenario("session", "one `tools/call` of echo, a process per call, against a stdio connection held open (connecting not timed), beside a one-shot `mcpi call` and the start of `mcpi --help`", stdio, nil),
		b.scenario("session-http", "the same over Streamable HTTP, against mcpi's demo server", httpTarget, serveHTTP),
	}
}

// sessionBench is what the session scenarios share: the programs, and the
// environment that keeps each tool's state under the run's directory.
type sessionBench struct {
	mcpi, node, mcpdo string
	rounds            int
	runtimeDir        string
	mcpiEnv, mcpdoEnv []string
}

// scenario is one session scenario against target (mcpi's arguments
// naming the server), with serve starting that server if it is not one
// the session spawns.
func (b *sessionBench) scenario(name, what string, target []string, serve func() (func(), error)) scenario {
	players := []contender{
		{name: "mcpi --help", argv: []string{b.mcpi, "--help"}},
		{name: "mcpi --session", argv: []string{b.mcpi, "call", "echo", "text=hi", "--session", "bench"}, env: b.mcpiEnv},
		{name: "mcpi one-shot", argv: append([]string{b.mcpi, "call", "echo", "text=hi"}, target...), env: b.mcpiEnv},
	}
	if b.mcpdo != "" {
		players = append(players, contender{name: "mcpdo", argv: []string{b.node, b.mcpdo, "--connection", "bench", "tools/call", "echo", "--tool-args-json", `{"text":"hi"}`}, env: b.mcpdoEnv})
	}
	return scenario{
		name: name, what: what, rounds: b.rounds, base: "mcpi --session", expect: outputHas("hi"), players: players,
		setup: func() (func(), error) { return b.setup(target, serve) },
	}
}

// setup starts the server (with serve), mcpi's session and mcpdo's
// connection; the teardown it returns stops them all, whatever started.
func (b *sessionBench) setup(target []string, serve func() (func(), error)) (func(), error) {
	stopServer := func() {}
	if serve != nil {
		stop, err := serve()
		if err != nil {
			return nil, err
		}
		stopServer = stop
	}
	teardown := func() {
		runEnv(b.mcpiEnv, b.mcpi, "session", "stop", "bench")
		if b.mcpdo != "" {
			runEnv(b.mcpdoEnv, b.node, b.mcpdo, "disconnect", "bench")
			runEnv(b.mcpdoEnv, b.node, b.mcpdo, "daemon/stop")
		}
		stopServer()
	}
	if err := os.MkdirAll(b.runtimeDir, 0o700); err != nil {
		return teardown, err
	}
	if err := runEnv(b.mcpiEnv, append([]string{b.mcpi, "session", "start", "bench", "--idle", "10m"}, target...)...); err != nil {
		return teardown, err
	}
	if b.mcpdo != "" {
		if err := runEnv(b.mcpdoEnv, append([]string{b.node, b.mcpdo, "connect", "--connection", "bench"}, mcpdoTarget(target)...)...); err != nil {
			return teardown, err
		}
	}
	return teardown, nil
}

// outputHas checks that a contender's output holds want.
func outputHas(want string) func([]byte) error {
	return func(out []byte) error {
		if !bytes.Contains(out, []byte(want)) {
			return fmt.Errorf("output lacks %q: %.200q", want, out)
		}
		return nil
	}
}

// runEnv runs argv to its end with env added to this process's.
func runEnv(env []string, argv ...string) error {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %v: %s", strings.Join(argv, " "), err, bytes.TrimSpace(out))
	}
	return nil
}

// serveDemoHTTP starts mcpi's demo server on addr and returns once it
// listens, with the function that stops it.
func serveDemoHTTP(mcpi, addr string) (func(), error) {
	cmd := exec.Command(mcpi, "demo-server", "--http", addr)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	stop := func() { cmd.Process.Kill(); cmd.Wait() }
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return stop, nil
		}
		if time.Now().After(deadline) {
			stop()
			return nil, fmt.Errorf("mcpi demo-server --http %s did not listen", addr)
		}
	}
}

// mcpdoTarget is an mcpi target as mcpdo connect takes it.
func mcpdoTarget(target []string) []string {
	if len(target) == 2 && target[0] == "--url" {
		return []string{"--transport", "http", "--server-url", target[1]}
	}
	return target
}

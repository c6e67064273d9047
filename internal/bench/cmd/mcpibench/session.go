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
	mcpi := p("mcpi")
	// Each tool keeps its state under a directory of the run's own.
	runtimeDir := filepath.Join(tmp, "run")
	mcpiEnv := []string{"XDG_RUNTIME_DIR=" + runtimeDir}
	mcpdoEnv := []string{"HOME=" + filepath.Join(tmp, "mcpdo-home"), "MCP_INSPECTOR_SECRET_STORE=memory"}
	contains := func(want string) func([]byte) error {
		return func(out []byte) error {
			if !bytes.Contains(out, []byte(want)) {
				return fmt.Errorf("output lacks %q: %.200q", want, out)
			}
			return nil
		}
	}
	run := func(env []string, argv ...string) error {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("%s: %v: %s", strings.Join(argv, " "), err, bytes.TrimSpace(out))
		}
		return nil
	}
	scen := func(name, what string, target []string, serve func() (func(), error)) scenario {
		players := []contender{
			{name: "mcpi --help", argv: []string{mcpi, "--help"}},
			{name: "mcpi --session", argv: []string{mcpi, "call", "echo", "text=hi", "--session", "bench"}, env: mcpiEnv},
			{name: "mcpi one-shot", argv: append([]string{mcpi, "call", "echo", "text=hi"}, target...), env: mcpiEnv},
		}
		if mcpdo != "" {
			players = append(players, contender{name: "mcpdo", argv: []string{node, mcpdo, "--connection", "bench", "tools/call", "echo", "--tool-args-json", `{"text":"hi"}`}, env: mcpdoEnv})
		}
		return scenario{
			name: name, what: what, rounds: n, base: "mcpi --session", expect: contains("hi"), players: players,
			setup: func() (func(), error) {
				stopServer := func() {}
				if serve != nil {
					stop, err := serve()
					if err != nil {
						return nil, err
					}
					stopServer = stop
				}
				teardown := func() {
					run(mcpiEnv, mcpi, "session", "stop", "bench")
					if mcpdo != "" {
						run(mcpdoEnv, node, mcpdo, "disconnect", "bench")
						run(mcpdoEnv, node, mcpdo, "daemon/stop")
					}
					stopServer()
				}
				if err := os.MkdirAll(runtimeDir, 0o700); err != nil {
					return teardown, err
				}
				if err := run(mcpiEnv, append([]string{mcpi, "session", "start", "bench", "--idle", "10m"}, target...)...); err != nil {
					return teardown, err
				}
				if mcpdo != "" {
					if err := run(mcpdoEnv, append([]string{node, mcpdo, "connect", "--connection", "bench"}, mcpdoTarget(target)...)...); err != nil {
						return teardown, err
					}
				}
				return teardown, nil
			},
		}
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
	serveHTTP := func() (func(), error) {
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
	return []scenario{
		scen("session", "one `tools/call` of echo, a process per call, against a stdio connection held open (connecting not timed), beside a one-shot `mcpi call` and the start of `mcpi --help`", stdio, nil),
		scen("session-http", "the same over Streamable HTTP, against mcpi's demo server", httpTarget, serveHTTP),
	}
}

// mcpdoTarget is an mcpi target as mcpdo connect takes it.
func mcpdoTarget(target []string) []string {
	if len(target) == 2 && target[0] == "--url" {
		return []string{"--transport", "http", "--server-url", target[1]}
	}
	return target
}

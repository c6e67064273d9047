package mcptest

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// NPMDir is where scripts/deps.sh installs the npm test peers.
func NPMDir() string { return filepath.Join(RepoRoot(), ".cache", "npm") }

// Everything returns the command that runs the npm reference server
// @modelcontextprotocol/server-everything over stdio. Without it the test
// is skipped, or fails under CI, where scripts/deps.sh must have run.
func Everything(t testing.TB) []string {
	t.Helper()
	script := filepath.Join(NPMDir(), "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
	if _, err := os.Stat(script); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("server-everything is not installed (%v): scripts/deps.sh should have installed it", err)
		}
		t.Skip("server-everything is not installed: run scripts/deps.sh (make test does)")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	return []string{node, script, "stdio"}
}

// Reference returns the command that runs one of the npm reference servers
// scripts/deps.sh installs ("filesystem", "memory") over stdio, followed by
// args. Without it the test is skipped, or fails under CI.
func Reference(t testing.TB, name string, args ...string) []string {
	t.Helper()
	script := filepath.Join(NPMDir(), "node_modules", "@modelcontextprotocol", "server-"+name, "dist", "index.js")
	if _, err := os.Stat(script); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("server-%s is not installed (%v): scripts/deps.sh should have installed it", name, err)
		}
		t.Skip("server-" + name + " is not installed: run scripts/deps.sh (make test does)")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	return append([]string{node, script}, args...)
}

// EverythingHTTP starts server-everything's Streamable HTTP server on a
// loopback port and returns its MCP endpoint URL. The server is stopped when
// the test ends.
func EverythingHTTP(t testing.TB) string {
	t.Helper()
	url, _ := StartEverythingHTTP(t, "0")
	return url
}

// StartEverythingHTTP starts server-everything's Streamable HTTP server on
// the loopback port given ("0" for any free one) and returns its MCP
// endpoint URL and a function that kills it and waits for it to exit
// (a server that dies). The server is also stopped when the test ends.
func StartEverythingHTTP(t testing.TB, port string) (string, func()) {
	t.Helper()
	cmd := Everything(t)
	preload := filepath.Join(RepoRoot(), "testdata", "loopback.cjs")
	ctx, cancel := context.WithCancel(context.Background())
	c := exec.CommandContext(ctx, cmd[0], "--require", preload, cmd[1], "streamableHttp")
	c.Env = append(os.Environ(), "PORT="+port)
	stderr, err := c.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			c.Wait()
		})
	}
	t.Cleanup(stop)
	ports := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if port, ok := strings.CutPrefix(sc.Text(), "MCPI_LISTENING "); ok {
				select {
				case ports <- port:
				default:
				}
			}
		}
	}()
	select {
	case port := <-ports:
		return fmt.Sprintf("http://127.0.0.1:%s/mcp", port), stop
	case <-time.After(30 * time.Second):
		t.Fatal("server-everything did not start listening within 30s")
	}
	return "", stop
}

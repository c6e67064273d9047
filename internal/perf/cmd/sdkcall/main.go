// Command sdkcall calls one tool of a stdio MCP server with a client built
// on the official Go SDK, as a program a person would write with it: connect
// with CommandTransport, CallTool, print the text blocks, close. It is the
// Go SDK contender of scripts/bench.sh.
//
// -unlimited connects through an IOTransport without a line-length cap
// instead: CommandTransport has no such option and stops at 16 MiB
// (mcp.DefaultMaxLineLength), so it cannot read a 50 MB result.
//
// -list looks the tool up in tools/list first, page by page until it is
// found, as `mcpi call` does to coerce and check the arguments.
//
// Usage: sdkcall [-tool NAME] [-args JSON] [-unlimited] [-list] -- COMMAND [ARGS...]
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	tool := flag.String("tool", "echo", "the tool to call")
	args := flag.String("args", "{}", "its arguments, a JSON object")
	unlimited := flag.Bool("unlimited", false, "read lines of any length (IOTransport instead of CommandTransport)")
	list := flag.Bool("list", false, "find the tool in tools/list before calling it")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: sdkcall [-tool NAME] [-args JSON] [-unlimited] -- COMMAND [ARGS...]")
		os.Exit(2)
	}
	if err := run(flag.Args(), *tool, *args, *unlimited, *list); err != nil {
		fmt.Fprintln(os.Stderr, "sdkcall:", err)
		os.Exit(1)
	}
}

func run(argv []string, tool, args string, unlimited, list bool) error {
	var arguments map[string]any
	if err := json.Unmarshal([]byte(args), &arguments); err != nil {
		return fmt.Errorf("-args: %w", err)
	}
	ctx := context.Background()
	cmd := exec.Command(argv[0], argv[1:]...)
	var t mcp.Transport = &mcp.CommandTransport{Command: cmd}
	if unlimited {
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			return err
		}
		stdin, err := cmd.StdinPipe()
		if err != nil {
			return err
		}
		if err := cmd.Start(); err != nil {
			return err
		}
		defer cmd.Wait()
		t = &mcp.IOTransport{Reader: stdout, Writer: stdin, MaxLineLength: -1}
	}
	var logs atomic.Int64
	client := mcp.NewClient(&mcp.Implementation{Name: "sdkcall", Version: "1"}, &mcp.ClientOptions{
		//lint:ignore SA1019 the flood is of notifications/message, which the client must take in.
		LoggingMessageHandler: func(context.Context, *mcp.LoggingMessageRequest) { logs.Add(1) },
	})
	cs, err := client.Connect(ctx, t, nil)
	if err != nil {
		return err
	}
	defer cs.Close()
	if list {
		found := false
		for t, err := range cs.Tools(ctx, nil) {
			if err != nil {
				return err
			}
			if t.Name == tool {
				found = true
				break
			}
		}
		if !found {
			return fmt.Errorf("no tool named %s", tool)
		}
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: arguments})
	if err != nil {
		return err
	}
	out := bufio.NewWriter(os.Stdout)
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			out.WriteString(t.Text)
			out.WriteByte('\n')
		}
	}
	if err := out.Flush(); err != nil {
		return err
	}
	if res.IsError {
		return fmt.Errorf("the tool returned isError")
	}
	return nil
}

// Command floor is the least a client can do to call one tool of a stdio
// MCP server: spawn it, send initialize, wait for the answer, send
// notifications/initialized and tools/call, read lines until the answer,
// print its text blocks, close the server's stdin and wait for it to exit.
// It uses the standard library only and checks nothing it need not: it is
// the floor that scripts/bench.sh measures mcpi's one-shot overhead against.
//
// Usage: floor [-tool NAME] [-args JSON] -- COMMAND [ARGS...]
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
)

type response struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

type callResult struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	IsError bool `json:"isError"`
}

func main() {
	tool := flag.String("tool", "echo", "the tool to call")
	args := flag.String("args", "{}", "its arguments, a JSON object")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: floor [-tool NAME] [-args JSON] -- COMMAND [ARGS...]")
		os.Exit(2)
	}
	if err := run(flag.Args(), *tool, json.RawMessage(*args)); err != nil {
		fmt.Fprintln(os.Stderr, "floor:", err)
		os.Exit(1)
	}
}

func run(argv []string, tool string, args json.RawMessage) error {
	cmd := exec.Command(argv[0], argv[1:]...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	in := bufio.NewReaderSize(stdout, 64<<10)
	if _, err := io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"floor","version":"1"}}}`+"\n"); err != nil {
		return err
	}
	if _, err := await(in, "1"); err != nil {
		return err
	}
	call, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 2, "method": "tools/call",
		"params": map[string]any{"name": tool, "arguments": args}})
	if err != nil {
		return err
	}
	frames := append([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"), call...)
	if _, err := stdin.Write(append(frames, '\n')); err != nil {
		return err
	}
	raw, err := await(in, "2")
	if err != nil {
		return err
	}
	var res callResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return err
	}
	out := bufio.NewWriter(os.Stdout)
	for _, c := range res.Content {
		if c.Type == "text" {
			out.WriteString(c.Text)
			out.WriteByte('\n')
		}
	}
	if err := out.Flush(); err != nil {
		return err
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		return err
	}
	if res.IsError {
		return fmt.Errorf("the tool returned isError")
	}
	return nil
}

// await reads lines until the response with the given id and returns its
// result. Notifications and anything else are skipped.
func await(in *bufio.Reader, id string) (json.RawMessage, error) {
	for {
		line, err := in.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			var r response
			if json.Unmarshal(line, &r) == nil && string(r.ID) == id {
				if r.Error != nil {
					return nil, fmt.Errorf("error response: %s", r.Error)
				}
				return r.Result, nil
			}
		}
		if err != nil {
			return nil, fmt.Errorf("no answer to request %s: %w", id, err)
		}
	}
}

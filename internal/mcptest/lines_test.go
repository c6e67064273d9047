package mcptest

import (
	"bufio"
	"bytes"
	"testing"
)

// What a stdio test server sends is on the wire at once, a line a message,
// without waiting for the buffer to fill.
func TestSendersWriteALineAndFlush(t *testing.T) {
	var wire bytes.Buffer
	out := bufio.NewWriterSize(&wire, 1<<20)
	lineSender(out)(`{"jsonrpc":"2.0","method":"a"}`)
	if got := wire.String(); got != "{\"jsonrpc\":\"2.0\",\"method\":\"a\"}\n" {
		t.Errorf("after lineSender the wire holds %q", got)
	}
	jsonSender(out)(map[string]any{"jsonrpc": "2.0", "id": 1, "result": map[string]any{}})
	if got := wire.String(); got != "{\"jsonrpc\":\"2.0\",\"method\":\"a\"}\n{\"id\":1,\"jsonrpc\":\"2.0\",\"result\":{}}\n" {
		t.Errorf("after jsonSender the wire holds %q", got)
	}
}

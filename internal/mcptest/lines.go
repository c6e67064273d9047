package mcptest

import (
	"bufio"
	"encoding/json"
)

// lineSender is how a stdio test server sends: each message a line of its
// own on out, flushed at once so that the client reads it now.
func lineSender(out *bufio.Writer) func(line string) {
	return func(line string) {
		out.WriteString(line)
		out.WriteByte('\n')
		out.Flush()
	}
}

// jsonSender sends v as JSON, a line of its own, through lineSender.
func jsonSender(out *bufio.Writer) func(v any) {
	send := lineSender(out)
	return func(v any) {
		b, _ := json.Marshal(v)
		send(string(b))
	}
}

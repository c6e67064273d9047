package mcptest

import (
	"bufio"
	"encoding/json"
	"os"
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

// eachMessage reads stdin a line at a time until it ends, and hands each
// line that is JSON to handle, decoded as far as hostileMsg goes: what a
// stdio test server reads.
func eachMessage(handle func(line []byte, m hostileMsg)) {
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	for {
		line, err := in.ReadBytes('\n')
		var m hostileMsg
		if len(line) > 0 && json.Unmarshal(line, &m) == nil {
			handle(line, m)
		}
		if err != nil {
			return
		}
	}
}

package proxy

import (
	"io"
	"os"
	"sync"
	"testing"

	"github.com/mcpi-dev/mcpi/internal/mcptest"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// TestMain runs the test binary as a stdio server when asked: a peer of
// mcptest (the demo server), or a server that writes fixed bytes.
func TestMain(m *testing.M) {
	serveBenchProxy()
	mcptest.ServePeer()
	if os.Getenv("MCPI_PROXY_TEST_SERVER") == "raw" {
		// Odd bytes a server may write: a CRLF, a blank line, a bad
		// line, a frame with no end of line, after the host's first line.
		io.ReadAll(io.LimitReader(os.Stdin, 1))
		os.Stdout.WriteString("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\r\n\n  \nnot json\n\xff\xfe\n{\"jsonrpc\":\"2.0\",\"method\":\"x\"}")
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// taps keeps the events a tap saw.
type taps struct {
	mu  sync.Mutex
	evs []transport.Event
}

func (t *taps) Observe(e transport.Event) {
	t.mu.Lock()
	t.evs = append(t.evs, e)
	t.mu.Unlock()
}

func (t *taps) of(k transport.EventKind) []transport.Event {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []transport.Event
	for _, e := range t.evs {
		if e.Kind == k {
			out = append(out, e)
		}
	}
	return out
}

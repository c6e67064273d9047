package proxy

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/mcpi-dev/mcpi/internal/mcptest"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// TestMain runs the test binary as a stdio server when asked: a peer of
// mcptest (the demo server), or a server that writes fixed bytes.
func TestMain(m *testing.M) {
	serveBenchProxy()
	mcptest.ServePeer()
	if os.Getenv("MCPI_PROXY_TEST_SERVER") == "stray" {
		serveStray()
	}
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
	mu    sync.Mutex
	evs   []transport.Event
	moved chan struct{}
}

func (t *taps) Observe(e transport.Event) {
	t.mu.Lock()
	t.evs = append(t.evs, e)
	if t.moved != nil {
		close(t.moved)
		t.moved = nil
	}
	t.mu.Unlock()
}

// waitFor waits until the events seen so far satisfy ok, or fails after
// ten seconds saying what it waited for.
func (t *taps) waitFor(tb testing.TB, what string, ok func([]transport.Event) bool) {
	tb.Helper()
	deadline := time.After(10 * time.Second)
	for {
		t.mu.Lock()
		if ok(t.evs) {
			t.mu.Unlock()
			return
		}
		if t.moved == nil {
			t.moved = make(chan struct{})
		}
		moved := t.moved
		t.mu.Unlock()
		select {
		case <-moved:
		case <-deadline:
			tb.Fatalf("the tap never saw %s", what)
		}
	}
}

// framesOf are the frames of dir the events hold, as text.
func framesOf(evs []transport.Event, dir transport.Direction) []string {
	var out []string
	for _, e := range evs {
		if e.Kind == transport.KindFrame && e.Dir == dir {
			out = append(out, string(e.Data))
		}
	}
	return out
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

// serveStray answers each request with the answers to every id up to
// its own not yet answered: a server that answers requests it never got.
func serveStray() {
	sc := bufio.NewScanner(os.Stdin)
	answered := map[int]bool{}
	for sc.Scan() {
		var m struct {
			ID int `json:"id"`
		}
		if json.Unmarshal(sc.Bytes(), &m) != nil || m.ID == 0 {
			continue
		}
		for id := 1; id <= m.ID; id++ {
			if !answered[id] {
				answered[id] = true
				fmt.Printf("{\"jsonrpc\":\"2.0\",\"id\":%d,\"result\":{\"from\":\"server\"}}\n", id)
			}
		}
	}
	os.Exit(0)
}

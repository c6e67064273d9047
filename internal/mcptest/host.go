package mcptest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpi-dev/mcpi/internal/transport"
)

// hostWait bounds a simulated host's wait for a line: a test fails
// instead of hanging.
const hostWait = 10 * time.Second

// Host is a simulated MCP host on a stdio connection (in front of mcpi
// proxy): it writes frames as a desktop app would and reads every line it
// gets, keeping them in the order they came (Transcript).
type Host struct {
	w     io.Writer
	lines chan []byte
	done  chan struct{}

	mu         sync.Mutex
	transcript []byte
	next       int
}

// NewHost returns a host that writes to w and reads r until it ends.
func NewHost(w io.Writer, r io.Reader) *Host {
	h := &Host{w: w, lines: make(chan []byte, 1024), done: make(chan struct{})}
	go func() {
		defer close(h.done)
		br := bufio.NewReader(r)
		for {
			line, err := br.ReadBytes('\n')
			if len(line) > 0 {
				h.mu.Lock()
				h.transcript = append(h.transcript, line...)
				h.mu.Unlock()
				h.lines <- bytes.TrimRight(line, "\r\n")
			}
			if err != nil {
				close(h.lines)
				return
			}
		}
	}()
	return h
}

// Send writes one frame and its newline.
func (h *Host) Send(t testing.TB, frame string) {
	t.Helper()
	if _, err := io.WriteString(h.w, frame+"\n"); err != nil {
		t.Fatalf("host: writing %s: %v", frame, err)
	}
}

// Request sends a request of the next id and returns the id.
func (h *Host) Request(t testing.TB, method string, params any) int {
	t.Helper()
	h.mu.Lock()
	h.next++
	id := h.next
	h.mu.Unlock()
	p, err := json.Marshal(params)
	if err != nil {
		t.Fatal(err)
	}
	h.Send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, p))
	return id
}

// Recv returns the next line the host got, or fails the test after
// hostWait; ok is false when the connection ended.
func (h *Host) Recv(t testing.TB) (line []byte, ok bool) {
	t.Helper()
	select {
	case l, ok := <-h.lines:
		return l, ok
	case <-time.After(hostWait):
		t.Fatalf("host: nothing came in %s", hostWait)
		return nil, false
	}
}

// Call sends a request and returns the first line that answers its id
// (the lines before it are in the transcript).
func (h *Host) Call(t testing.TB, method string, params any) []byte {
	t.Helper()
	id := h.Request(t, method, params)
	for {
		line, ok := h.Recv(t)
		if !ok {
			t.Fatalf("host: the connection ended before the answer to %s id %d", method, id)
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(line, &m) == nil && m.Method == "" && string(m.ID) == fmt.Sprint(id) {
			return line
		}
	}
}

// Initialize runs the legacy handshake: initialize, then initialized.
func (h *Host) Initialize(t testing.TB) []byte {
	t.Helper()
	res := h.Call(t, "initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "mcptest-host", "version": "1"}})
	h.Send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return res
}

// Ended waits for the connection to end, or fails after hostWait.
func (h *Host) Ended(t testing.TB) {
	t.Helper()
	for {
		select {
		case _, ok := <-h.lines:
			if !ok {
				return
			}
		case <-time.After(hostWait):
			t.Fatalf("host: the connection did not end in %s", hostWait)
		}
	}
}

// Transcript is every byte the host got so far, in order.
func (h *Host) Transcript() []byte {
	h.mu.Lock()
	defer h.mu.Unlock()
	return bytes.Clone(h.transcript)
}

// HTTPHost is a simulated host of a Streamable HTTP server: it POSTs
// frames with the session's id and reads the answers, JSON or SSE.
type HTTPHost struct {
	URL       string
	Client    *http.Client
	SessionID string
}

// HTTPAnswer is what one POST got: the status and the frames, each SSE
// event's data or the JSON body; Err says the body broke.
type HTTPAnswer struct {
	Status int
	Header http.Header
	Frames [][]byte
	Err    error
}

// Post sends one frame and reads the whole answer.
func (h *HTTPHost) Post(t testing.TB, frame string) HTTPAnswer {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, h.URL, strings.NewReader(frame))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if h.SessionID != "" {
		req.Header.Set("Mcp-Session-Id", h.SessionID)
	}
	c := h.Client
	if c == nil {
		c = transport.NewHTTPClient(nil, transport.EgressPolicy{})
		c.Timeout = hostWait
	}
	resp, err := c.Do(req)
	if err != nil {
		return HTTPAnswer{Err: err}
	}
	defer resp.Body.Close()
	if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
		h.SessionID = id
	}
	a := HTTPAnswer{Status: resp.StatusCode, Header: resp.Header}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		a.Err = transport.ReadSSE(resp.Body, 0, func(ev transport.SSEEvent) {
			if ev.HasData {
				a.Frames = append(a.Frames, ev.Data)
			}
		})
		return a
	}
	body, err := io.ReadAll(resp.Body)
	a.Err = err
	if b := bytes.TrimSpace(body); len(b) > 0 {
		a.Frames = append(a.Frames, b)
	}
	return a
}

// Initialize runs the legacy handshake over HTTP and keeps the session.
func (h *HTTPHost) Initialize(t testing.TB) HTTPAnswer {
	t.Helper()
	a := h.Post(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"mcptest-host","version":"1"}}}`)
	h.Post(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return a
}

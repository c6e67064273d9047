package session_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/session"
)

// answerConn answers each request with answer(m), which may sleep.
type answerConn struct {
	*serverFrames
	answer func(c *answerConn, m *mcp.Message)
}

func newAnswerConn(answer func(c *answerConn, m *mcp.Message)) *answerConn {
	return &answerConn{serverFrames: newServerFrames(64), answer: answer}
}

func (c *answerConn) Send(ctx context.Context, frame []byte) error {
	msgs, _, err := mcp.DecodeFrame(frame)
	if err != nil {
		return nil
	}
	for _, m := range msgs {
		if m.IsRequest() {
			go c.answer(c, m)
		}
	}
	return nil
}

// A listing's pages are one operation under --max-time (docs/cli.md): a
// server that answers each page in 100ms with an endless cursor must be cut
// at MaxTime, not at 30 pages. In a synctest bubble: the pages take 100 ms
// of its clock, however busy the machine.
func TestListingIsOneOperation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := 0
		var mu sync.Mutex
		conn := newAnswerConn(func(c *answerConn, m *mcp.Message) {
			// The slowness is what is under test: each page takes 100ms, so
			// only the operation's clock ends the listing.
			time.Sleep(100 * time.Millisecond)
			mu.Lock()
			n++
			k := n
			mu.Unlock()
			c.push(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"tools":[],"nextCursor":"c%d"}}`, m.ID, k))
		})
		c := session.New(conn, session.Options{Force: true, Timeout: time.Second, MaxTime: 500 * time.Millisecond, MaxPages: 30})
		defer c.Close()
		_, err := c.AllTools(context.Background())
		mu.Lock()
		pages := n
		mu.Unlock()
		var te *session.TimeoutError
		if !errors.As(err, &te) || !te.Max {
			t.Fatalf("after %d pages: err = %v, want the operation's maximum time (500ms)", pages, err)
		}
	})
}

// A 2025-11-25 task's result in hand is not held back by a tasks/get the
// poller sent meanwhile and the server does not answer.
func TestLegacyTaskResultNotHeldByThePoll(t *testing.T) {
	polled := make(chan struct{}) // closed at the poller's first tasks/get
	var once sync.Once
	conn := newAnswerConn(func(c *answerConn, m *mcp.Message) {
		switch m.Method {
		case "tools/call":
			c.push(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"task":{"taskId":"t1","status":"input_required","pollInterval":200,"createdAt":"2025-01-01T00:00:00Z","lastUpdatedAt":"2025-01-01T00:00:00Z","ttl":null}}}`, m.ID))
		case "tasks/result":
			// The result comes once a tasks/get is out, unanswered.
			select {
			case <-polled:
			case <-c.closed:
				return
			}
			c.push(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"done"}]}}`, m.ID))
		case "tasks/get":
			once.Do(func() { close(polled) }) // and never answered
		}
	})
	// No clock ends the unanswered tasks/get: a call that waits on it
	// never returns, and the bounded wait below says so.
	c := session.New(conn, session.Options{Force: true, Timeout: -1, MaxTime: -1})
	defer c.Close()
	err := within(t, 20*time.Second, "CallToolAsTask, its result in hand while the poller's tasks/get goes unanswered,", func() error {
		_, err := c.CallToolAsTask(context.Background(), mcp.CallToolParams{Name: "x"}, nil, nil)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

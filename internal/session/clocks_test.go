package session_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/mcptest"
	"github.com/mcpi-dev/mcpi/internal/session"
)

// within runs fn and fails the test when it has not returned after guard:
// a wait that escapes its clocks shows as a failure, not a hung test.
func within[T any](t *testing.T, guard time.Duration, what string, fn func() T) T {
	t.Helper()
	ch := make(chan T, 1)
	go func() { ch <- fn() }()
	select {
	case v := <-ch:
		return v
	case <-time.After(guard):
		t.Fatalf("%s escaped its clocks: still waiting after %v", what, guard)
		panic("unreachable")
	}
}

// A request whose write blocks (the server stopped reading its stdin, and
// the request is larger than the pipe) is bounded by the request's
// clocks: it ends with a timeout that says the server did not read it.
func TestRequestWriteHasTheRequestsClock(t *testing.T) {
	t.Parallel()
	p := mustPeer(t)(stdioPeer(t, mcptest.BoundsPrefix+mcptest.BoundsStopsReading, peerConfig{}))
	if _, err := p.c.ListTools(ctxT(t), ""); err != nil {
		t.Fatal(err)
	}
	big := json.RawMessage(fmt.Sprintf(`{"text":%q}`, strings.Repeat("x", 300<<10)))
	err := within(t, 10*time.Second, "a call the server does not read", func() error {
		_, err := p.c.CallTool(ctxT(t), "echo", big, &session.CallOptions{Timeout: 300 * time.Millisecond})
		return err
	})
	var te *session.TimeoutError
	if !errors.As(err, &te) || !te.Unread {
		t.Fatalf("want a timeout saying the server did not read the request, got %v", err)
	}
	if !strings.Contains(err.Error(), "did not read the request") {
		t.Errorf("message: %v", err)
	}
}

// gate parks elicitations until released, as a session's daemon does for a
// request no command answers.
type gate struct {
	testHandler
	parked  chan struct{}
	release chan struct{}
	once    sync.Once
}

func (g *gate) Elicit(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	g.once.Do(func() { close(g.parked) })
	select {
	case <-g.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return &mcp.ElicitResult{Action: mcp.ElicitDecline}, nil
}

// A server request left waiting for a person (the call that caused it has
// ended) holds no other request's clock: a later, unrelated call that gets
// no answer times out as it would without it.
func TestParkedRequestHoldsOnlyItsOwnCall(t *testing.T) {
	t.Parallel()
	g := &gate{parked: make(chan struct{}), release: make(chan struct{})}
	defer close(g.release)
	p := mustPeer(t)(stdioPeer(t, mcptest.BoundsPrefix+mcptest.BoundsRequestBurst, peerConfig{opts: session.Options{Handler: g}}))
	ctx := ctxT(t)
	// The call that asks ends at once, leaving its elicitation waiting.
	if _, err := p.c.CallTool(ctx, "ask", json.RawMessage(`{}`), nil); err != nil {
		t.Fatal(err)
	}
	<-g.parked
	if n := p.c.Answering(); n != 1 {
		t.Fatalf("Answering() = %d, want the parked request", n)
	}
	err := within(t, 10*time.Second, "a call made while another request is parked", func() error {
		_, err := p.c.CallTool(ctx, "hang", json.RawMessage(`{}`), &session.CallOptions{Timeout: 300 * time.Millisecond})
		return err
	})
	var te *session.TimeoutError
	if !errors.As(err, &te) || te.Unread {
		t.Fatalf("want the call's own timeout, got %v", err)
	}
}

// A call pending when the server asks keeps no clock while the person
// answers, and gets its answer afterwards (the rule the parked request
// must not extend to others).
func TestCallWaitingOnItsOwnQuestionIsHeld(t *testing.T) {
	t.Parallel()
	g := &gate{parked: make(chan struct{}), release: make(chan struct{})}
	p := mustPeer(t)(stdioPeer(t, "demo", peerConfig{opts: session.Options{Handler: g}}))
	done := make(chan error, 1)
	go func() {
		_, err := p.c.CallTool(ctxT(t), "elicit", json.RawMessage(`{}`), &session.CallOptions{Timeout: 200 * time.Millisecond})
		done <- err
	}()
	<-g.parked
	// The time is what is under test: the person answers for longer than
	// the call's clock, which must not run out meanwhile, and no event
	// marks a clock that did not fire.
	time.Sleep(600 * time.Millisecond)
	close(g.release)
	if err := <-done; err != nil {
		t.Fatalf("the call waiting on its own question timed out: %v", err)
	}
}

// A task that never ends is given up on when the operation's maximum time
// is spent, however promptly each tasks/get is answered, and is cancelled:
// in the tasks extension and in 2025-11-25 tasks alike.
func TestTaskThatNeverEndsEndsAtMaxTime(t *testing.T) {
	t.Parallel()
	t.Run("extension", func(t *testing.T) {
		t.Parallel()
		p := mustPeer(t)(stdioPeer(t, mcptest.TasksPeer, peerConfig{opts: session.Options{MaxTime: 700 * time.Millisecond}, noSchema: true}))
		err := within(t, 10*time.Second, "a task that never ends", func() error {
			_, err := p.c.CallToolFollow(ctxT(t), mcp.CallToolParams{Name: "forever"}, nil, nil)
			return err
		})
		var te *session.TimeoutError
		if !errors.As(err, &te) || !te.Max {
			t.Fatalf("want the maximum time, got %v", err)
		}
		p.rec.waitFor(t, "tasks/cancel", func() bool { return sentLocked(p, "tasks/cancel") })
	})
	t.Run("2025-11-25", func(t *testing.T) {
		t.Parallel()
		p := mustPeer(t)(stdioPeer(t, mcptest.BoundsPrefix+mcptest.BoundsLegacyTaskForever, peerConfig{opts: session.Options{MaxTime: 700 * time.Millisecond}, noSchema: true}))
		err := within(t, 10*time.Second, "a 2025-11-25 task that never ends", func() error {
			_, err := p.c.CallToolAsTask(ctxT(t), mcp.CallToolParams{Name: "forever"}, nil, nil)
			return err
		})
		var te *session.TimeoutError
		if !errors.As(err, &te) || !te.Max {
			t.Fatalf("want the maximum time, got %v", err)
		}
		p.rec.waitFor(t, "tasks/cancel", func() bool { return sentLocked(p, "tasks/cancel") })
	})
}

// A task that asks for input forever gets as many rounds as a multi
// round-trip request, then is given up on and cancelled.
func TestTaskThatAsksForeverIsGivenUp(t *testing.T) {
	t.Parallel()
	p := mustPeer(t)(stdioPeer(t, mcptest.TasksPeer, peerConfig{opts: session.Options{MaxTime: time.Hour}, noSchema: true}))
	err := within(t, 30*time.Second, "a task that asks forever", func() error {
		_, err := p.c.CallToolFollow(ctxT(t), mcp.CallToolParams{Name: "asks"}, nil, nil)
		return err
	})
	if !errors.Is(err, session.ErrTooManyRounds) {
		t.Fatalf("want the rounds' bound, got %v", err)
	}
	updates := len(p.rec.sent("tasks/update"))
	if updates != 16 {
		t.Errorf("%d tasks/update sent, want 16 rounds", updates)
	}
	p.rec.waitFor(t, "tasks/cancel", func() bool { return sentLocked(p, "tasks/cancel") })
}

// sentLocked reports whether method was sent; called under the recorder's
// lock (waitFor).
func sentLocked(p *peer, method string) bool {
	for _, e := range p.rec.events {
		if strings.Contains(string(e.Data), `"method":"`+method+`"`) {
			return true
		}
	}
	return false
}

// Every request mcpi reads gets exactly one answer, however many arrive at
// once: past the requests answered at once, the refusals wait for room in
// their queue rather than being dropped.
func TestBurstOfServerRequestsAllAnswered(t *testing.T) {
	t.Parallel()
	for round := range 4 {
		t.Run(fmt.Sprint(round), func(t *testing.T) {
			p := mustPeer(t)(stdioPeer(t, mcptest.BoundsPrefix+mcptest.BoundsRequestBurst, peerConfig{
				opts: session.Options{Timeout: 30 * time.Second}, noSchema: true}))
			res := within(t, 60*time.Second, "a burst of 3,000 server requests", func() error {
				r, err := p.c.CallTool(ctxT(t), "burst", json.RawMessage(`{"n":3000}`), nil)
				if err != nil {
					return err
				}
				if got := textOf(r); got != "answered 3000 of 3000, 0 twice" {
					return errors.New(got)
				}
				return nil
			})
			if res != nil {
				t.Fatal(res)
			}
		})
	}
}

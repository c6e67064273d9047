package attach

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mcpi-dev/mcpi/internal/intercept"
	"github.com/mcpi-dev/mcpi/internal/live"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// Client is a TUI's end of an attached connection: an intercept.Decider
// whose decisions go to the proxy's gate, and the feed of the proxy's
// events (Run). Its methods may be called concurrently; a decision is
// answered while Run reads, and fails once the connection has ended.
type Client struct {
	c    *live.Conn
	info Info
	// changes has a value when the frames held changed.
	changes chan struct{}

	mu      sync.Mutex
	held    []intercept.Held
	next    uint64
	waiting map[uint64]chan error
	ended   bool
	err     error
	done    chan struct{}
}

var _ intercept.Decider = (*Client)(nil)

// ErrEnded is the error of a decision once the connection has ended.
var ErrEnded = errors.New("the connection to the proxy ended")

// Dial attaches to the proxy named name under dir (live.DefaultDir).
func Dial(dir, name string) (*Client, error) {
	c, info, err := greet(dir, name, OpAttach)
	if err != nil {
		return nil, err
	}
	return &Client{c: c, info: *info, changes: make(chan struct{}, 1), waiting: map[uint64]chan error{}, done: make(chan struct{})}, nil
}

// Status asks the proxy named name what it is.
func Status(dir, name string) (*Info, error) {
	c, info, err := greet(dir, name, OpStatus)
	if err != nil {
		return nil, err
	}
	c.Close()
	return info, nil
}

func greet(dir, name, op string) (*live.Conn, *Info, error) {
	if err := live.ValidName(name); err != nil {
		return nil, nil, err
	}
	c, err := dialProxy(dir, name)
	if err != nil {
		return nil, nil, err
	}
	if err := c.Send(hello{Proto: ProtocolVersion, Op: op}); err != nil {
		c.Close()
		return nil, nil, err
	}
	var m message
	if err := c.Recv(&m); err != nil {
		c.Close()
		return nil, nil, fmt.Errorf("the proxy %s did not answer: %w", name, err)
	}
	switch {
	case m.Proto != ProtocolVersion:
		c.Close()
		return nil, nil, &VersionError{Proxy: m.Proto, Client: ProtocolVersion}
	case m.Error != "":
		c.Close()
		return nil, nil, fmt.Errorf("the proxy %s refused: %s", name, m.Error)
	case m.Info == nil:
		c.Close()
		return nil, nil, fmt.Errorf("the proxy %s did not say what it is", name)
	}
	return c, m.Info, nil
}

// Names returns the names of the proxies whose sockets are under dir,
// sorted; they may have ended since (Status says).
func Names(dir string) ([]string, error) {
	ents, err := os.ReadDir(Dir(dir))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		n, ok := strings.CutSuffix(e.Name(), ".sock")
		if ok && live.ValidName(n) == nil && e.Type()&os.ModeSocket != 0 {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out, nil
}

// SocketPath is the socket of the proxy named name.
func SocketPath(dir, name string) string { return live.SocketPath(Dir(dir), name) }

// Info says what the proxy attached to is, as it said when attached.
func (c *Client) Info() Info { return c.info }

// Changes has a value when the frames held may have changed.
func (c *Client) Changes() <-chan struct{} { return c.changes }

// Run gives the proxy's events to tap (those of before the attach first)
// until the connection ends (nil when the proxy said goodbye) or ctx
// ends (the connection is closed: the proxy goes on).
func (c *Client) Run(ctx context.Context, tap transport.Tap) error {
	stop := context.AfterFunc(ctx, func() { c.c.Close() })
	defer stop()
	err := c.read(tap)
	if ctx.Err() != nil {
		err = ctx.Err()
	}
	c.end(err)
	return err
}

// ErrDropped says the proxy ended the connection without a goodbye.
var ErrDropped = errors.New("the proxy ended the connection (it was killed, or this TUI read too slowly and was dropped)")

func (c *Client) read(tap transport.Tap) error {
	for {
		var m message
		if err := c.c.Recv(&m); err != nil {
			return ErrDropped
		}
		switch {
		case m.Event != nil:
			tap.Observe(*m.Event)
		case m.Held != nil:
			c.mu.Lock()
			c.held = *m.Held
			c.mu.Unlock()
			select {
			case c.changes <- struct{}{}:
			default:
			}
		case m.Reply != 0:
			c.mu.Lock()
			ch := c.waiting[m.Reply]
			delete(c.waiting, m.Reply)
			c.mu.Unlock()
			if ch != nil {
				var err error
				if m.Error != "" {
					err = errors.New(m.Error)
				}
				ch <- err
			}
		case m.Bye != "":
			// Said in the panes: the TUI stays until it is quit.
			tap.Observe(transport.Event{Kind: transport.KindLifecycle, Time: time.Now(),
				Text: "mcpi proxy attach: " + m.Bye + "; the TUI shows what it saw until you quit"})
			return nil
		}
	}
}

// end fails the decisions that wait, and the later ones.
func (c *Client) end(err error) {
	if err == nil {
		err = ErrEnded
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ended {
		return
	}
	c.ended, c.err = true, fmt.Errorf("%w: %v", ErrEnded, err)
	c.held = nil
	close(c.done)
	c.c.Close()
}

// Close ends the connection; the proxy goes on.
func (c *Client) Close() error {
	c.end(nil)
	return nil
}

// Held returns the frames held, as the proxy last said.
func (c *Client) Held() []intercept.Held {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.held
}

// decide sends d and waits for its answer, which comes after what it
// changed (the frames held).
func (c *Client) decide(d decision) error {
	ch := make(chan error, 1)
	c.mu.Lock()
	if c.ended {
		err := c.err
		c.mu.Unlock()
		return err
	}
	c.next++
	d.Req = c.next
	c.waiting[d.Req] = ch
	c.mu.Unlock()
	if err := c.c.Send(d); err != nil {
		c.end(err)
	}
	select {
	case err := <-ch:
		return err
	case <-c.done:
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.err
	}
}

func (c *Client) Forward(id uint64) error { return c.decide(decision{Op: opForward, ID: id}) }
func (c *Client) Drop(id uint64) error    { return c.decide(decision{Op: opDrop, ID: id}) }
func (c *Client) CloseConn(id uint64) error {
	return c.decide(decision{Op: opClose, ID: id})
}
func (c *Client) Release(id uint64) error { return c.decide(decision{Op: opRelease, ID: id}) }
func (c *Client) Edit(id uint64, data []byte) error {
	return c.decide(decision{Op: opEdit, ID: id, Data: data})
}
func (c *Client) Answer(id uint64, result json.RawMessage, code int64, message string) error {
	return c.decide(decision{Op: opAnswer, ID: id, Result: result, Code: code, Message: message})
}

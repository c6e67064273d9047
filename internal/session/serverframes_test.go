package session_test

import (
	"sync"

	"github.com/mcpi-dev/mcpi/internal/transport"
)

// serverFrames is the server's side of a test connection: what push puts
// in is what Recv hands to mcpi, until Close. A fake server embeds it and
// writes only its Send.
type serverFrames struct {
	frames chan transport.Frame
	closed chan struct{}
	once   sync.Once
}

func newServerFrames(buffered int) *serverFrames {
	return &serverFrames{frames: make(chan transport.Frame, buffered), closed: make(chan struct{})}
}

// push hands s to mcpi's reader; it reports false, dropping s, once the
// connection is closed.
func (c *serverFrames) push(s string) bool {
	select {
	case c.frames <- transport.Frame{Data: []byte(s)}:
		return true
	case <-c.closed:
		return false
	}
}

func (c *serverFrames) Recv() (transport.Frame, error) {
	select {
	case f := <-c.frames:
		return f, nil
	case <-c.closed:
		return transport.Frame{}, transport.ErrClosed
	}
}

// Close may be called more than once; it unblocks Recv and push.
func (c *serverFrames) Close() error {
	c.once.Do(func() { close(c.closed) })
	return nil
}

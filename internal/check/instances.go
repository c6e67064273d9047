package check

import (
	"context"
	"errors"
	"sync"

	"github.com/mcpi-dev/mcpi/internal/transport"
)

// A stdio server is a process of its own per connection, and some allow
// one instance at a time (a lock file, a port, a browser profile): a
// second one refuses to start, or kills the first. So Run never has two
// connections to a stdio server open at once: the steps that need a
// connection of their own run after the session's, which Run closes
// first, one at a time, each closing its connection before the next
// opens. Every such connection is opened by run.dial, which keeps the
// rule; a finding made on one says so (Finding.Connection).

// errTwoInstances is a second connection to a stdio server asked for while
// another is open: a step that forgot the rule.
var errTwoInstances = errors.New("check: a second instance of a stdio server while another is running")

// instances counts the run's open connections to the server.
type instances struct {
	mu   sync.Mutex
	open int
	// refused counts the dials refused for another open connection: a
	// step that broke the rule (the tests require none).
	refused int
}

// single says the server behind the session is a stdio process: one
// instance at a time.
func (r *run) single() bool {
	n, ok := r.c.Conn().(transport.Namer)
	return ok && n.Name() == "stdio"
}

// releaseSession closes the session's connection before the steps that
// need one of their own, when the server is a stdio process.
func (r *run) releaseSession() {
	if !r.single() || r.released {
		return
	}
	r.released = true
	r.c.Close()
	r.inst.mu.Lock()
	r.inst.open--
	r.inst.mu.Unlock()
}

// dial opens a connection of the run's own to the server; release closes
// it (and may be called more than once). For a stdio server it refuses
// while another connection is open, the session's included.
func (r *run) dial(ctx context.Context) (conn transport.Conn, release func(), err error) {
	r.inst.mu.Lock()
	if r.single() && r.inst.open > 0 {
		r.inst.refused++
		r.inst.mu.Unlock()
		return nil, nil, errTwoInstances
	}
	r.inst.open++
	r.inst.mu.Unlock()
	conn, err = r.opts.Dial(ctx)
	if err != nil {
		r.inst.mu.Lock()
		r.inst.open--
		r.inst.mu.Unlock()
		return nil, nil, err
	}
	var once sync.Once
	return conn, func() {
		once.Do(func() {
			conn.Close()
			r.inst.mu.Lock()
			r.inst.open--
			r.inst.mu.Unlock()
		})
	}, nil
}

// onSecond runs fn with the run's findings marked as made on a connection
// of the check's own, described by how.
func (r *run) onSecond(how string, fn func()) {
	prev := r.via
	r.via = how
	defer func() { r.via = prev }()
	fn()
}

package attach

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"sync"
	"time"

	"github.com/mcpi-dev/mcpi/internal/bounds"
	"github.com/mcpi-dev/mcpi/internal/intercept"
	"github.com/mcpi-dev/mcpi/internal/live"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// The bounds of a proxy's memory for its clients: the events kept for a
// client that attaches later (the oldest go first), and what may wait for
// one client that reads slowly (past it, the client is dropped: the
// proxy never waits for a TUI).
const (
	DefaultBacklog      = 100_000
	DefaultBacklogBytes = 64 << 20
	clientQueue         = 10_000
	clientQueueBytes    = 32 << 20
	// writeTimeout bounds one line to a client that reads nothing.
	writeTimeout = 5 * time.Second
	// helloTimeout bounds the wait for a client's first line.
	helloTimeout = 10 * time.Second
)

// Dir returns the directory of the proxies' sockets in the runtime
// directory dir (live.DefaultDir).
func Dir(dir string) string { return filepath.Join(dir, "proxy") }

// Options make a Server.
type Options struct {
	Info Info
	// Gate decides on held frames (nil: the proxy has no breakpoints).
	Gate intercept.Decider
	// Redact is what a held frame's bytes cross before a client sees
	// them (nil: none), as the events crossed the trace's redactor.
	Redact func([]byte) []byte
	// Backlog and BacklogBytes bound the events kept for clients that
	// attach later (DefaultBacklog, DefaultBacklogBytes when zero).
	Backlog      int
	BacklogBytes int64
}

// Server serves a proxy's events and gate to the clients that attach.
// Observe and Changed may be called from any goroutine, and never wait
// for a client.
type Server struct {
	o  Options
	wg sync.WaitGroup

	mu      sync.Mutex
	backlog []transport.Event
	bytes   int64
	dropped int
	clients map[*client]struct{}
	closed  bool
}

// client is one attached connection and what waits to be sent to it.
type client struct {
	c *live.Conn
	q *bounds.Queue[message]
}

// NewServer returns a server of o.
func NewServer(o Options) *Server {
	if o.Backlog <= 0 {
		o.Backlog = DefaultBacklog
	}
	if o.BacklogBytes <= 0 {
		o.BacklogBytes = DefaultBacklogBytes
	}
	return &Server{o: o, clients: map[*client]struct{}{}}
}

// Listen creates the socket of the proxy named name in the proxies'
// directory under dir (live.DefaultDir): 0600 in a 0700 directory, as a
// session's. A name another proxy runs under is refused.
func Listen(dir, name string) (*net.UnixListener, error) {
	if err := live.ValidName(name); err != nil {
		return nil, err
	}
	if err := live.EnsureDir(dir); err != nil {
		return nil, err
	}
	return live.Listen(Dir(dir), name)
}

// ListenFree is Listen on base, or base-2, base-3...: the first name no
// running proxy has. It returns the name taken.
func ListenFree(dir, base string) (*net.UnixListener, string, error) {
	for i := 1; i < 1000; i++ {
		name := base
		if i > 1 {
			name = fmt.Sprintf("%s-%d", base, i)
		}
		if live.ValidName(name) != nil {
			break
		}
		if c, err := dialProxy(dir, name); err == nil {
			c.Close()
			continue
		}
		ln, err := Listen(dir, name)
		return ln, name, err
	}
	return nil, "", fmt.Errorf("no free name for a proxy after %s", base)
}

func dialProxy(dir, name string) (*live.Conn, error) {
	if err := live.CheckDir(dir); err != nil {
		return nil, fmt.Errorf("%w: %v", live.ErrNoDaemon, err)
	}
	return live.Dial(Dir(dir), name)
}

// Observe keeps an event for the clients to come and sends it to the
// clients attached. It is a transport.Tap: give it events redacted as
// the trace's are.
func (s *Server) Observe(e transport.Event) {
	size := eventSize(e)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	s.backlog = append(s.backlog, e)
	s.bytes += size
	drop := 0
	for len(s.backlog)-drop > s.o.Backlog || (s.bytes > s.o.BacklogBytes && len(s.backlog)-drop > 1) {
		s.bytes -= eventSize(s.backlog[drop])
		drop++
	}
	if drop > 0 {
		clear(s.backlog[:drop])
		s.backlog = s.backlog[drop:]
		s.dropped += drop
	}
	for c := range s.clients {
		s.send(c, message{Event: &e}, size)
	}
}

func eventSize(e transport.Event) int64 { return int64(len(e.Data)+len(e.Text)+len(e.Err)) + 64 }

// send queues m for c; a client whose queue is full reads too slowly and
// is dropped. Called with the lock held.
func (s *Server) send(c *client, m message, size int64) {
	if err := c.q.Push(m, size); err != nil && !errors.Is(err, bounds.ErrQueueClosed) {
		delete(s.clients, c)
		c.q.Close()
		c.c.Close()
	}
}

// Changed sends the frames held to the clients attached: the gate's
// OnChange.
func (s *Server) Changed() {
	held := s.held()
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.clients {
		s.send(c, message{Held: &held}, heldSize(held))
	}
}

func (s *Server) held() []intercept.Held {
	if s.o.Gate == nil {
		return []intercept.Held{}
	}
	held := append([]intercept.Held{}, s.o.Gate.Held()...)
	if s.o.Redact != nil {
		for i := range held {
			held[i].Data = s.o.Redact(held[i].Data)
		}
	}
	return held
}

func heldSize(held []intercept.Held) int64 {
	n := int64(64)
	for _, h := range held {
		n += int64(len(h.Data)) + 128
	}
	return n
}

// info is the proxy's Info now.
func (s *Server) info() *Info {
	i := s.o.Info
	i.Held = len(s.held())
	s.mu.Lock()
	i.Clients = len(s.clients)
	s.mu.Unlock()
	return &i
}

// Serve accepts clients on ln until it is closed (then it returns nil).
func (s *Server) Serve(ln net.Listener) error {
	for {
		nc, err := ln.Accept()
		if err != nil {
			s.mu.Lock()
			closed := s.closed
			s.mu.Unlock()
			if closed || errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.serveConn(nc)
		}()
	}
}

func (s *Server) serveConn(nc net.Conn) {
	if err := live.CheckPeer(nc); err != nil {
		nc.Close()
		return
	}
	c := live.NewConn(nc)
	defer c.Close()
	c.SetDeadline(time.Now().Add(helloTimeout))
	var h hello
	if err := c.Recv(&h); err != nil {
		return
	}
	c.SetDeadline(time.Time{})
	c.SetWriteTimeout(writeTimeout)
	switch {
	case h.Proto != ProtocolVersion:
		c.Send(message{Proto: ProtocolVersion, Error: (&VersionError{Proxy: ProtocolVersion, Client: h.Proto}).Error()})
	case h.Op == OpStatus:
		c.Send(message{Proto: ProtocolVersion, Info: s.info()})
	case h.Op == OpAttach:
		s.attached(c)
	default:
		c.Send(message{Proto: ProtocolVersion, Error: fmt.Sprintf("unknown operation %q", h.Op)})
	}
}

// attached serves one client: first what happened so far, then live;
// its decisions are read here, their answers queued after what they
// changed.
func (s *Server) attached(c *live.Conn) {
	cl := &client{c: c, q: bounds.NewQueue[message](bounds.NewBudget("an attached TUI's queue", clientQueue+s.o.Backlog, clientQueueBytes+s.o.BacklogBytes))}
	info := s.info()
	info.Clients++
	held := s.held()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		c.Send(message{Proto: ProtocolVersion, Error: "the proxy is ending"})
		return
	}
	cl.q.Push(message{Proto: ProtocolVersion, Info: info}, 0)
	if s.dropped > 0 {
		note := transport.Event{Kind: transport.KindLifecycle, Time: s.backlog[0].Time,
			Text: fmt.Sprintf("proxy: the %d oldest events are not kept for a TUI that attaches (the trace has them)", s.dropped)}
		cl.q.Push(message{Event: &note}, 0)
	}
	for i := range s.backlog {
		cl.q.Push(message{Event: &s.backlog[i]}, eventSize(s.backlog[i]))
	}
	cl.q.Push(message{Held: &held}, heldSize(held))
	s.clients[cl] = struct{}{}
	s.mu.Unlock()

	done := make(chan struct{})
	go func() {
		defer close(done)
		s.write(cl)
	}()
	for {
		var d decision
		if err := c.Recv(&d); err != nil {
			break
		}
		m := message{Reply: d.Req}
		if err := s.decide(d); err != nil {
			m.Error = err.Error()
		}
		s.mu.Lock()
		if _, ok := s.clients[cl]; ok {
			s.send(cl, m, int64(len(m.Error))+64)
		}
		s.mu.Unlock()
	}
	s.mu.Lock()
	delete(s.clients, cl)
	s.mu.Unlock()
	cl.q.Close()
	c.Close()
	<-done
}

// write sends what the client's queue holds until it is closed and
// empty, or the client stops reading; then it ends the connection.
func (s *Server) write(cl *client) {
	defer cl.c.Close()
	for {
		m, err := cl.q.Pop(context.Background())
		if err != nil || cl.c.Send(m) != nil {
			return
		}
	}
}

// decide applies a client's decision to the gate.
func (s *Server) decide(d decision) error {
	g := s.o.Gate
	if g == nil {
		return errors.New("this proxy has no breakpoints: nothing is held")
	}
	switch d.Op {
	case opForward:
		return g.Forward(d.ID)
	case opEdit:
		return g.Edit(d.ID, d.Data)
	case opDrop:
		return g.Drop(d.ID)
	case opAnswer:
		return g.Answer(d.ID, json.RawMessage(d.Result), d.Code, d.Message)
	case opClose:
		return g.CloseConn(d.ID)
	case opRelease:
		return g.Release(d.ID)
	}
	return fmt.Errorf("unknown decision %q", d.Op)
}

// Close says goodbye to the clients (why: the proxy's end) and waits for
// their connections to end. Close Serve's listener first.
func (s *Server) Close(why string) {
	s.mu.Lock()
	s.closed = true
	for c := range s.clients {
		c.q.Push(message{Bye: why}, 0)
		c.q.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

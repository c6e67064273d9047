package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpi-dev/mcpi/internal/live"
	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// ClientHooks take what the daemon sends an attached client besides the
// session's messages: the events of the session's connection (Tap), the
// notifications of its history (OnPast) and its roots when they change
// (OnRoots). Any may be nil.
type ClientHooks struct {
	Tap     transport.Tap
	OnPast  func(session.Notification)
	OnRoots func([]mcp.Root)
}

// RelayConn is an attached client's connection: the daemon's socket,
// carrying JSON-RPC messages, and the events of the session's own
// connection, which go to the tap.
type RelayConn struct {
	conn   *live.Conn
	info   AttachInfo
	dir    string
	hooks  ClientHooks
	frames chan transport.Frame
	done   chan struct{}
	err    error // why it ended, once done is closed
	once   sync.Once
	closed atomic.Bool
}

var _ transport.Conn = (*RelayConn)(nil)

// NewRelayConn returns the connection of a client attached to a session:
// the session's events go to h.Tap, the notifications of its history to
// h.OnPast, its roots, when they change, to h.OnRoots.
func NewRelayConn(conn *live.Conn, info AttachInfo, dir string, h ClientHooks) *RelayConn {
	r := &RelayConn{conn: conn, info: info, dir: dir, hooks: h, frames: make(chan transport.Frame, 64), done: make(chan struct{})}
	if info.Forgotten > 0 && h.Tap != nil {
		h.Tap.Observe(transport.Event{Time: time.Now(), Kind: transport.KindLifecycle,
			Text: fmt.Sprintf("session %s: its first %d event(s) are no longer held", info.Name, info.Forgotten)})
	}
	go r.read()
	return r
}

func (r *RelayConn) read() {
	var err error
	h := r.hooks
	for {
		var f live.Frame
		if err = r.conn.Recv(&f); err != nil {
			break
		}
		if f.Error != "" {
			// The daemon says why the session ended: it has, not "could
			// not connect".
			r.end(&EndedError{f.Error})
			return
		}
		if len(f.Wire) > 0 && h.Tap != nil {
			var e transport.Event
			if json.Unmarshal(f.Wire, &e) == nil {
				h.Tap.Observe(e)
			}
		}
		if len(f.Past) > 0 && h.OnPast != nil {
			var n pastNote
			if json.Unmarshal(f.Past, &n) == nil {
				h.OnPast(session.Notification{Time: n.Time, Method: n.Method, Params: n.Params})
			}
		}
		if len(f.Attached) > 0 && h.OnRoots != nil {
			var i AttachInfo
			if json.Unmarshal(f.Attached, &i) == nil {
				h.OnRoots(i.Roots)
			}
		}
		if len(f.Msg) > 0 {
			select {
			case r.frames <- transport.Frame{Data: f.Msg}:
			case <-r.done:
				return
			}
		}
	}
	r.end(r.why(err))
}

// why says why the daemon's socket closed: the session ended (its record
// says how), or the daemon went away.
func (r *RelayConn) why(err error) error {
	if r.closed.Load() {
		return transport.ErrClosed
	}
	rec, rerr := live.ReadRecord(r.dir, r.info.Name)
	switch {
	case rerr == nil && !rec.Live():
		return fmt.Errorf("session %s has ended (%s): %s", r.info.Name, rec.State, rec.Reason)
	case rerr == nil && live.Alive(rec.PID):
		return fmt.Errorf("session %s let this client go: it read nothing for %v (suspended?); the session goes on", r.info.Name, attachWriteTimeout)
	}
	return fmt.Errorf("session %s: %w: %v", r.info.Name, live.ErrLostDaemon, err)
}

func (r *RelayConn) end(err error) {
	r.once.Do(func() {
		r.err = err
		close(r.done)
		r.conn.Close()
	})
}

func (r *RelayConn) Send(ctx context.Context, frame []byte) error {
	select {
	case <-r.done:
		return r.err
	default:
	}
	if err := r.conn.Send(live.Frame{Msg: frame}); err != nil {
		return fmt.Errorf("session %s: %w", r.info.Name, err)
	}
	return nil
}

func (r *RelayConn) Recv() (transport.Frame, error) {
	select {
	case f := <-r.frames:
		return f, nil
	case <-r.done:
		select {
		case f := <-r.frames:
			return f, nil
		default:
		}
		return transport.Frame{}, r.err
	}
}

func (r *RelayConn) Close() error {
	r.closed.Store(true)
	r.end(transport.ErrClosed)
	return nil
}

// Name says what carries the session, and through which session.
func (r *RelayConn) Name() string {
	t := r.info.Transport
	if t == "" {
		t = "?"
	}
	return t + " via session " + r.info.Name
}

// SessionID is the server's session id of the held session.
func (r *RelayConn) SessionID() string { return r.info.SessionID }

// IsHTTP says the client's own connection is no HTTP one: the daemon's
// session keeps the HTTP server alive, not its attached clients.
func (r *RelayConn) IsHTTP() bool { return false }

// RelayOptions are the options of a client attached to the session i
// describes: the session's era, and its revision where the era's own
// default would not be it; the reason is the session's.
func RelayOptions(i AttachInfo) session.Options {
	o := session.Options{Era: i.Era, EraReason: "session " + i.Name + "'s: " + i.EraReason}
	if i.Era == session.EraModern && i.ProtocolVersion != mcp.LatestModern {
		o.ProtocolVersion = i.ProtocolVersion
	}
	return o
}

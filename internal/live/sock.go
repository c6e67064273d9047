package live

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"time"
)

// Request is what a command asks of a session's daemon. It travels as one
// JSON line; the daemon answers with Frames.
type Request struct {
	Op string `json:"op"` // OpRun, OpStatus, OpStop, OpCancel or OpAttach
	// Proto is the socket protocol the sender speaks (ProtocolVersion; 0
	// from an mcpi of before the version), Build its build (Build).
	Proto int    `json:"proto,omitempty"`
	Build string `json:"build,omitempty"`

	// OpRun: the command line (without the program name), the directory
	// it ran in, its standard input when the command reads it, and what
	// the command knows of its terminal.
	Args      []string `json:"args,omitempty"`
	Cwd       string   `json:"cwd,omitempty"`
	Stdin     []byte   `json:"stdin,omitempty"`
	StdoutTTY bool     `json:"stdoutTTY,omitempty"`
	StderrTTY bool     `json:"stderrTTY,omitempty"`
	Color     bool     `json:"color,omitempty"`
}

// Request operations.
const (
	OpRun    = "run"
	OpStatus = "status"
	OpStop   = "stop"
	OpCancel = "cancel" // sent on a run connection: cancel the command
	// OpAttach makes the connection a relay for a client of the session
	// (the TUI): the daemon answers with an Attached frame, then both
	// sides send Msg frames (JSON-RPC) and the daemon Wire frames (what
	// the session's connection carries) until either side closes.
	OpAttach = "attach"
)

// Frame is one message from the daemon: output on the command's stdout or
// stderr (exact bytes, kept apart), or the end of the request.
type Frame struct {
	Out    []byte  `json:"out,omitempty"`
	Err    []byte  `json:"err,omitempty"`
	Exit   *int    `json:"exit,omitempty"`
	Status *Status `json:"status,omitempty"`
	Error  string  `json:"error,omitempty"`

	// On an attached connection (OpAttach).
	Attached json.RawMessage `json:"attached,omitempty"` // first, and again when it changes: what the client needs to know of the session
	Msg      json.RawMessage `json:"msg,omitempty"`      // one JSON-RPC message, either way
	Wire     json.RawMessage `json:"wire,omitempty"`     // one event of the session's connection
	// Past is a notification of the server's from the session's history
	// (before the client attached), with its time.
	Past json.RawMessage `json:"past,omitempty"`
}

// Conn is one connection between a command and a daemon, carrying JSON
// lines. Send may be called concurrently.
type Conn struct {
	c   net.Conn
	r   *bufio.Reader
	mu  sync.Mutex
	enc *json.Encoder
	// writeTimeout bounds each Send (0: none).
	writeTimeout time.Duration
}

// SetWriteTimeout bounds each later Send: a peer that reads nothing for d
// fails it, and the connection should then be closed.
func (c *Conn) SetWriteTimeout(d time.Duration) {
	c.mu.Lock()
	c.writeTimeout = d
	c.mu.Unlock()
}

// NewConn returns a Conn over c (a net.Pipe's end, in tests).
func NewConn(c net.Conn) *Conn { return newConn(c) }

func newConn(c net.Conn) *Conn {
	return &Conn{c: c, r: bufio.NewReader(c), enc: json.NewEncoder(c)}
}

// Send writes one message.
func (c *Conn) Send(v any) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.writeTimeout > 0 {
		c.c.SetWriteDeadline(time.Now().Add(c.writeTimeout))
	}
	return c.enc.Encode(v)
}

// Recv reads one message into v.
func (c *Conn) Recv(v any) error {
	line, err := c.r.ReadBytes('\n')
	if err != nil {
		if err == io.EOF && len(line) > 0 {
			err = io.ErrUnexpectedEOF
		}
		return err
	}
	return json.Unmarshal(line, v)
}

// SetDeadline bounds the reads and writes to come.
func (c *Conn) SetDeadline(t time.Time) error { return c.c.SetDeadline(t) }

// Close closes the connection; it unblocks Recv.
func (c *Conn) Close() error { return c.c.Close() }

// checkPeer refuses a connection from another user.
func checkPeer(c net.Conn) error {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return errors.New("not a Unix socket")
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return err
	}
	uid := -1
	var cerr error
	if err := raw.Control(func(fd uintptr) { uid, cerr = peerUID(fd) }); err != nil {
		return err
	}
	if cerr != nil {
		return fmt.Errorf("reading the peer's credentials: %w", cerr)
	}
	if uid != os.Getuid() {
		return fmt.Errorf("the peer is uid %d, not uid %d: %w", uid, os.Getuid(), ErrUnsafeDir)
	}
	return nil
}

// ErrNoDaemon says no daemon answers on a session's socket: there is none,
// or it is a stale one left by a daemon that died (see Dial).
var ErrNoDaemon = errors.New("no daemon answers")

// Dial connects to the named session's daemon, after checking the
// directory and the socket are ours alone and that the daemon runs as
// this user. A socket nobody listens on any more is removed, and the
// error is ErrNoDaemon.
func Dial(dir, name string) (*Conn, error) {
	if err := CheckDir(dir); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%w: %v", ErrNoDaemon, err)
		}
		return nil, err
	}
	path := SocketPath(dir, name)
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoDaemon, err)
	}
	if fi.Mode().Type() != os.ModeSocket {
		return nil, fmt.Errorf("%s is not a socket: %w", path, ErrUnsafeDir)
	}
	if err := private(fi, path, "socket"); err != nil {
		return nil, err
	}
	c, err := net.Dial("unix", path)
	if err != nil {
		if errors.Is(err, syscall.ECONNREFUSED) {
			// Its daemon died without removing it.
			os.Remove(path)
		}
		return nil, fmt.Errorf("%w: %v", ErrNoDaemon, err)
	}
	if err := checkPeer(c); err != nil {
		c.Close()
		return nil, err
	}
	return newConn(c), nil
}

// Listen creates the named session's socket (0600) in dir. A socket left
// by a dead daemon is replaced; a live one is not.
func Listen(dir, name string) (*net.UnixListener, error) {
	if err := EnsureDir(dir); err != nil {
		return nil, err
	}
	path := SocketPath(dir, name)
	c, err := Dial(dir, name)
	switch {
	case err == nil:
		c.Close()
		return nil, fmt.Errorf("a session named %s is running already", name)
	case !errors.Is(err, ErrNoDaemon):
		// Not ours, or not a socket: not to be replaced.
		return nil, err
	}
	// The directory is 0700 already; the umask makes the socket 0600 from
	// its first instant as well.
	ln, err := listenPrivate(path)
	if err != nil {
		return nil, err
	}
	ln.SetUnlinkOnClose(true)
	return ln, nil
}

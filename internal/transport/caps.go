package transport

// The optional capabilities of a Conn, named in one place. A connection
// says what it can do by implementing them; code that needs one asserts
// the named interface, and display code asks Describe. The assertions
// below fail to compile when an implementation stops providing what it
// promised.

// Namer names the transport ("stdio", "streamable-http", "sse").
type Namer interface{ Name() string }

// SessionHolder has an HTTP session (Mcp-Session-Id) and can forget it.
type SessionHolder interface {
	SessionID() string
	ResetSession()
}

// SessionIDer reports an HTTP session id.
type SessionIDer interface{ SessionID() string }

// VersionSetter sends the negotiated revision in every request's
// MCP-Protocol-Version header.
type VersionSetter interface{ SetProtocolVersion(string) }

// StreamWatcher reports when the standalone GET stream opens and closes.
type StreamWatcher interface {
	WatchStream(func(open bool, err error))
}

// StreamListener opens the standalone GET stream for what the server
// sends outside any request.
type StreamListener interface{ Listen() }

// StreamCloser cancels a request by closing its response stream (the
// modern era over HTTP).
type StreamCloser interface{ CloseStream(idKey string) bool }

// HTTPSaying says whether a connection that is not one of these
// transports carries HTTP (an attached client's relay does not).
type HTTPSaying interface{ IsHTTP() bool }

// Process is a stdio server: its pid and the tail of its stderr.
type Process interface {
	Pid() int
	StderrTail() []string
}

var (
	_ Namer   = (*Stdio)(nil)
	_ Process = (*Stdio)(nil)

	_ Namer          = (*StreamableHTTP)(nil)
	_ SessionHolder  = (*StreamableHTTP)(nil)
	_ VersionSetter  = (*StreamableHTTP)(nil)
	_ StreamWatcher  = (*StreamableHTTP)(nil)
	_ StreamListener = (*StreamableHTTP)(nil)
	_ StreamCloser   = (*StreamableHTTP)(nil)

	_ Namer = (*LegacySSE)(nil)

	_ Namer          = (*AutoHTTP)(nil)
	_ SessionHolder  = (*AutoHTTP)(nil)
	_ VersionSetter  = (*AutoHTTP)(nil)
	_ StreamWatcher  = (*AutoHTTP)(nil)
	_ StreamListener = (*AutoHTTP)(nil)
)

// Description is what a connection is, from the capabilities it has: the
// one place that asks (display code and the session alike).
type Description struct {
	Transport string // its Name, or "" when it has none
	// HTTP says it carries HTTP (Streamable HTTP or the legacy SSE
	// transport): not a stdio process, nor an attached client's relay.
	HTTP bool
	// Sessions says it can hold an HTTP session (Mcp-Session-Id); SessionID
	// is the one it holds now, if any.
	Sessions   bool
	SessionID  string
	Pid        int      // the stdio server's pid, if any
	StderrTail []string // the stdio server's last stderr lines, if any
}

// Describe says what c is, from the capabilities it has.
func Describe(c Conn) Description {
	var d Description
	if n, ok := c.(Namer); ok {
		d.Transport = n.Name()
	}
	if s, ok := c.(SessionIDer); ok {
		d.Sessions, d.SessionID = true, s.SessionID()
	}
	p, process := c.(Process)
	if process {
		d.Pid, d.StderrTail = p.Pid(), p.StderrTail()
	}
	if h, ok := c.(HTTPSaying); ok {
		d.HTTP = h.IsHTTP()
	} else {
		d.HTTP = !process && d.Transport != "" && d.Transport != "stdio"
	}
	return d
}

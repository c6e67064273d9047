package session

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mcpi-dev/mcpi/internal/mcp"
)

// ErrTimeout is matched by errors.Is when a request got no answer in time.
var ErrTimeout = errors.New("timed out")

// ErrDisconnected is matched by errors.Is when the connection to the server
// ended: the process exited, the stream closed, the session was closed.
var ErrDisconnected = errors.New("disconnected from the server")

// ErrCapability is matched by errors.Is when a method needs a capability the
// server did not declare.
var ErrCapability = errors.New("capability not declared by the server")

// ErrVersion is matched by errors.Is when the server chose a revision mcpi
// cannot speak, or a method needs a newer revision than the one in force.
var ErrVersion = errors.New("protocol version mismatch")

// TimeoutError says which request timed out and after how long without
// an answer or progress.
type TimeoutError struct {
	Method string
	After  time.Duration
	// Max says the request reached the maximum total time (MaxTime) of
	// the operation it belongs to, which progress does not reset.
	Max bool
	// Unread says the server did not take the request in: its input was
	// full (a server that stops reading) until the clock ran out.
	Unread bool
}

func (e *TimeoutError) Error() string {
	switch {
	case e.Unread && e.Max:
		return fmt.Sprintf("%s: the server did not read the request within the maximum time of %v (it stopped reading its input)", e.Method, e.After)
	case e.Unread:
		return fmt.Sprintf("%s: the server did not read the request within %v (it stopped reading its input)", e.Method, e.After)
	case e.Max:
		return fmt.Sprintf("%s: not done within the maximum time of %v (--max-time bounds the whole operation: progress, task polls and input rounds do not extend it)", e.Method, e.After)
	}
	return fmt.Sprintf("%s: no answer within %v", e.Method, e.After)
}

// Is makes errors.Is(err, ErrTimeout) true.
func (e *TimeoutError) Is(target error) bool { return target == ErrTimeout }

// DisconnectedError carries why the connection ended (for a stdio server, a
// *transport.ServerExitError with its exit status and stderr tail).
type DisconnectedError struct {
	Method string // the request that was waiting, if any
	Err    error
}

func (e *DisconnectedError) Error() string {
	if e.Method != "" {
		return fmt.Sprintf("%s: %v", e.Method, e.Err)
	}
	return e.Err.Error()
}

// Unwrap returns both the sentinel and the cause.
func (e *DisconnectedError) Unwrap() []error { return []error{ErrDisconnected, e.Err} }

// CapabilityError says a method needs a capability the server lacks.
type CapabilityError struct {
	Method     string
	Capability string
}

func (e *CapabilityError) Error() string {
	return fmt.Sprintf("%s: the server did not declare the %q capability (force to send anyway)", e.Method, e.Capability)
}

// Is makes errors.Is(err, ErrCapability) true.
func (e *CapabilityError) Is(target error) bool { return target == ErrCapability }

// VersionError says the server picked a revision mcpi does not know, or a
// method needs a newer revision.
type VersionError struct {
	Offered   string
	Got       string
	Supported []string // what the server said it speaks, when it said
	Method    string   // set when a method needs a newer revision
	Needs     string
	// Removed says the method does not exist in the revision in force.
	Removed bool
}

func (e *VersionError) Error() string {
	if e.Removed {
		return fmt.Sprintf("%s does not exist in protocol revision %s (force to send anyway)", e.Method, e.Got)
	}
	if e.Method != "" {
		return fmt.Sprintf("%s needs protocol revision %s or newer; %s is in force (force to send anyway)", e.Method, e.Needs, e.Got)
	}
	known := append(append([]string{}, mcp.LegacyRevisions...), mcp.ModernRevisions...)
	if e.Supported != nil {
		return fmt.Sprintf("the server speaks %s and none of the modern revisions mcpi speaks (offered %s; known: %s)", e.Got, e.Offered, strings.Join(known, ", "))
	}
	return fmt.Sprintf("the server chose protocol revision %q, which mcpi does not speak (offered %s; known: %s)", e.Got, e.Offered, strings.Join(known, ", "))
}

// Is makes errors.Is(err, ErrVersion) true.
func (e *VersionError) Is(target error) bool { return target == ErrVersion }

// RPCError is a JSON-RPC error response to one of our requests.
type RPCError struct {
	Method string
	*mcp.RPCError
	// HTTPStatus is the status the error came with over HTTP, if not 200.
	HTTPStatus int
}

func (e *RPCError) Error() string {
	s := e.Method + ": server error: " + e.RPCError.Error()
	if name := codeNames[e.Code]; name != "" {
		s += ": " + name
	}
	if e.HTTPStatus != 0 {
		s += fmt.Sprintf(" (HTTP %d)", e.HTTPStatus)
	}
	return s
}

// Unwrap returns the wire error.
func (e *RPCError) Unwrap() error { return e.RPCError }

// IsResourceNotFound reports whether err says a resource does not exist:
// -32602 in the modern era, -32002 before it; both are understood.
func IsResourceNotFound(err error) bool {
	re := rpcErrorOf(err)
	return re != nil && (re.Code == mcp.CodeResourceNotFound || re.Code == mcp.CodeInvalidParams)
}

// InvalidToolError refuses a call to a tool that was dropped from tools/list
// because its x-mcp-header annotations are invalid (2026-07-28 over HTTP).
type InvalidToolError struct {
	Tool   string
	Reason string
}

func (e *InvalidToolError) Error() string {
	return fmt.Sprintf("tool %q was dropped from the list: %s (force to call it anyway)", e.Tool, e.Reason)
}

// Is makes errors.Is(err, ErrCapability) true: like an undeclared
// capability, it is refused before sending.
func (e *InvalidToolError) Is(target error) bool { return target == ErrCapability }

// codeNames explain the error codes whose meaning the message may not carry.
var codeNames = map[int]string{
	mcp.CodeHeaderMismatch:             "the HTTP headers do not match the request body (HeaderMismatch)",
	mcp.CodeMissingClientCapability:    "the request needs a client capability that was not declared (MissingRequiredClientCapability)",
	mcp.CodeUnsupportedProtocolVersion: "the server does not support this protocol revision (UnsupportedProtocolVersion)",
	mcp.CodeURLElicitationRequired:     "the server needs a URL elicitation completed first (URLElicitationRequired)",
}

package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/mcpi-dev/mcpi/internal/auth"
	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/skills"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// ExitCode is what mcpi returns to the shell. docs/cli.md lists them.
type ExitCode int

const (
	ExitOK          ExitCode = 0   // success
	ExitToolError   ExitCode = 1   // the tool returned isError (or a verify found differences)
	ExitUsage       ExitCode = 2   // bad flags or arguments
	ExitConnect     ExitCode = 3   // could not connect, or the server exited or disconnected
	ExitProtocol    ExitCode = 4   // JSON-RPC error response, version mismatch, invalid message, a listing the server's cursors cut short
	ExitTimeout     ExitCode = 5   // a request got no answer in time
	ExitAuth        ExitCode = 6   // authorization required or failed
	ExitVerify      ExitCode = 7   // a skill's file is not what the server listed (size, digest, frontmatter)
	ExitInterrupted ExitCode = 130 // interrupted (Ctrl-C)
)

// FlagError is a usage error: the command prints its usage and exits 2.
type FlagError struct{ Err error }

func (e *FlagError) Error() string { return e.Err.Error() }
func (e *FlagError) Unwrap() error { return e.Err }

// flagErrorf returns a FlagError.
func flagErrorf(format string, args ...any) error {
	return &FlagError{Err: fmt.Errorf(format, args...)}
}

// errSilent ends a command with an exit code and no further message (the
// command already said what there was to say).
type errSilent struct {
	code ExitCode
	// what says what happened, for the error object of --json (the
	// command said it on stderr already).
	what string
}

func (e errSilent) Error() string {
	if e.what != "" {
		return e.what
	}
	return fmt.Sprintf("exit %d", e.code)
}

// exitCodeFor chooses the exit code of an error, in one place.
func exitCodeFor(err error) ExitCode {
	var fe *FlagError
	var se errSilent
	var he *transport.HTTPError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &se):
		return se.code
	case errors.As(err, &fe):
		return ExitUsage
	case errors.Is(err, skills.ErrVerification):
		return ExitVerify
	case errors.Is(err, context.Canceled):
		return ExitInterrupted
	case errors.Is(err, session.ErrTimeout), errors.Is(err, context.DeadlineExceeded):
		return ExitTimeout
	case transport.IsUnauthorized(err), errors.As(err, new(*auth.Error)):
		return ExitAuth
	case errors.Is(err, session.ErrDisconnected):
		return ExitConnect
	case errors.As(err, new(*session.RPCError)), errors.As(err, new(*mcp.RPCError)), errors.Is(err, session.ErrVersion), errors.Is(err, session.ErrMalformed),
		errors.Is(err, session.ErrCapability), errors.Is(err, session.ErrTruncated):
		return ExitProtocol
	case errors.As(err, &he), errors.Is(err, errConnect):
		return ExitConnect
	}
	return ExitConnect
}

// errConnect marks failures to reach the server at all.
var errConnect = errors.New("could not connect")

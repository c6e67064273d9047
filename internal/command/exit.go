package command

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/mcpi-dev/mcpi/internal/auth"
	"github.com/mcpi-dev/mcpi/internal/daemon"
	"github.com/mcpi-dev/mcpi/internal/llm"
	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/skills"
	"github.com/mcpi-dev/mcpi/internal/surface"
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
	ExitEnvironment ExitCode = 9   // mcpi check could not check what the server's environment hid
	ExitNoApp       ExitCode = 10  // app-info, app: the tool has no MCP App
	ExitModel       ExitCode = 11  // chat, eval, --sampling-model: the model's provider failed (no key, refused, rate limited, the stream broke)
	ExitInterrupted ExitCode = 130 // interrupted (Ctrl-C)
)

// FlagError is a usage error: the command prints its usage and exits 2.
type FlagError struct{ Err error }

func (e *FlagError) Error() string { return e.Err.Error() }
func (e *FlagError) Unwrap() error { return e.Err }

// FlagErrorf returns a FlagError.
func FlagErrorf(format string, args ...any) error {
	return &FlagError{Err: fmt.Errorf(format, args...)}
}

// ErrSilent ends a command with an exit code and no further message (the
// command already said what there was to say).
type ErrSilent struct {
	Code ExitCode
	// What says what happened, for the error object of --json (the
	// command said it on stderr already); kind is its kind, when its code
	// alone does not say it.
	What string
	Kind string
}

func (e ErrSilent) Error() string {
	if e.What != "" {
		return e.What
	}
	return fmt.Sprintf("exit %d", e.Code)
}

// ExitCodeFor chooses the exit code of an error, in one place.
func ExitCodeFor(err error) ExitCode {
	var fe *FlagError
	var se ErrSilent
	var he *transport.HTTPError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &se):
		return se.Code
	case errors.Is(err, ErrNoApp):
		return ExitNoApp
	case errors.As(err, new(*llm.Error)):
		return ExitModel
	case errors.As(err, &fe), errors.As(err, new(*daemon.UsageError)):
		return ExitUsage
	case errors.As(err, new(*daemon.EndedError)):
		// The session ended: the command could not reach its server.
		return ExitConnect
	case errors.Is(err, skills.ErrVerification):
		return ExitVerify
	case errors.Is(err, context.Canceled), errors.Is(err, session.ErrTaskCancelled):
		return ExitInterrupted
	case errors.Is(err, session.ErrTimeout), errors.Is(err, context.DeadlineExceeded):
		return ExitTimeout
	case authRefused(err), errors.As(err, new(*auth.Error)):
		return ExitAuth
	case errors.Is(err, session.ErrDisconnected):
		return ExitConnect
	case errors.As(err, new(*session.RPCError)), errors.As(err, new(*mcp.RPCError)), errors.Is(err, session.ErrVersion), errors.Is(err, session.ErrMalformed),
		errors.Is(err, session.ErrCapability), errors.Is(err, session.ErrTooManyRounds), errors.Is(err, session.ErrTruncated):
		return ExitProtocol
	case errors.Is(err, surface.ErrChanging):
		return ExitProtocol
	case errors.As(err, &he), errors.Is(err, ErrConnect):
		return ExitConnect
	}
	return ExitConnect
}

// authRefused reports whether err is an HTTP answer that refuses the
// request's authorization: a 401, or a 403 with a WWW-Authenticate
// challenge (a scope to step up to). A 403 without one is the server
// refusing the request itself (a Host or Origin allowlist), whatever
// credentials it carries: no authorization failure.
func authRefused(err error) bool {
	var he *transport.HTTPError
	if !transport.IsUnauthorized(err) || !errors.As(err, &he) {
		return false
	}
	return he.StatusCode == http.StatusUnauthorized || he.Header.Get("WWW-Authenticate") != ""
}

// Refused reports whether err is a 403 that is no authorization failure.
func Refused(err error) bool {
	var he *transport.HTTPError
	return errors.As(err, &he) && he.StatusCode == http.StatusForbidden && !authRefused(err)
}

// ErrNoApp marks a tool without an MCP App.
var ErrNoApp = errors.New("the tool has no App")

// ErrConnect marks failures to reach the server at all.
var ErrConnect = errors.New("could not connect")

// Error kinds: a stable word in the --json error object ("kind"), beside
// the exit code and the JSON-RPC code, so that a script or an agent
// branches on a word, not on prose. docs/cli.md lists them all.
const (
	KindUsage             = "usage"                  // bad flags or arguments (exit 2)
	KindToolNotFound      = "tool_not_found"         // the server has no such tool
	KindToolError         = "tool_error"             // the tool answered isError (exit 1)
	KindProtocol          = "protocol_error"         // a JSON-RPC error, an invalid answer, a version mismatch
	KindCapability        = "capability_missing"     // the server did not declare what the request needs
	KindUnreachable       = "unreachable"            // could not connect
	KindRefused           = "refused"                // HTTP 403 without an authorization challenge: the server refused the request itself
	KindDisconnected      = "disconnected"           // the server exited or the connection ended
	KindTimeout           = "timeout"                // no answer within --timeout, or not done within --max-time
	KindAuth              = "auth"                   // authorization required or failed
	KindVerify            = "verify_failed"          // a skill's file is not what the server listed
	KindInterrupted       = "interrupted"            // Ctrl-C
	KindTaskCancelled     = "task_cancelled"         // the task a call followed was cancelled elsewhere
	KindSessionEnded      = "session_ended"          // the live session the command ran in has ended
	KindServerRequest     = "server_request_pending" // call --no-wait: the server asks something first
	KindCheckFailed       = "check_failed"           // mcpi check found errors
	KindCheckEnvironment  = "check_environment"      // mcpi check: the server's environment failed
	KindReplayDiffers     = "replay_differs"         // replay --verify: the server's answers differ from the trace's
	KindNothingVerified   = "nothing_verified"       // replay --verify: the trace has no answer to compare
	KindListingIncomplete = "listing_incomplete"     // the server's cursors cut a listing short
	KindSurfaceBreaks     = "breaking_change"        // mcpi diff found a change --fail-on fails on
	KindNoApp             = "no_app"                 // app-info, app: the tool has no MCP App (exit 10)
	KindModel             = "model_failed"           // the model's provider failed (exit 11)
	KindBudget            = "budget_spent"           // chat: --max-turns, --max-tokens or --max-cost stopped the model (exit 1)
	KindError             = "error"                  // anything else
)

// ErrorKinds are every kind ErrorKind may choose (docs/cli.md lists them).
var ErrorKinds = []string{KindUsage, KindToolNotFound, KindToolError, KindProtocol, KindCapability,
	KindUnreachable, KindRefused, KindDisconnected, KindTimeout, KindAuth, KindVerify, KindInterrupted,
	KindTaskCancelled, KindSessionEnded, KindServerRequest, KindCheckFailed, KindCheckEnvironment, KindReplayDiffers,
	KindNothingVerified, KindListingIncomplete, KindSurfaceBreaks, KindNoApp, KindModel, KindBudget, KindError}

// kindError gives an error its kind where the type alone does not say it.
type kindError struct {
	kind string
	err  error
}

func (e *kindError) Error() string { return e.err.Error() }
func (e *kindError) Unwrap() error { return e.err }

// WithKind marks err with kind.
func WithKind(kind string, err error) error {
	if err == nil {
		return nil
	}
	return &kindError{kind: kind, err: err}
}

// ErrorKind chooses an error's kind, in one place, as ExitCodeFor chooses
// its code.
func ErrorKind(err error) string {
	var ke *kindError
	if errors.As(err, &ke) {
		return ke.kind
	}
	var se ErrSilent
	if errors.As(err, &se) && se.Kind != "" {
		return se.Kind
	}
	switch {
	case errors.As(err, new(*llm.Error)):
		return KindModel
	case errors.As(err, new(*FlagError)), errors.As(err, new(*daemon.UsageError)):
		return KindUsage
	case errors.As(err, new(*daemon.EndedError)):
		return KindSessionEnded
	case errors.Is(err, session.ErrTaskCancelled):
		return KindTaskCancelled
	case errors.Is(err, session.ErrCapability):
		return KindCapability
	case errors.Is(err, session.ErrTruncated), errors.Is(err, surface.ErrChanging):
		return KindListingIncomplete
	}
	switch ExitCodeFor(err) {
	case ExitUsage:
		return KindUsage
	case ExitToolError:
		return KindToolError
	case ExitConnect:
		if errors.Is(err, session.ErrDisconnected) {
			return KindDisconnected
		}
		if Refused(err) {
			return KindRefused
		}
		return KindUnreachable
	case ExitProtocol:
		return KindProtocol
	case ExitTimeout:
		return KindTimeout
	case ExitAuth:
		return KindAuth
	case ExitVerify:
		return KindVerify
	case ExitInterrupted:
		return KindInterrupted
	case ExitNoApp:
		return KindNoApp
	}
	return KindError
}

package llm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/mcpi-dev/mcpi/internal/bounds"
	"github.com/mcpi-dev/mcpi/internal/safetext"
)

// The kinds of failure, for errors.Is. Every error Stream returns is an
// *Error that is one of them.
var (
	ErrNoKey       = errors.New("no API key")
	ErrAuth        = errors.New("the provider refused the key")
	ErrRateLimited = errors.New("rate limited")
	ErrOverloaded  = errors.New("the provider is overloaded")
	ErrServer      = errors.New("the provider failed")
	ErrRequest     = errors.New("the provider refused the request")
	ErrTooLarge    = errors.New("the provider sent more than the byte bound")
	ErrIdle        = errors.New("the provider stopped sending")
	ErrDeadline    = errors.New("the deadline passed")
	ErrCanceled    = errors.New("canceled")
	ErrRedirect    = errors.New("redirected to another origin")
	ErrStream      = errors.New("the stream broke")
	ErrSpec        = errors.New("bad model spec")
)

// Error is a failure of a provider. Its text never holds the key: it is
// redacted when the error is made, whatever the provider echoed. It wraps
// only its Kind (never the SDK's error, whose text may quote a request).
type Error struct {
	Provider string
	Kind     error
	// Status is the HTTP status, when there was one.
	Status int
	// RetryAfter is what a 429/529 asked to wait, when it said.
	RetryAfter time.Duration
	msg        string
}

func (e *Error) Error() string { return e.msg }
func (e *Error) Unwrap() error { return e.Kind }

// redactor removes a key from text: the key itself and, for a long key,
// any long piece of it (a provider may echo part of it).
type redactor string

func (r redactor) clean(s string) string {
	k := string(r)
	if k == "" {
		return s
	}
	s = strings.ReplaceAll(s, k, "[REDACTED]")
	// A provider that echoes a key often shows its start and end
	// ("sk-abc…xyz"): remove any 12 bytes of it that remain.
	const piece = 12
	if len(k) >= 2*piece {
		for i := 0; i+piece <= len(k); i += piece / 2 {
			s = strings.ReplaceAll(s, k[i:i+piece], "[REDACTED]")
		}
	}
	return s
}

// newError is the one constructor of *Error: the message is cleaned of the
// key and of what a terminal must not get.
func newError(provider string, key redactor, kind error, status int, format string, args ...any) *Error {
	msg := fmt.Sprintf(format, args...)
	msg = safetext.OneLine(key.clean(msg))
	return &Error{Provider: provider, Kind: kind, Status: status, msg: msg}
}

// peerText is what a provider said in an error, clipped and cleaned.
func peerText(s string) string {
	s = strings.TrimSpace(s)
	const max = 300
	if len(s) > max {
		s = s[:max] + "…"
	}
	return safetext.OneLine(s)
}

// classify turns what a stream ended with into an *Error. meter's own
// failures (bounds, redirects) come first: the SDK may have wrapped them.
func (c *conn) classify(ctx context.Context, m *meter, status int, body string, header http.Header, err error) *Error {
	if f := m.failure(); f != nil {
		return f
	}
	p, key := c.name, c.key
	if status != 0 {
		msg := providerMessage(body)
		switch {
		case status == http.StatusUnauthorized || status == http.StatusForbidden:
			hint := "check the key"
			if c.keyVar != "" {
				hint = "check " + c.keyVar
			}
			return newError(p, key, ErrAuth, status, "%s refused the key (HTTP %d: bad key for %s; %s)%s", p, status, p, hint, suffix(msg))
		case status == http.StatusTooManyRequests || status == 529 || status == http.StatusServiceUnavailable:
			kind := ErrRateLimited
			what := "rate limited"
			if status != http.StatusTooManyRequests {
				kind, what = ErrOverloaded, "overloaded"
			}
			e := newError(p, key, kind, status, "%s is %s (HTTP %d) after %s%s%s", p, what, status, attempts(m), m.retryNote(), suffix(msg))
			e.RetryAfter = retryAfter(header)
			return e
		case status >= 500:
			return newError(p, key, ErrServer, status, "%s failed (HTTP %d) after %s%s", p, status, attempts(m), suffix(msg))
		default:
			return newError(p, key, ErrRequest, status, "%s refused the request (HTTP %d)%s", p, status, suffix(msg))
		}
	}
	if ctx.Err() != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return newError(p, key, ErrDeadline, 0, "%s: the deadline passed after %s read", p, bounds.Size(m.read.Load()))
		}
		return newError(p, key, ErrCanceled, 0, "%s: canceled after %s read", p, bounds.Size(m.read.Load()))
	}
	return newError(p, key, ErrStream, 0, "%s: the stream broke after %s read: %s", p, bounds.Size(m.read.Load()), peerText(err.Error()))
}

func attempts(m *meter) string {
	if n := m.attempts.Load(); n != 1 {
		return fmt.Sprintf("%d attempts", n)
	}
	return "1 attempt"
}

func suffix(msg string) string {
	if msg == "" {
		return ""
	}
	return ": " + msg
}

// providerMessage finds the message of an error body ({"error":
// {"message": ...}} in both APIs), else the body's start.
func providerMessage(body string) string {
	var v struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
		Message string `json:"message"`
	}
	if jsonUnmarshal([]byte(body), &v) == nil {
		if v.Error.Message != "" {
			return peerText(v.Error.Message)
		}
		if v.Message != "" {
			return peerText(v.Message)
		}
	}
	return peerText(body)
}

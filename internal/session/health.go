package session

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/mcpi-dev/mcpi/internal/transport"
)

// Health is what the client knows of its connection to the server.
type Health int

const (
	// HealthUp: the server answers, in the session the client started.
	HealthUp Health = iota
	// HealthRenewing: the server forgot the session (HTTP 404, or a 400
	// that says so); a new one is being initialized.
	HealthRenewing
	// HealthSessionLost: the server forgot the session and no new one
	// could be started. The next request tries again.
	HealthSessionLost
	// HealthUnreachable: the HTTP endpoint cannot be reached (connection
	// refused or reset, DNS, TLS, a 502, 503 or 504 from a gateway, a
	// keepalive ping without an answer), or the standalone GET stream was
	// dropped and cannot be reopened.
	HealthUnreachable
)

func (h Health) String() string {
	switch h {
	case HealthUp:
		return "up"
	case HealthRenewing:
		return "renewing"
	case HealthSessionLost:
		return "session lost"
	case HealthUnreachable:
		return "unreachable"
	}
	return fmt.Sprintf("Health(%d)", int(h))
}

// HealthEvent is a change of the client's Health.
type HealthEvent struct {
	Health Health
	// Err says what made the health what it is (nil for HealthUp).
	Err error
	At  time.Time
	// Note says more, for people. When a new session replaced a forgotten
	// one (HealthRenewing, then HealthUp) it names both session ids: the
	// new session may differ from the old (tools, resources, prompts,
	// subscriptions), so a front end reloads what it lists.
	Note string
}

// Health returns the health of the connection and the error that made it
// so (nil when it is HealthUp). After Done is closed the connection is
// over, whatever Health says: Err says why.
func (c *Client) Health() (Health, error) {
	c.healthMu.Lock()
	defer c.healthMu.Unlock()
	return c.health, c.healthErr
}

// setHealth records a health and reports it to OnHealth when it changed.
// Reports are serialised, in the order of the changes.
func (c *Client) setHealth(h Health, err error, note string) {
	c.healthEmit.Lock()
	defer c.healthEmit.Unlock()
	c.healthMu.Lock()
	changed := c.health != h
	c.health, c.healthErr = h, err
	c.healthNow.Store(int32(h))
	c.healthMu.Unlock()
	if !changed {
		return
	}
	c.log.Info("connection health", "health", h.String(), "err", err, "note", note)
	if c.opts.OnHealth != nil {
		c.opts.OnHealth(HealthEvent{Health: h, Err: err, At: time.Now(), Note: note})
	}
}

// noteReachable records that the server answered something: an
// unreachable server is up again. A session being renewed, or lost, stays
// so until a new session is started.
func (c *Client) noteReachable() {
	if Health(c.healthNow.Load()) != HealthUnreachable {
		return
	}
	c.healthMu.Lock()
	still := c.health == HealthUnreachable
	c.healthMu.Unlock()
	if still {
		c.setHealth(HealthUp, nil, "the server answers again")
	}
}

// noteUnreachable records that the server could not be reached, unless a
// session is being renewed or was lost (that says more).
func (c *Client) noteUnreachable(err error) {
	switch Health(c.healthNow.Load()) {
	case HealthUp, HealthUnreachable:
		c.setHealth(HealthUnreachable, err, "")
	}
}

// noteSendError records what an error of the transport says of the
// server's health.
func (c *Client) noteSendError(err error) {
	var he *transport.HTTPError
	switch {
	case transport.IsUnreachable(err):
		c.noteUnreachable(err)
	case errors.As(err, &he):
		c.noteReachable() // the server itself answered
	}
}

// sessionOf returns the transport's session id, if it has one.
func (c *Client) sessionOf() string {
	return transport.Describe(c.conn).SessionID
}

// streamReport is the transport's report on the standalone GET stream.
func (c *Client) streamReport(open bool, err error) {
	c.mu.Lock()
	c.streamOpen = open
	c.mu.Unlock()
	switch {
	case open:
		c.noteReachable()
	case errors.Is(err, transport.ErrSessionExpired):
		c.renewInBackground(err)
	case err != nil && transport.IsUnreachable(err):
		c.noteUnreachable(err)
	}
}

// renewInBackground starts a new session after the GET stream said the
// server forgot ours, so that an idle front end learns of it (and the
// stream is reopened) before the next request.
func (c *Client) renewInBackground(cause error) {
	if c.Era() != EraLegacy {
		return
	}
	gen := c.generation.Load()
	if !c.goBackground() {
		return
	}
	go func() {
		defer c.bg.Done()
		ctx, cancel := c.backgroundContext(c.opts.Timeout)
		defer cancel()
		if err := c.reinitialize(ctx, gen, cause); err != nil {
			c.log.Debug("starting a new session failed", "err", err)
		}
	}()
}

// goBackground accounts for a goroutine Close waits for; it reports false
// once the connection is over.
func (c *Client) goBackground() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ended {
		return false
	}
	c.bg.Add(1) // before the reader ends, so before Close waits
	return true
}

// backgroundContext is bounded by timeout (when positive) and ends with
// the connection.
func (c *Client) backgroundContext(timeout time.Duration) (context.Context, context.CancelFunc) {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	go func() {
		select {
		case <-c.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

// reinitialize starts a new session because the server forgot ours
// (cause), unless another call already did since generation gen. It
// reports the health on the way: HealthRenewing, then HealthUp with a note
// naming both sessions, or HealthSessionLost.
func (c *Client) reinitialize(ctx context.Context, gen int64, cause error) error {
	c.initMu.Lock()
	defer c.initMu.Unlock()
	if c.generation.Load() != gen {
		return nil
	}
	old := c.sessionOf()
	if errors.Is(cause, errSessionLost) {
		old = c.lostSession
	}
	var se *transport.SessionExpiredError
	if errors.As(cause, &se) {
		old = se.SessionID
		if se.StatusCode != http.StatusNotFound {
			c.warn("session-status", fmt.Sprintf("the server answered HTTP %d to a %s with session %s, with an error that speaks of the session: taken for a forgotten session, and a new one is started; the spec (2025-11-25, basic/transports, session management) has a server that no longer knows a session answer 404", se.StatusCode, se.Method, se.SessionID), se.Body)
		}
	}
	oldName := old
	if oldName == "" {
		oldName = "(none)"
	}
	c.setHealth(HealthRenewing, cause, "the server no longer knows session "+oldName+": starting a new one")
	c.log.Info("session expired; initializing a new one", "session", old)
	if r, ok := c.conn.(transport.SessionHolder); ok {
		r.ResetSession()
	}
	if err := c.initializeLocked(ctx); err != nil {
		c.lostSession = old
		c.setHealth(HealthSessionLost, err, "the server no longer knows session "+oldName+" and a new one could not be started")
		return err
	}
	c.setHealth(HealthUp, nil, fmt.Sprintf("session %s expired; new session %s (reload the lists: the new session may differ)", oldName, c.sessionOf()))
	return nil
}

// errSessionLost is the cause of a new session started because the last
// attempt failed.
var errSessionLost = errors.New("the session was lost and no new one could be started")

// keepAlive pings the server when no request has been pending for
// Options.KeepAlive and no GET stream is open (its failure to reopen is
// the signal then), and records the outcome as health.
func (c *Client) keepAlive() {
	defer c.bg.Done()
	every := c.opts.KeepAlive
	t := time.NewTimer(every)
	defer t.Stop()
	for {
		select {
		case <-c.done:
			return
		case <-t.C:
		}
		c.mu.Lock()
		wait := every
		if len(c.pending) == 0 {
			wait = every - time.Since(c.lastIdle)
		}
		stream := c.streamOpen
		c.mu.Unlock()
		if wait > 0 {
			t.Reset(wait)
			continue
		}
		if !stream && c.Era() != "" {
			c.keepAlivePing(every)
		}
		t.Reset(every)
	}
}

func (c *Client) keepAlivePing(every time.Duration) {
	timeout := max(every, time.Second)
	if c.opts.Timeout > 0 {
		timeout = min(timeout, c.opts.Timeout)
	}
	ctx, cancel := c.backgroundContext(2 * timeout)
	defer cancel()
	method := "ping"
	if c.Era() == EraModern {
		method = "server/discover"
	}
	err := c.Call(ctx, method, nil, nil, &CallOptions{Timeout: timeout, Force: true})
	if c.isDone() {
		return
	}
	var he *transport.HTTPError
	switch {
	case err == nil:
		c.noteReachable()
	case transport.IsUnreachable(err):
		c.noteUnreachable(err)
	case rpcErrorOf(err) != nil, errors.As(err, &he):
		c.noteReachable() // the server answered, if with an error
	default:
		c.noteUnreachable(fmt.Errorf("keepalive: %w", err))
	}
}

package daemon

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpi-dev/mcpi/internal/bounds"
	"github.com/mcpi-dev/mcpi/internal/live"
	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/safetext"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// Held is the session a daemon holds. Each command it runs is given it
// (with the command's Slot) as a field.
type Held struct {
	name   string
	target string
	// subURIs are the resources the modern session is subscribed to, and
	// subs the subscriptions/listen that carries them.
	subMu   sync.Mutex
	subURIs []string
	subs    *session.Subscription
	// end is how the session ended, once ended is closed.
	end   atomic.Pointer[live.Status]
	ended chan struct{}
	// cur is the client of the session's server: replaced when --restart
	// starts the server again; gone is closed when it ends for good.
	cur  atomic.Pointer[session.Client]
	gone chan struct{}
	disp *Dispatcher
	hub  *Hub
	// modelTap is Config.ModelTap.
	modelTap func() transport.Tap
	// tools are the server's tools as last listed, for the checks of
	// mcpi call.
	tools *toolCache
	// jobs are the calls run with --no-wait, for mcpi result.
	jobs *Jobs
	// logLevel is the level mcpi log-level asked, applied again after a
	// restart; restarts say what --restart did.
	stateMu  sync.Mutex
	logLevel mcp.LoggingLevel
	restarts restartLog
	// swapped is closed, and replaced, each time --restart puts a new
	// client in cur; restarting says one is being started.
	swapped    chan struct{}
	restarting bool
	restartMax int // --restart

	// open connects to the server again (--restart).
	open func(ctx context.Context) (*session.Client, error)

	// base is the status the daemon started with; log its log; the
	// daemon's runtime directory and idle timeout.
	base live.Status
	log  *LogFile
	dir  string
	idle time.Duration
}

// restartWait bounds how long a command waits for a restart under way.
var restartWait = bounds.Clock{Name: "restart", D: 20 * time.Second}

// Current returns the client to run a command with: the session's, or,
// while --restart starts its server again, the new one once it is up.
func (h *Held) Current(ctx context.Context) (*session.Client, error) {
	var timer *time.Timer
	for {
		c := h.Client()
		select {
		case <-c.Done():
		default:
			return c, nil
		}
		h.stateMu.Lock()
		restarting, swapped := h.restarting, h.swapped
		h.stateMu.Unlock()
		if h.Client() != c {
			continue // swapped meanwhile
		}
		if h.restartMax > 0 {
			// With --restart a dead server is one about to be started
			// again, until the supervisor gives up (gone).
			restarting = true
		}
		select {
		case <-h.gone:
			restarting = false // no restart is coming
		default:
		}
		if !restarting || swapped == nil {
			if err := c.Err(); err != nil {
				return nil, err
			}
			return nil, session.ErrDisconnected
		}
		if timer == nil {
			timer = restartWait.Timer()
			defer timer.Stop()
		}
		select {
		case <-swapped:
		case <-h.gone:
		case <-timer.C:
			return nil, fmt.Errorf("%w: session %s's server is being started again (--restart) and is not up after %v", session.ErrDisconnected, h.name, restartWait.D)
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// restartLog is what --restart did: how often, when, why, and what was
// applied again.
type restartLog struct {
	Count     int       `json:"count"`
	Last      time.Time `json:"last,omitzero"`
	Why       string    `json:"why,omitempty"`
	Reapplied string    `json:"reapplied,omitempty"`
}

// ModelTap is where a command's model turns go (a command of the session
// given its own --sampling-model): the session's connection's tap, nil
// when the session has none.
func (h *Held) ModelTap() transport.Tap {
	if h.modelTap == nil {
		return nil
	}
	return h.modelTap()
}

// Client returns the client of the session's server now.
func (h *Held) Client() *session.Client { return h.cur.Load() }

// RestartNote is the line every command run after a restart prints on
// stderr, or "" when the server never restarted.
func (h *Held) RestartNote() string {
	h.stateMu.Lock()
	r := h.restarts
	h.stateMu.Unlock()
	if r.Count == 0 {
		return ""
	}
	note := fmt.Sprintf("note: session %s's server was restarted %d time(s), last %s ago (%s)", h.name, r.Count, since(r.Last), safetext.OneLine(r.Why))
	if r.Reapplied != "" {
		note += "; applied again: " + r.Reapplied
	}
	return note
}

// Status is the session's status: what its record and session show say.
func (h *Held) Status() live.Status {
	st := h.base
	c := h.Client()
	st.Era, st.ProtocolVersion = c.Era(), c.ProtocolVersion()
	d := transport.Describe(c.Conn())
	st.Transport, st.SessionID, st.StderrTail = d.Transport, d.SessionID, d.StderrTail
	if init := c.InitializeResult(); init != nil {
		st.ServerName, st.ServerVersion = init.ServerInfo.Name, init.ServerInfo.Version
	}
	st.Budgets = append(st.Budgets, h.disp.board.budget.Usage(), h.log.budget.Usage())
	st.Budgets = append(st.Budgets, h.hub.Usage()...)
	st.Budgets = append(st.Budgets, h.jobs.budget.Usage())
	st.Budgets = append(st.Budgets, c.Usage()...)
	h.stateMu.Lock()
	if r := h.restarts; r.Count > 0 {
		st.Restarts = r.Count
		st.LastRestart = fmt.Sprintf("%s: %s", r.Last.Format(time.RFC3339), r.Why)
		if r.Reapplied != "" {
			st.LastRestart += "; applied again: " + r.Reapplied
		}
	}
	h.stateMu.Unlock()
	return st
}

// recordEnd writes the record of the session's end, and why.
func (h *Held) recordEnd(why error, counters func() (int64, int64, int64, time.Time)) {
	end := h.Status()
	end.Commands, end.Active, end.Failed, end.LastUsed = counters()
	// The commands still running end with the session, failed (exit 3,
	// saying why): they are counted so before they finish telling.
	end.Failed += end.Active
	end.Active = 0
	switch {
	case errors.Is(why, live.ErrStopped):
		end.State, end.Reason = live.StateStopped, "stopped by mcpi session stop"
	case errors.Is(why, live.ErrIdle):
		end.State, end.Reason = live.StateIdle, fmt.Sprintf("no command for %v (--idle)", h.idle)
	case why == nil:
		end.State, end.Reason = live.StateExited, "the connection ended"
		if err := h.Client().Err(); err != nil {
			end.Reason = safetext.OneLine(err.Error())
		}
	default:
		end.State, end.Reason = live.StateStopped, "the daemon was told to end: "+why.Error()
	}
	end.Ended = time.Now()
	live.WriteRecord(h.dir, &end)
	h.end.Store(&end)
	close(h.ended)
}

// Restart's backoff: the first restart after restartFirst, doubling up to
// restartMax. A server that stayed up for restartSteady counts as well
// again: its next crash starts the count anew.
const (
	restartFirst  = 500 * time.Millisecond
	restartMax    = 8 * time.Second
	restartSteady = time.Minute
)

// supervise ends the session when its server's connection ends, or, with
// --restart, starts the server again (at most max times in a row, with a
// backoff) and applies again what the session held: the log level and the
// subscriptions (the roots the new server asks for are the session's). The
// commands under way when it ended fail (exit 3, saying why); every command
// after a restart says it on stderr.
func (h *Held) supervise(ctx context.Context, max int, logf func(string, ...any)) {
	defer close(h.gone)
	inRow := 0
	up := time.Now()
	for {
		c := h.Client()
		select {
		case <-c.Done():
		case <-ctx.Done():
			return
		}
		why := "the connection ended"
		if err := c.Err(); err != nil {
			why = safetext.OneLine(err.Error())
		}
		if time.Since(up) > restartSteady {
			inRow = 0
		}
		if inRow >= max {
			c.Close()
			if max > 0 {
				logf("the server ended (%s) after %d restart(s) in a row: the session ends", why, inRow)
			}
			return
		}
		// A restart is coming: the commands that arrive meanwhile wait for
		// it, from now on.
		h.stateMu.Lock()
		h.restarting = true
		h.stateMu.Unlock()
		// The old connection is closed in order: what its server left of
		// its process group is ended before anything starts again.
		c.Close()
		for {
			inRow++
			wait := min(restartFirst<<(inRow-1), restartMax)
			logf("the server ended (%s): restart %d of %d in %v", why, inRow, max, wait)
			if !bounds.Sleep(ctx, wait) {
				return
			}
			nc, err := h.open(ctx)
			if err == nil {
				h.cur.Store(nc)
				h.stateMu.Lock()
				h.restarting = false
				close(h.swapped)
				h.swapped = make(chan struct{})
				h.stateMu.Unlock()
				up = time.Now()
				h.tools.invalidate()
				h.tools.watchTools(ctx, nc)
				applied := h.reapply(ctx, nc, logf)
				h.stateMu.Lock()
				h.restarts.Count++
				h.restarts.Last, h.restarts.Why, h.restarts.Reapplied = up, why, applied
				h.stateMu.Unlock()
				logf("the server was started again (restart %d)%s", inRow, map[bool]string{true: "; applied again: " + applied, false: ""}[applied != ""])
				break
			}
			why = "starting it again failed: " + safetext.OneLine(err.Error())
			if inRow >= max {
				logf("%s after %d restart(s) in a row: the session ends", why, inRow)
				return
			}
		}
	}
}

// reapply tells a restarted server what the session held, through
// session.Client.Reapply (the one mechanism for every restart), and says
// what it applied.
func (h *Held) reapply(ctx context.Context, c *session.Client, logf func(string, ...any)) string {
	h.stateMu.Lock()
	held := session.Held{LogLevel: h.logLevel}
	h.stateMu.Unlock()
	h.subMu.Lock()
	defer h.subMu.Unlock()
	held.Subscriptions = slices.Clone(h.subURIs)
	r, err := c.Reapply(ctx, held)
	if err != nil {
		logf("warning: after the restart: %v", err)
	}
	if h.subs != nil {
		h.subs.Close()
		h.subs = nil
	}
	if len(r.Listen) > 0 {
		// The modern era holds subscriptions in the session's stream.
		if sub, err := c.Listen(ctx, mcp.SubscriptionFilter{ResourceSubscriptions: r.Listen}); err == nil {
			h.subs = sub
		} else {
			r.Listen = nil
			if r.Failed == nil {
				r.Failed = map[string]error{}
			}
			r.Failed["subscriptions"] = err
			logf("warning: after the restart: subscriptions/listen: %v", err)
		}
	}
	return r.Summary()
}

// Subscribe subscribes the session to uri's updates, or ends that. A
// legacy server is sent resources/subscribe or resources/unsubscribe. In
// the modern era the session's subscriptions/listen for resources is
// opened anew with the new set (and acknowledged) before the old one is
// closed, so no update falls between the two. It returns a note when
// nothing was to be done, or the server acknowledged less than was asked.
func (h *Held) Subscribe(ctx context.Context, uri string, on bool) (string, error) {
	h.subMu.Lock()
	defer h.subMu.Unlock()
	has := slices.Contains(h.subURIs, uri)
	switch {
	case on && has:
		return "session " + h.name + " was subscribed to " + safetext.Sanitize(uri, false) + " already", nil
	case !on && !has:
		return "", &UsageError{fmt.Sprintf("session %s is not subscribed to %s", h.name, safetext.Sanitize(uri, false))}
	}
	uris := slices.Clone(h.subURIs)
	if on {
		uris = append(uris, uri)
	} else {
		uris = slices.DeleteFunc(uris, func(u string) bool { return u == uri })
	}
	if h.Client().Era() != session.EraModern {
		var err error
		if on {
			err = h.Client().Subscribe(ctx, uri)
		} else {
			err = h.Client().Unsubscribe(ctx, uri)
		}
		if err != nil {
			return "", err
		}
		h.subURIs = uris
		return "", nil
	}
	var next *session.Subscription
	note := ""
	if len(uris) > 0 {
		sub, err := h.Client().Listen(ctx, mcp.SubscriptionFilter{ResourceSubscriptions: uris})
		if err != nil {
			return "", err
		}
		next = sub
		if on && !slices.Contains(sub.Acknowledged.ResourceSubscriptions, uri) {
			note = "the server's acknowledgement does not list " + safetext.Sanitize(uri, false) + ": it may send no updates about it"
		}
	}
	if h.subs != nil {
		h.subs.Close()
	}
	h.subs, h.subURIs = next, uris
	return note, nil
}

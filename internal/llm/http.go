package llm

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpi-dev/mcpi/internal/bounds"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

var jsonUnmarshal = json.Unmarshal

// conn is what every provider of this package shares: where it sends, with
// which key, through which client, within which bounds.
type conn struct {
	name   string // gen_ai.provider.name
	model  string
	base   *url.URL
	key    redactor
	keyVar string // where the key comes from (a variable, an entry), for errors
	client *http.Client
	opts   Options
}

func (c *conn) Name() string  { return c.name }
func (c *conn) Model() string { return c.model }

// newConn checks the base URL and wraps the caller's client so that no
// redirect leaves the provider's origin: the SDKs put the key on every
// request, and net/http keeps an Authorization header across ports of one
// host and any other header across hosts.
func newConn(name, model, base, key, keyVar string, o Options) (*conn, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, newError(name, redactor(key), ErrSpec, 0, "%s: the base URL %q is not an http(s) URL", name, redactedURL(base))
	}
	if u.User != nil {
		return nil, newError(name, redactor(key), ErrSpec, 0, "%s: the base URL carries credentials; give the key with the variable or the option", name)
	}
	if o.HTTPClient == nil {
		return nil, newError(name, redactor(key), ErrSpec, 0, "%s: no HTTP client given", name)
	}
	cl := *o.HTTPClient
	prev := cl.CheckRedirect
	cl.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if !transport.SameOrigin(via[0].URL, req.URL) {
			m, _ := req.Context().Value(meterKey{}).(*meter)
			e := newError(name, redactor(key), ErrRedirect, 0, "%s redirected the request to %s, another origin: not followed (the key goes to %s only)", name, origin(req.URL), origin(via[0].URL))
			if m != nil {
				m.setFailure(e)
			}
			return e
		}
		if prev != nil {
			return prev(req, via)
		}
		if len(via) >= 10 {
			return http.ErrUseLastResponse
		}
		return nil
	}
	return &conn{name: name, model: model, base: u, key: redactor(key), keyVar: keyVar, client: &cl, opts: o.withDefaults()}, nil
}

func origin(u *url.URL) string { return u.Scheme + "://" + u.Host }

func redactedURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(unparsable)"
	}
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	return u.String()
}

type meterKey struct{}

// meter bounds one Stream call: bytes read over all its attempts, the
// silence between two reads (the headers' wait included), and the waits
// the provider asks for before a retry. It remembers the last error
// status and the start of its body for the error.
type meter struct {
	c        *conn
	deadline time.Time // the caller's, zero when none
	read     atomic.Int64
	attempts atomic.Int32

	mu         sync.Mutex
	fail       *Error
	status     int
	header     http.Header
	body       []byte // the start of the last error body
	refusedFor time.Duration
}

func (c *conn) newMeter(ctx context.Context) *meter {
	m := &meter{c: c}
	m.deadline, _ = ctx.Deadline()
	return m
}

func (m *meter) setFailure(e *Error) {
	m.mu.Lock()
	if m.fail == nil {
		m.fail = e
	}
	m.mu.Unlock()
}

func (m *meter) failure() *Error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.fail
}

// errorStatus returns the last error status, its headers and body start.
func (m *meter) errorStatus() (int, http.Header, string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.status, m.header, string(m.body)
}

func (m *meter) retryNote() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.refusedFor == 0 {
		return ""
	}
	return "; it asked to wait " + m.refusedFor.Round(time.Second).String() + ", more than the retry bound or the time left"
}

// middleware runs around each attempt the SDK makes (its retries
// included).
func (m *meter) middleware(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	// A bound that ended an attempt ends the call: the SDK would retry a
	// silence before the headers as a connection error.
	if f := m.failure(); f != nil {
		return nil, f
	}
	m.attempts.Add(1)
	if !transport.SameOrigin(req.URL, m.c.base) {
		e := newError(m.c.name, m.c.key, ErrRedirect, 0, "%s: a request to %s, not the provider's origin, was refused", m.c.name, origin(req.URL))
		m.setFailure(e)
		return nil, e
	}
	if m.read.Load() >= m.c.opts.MaxBytes {
		return nil, m.tooLarge()
	}
	ctx, cancel := context.WithCancelCause(context.WithValue(req.Context(), meterKey{}, m))
	w := &watch{m: m, cancel: cancel, timer: bounds.Clock{Name: "model idle", D: m.c.opts.IdleTimeout}.Timer(), done: make(chan struct{})}
	go w.run()
	resp, err := next(req.WithContext(ctx))
	if err != nil {
		w.stop()
		if context.Cause(ctx) == errIdleCause {
			return nil, m.idle()
		}
		if f := m.failure(); f != nil {
			return nil, f
		}
		return nil, err
	}
	m.mu.Lock()
	m.status, m.header, m.body = 0, nil, nil
	if resp.StatusCode >= 400 {
		m.status, m.header = resp.StatusCode, resp.Header.Clone()
	}
	m.mu.Unlock()
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == 529 || resp.StatusCode == http.StatusServiceUnavailable {
		if d := retryAfter(resp.Header); d > 0 && !m.mayWait(d) {
			resp.Header.Set("X-Should-Retry", "false")
			m.mu.Lock()
			m.refusedFor = d
			m.mu.Unlock()
		}
	}
	resp.Body = &meteredBody{rc: resp.Body, w: w, ctx: ctx, keep: resp.StatusCode >= 400}
	return resp, nil
}

// mayWait reports whether a wait of d before a retry is within the bound
// and before the caller's deadline.
func (m *meter) mayWait(d time.Duration) bool {
	if d > m.c.opts.MaxRetryWait {
		return false
	}
	return m.deadline.IsZero() || time.Now().Add(d).Before(m.deadline)
}

var errIdleCause = &bounds.ClockError{Clock: bounds.Clock{Name: "model idle"}}

func (m *meter) idle() *Error {
	e := newError(m.c.name, m.c.key, ErrIdle, 0, "%s sent nothing for %v (the idle bound) after %s", m.c.name, m.c.opts.IdleTimeout, bounds.Size(m.read.Load()))
	m.setFailure(e)
	return m.failure()
}

func (m *meter) tooLarge() *Error {
	e := newError(m.c.name, m.c.key, ErrTooLarge, 0, "%s sent more than %s (the byte bound): stream stopped", m.c.name, bounds.Size(m.c.opts.MaxBytes))
	m.setFailure(e)
	return m.failure()
}

// watch cancels an attempt when its timer runs out; reads reset it.
type watch struct {
	m      *meter
	cancel context.CancelCauseFunc
	timer  *time.Timer
	done   chan struct{}
	once   sync.Once
}

func (w *watch) run() {
	select {
	case <-w.timer.C:
		w.cancel(errIdleCause)
	case <-w.done:
	}
}

func (w *watch) stop() {
	w.once.Do(func() {
		w.timer.Stop()
		close(w.done)
	})
}

// meteredBody counts and bounds what is read, resets the idle clock at
// each read, and keeps the start of an error body.
type meteredBody struct {
	rc   io.ReadCloser
	w    *watch
	ctx  context.Context
	keep bool
}

const keptBody = 4 << 10

func (b *meteredBody) Read(p []byte) (int, error) {
	m := b.w.m
	if f := m.failure(); f != nil {
		return 0, f
	}
	// Never read past the bound: at most one byte more than it allows,
	// to tell "exactly the bound" from "more".
	if left := m.c.opts.MaxBytes - m.read.Load() + 1; int64(len(p)) > left {
		p = p[:max(left, 0)]
	}
	if len(p) == 0 {
		b.w.cancel(nil)
		return 0, m.tooLarge()
	}
	n, err := b.rc.Read(p)
	if n > 0 {
		b.w.timer.Reset(m.c.opts.IdleTimeout)
		if b.keep {
			m.mu.Lock()
			if room := keptBody - len(m.body); room > 0 {
				m.body = append(m.body, p[:min(n, room)]...)
			}
			m.mu.Unlock()
		}
		if m.read.Add(int64(n)) > m.c.opts.MaxBytes {
			b.w.cancel(nil)
			return n, m.tooLarge()
		}
	}
	if err != nil && err != io.EOF {
		if context.Cause(b.ctx) == errIdleCause {
			return n, m.idle()
		}
		if f := m.failure(); f != nil {
			return n, f
		}
	}
	return n, err
}

func (b *meteredBody) Close() error {
	b.w.stop()
	err := b.rc.Close()
	b.w.cancel(nil)
	return err
}

// retryAfter reads Retry-After-Ms, else Retry-After (seconds or a date),
// as the SDKs do.
func retryAfter(h http.Header) time.Duration {
	if h == nil {
		return 0
	}
	if v := h.Get("Retry-After-Ms"); v != "" {
		if f, err := strconv.ParseFloat(v, 64); err == nil && f > 0 {
			return time.Duration(f * float64(time.Millisecond))
		}
	}
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil && f > 0 {
		return time.Duration(f * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0)
	}
	return 0
}

package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/mcpi-dev/mcpi/internal/bounds"
	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// readLoop is the connection's one reader. It routes responses to their
// callers, runs server requests on goroutines of their own and hands
// notifications to the front end.
func (c *Client) readLoop() {
	var endErr error
	for {
		f, err := c.conn.Recv()
		if err != nil {
			endErr = err
			break
		}
		if f.LostID == "" {
			c.noteReachable()
		}
		if f.LostID != "" {
			c.mu.Lock()
			pc := c.pending[f.LostID]
			c.mu.Unlock()
			if pc != nil {
				pc.lose(f.Err)
			}
			continue
		}
		if f.Err != nil {
			repaired, done, ok := repairFrame(f.Data)
			if !ok {
				c.warn("bad-frame", f.Err.Error(), f.Data)
				if !errors.Is(f.Err, transport.ErrCutFrame) {
					// A cut frame is no answer: the connection's end,
					// which follows, says why its requests failed.
					c.failAddressed(f.Data, f.Err)
				}
				continue
			}
			c.warn("bad-frame", f.Err.Error()+"; read all the same: "+done, f.Data)
			f = transport.Frame{Data: repaired}
		}
		// A frame without Err is valid JSON (transport.Conn's contract):
		// decoding it need not validate it again, nor copy its result.
		msgs, batch, err := mcp.DecodeValidFrame(f.Data)
		if err != nil {
			c.warn("invalid-message", "not a JSON-RPC message: "+err.Error(), f.Data)
			continue
		}
		if batch {
			if rev := c.ProtocolVersion(); rev != "" && rev != mcp.Rev20250326 {
				c.warn("batch", fmt.Sprintf("JSON-RPC batch received, but batches belong to revision 2025-03-26 only (%s is in force); processed anyway", rev), f.Data)
			}
		}
		for _, m := range msgs {
			c.dispatch(m, f.Data)
		}
	}
	if errors.Is(endErr, transport.ErrClosed) {
		endErr = transport.ErrClosed
	}
	c.mu.Lock()
	c.endErr, c.ended = endErr, true
	for _, cancel := range c.inbound {
		cancel(nil)
	}
	c.mu.Unlock()
	close(c.done)
	// The calls waiting hear of it on their own channels.
	c.mu.Lock()
	for _, pc := range c.pending {
		pc.signal()
	}
	c.mu.Unlock()
}

func (c *Client) warn(kind, msg string, data []byte) {
	msg = bounds.ClipTo(msg, bounds.MaxLine) // it may quote the server
	c.log.Warn(msg, "kind", kind)
	if c.opts.OnWarning != nil {
		c.opts.OnWarning(Warning{Time: time.Now(), Kind: kind, Message: msg, Data: quote(data)})
	}
}

func (c *Client) dispatch(m *mcp.Message, frame []byte) {
	if m.JSONRPC != "2.0" {
		c.warn("jsonrpc-version", fmt.Sprintf("message has jsonrpc %q, want \"2.0\"", m.JSONRPC), frame)
	}
	if m.Error != nil && m.Result != nil {
		c.warn("invalid-message", "response has both result and error (JSON-RPC allows one): the error is taken", frame)
	}
	switch {
	case m.IsResponse():
		c.deliverResponse(m, frame)
	case m.IsRequest():
		c.serveRequest(m)
	case m.IsNotification():
		c.handleNotification(m)
	default:
		c.warn("invalid-message", "message is neither a request, a notification nor a response", frame)
	}
}

func (c *Client) deliverResponse(m *mcp.Message, frame []byte) {
	key, ok := idKey(m.ID)
	if !ok {
		if m.Error != nil {
			c.warn("unknown-id", "error response without a usable id: "+m.Error.Error(), frame)
		} else {
			c.warn("invalid-message", "response without a usable id", frame)
		}
		return
	}
	c.mu.Lock()
	pc := c.pending[key]
	if pc == nil && key[0] == '"' {
		// We send numeric ids; a server that echoes them as strings is wrong
		// but understood.
		if s, err := strconv.Unquote(key); err == nil {
			if pc = c.pending[s]; pc != nil {
				defer c.warn("id-type", fmt.Sprintf("response id %s is a string; the request's id was the number %s", key, s), frame)
			}
		}
	}
	late, raw := false, false
	switch {
	case pc != nil:
		delete(c.pending, key)
	case c.cancelled.take(key):
		late = true
	case c.rawSent.take(key):
		raw = true
	}
	c.mu.Unlock()
	if raw {
		// The answer to a request written raw: the wire shows it.
		c.log.Debug("the answer to a raw frame", "id", key)
		return
	}
	if late {
		// The spec allows it: the answer may have been on its way when the
		// cancellation arrived. The sender ignores it.
		c.log.Debug("ignored the answer to a cancelled request", "id", key)
		return
	}
	if pc == nil {
		c.warn("unknown-id", fmt.Sprintf("response to unknown request id %s", m.ID), frame)
		return
	}
	pc.deliver(m)
}

// idKey is mcp.IDKey, at once for the ids mcpi sends: positive integers
// in their shortest form, which are their own key.
func idKey(id json.RawMessage) (string, bool) {
	if n := len(id); n > 0 && n < 19 && id[0] != '0' {
		plain := true
		for _, c := range id {
			if c < '0' || c > '9' {
				plain = false
				break
			}
		}
		if plain {
			return string(id), true
		}
	}
	return mcp.IDKey(id)
}

func (c *Client) handleNotification(m *mcp.Message) {
	switch m.Method {
	case "notifications/progress":
		var p mcp.ProgressParams
		if err := json.Unmarshal(m.Params, &p); err == nil {
			if key, ok := mcp.IDKey(p.ProgressToken); ok {
				c.mu.Lock()
				pc := c.progress[key]
				c.mu.Unlock()
				if pc != nil {
					pc.active.Store(true)
					pc.signal()
					if pc.onProg != nil {
						pc.onProg(p)
					}
				}
			}
		}
	case "notifications/subscriptions/acknowledged":
		c.noteAck(m.Params)
	case "notifications/tasks":
		c.noteTask(m.Params)
	case "notifications/cancelled":
		var p mcp.CancelledParams
		if err := json.Unmarshal(m.Params, &p); err == nil {
			if key, ok := mcp.IDKey(p.RequestID); ok {
				c.mu.Lock()
				cancel := c.inbound[key]
				c.mu.Unlock()
				if cancel != nil {
					cancel(&CancelledError{Params: m.Params, Reason: p.Reason})
				}
			}
		}
	}
	if c.opts.OnNotification != nil {
		c.opts.OnNotification(Notification{Time: time.Now(), Method: m.Method, Params: m.Params})
	}
}

// serveRequest answers a server->client request on a goroutine of its own,
// so that a handler waiting for a person never stalls the reader.
//
// At most MaxServerRequests are in progress at once; beyond that a request
// is answered with an error, written by one goroutine with a bounded queue,
// and the first such refusal is warned about. A server that floods mcpi
// with requests and never reads the answers so costs a bounded amount of
// memory.
func (c *Client) serveRequest(m *mcp.Message) {
	key, _ := mcp.IDKey(m.ID)
	ctx, cancel := context.WithCancelCause(context.Background())
	c.mu.Lock()
	if c.serving >= c.opts.MaxServerRequests {
		warn := !c.floodWarned
		c.floodWarned = true
		c.mu.Unlock()
		cancel(nil)
		if warn {
			c.warn("server-requests", fmt.Sprintf("the server has more than %d requests to mcpi in progress; the next ones are answered with an error until some are done (warned once)", c.opts.MaxServerRequests),
				fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"method":%q}`, m.ID, m.Method))
		}
		c.refuse(m)
		return
	}
	c.serving++
	if key != "" {
		c.inbound[key] = cancel
	}
	c.mu.Unlock()
	go func() {
		defer func() {
			c.mu.Lock()
			c.serving--
			delete(c.inbound, key)
			c.mu.Unlock()
			cancel(nil)
		}()
		result, err := c.handleRequest(ctx, m.Method, m.Params, true)
		var frame []byte
		if err != nil {
			frame, err = mcp.NewErrorResponse(m.ID, toRPCError(err))
		} else {
			frame, err = mcp.NewResult(m.ID, result)
		}
		if err != nil {
			frame, _ = mcp.NewErrorResponse(m.ID, &mcp.RPCError{Code: mcp.CodeInternalError, Message: err.Error()})
		}
		if ctx.Err() != nil && !c.isDone() {
			// The server cancelled the request: it wants no answer.
			return
		}
		sctx, scancel := c.writeClock().Context(context.Background())
		defer scancel()
		switch err := c.conn.Send(sctx, frame); {
		case err == nil:
			c.deaf.Store(false)
		case c.isDone(), c.closing.Load():
		default:
			c.log.Debug("answering a server request failed", "method", m.Method, "err", err)
			if sctx.Err() != nil {
				c.deaf.Store(true)
			}
			c.unanswered(m, fmt.Sprintf("the answer to its %s request %s could not be written: %v", m.Method, m.ID, err))
		}
	}()
}

// refuse answers a server request beyond MaxServerRequests with an error.
// The answers go through a queue bounded by the refusals budget to one
// writer. When the queue is full the reader waits for room, so that a
// server that sends requests faster than it reads the answers is slowed
// down, not left unanswered. A server that reads nothing for a whole write
// clock is deaf: its refusals are dropped while it stays so, counted, and
// said once.
func (c *Client) refuse(m *mcp.Message) {
	if m.ID == nil {
		return
	}
	frame, err := mcp.NewErrorResponse(m.ID, &mcp.RPCError{Code: mcp.CodeInternalError,
		Message: fmt.Sprintf("mcpi has %d requests of this server in progress already: refused", c.opts.MaxServerRequests)})
	if err != nil {
		return
	}
	c.refuseOnce.Do(func() {
		c.refusals = bounds.NewQueue[[]byte](c.refusalsBud)
		c.refusalRoom = make(chan struct{}, 1)
		go c.writeRefusals()
	})
	var deadline *time.Timer
	defer func() {
		if deadline != nil {
			deadline.Stop()
		}
	}()
	for {
		err := c.refusals.Push(frame, int64(len(frame)))
		if err == nil || errors.Is(err, bounds.ErrQueueClosed) {
			return
		}
		if c.deaf.Load() {
			c.dropRefusal(m)
			return
		}
		if deadline == nil {
			deadline = c.writeClock().Timer()
		}
		select {
		case <-c.refusalRoom:
		case <-deadline.C:
			c.deaf.Store(true)
			c.dropRefusal(m)
			return
		case <-c.done:
			return
		}
	}
}

// dropRefusal counts a refusal that could not be queued for a server that
// reads no answers.
func (c *Client) dropRefusal(m *mcp.Message) {
	c.unanswered(m, fmt.Sprintf("it read none of mcpi's answers for %v while it sent requests, and the refusal of its request %s was dropped", c.writeClock().D, m.ID))
}

// unanswered counts a server request that got no answer, saying the first
// one's reason once.
func (c *Client) unanswered(m *mcp.Message, why string) {
	if c.dropped.Add(1) == 1 {
		c.warn("unanswered", "a request of the server got no answer: "+why+" (said once; later ones are counted)",
			fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"method":%q}`, m.ID, m.Method))
	}
}

// Unanswered returns how many server requests got no answer because the
// server read none (see refuse).
func (c *Client) Unanswered() int64 { return c.dropped.Load() }

// writeClock bounds the write of one answer to the server.
func (c *Client) writeClock() bounds.Clock {
	if c.opts.WriteTimeout > 0 {
		return bounds.Clock{Name: "write", D: c.opts.WriteTimeout}
	}
	return bounds.Write
}

// writeRefusals writes the queued refusals, each under the write clock.
func (c *Client) writeRefusals() {
	for {
		select {
		case <-c.refusals.Ready():
		case <-c.done:
			c.refusals.Close()
			return
		}
		for {
			f, ok := c.refusals.TryPop()
			if !ok {
				break
			}
			select {
			case c.refusalRoom <- struct{}{}:
			default:
			}
			sctx, cancel := c.writeClock().Context(context.Background())
			err := c.conn.Send(sctx, f)
			cancel()
			switch {
			case err == nil:
				c.deaf.Store(false)
			case sctx.Err() != nil:
				c.deaf.Store(true)
			}
		}
	}
}

// The refusals budget: the error answers waiting to be written.
const (
	refusalCount = 4096
	refusalBytes = 1 << 20
)

// RefusalsBudget names the budget of the error answers to the server's
// requests beyond MaxServerRequests that wait to be written.
const RefusalsBudget = "refusals of server requests"

// Usage reports the client's own budgets (the refusals waiting to be
// written to the server), for a status.
func (c *Client) Usage() []bounds.Usage {
	return []bounds.Usage{c.refusalsBud.Usage()}
}

func toRPCError(err error) *mcp.RPCError {
	var re *mcp.RPCError
	if errors.As(err, &re) {
		return re
	}
	return &mcp.RPCError{Code: mcp.CodeInternalError, Message: err.Error()}
}

// handleRequest answers a server request with the Handler. With
// holdPending (a request that arrived on its own, not in a result), the
// requests pending now may be waiting on the answer, and their clocks stand
// still until the Handler returns: a person may be typing it.
func (c *Client) handleRequest(ctx context.Context, method string, params json.RawMessage, holdPending bool) (any, error) {
	if method == "ping" {
		return struct{}{}, nil
	}
	h := c.opts.Handler
	if h != nil {
		var held []*pendingCall
		if holdPending {
			held = c.beginAnswer()
		} else {
			c.countAnswer(1)
		}
		defer func() {
			if holdPending {
				c.endAnswer(held)
			} else {
				c.countAnswer(-1)
			}
		}()
	}
	caps := c.capabilities()
	switch method {
	case "sampling/createMessage":
		if h == nil || caps.Sampling == nil {
			return nil, notDeclared(method, "sampling")
		}
		var p mcp.CreateMessageParams
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, invalidParams(method, err)
		}
		return h.CreateMessage(ctx, &p)
	case "elicitation/create":
		if h == nil || caps.Elicitation == nil {
			return nil, notDeclared(method, "elicitation")
		}
		var p mcp.ElicitParams
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, invalidParams(method, err)
		}
		if p.Mode == "url" && caps.Elicitation.URL == nil {
			return nil, &mcp.RPCError{Code: mcp.CodeInvalidParams, Message: "this client did not declare URL-mode elicitation"}
		}
		return h.Elicit(ctx, &p)
	case "roots/list":
		if h == nil || caps.Roots == nil {
			return nil, notDeclared(method, "roots")
		}
		return h.ListRoots(ctx)
	}
	return nil, &mcp.RPCError{Code: mcp.CodeMethodNotFound, Message: "method not found: " + method}
}

func notDeclared(method, capability string) error {
	return &mcp.RPCError{Code: mcp.CodeMethodNotFound, Message: fmt.Sprintf("%s: this client did not declare the %s capability", method, capability)}
}

func invalidParams(method string, err error) error {
	return &mcp.RPCError{Code: mcp.CodeInvalidParams, Message: fmt.Sprintf("%s: invalid params: %v", method, err)}
}

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
				pc.lost <- f.Err
			}
			continue
		}
		if f.Err != nil {
			repaired, done, ok := repairFrame(f.Data)
			if !ok {
				c.warn("bad-frame", f.Err.Error(), f.Data)
				c.failAddressed(f.Data, f.Err)
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
		cancel()
	}
	c.mu.Unlock()
	close(c.done)
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
	key, ok := mcp.IDKey(m.ID)
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
	late := false
	if pc != nil {
		delete(c.pending, key)
	} else if late = c.cancelled[key]; late {
		delete(c.cancelled, key)
	}
	c.mu.Unlock()
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
	pc.resp <- m
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
					select {
					case pc.activity <- struct{}{}:
					default:
					}
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
					cancel()
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
	ctx, cancel := context.WithCancel(context.Background())
	c.mu.Lock()
	if c.serving >= c.opts.MaxServerRequests {
		warn := !c.floodWarned
		c.floodWarned = true
		c.mu.Unlock()
		cancel()
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
			cancel()
		}()
		result, err := c.handleRequest(ctx, m.Method, m.Params)
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
		sctx, scancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer scancel()
		if err := c.conn.Send(sctx, frame); err != nil {
			c.log.Debug("answering a server request failed", "method", m.Method, "err", err)
		}
	}()
}

// refuse answers a server request beyond MaxServerRequests with an error.
// The answers go through a queue of refusalQueue to one writer; when it is
// full (the server reads nothing), the answer is dropped: the server was
// not reading it anyway.
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
		c.refusals = make(chan []byte, refusalQueue)
		go func() {
			for {
				select {
				case f := <-c.refusals:
					sctx, scancel := context.WithTimeout(context.Background(), 30*time.Second)
					c.conn.Send(sctx, f)
					scancel()
				case <-c.done:
					return
				}
			}
		}()
	})
	select {
	case c.refusals <- frame:
	default:
	}
}

// refusalQueue bounds the error answers waiting to be written.
const refusalQueue = 64

func toRPCError(err error) *mcp.RPCError {
	var re *mcp.RPCError
	if errors.As(err, &re) {
		return re
	}
	return &mcp.RPCError{Code: mcp.CodeInternalError, Message: err.Error()}
}

func (c *Client) handleRequest(ctx context.Context, method string, params json.RawMessage) (any, error) {
	if method == "ping" {
		return struct{}{}, nil
	}
	h := c.opts.Handler
	if h != nil {
		// A person may be answering: the pending requests' clocks stop
		// until the Handler returns.
		c.beginAnswer()
		defer c.endAnswer()
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

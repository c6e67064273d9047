package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// Era returns the era in force: EraLegacy or EraModern ("" before Start).
func (c *Client) Era() string {
	c.stateMu.RLock()
	defer c.stateMu.RUnlock()
	return c.era
}

// EraReason says how the era was chosen, for people.
func (c *Client) EraReason() string {
	c.stateMu.RLock()
	defer c.stateMu.RUnlock()
	return c.eraReason
}

// EraGuessed says the era was taken for legacy because server/discover got
// no answer within the probe's time: a server still starting looks the
// same, so the era is a guess, not to be remembered.
func (c *Client) EraGuessed() bool {
	c.stateMu.RLock()
	defer c.stateMu.RUnlock()
	return c.eraGuessed
}

// Start settles the era and the revision, then performs what that era
// needs before the first request: initialize (legacy) or server/discover
// (modern). With EraAuto the server is probed as the spec describes: over
// stdio with server/discover, falling back to initialize on any error that
// is not a modern one or on no answer; over HTTP with a modern request,
// falling back when the answer is not a modern error.
//
// The whole start, probe and handshake together, is bounded by
// Options.Timeout: a server that never answers costs that, not a probe
// timeout and then a handshake timeout.
func (c *Client) Start(ctx context.Context) error {
	t := c.opts.Timeout
	if t <= 0 {
		return c.start(ctx)
	}
	sctx, cancel := context.WithTimeout(ctx, t)
	defer cancel()
	err := c.start(sctx)
	if err != nil && ctx.Err() == nil && errors.Is(sctx.Err(), context.DeadlineExceeded) && !errors.Is(err, ErrTimeout) {
		return &TimeoutError{Method: "start (server/discover, initialize)", After: t}
	}
	return err
}

func (c *Client) start(ctx context.Context) error {
	era, pv := c.opts.Era, c.opts.ProtocolVersion
	forced := ""
	switch {
	case pv != "" && mcp.IsModern(pv):
		era, forced = EraModern, "--protocol-version "+pv
	case pv != "" && mcp.IsLegacy(pv):
		era, forced = EraLegacy, "--protocol-version "+pv
	case era == EraLegacy || era == EraModern:
		forced = "--era " + era
	}
	reason := "forced by " + forced
	if c.opts.EraReason != "" && (era == EraLegacy || era == EraModern) && pv == "" {
		reason = c.opts.EraReason
	}
	switch era {
	case EraLegacy:
		c.setEra(EraLegacy, reason)
		return c.Initialize(ctx)
	case EraModern:
		rev := pv
		if rev == "" {
			rev = mcp.LatestModern
		}
		_, err := c.discover(ctx, rev, 0, reason)
		return err
	}
	legacy, why, err := c.probe(ctx)
	if err != nil {
		return err
	}
	if !legacy {
		return nil
	}
	c.setEra(EraLegacy, why)
	if vs, ok := c.conn.(transport.VersionSetter); ok {
		vs.SetProtocolVersion("")
	}
	return c.Initialize(ctx)
}

func (c *Client) setEra(era, reason string) {
	c.stateMu.Lock()
	c.era, c.eraReason = era, reason
	c.stateMu.Unlock()
}

// probe sends server/discover and reports whether the server is legacy,
// and why. A modern server ends the probe in the modern era.
func (c *Client) probe(ctx context.Context) (legacy bool, why string, err error) {
	timeout := c.opts.ProbeTimeout
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	if c.opts.Timeout > 0 && c.opts.Timeout/2 < timeout {
		// The start as a whole is bounded by Timeout: leave the handshake
		// half of it.
		timeout = c.opts.Timeout / 2
	}
	if dl, ok := ctx.Deadline(); ok {
		// A start clock the caller shares with an earlier attempt (a
		// remembered era that failed): half of what remains of it.
		if left := time.Until(dl).Round(10*time.Millisecond) / 2; left < timeout {
			timeout = max(left, time.Millisecond)
		}
	}
	if c.httpConn() != nil {
		timeout = c.opts.Timeout // HTTP answers with a status, never silence
	}
	// An era remembered by the caller and confirmed by this probe says so.
	prefix := ""
	if c.opts.EraReason != "" {
		prefix = c.opts.EraReason + "; "
	}
	_, err = c.discover(ctx, mcp.LatestModern, timeout, prefix+"detected: the server answered server/discover")
	if err == nil {
		return false, "", nil
	}
	if ctx.Err() != nil {
		return false, "", ctx.Err()
	}
	if code, ok := modernErrorCode(err); ok {
		// A modern server that refused: discover already retried what it
		// could; the error stands.
		return false, "", fmt.Errorf("the server speaks the modern era but refused server/discover (code %d): %w", code, err)
	}
	var de *DisconnectedError
	if errors.As(err, &de) {
		if !errors.As(err, new(*transport.HTTPError)) {
			return false, "", err
		}
	}
	reason := prefix + "detected: server/discover "
	var ve *VersionError
	var nd *NotDiscoverError
	switch {
	case errors.As(err, &nd):
		c.warn("invalid-message", "server/discover was answered with something that is not a DiscoverResult ("+nd.Reason+"): taken for a legacy server", nd.Result)
		reason += "answered with no DiscoverResult (" + nd.Reason + ")"
	case errors.As(err, &ve) && ve.Supported != nil:
		reason += "answered that only " + strings.Join(ve.Supported, ", ") + " are supported"
	case errors.Is(err, ErrTimeout):
		reason += "got no answer within " + timeout.String()
		c.stateMu.Lock()
		c.eraGuessed = true
		c.stateMu.Unlock()
	default:
		reason += "failed (" + shorten(err.Error(), 120) + ")"
	}
	return true, reason + ", so initialize", nil
}

func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// modernErrorCode finds a JSON-RPC error only a modern server sends in err:
// a JSON-RPC error response, or the JSON-RPC body of an HTTP error.
func modernErrorCode(err error) (int, bool) {
	if re := rpcErrorOf(err); re != nil && mcp.IsModernError(re.Code) {
		return re.Code, true
	}
	return 0, false
}

// rpcErrorOf returns the JSON-RPC error in err, from a response or from the
// body of an HTTP error answer.
func rpcErrorOf(err error) *mcp.RPCError {
	var re *mcp.RPCError
	if errors.As(err, &re) {
		return re
	}
	var he *transport.HTTPError
	if errors.As(err, &he) && len(he.Body) > 0 {
		var m mcp.Message
		if json.Unmarshal(he.Body, &m) == nil && m.Error != nil {
			return m.Error
		}
	}
	return nil
}

// discover sends server/discover at revision rev, following -32022 to a
// revision both sides speak, and settles the modern era on success.
func (c *Client) discover(ctx context.Context, rev string, timeout time.Duration, reason string) (*mcp.DiscoverResult, error) {
	// A revision is tried at most twice: a server may refuse a first
	// request and list the same revision as supported.
	tried := map[string]int{}
	for {
		tried[rev]++
		if vs, ok := c.conn.(transport.VersionSetter); ok {
			vs.SetProtocolVersion(rev)
		}
		o := &callOptions{noRetry: true, revision: rev}
		o.Force = true
		o.Timeout = timeout
		raw, err := c.call(ctx, "server/discover", nil, o)
		if err != nil {
			re := rpcErrorOf(err)
			if re == nil || re.Code != mcp.CodeUnsupportedProtocolVersion {
				return nil, err
			}
			var data mcp.UnsupportedVersionData
			json.Unmarshal(re.Data, &data)
			next := ""
			for _, v := range mcp.ModernRevisions {
				if slices.Contains(data.Supported, v) && tried[v] < 2 {
					next = v
					break
				}
			}
			if next == "" {
				return nil, &VersionError{Offered: rev, Got: strings.Join(data.Supported, ", "), Supported: data.Supported}
			}
			reason += fmt.Sprintf("; %s refused with -32022 (supported: %s), retried with %s", rev, strings.Join(data.Supported, ", "), next)
			rev = next
			continue
		}
		var res mcp.DiscoverResult
		if err := json.Unmarshal(raw, &res); err != nil {
			return nil, &NotDiscoverError{Reason: err.Error(), Result: raw}
		}
		if why := notDiscoverResult(raw, &res); why != "" {
			return nil, &NotDiscoverError{Reason: why, Result: raw}
		}
		if len(res.SupportedVersions) > 0 && !slices.Contains(res.SupportedVersions, rev) {
			next := ""
			for _, v := range mcp.ModernRevisions {
				if slices.Contains(res.SupportedVersions, v) && tried[v] == 0 {
					next = v
					break
				}
			}
			if next == "" {
				return nil, &VersionError{Offered: rev, Got: strings.Join(res.SupportedVersions, ", "), Supported: res.SupportedVersions}
			}
			rev = next
			continue
		}
		init := &mcp.InitializeResult{ProtocolVersion: rev, Capabilities: res.Capabilities, Instructions: res.Instructions, Meta: res.Meta}
		var meta map[string]json.RawMessage
		json.Unmarshal(res.Meta, &meta)
		if si, ok := meta[mcp.MetaServerInfo]; ok {
			json.Unmarshal(si, &init.ServerInfo)
		} else if si := TopLevelServerInfo(raw); si != nil {
			// A server of the legacy habit: shown, and said where it was.
			json.Unmarshal(si, &init.ServerInfo)
			c.warn("server-info", `serverInfo is at the top level of the server/discover result; 2026-07-28 puts it in _meta["`+mcp.MetaServerInfo+`"]`, si)
		}
		c.stateMu.Lock()
		c.init, c.initRaw, c.revision = init, raw, rev
		c.era, c.eraReason = EraModern, reason
		c.stateMu.Unlock()
		c.generation.Add(1)
		return &res, nil
	}
}

// TopLevelServerInfo returns the serverInfo a server/discover result has
// at its top level (where initialize had it), or nil.
func TopLevelServerInfo(result []byte) json.RawMessage {
	var top struct {
		ServerInfo json.RawMessage `json:"serverInfo"`
	}
	if json.Unmarshal(result, &top) != nil || len(top.ServerInfo) == 0 || string(top.ServerInfo) == "null" {
		return nil
	}
	return top.ServerInfo
}

// modernRevision reports the revision to put in a request's _meta, and
// whether the request is a modern one.
func (c *Client) modernRevision(o *callOptions) (string, bool) {
	if o.revision != "" {
		return o.revision, true
	}
	c.stateMu.RLock()
	defer c.stateMu.RUnlock()
	if c.era == EraModern {
		return c.revision, true
	}
	return "", false
}

// modernCapabilities are the capabilities every modern request declares.
func (c *Client) modernCapabilities() mcp.ClientCapabilities {
	caps := c.capabilities()
	if caps.Roots != nil {
		caps.Roots = &mcp.RootsCapability{} // listChanged is legacy
	}
	if c.opts.Capabilities == nil {
		// The extensions mcpi speaks: it follows the tasks a server
		// creates, and loads and verifies skills.
		caps.Extensions = maps.Clone(caps.Extensions)
		if caps.Extensions == nil {
			caps.Extensions = map[string]json.RawMessage{}
		}
		caps.Extensions[mcp.TasksExtension] = json.RawMessage(`{}`)
		caps.Extensions[mcp.SkillsExtension] = json.RawMessage(`{}`)
	}
	return caps
}

// DeclaredCapabilities returns what the client declares to the server in
// its era: in initialize, or in every modern request's _meta. Servers may
// list differently for different clients (an extension's tools only to
// the clients that declare it), so a snapshot of the server keeps them.
func (c *Client) DeclaredCapabilities() mcp.ClientCapabilities {
	if c.Era() == EraModern {
		return c.modernCapabilities()
	}
	return c.capabilities()
}

// requestMeta is the _meta every modern request carries.
func (c *Client) requestMeta(rev string) mcp.Meta {
	caps := c.modernCapabilities()
	m := mcp.Meta{
		mcp.MetaProtocolVersion:    rev,
		mcp.MetaClientCapabilities: caps,
		mcp.MetaClientInfo:         c.opts.ClientInfo,
	}
	c.stateMu.RLock()
	if c.logLevel != "" {
		m[mcp.MetaLogLevel] = c.logLevel
	}
	c.stateMu.RUnlock()
	return m
}

// httpConn returns the connection when it speaks HTTP, else nil.
func (c *Client) httpConn() transport.Conn {
	if !transport.Describe(c.conn).HTTP {
		return nil
	}
	if a, ok := c.conn.(*transport.AutoHTTP); ok {
		if ch := a.Chosen(); ch != nil {
			return ch
		}
	}
	return c.conn
}

// maxRounds bounds the input rounds of one multi round-trip request.
const maxRounds = 16

// mrtrMethods may answer with an input_required result.
var mrtrMethods = map[string]bool{"tools/call": true, "resources/read": true, "prompts/get": true}

// callMRTR sends a request and, while the server answers input_required,
// resolves the input requests with the Handler and sends the original
// request again under a new id with inputResponses and the requestState
// echoed byte for byte.
func (c *Client) callMRTR(ctx context.Context, method string, params any, o *callOptions) (json.RawMessage, error) {
	if mrtrMethods[method] && operationOf(ctx) == nil {
		// Its rounds are one operation, under one maximum time, which
		// starts with its first request. It goes into the context only
		// when a second round follows: most calls have one.
		o.op = &operation{max: c.opts.MaxTime}
	}
	raw, err := c.call(ctx, method, params, o)
	if err != nil || !mrtrMethods[method] {
		return raw, err
	}
	var base map[string]json.RawMessage
	for round := 1; ; round++ {
		// Most results are complete: do not decode one of megabytes only
		// to learn that.
		if rt, ok := mcp.MemberString(raw, "resultType"); ok && rt != mcp.ResultInputRequired {
			return raw, nil
		}
		var head mcp.ResultHead
		if err := json.Unmarshal(raw, &head); err != nil || head.ResultType != mcp.ResultInputRequired {
			return raw, nil // a missing resultType means complete
		}
		if o.op != nil && operationOf(ctx) == nil {
			ctx = context.WithValue(ctx, operationKey{}, o.op)
		}
		if round > maxRounds {
			return nil, &RPCError{Method: method, RPCError: &mcp.RPCError{Code: mcp.CodeInternalError, Message: fmt.Sprintf("the server asked for input %d times in a row: giving up", maxRounds)}}
		}
		if base == nil {
			b, err := json.Marshal(params)
			if err != nil {
				return nil, err
			}
			if err := json.Unmarshal(b, &base); err != nil || base == nil {
				base = map[string]json.RawMessage{}
			}
		}
		responses, err := c.resolveInputs(ctx, method, head.InputRequests)
		if err != nil {
			return nil, err
		}
		next := make(map[string]json.RawMessage, len(base)+2)
		for k, v := range base {
			if k != "inputResponses" && k != "requestState" {
				next[k] = v
			}
		}
		if len(responses) > 0 {
			b, err := json.Marshal(responses)
			if err != nil {
				return nil, err
			}
			next["inputResponses"] = b
		}
		if len(head.RequestState) > 0 {
			next["requestState"] = head.RequestState
		}
		if raw, err = c.call(ctx, method, next, o); err != nil {
			return nil, err
		}
	}
}

// resolveInputs answers each input request with the Handler.
func (c *Client) resolveInputs(ctx context.Context, method string, reqs map[string]json.RawMessage) (map[string]any, error) {
	keys := make([]string, 0, len(reqs))
	for k := range reqs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make(map[string]any, len(reqs))
	for _, k := range keys {
		var ir mcp.InputRequest
		if err := json.Unmarshal(reqs[k], &ir); err != nil {
			return nil, &RPCError{Method: method, RPCError: &mcp.RPCError{Code: mcp.CodeInvalidParams, Message: fmt.Sprintf("input request %q is invalid: %v", k, err)}}
		}
		// The request the input is for has been answered (input_required):
		// no clock runs while the Handler answers, and the operation does
		// not count the time.
		asked := time.Now()
		res, err := c.handleRequest(ctx, ir.Method, ir.Params, false)
		operationOf(ctx).hold(time.Since(asked))
		if err != nil {
			if ir.Method == "elicitation/create" && IsRejected(err) {
				res, err = &mcp.ElicitResult{Action: mcp.ElicitDecline}, nil
			}
		}
		if err != nil {
			return nil, fmt.Errorf("%s: answering the server's %s request %q: %w", method, ir.Method, k, err)
		}
		out[k] = res
	}
	return out, nil
}

// headerParam is a tool parameter mirrored into an Mcp-Param header.
type headerParam struct {
	path   []string // the chain of properties keys
	header string   // the name after Mcp-Param-
}

var tokenRe = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")

// toolHeaderParams reads the x-mcp-header annotations of an inputSchema, and
// says why the tool must be dropped when one is invalid (2026-07-28).
func toolHeaderParams(schema json.RawMessage) ([]headerParam, error) {
	var root any
	if len(schema) == 0 {
		return nil, nil
	}
	if err := json.Unmarshal(schema, &root); err != nil {
		return nil, fmt.Errorf("inputSchema is not JSON: %v", err)
	}
	var out []headerParam
	seen := map[string]bool{}
	var walk func(node any, path []string, static bool) error
	walk = func(node any, path []string, static bool) error {
		switch n := node.(type) {
		case map[string]any:
			if h, ok := n["x-mcp-header"]; ok {
				name, isString := h.(string)
				switch {
				case !static:
					return fmt.Errorf("x-mcp-header at %s is not reachable through properties alone", "/"+strings.Join(path, "/"))
				case len(path) == 0:
					return errors.New("x-mcp-header on the schema root")
				case !isString || name == "":
					return fmt.Errorf("x-mcp-header of %s is empty or not a string", strings.Join(path, "."))
				case !tokenRe.MatchString(name):
					return fmt.Errorf("x-mcp-header %q of %s is not an HTTP token", name, strings.Join(path, "."))
				case seen[strings.ToLower(name)]:
					return fmt.Errorf("x-mcp-header %q is used twice", name)
				}
				switch t, _ := n["type"].(string); t {
				case "string", "integer", "boolean":
				default:
					return fmt.Errorf("x-mcp-header %q is on %s, of type %v: only string, integer and boolean parameters may be headers", name, strings.Join(path, "."), n["type"])
				}
				seen[strings.ToLower(name)] = true
				out = append(out, headerParam{path: slices.Clone(path), header: name})
			}
			for k, v := range n {
				switch k {
				case "properties":
					if props, ok := v.(map[string]any); ok {
						for name, sub := range props {
							if err := walk(sub, append(slices.Clone(path), name), static); err != nil {
								return err
							}
						}
					}
				case "x-mcp-header", "const", "default", "enum", "examples":
				default:
					if err := walk(v, path, false); err != nil {
						return err
					}
				}
			}
		case []any:
			for _, v := range n {
				if err := walk(v, path, false); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(root, nil, true); err != nil {
		return nil, err
	}
	return out, nil
}

// checkTools drops, with a warning, the tools whose x-mcp-header
// annotations are invalid, and remembers the header parameters of the
// others. It applies to modern HTTP sessions only, as the spec says.
func (c *Client) checkTools(tools []mcp.Tool) []mcp.Tool {
	if c.Era() != EraModern || c.httpConn() == nil {
		return tools
	}
	kept := tools[:0]
	c.stateMu.Lock()
	if c.toolHeaders == nil {
		c.toolHeaders = map[string][]headerParam{}
	}
	c.stateMu.Unlock()
	for _, t := range tools {
		params, err := toolHeaderParams(t.InputSchema)
		c.stateMu.Lock()
		if err != nil {
			if c.droppedTools == nil {
				c.droppedTools = map[string]string{}
			}
			c.droppedTools[t.Name] = err.Error()
			c.stateMu.Unlock()
			c.warn("invalid-tool", fmt.Sprintf("tool %q dropped: %v", t.Name, err), t.InputSchema)
			continue
		}
		delete(c.droppedTools, t.Name)
		c.toolHeaders[t.Name] = params
		c.stateMu.Unlock()
		kept = append(kept, t)
	}
	return kept
}

// droppedReason says why a tool was dropped from tools/list, if it was.
func (c *Client) droppedReason(tool string) string {
	c.stateMu.RLock()
	defer c.stateMu.RUnlock()
	return c.droppedTools[tool]
}

// paramHeaders builds the Mcp-Param-* headers of a tool call.
func (c *Client) paramHeaders(tool string, args json.RawMessage) http.Header {
	if c.Era() != EraModern || c.httpConn() == nil {
		return nil
	}
	c.stateMu.RLock()
	params := c.toolHeaders[tool]
	c.stateMu.RUnlock()
	if len(params) == 0 || len(args) == 0 {
		return nil
	}
	var obj any
	if json.Unmarshal(args, &obj) != nil {
		return nil
	}
	h := http.Header{}
	for _, p := range params {
		v := obj
		for _, k := range p.path {
			m, ok := v.(map[string]any)
			if !ok {
				v = nil
				break
			}
			v = m[k]
		}
		var s string
		switch x := v.(type) {
		case nil:
			continue
		case string:
			s = x
		case bool:
			s = strconv.FormatBool(x)
		case float64:
			if x != math.Trunc(x) || math.Abs(x) > 1<<53-1 {
				continue
			}
			s = strconv.FormatInt(int64(x), 10)
		default:
			continue
		}
		h.Set(transport.HeaderParamPrefix+p.header, transport.EncodeHeaderValue(s))
	}
	return h
}

// Subscription is an open subscriptions/listen stream.
type Subscription struct {
	// ID is the JSON-RPC id of the listen request, which the server puts in
	// every notification of the stream.
	ID int64
	// Acknowledged is the filter the server agreed to honour.
	Acknowledged mcp.SubscriptionFilter
	done         chan error
	cancel       context.CancelFunc
}

// Done delivers how the subscription ended: nil when the server closed it
// gracefully.
func (s *Subscription) Done() <-chan error { return s.done }

// Close ends the subscription (the stream is closed on HTTP;
// notifications/cancelled is sent on stdio).
func (s *Subscription) Close() { s.cancel() }

// Listen opens a subscriptions/listen stream (2026-07-28) and returns once
// the server acknowledged it. Its notifications reach OnNotification like
// any other, with the subscription id in their _meta.
func (c *Client) Listen(ctx context.Context, filter mcp.SubscriptionFilter) (*Subscription, error) {
	if c.Era() != EraModern {
		return nil, &VersionError{Method: "subscriptions/listen", Needs: mcp.Rev20260728, Got: c.ProtocolVersion()}
	}
	lctx, cancel := context.WithCancel(context.Background())
	sub := &Subscription{done: make(chan error, 1), cancel: cancel}
	ids := make(chan int64, 1)
	ack := make(chan mcp.SubscriptionsAcknowledgedParams, 1)
	// The acknowledgement may come right after the request is written:
	// its channel is in place before that.
	o := &callOptions{onID: func(id int64) {
		c.mu.Lock()
		if c.acks == nil {
			c.acks = map[string]chan mcp.SubscriptionsAcknowledgedParams{}
		}
		c.acks[strconv.FormatInt(id, 10)] = ack
		c.mu.Unlock()
		ids <- id
	}}
	o.Timeout = -1
	o.Force = true
	go func() {
		_, err := c.call(lctx, "subscriptions/listen", mcp.SubscriptionsListenParams{Notifications: filter}, o)
		sub.done <- err
	}()
	forget := func(id int64) {
		c.mu.Lock()
		delete(c.acks, strconv.FormatInt(id, 10))
		c.mu.Unlock()
	}
	select {
	case sub.ID = <-ids:
	case err := <-sub.done:
		cancel()
		select {
		case id := <-ids:
			forget(id)
		default:
		}
		return nil, err
	}
	defer forget(sub.ID)
	timeout := c.opts.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	select {
	case a := <-ack:
		sub.Acknowledged = a.Notifications
		return sub, nil
	case err := <-sub.done:
		cancel()
		if err == nil {
			err = errors.New("subscriptions/listen: the server ended the subscription before acknowledging it")
		}
		sub.done <- err
		return nil, err
	case <-time.After(timeout):
		cancel()
		return nil, &TimeoutError{Method: "subscriptions/listen (waiting for the acknowledgement)", After: timeout}
	case <-ctx.Done():
		cancel()
		return nil, ctx.Err()
	}
}

// noteAck hands an acknowledgement to the Listen waiting for it.
func (c *Client) noteAck(params json.RawMessage) {
	var p mcp.SubscriptionsAcknowledgedParams
	if json.Unmarshal(params, &p) != nil {
		return
	}
	var meta map[string]json.RawMessage
	json.Unmarshal(p.Meta, &meta)
	key, ok := mcp.IDKey(meta[mcp.MetaSubscriptionID])
	if !ok {
		return
	}
	c.mu.Lock()
	ch := c.acks[key]
	c.mu.Unlock()
	if ch != nil {
		select {
		case ch <- p:
		default:
		}
	}
}

// NotDiscoverError says that server/discover was answered with a result
// that is not a DiscoverResult: a legacy server answering every method
// with an empty result does, and is no modern server for it.
type NotDiscoverError struct {
	Reason string
	Result json.RawMessage
}

func (e *NotDiscoverError) Error() string {
	return "server/discover: the result is not a DiscoverResult: " + e.Reason
}

// notDiscoverResult says what a DiscoverResult lacks of its required
// members (supportedVersions, a non-empty list of strings, and
// capabilities, an object), or "".
func notDiscoverResult(raw json.RawMessage, res *mcp.DiscoverResult) string {
	var members map[string]json.RawMessage
	if json.Unmarshal(raw, &members) != nil {
		return "not an object"
	}
	var missing []string
	if len(res.SupportedVersions) == 0 {
		missing = append(missing, "supportedVersions")
	}
	if c := strings.TrimSpace(string(members["capabilities"])); !strings.HasPrefix(c, "{") {
		missing = append(missing, "capabilities")
	}
	if len(missing) == 0 {
		return ""
	}
	return "no " + strings.Join(missing, " and ")
}
